"""Every payload builder of ``backend/events.py`` against its trigger's schema.

The over-the-wire tests (test_webhooks.py, test_liveform.py, test_injection.py) compare
whole payloads with the fact sheet; these build each trigger from many submissions, with
and without a projection, and check the result against ``schemas/webhooks/<trigger>.json``.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from idv_mock import make_submission
from idv_mock.backend import events
from idv_mock.backend.events import Event
from idv_mock.backend.projections import FIELDS
from idv_mock.ground import operations, schemas
from idv_mock.strategies import webhook_payloads

TRIGGERS = operations.triggers()  # the webhook table (tests/test_one_list.py)
STYLES = ("omit", "null")


def every_event(sub: dict[str, Any], hidden: list[str] | None, style: str) -> list[Event]:
    values = {"userid": "u", "cf1": "a", "tokenId": "t", "ipAddress": "10.0.0.1"}
    record = {"recordId": "r-1", "worklistId": "w-1", "created_at": "2026-01-01T09:00:00.000Z"}
    return [
        events.flow_event("created", sub["submission_id"], values, hidden=hidden, style=style),
        events.flow_event(
            "retry", sub["submission_id"], values, retry_code="glare_detected", attempts=2
        ),
        events.submit_event(sub, hidden, style),
        events.approved_event(sub, hidden, style),
        events.approved_event(sub, hidden, style, reviewer="agent"),
        events.rejected_event(sub, hidden, style),
        events.updated_event(sub, "a@example.com", "2026-01-01T09:00:00.000Z", ["kycStatus"]),
        events.updated_event(
            sub, "a@example.com", "2026-01-01T09:00:00.000Z", ["gender"], hidden, style
        ),
        events.delete_event(sub["submission_id"], "a@example.com", "2026-01-01T09:00:00.000Z"),
        events.injection_event(sub, "2026-01-01-09-00-00-000", {"cf2": "b"}),
        events.injection_event(sub, "2026-01-01-09-00-00-000", {}, "blackliskCountries"),
        events.aml_event(sub, hidden, style),
        events.aml_monitor_event(sub, [record], hidden, style),
        events.token_expired_event("tok", "count", "2026-01-01T09:00:00.000Z"),
        events.token_expired_event("tok", "time", "2026-01-01T09:03:00.000Z"),
    ]


def test_one_schema_per_trigger_and_the_index_names_them() -> None:
    index = schemas.load("api.json")["webhooks"]
    for trigger, entry in index.items():
        schema = schemas.load(entry["schema"])
        assert entry["schema"] == f"webhooks/{trigger}.json"
        assert schema["properties"]["webhook_trigger"] == {
            "const": trigger,
            "description": "the trigger (the only discriminator the vendor sends)",
        }
        assert schema["title"].endswith("Webhook") and schema["title"].isidentifier()


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("style", STYLES)
def test_every_built_payload_fits_its_schema(seed: int, style: str) -> None:
    sub = make_submission(seed=seed)
    hidden = list(FIELDS)[seed::3]
    sub["projection"] = {"projectionId": "p-1", "projectionName": "policy"}
    built = every_event(sub, hidden, style) + every_event(make_submission(seed=seed), None, style)
    assert {e.trigger for e in built} == set(TRIGGERS)
    for event in built:
        assert schemas.errors(events.SCHEMAS[event.trigger], event.payload) == [], event.trigger


def test_a_payload_that_leaves_its_schema_fails_where_it_is_built(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert os.environ.get(events.CHECK_ENV) == "1"  # the suite checks every payload
    with pytest.raises(events.PayloadError, match="token_expired payload"):
        events.token_expired_event("tok", "count", "yesterday")
    monkeypatch.delenv(events.CHECK_ENV)
    assert events.token_expired_event("tok", "count", "yesterday").payload["expired_at"]


def test_fields_with_no_value_are_left_out() -> None:
    sub = make_submission({"email": "", "data": {"cf1": "", "cf2": "", "cf3": ""}}, seed=1)
    sub["tokenId"] = ""
    for event in every_event(sub, None, "omit"):
        payload = event.payload
        assert "" not in payload.values(), event.trigger
        if event.trigger != "created" and event.trigger != "retry":
            assert "cf" not in payload and "tokenId" not in payload, event.trigger


def test_rejected_strings_are_the_first_of_the_arrays() -> None:
    codes = ["expired_id", "other"]
    kyc = {"result": "rejected", "comment": ["First.", "Second."], "commentCode": codes}
    sub = make_submission({"kyc": kyc}, seed=2)
    result = events.rejected_event(sub).payload["kyc_result"]
    assert (result["comment"], result["commentCode"]) == ("First.", "expired_id")


def test_webhook_times_are_iso_8601() -> None:
    assert events.webhook_time("2026-01-02-03-04-05-678") == "2026-01-02T03:04:05.678Z"
    assert events.webhook_time("2026-01-02T03:04:05.678Z") == "2026-01-02T03:04:05.678Z"
    assert events.webhook_time("") == ""


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(payload=webhook_payloads())
def test_the_strategy_draws_payloads_that_fit_their_schema(payload: dict[str, Any]) -> None:
    trigger = payload["webhook_trigger"]
    assert schemas.errors(events.SCHEMAS[trigger], payload) == []


@given(payload=webhook_payloads(["rejected", "token_expired"]))
@settings(max_examples=30, deadline=None)
def test_the_strategy_draws_only_the_triggers_named(payload: dict[str, Any]) -> None:
    assert payload["webhook_trigger"] in ("rejected", "token_expired")


def test_the_strategy_refuses_an_unknown_trigger() -> None:
    with pytest.raises(ValueError, match="unknown triggers \\['nope'\\]"):
        webhook_payloads(["nope"])
