"""Webhook delivery levers over real HTTP: duplicate, delay, hold and release, drop, fail_first,
resend, and listing deliveries by state (issue 26).

Each test serves the mock on a free port, points the default project at a real
:class:`WebhookReceiver`, sets the levers through ``PUT /__admin/projects/default/
webhook-delivery`` and checks what arrives (order, count, timing) and what the delivery
records say (``delivery_id``, ``state``).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from conftest import ADMIN
from idv_mock import Service, ServiceConfig
from idv_mock.delivery.receiver import WebhookReceiver

LEVERS = "/__admin/projects/default/webhook-delivery"
WEBHOOKS = "/__admin/projects/default/webhooks"


@pytest.fixture
def service() -> Iterator[Service]:
    svc = Service(ServiceConfig(seed_count=3, webhook_backoff=(0.05, 0.05)))
    yield svc
    svc.close()


def levers(http: httpx.Client, doc: dict[str, Any]) -> dict[str, Any]:
    r = http.put(LEVERS, json=doc)
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


def create(http: httpx.Client, result: str = "approved") -> str:
    """A submission with the webhook its result sends at once (``submit`` for pending,
    else only ``approved`` or ``rejected``); its id."""
    r = http.post(
        "/__admin/projects/default/submissions",
        params={"fire_webhooks": "true"},
        json={"kyc": {"result": result}},
    )
    assert r.status_code == 201, r.text
    return str(r.json()["submission_id"])


def decide(http: httpx.Client, sid: str, status: str = "approved") -> None:
    """A reviewer's decision by PATCH kycStatus: ``updated``, then the result."""
    r = http.patch(
        "/v3/submission",
        json={"submissionId": sid, "admin": ADMIN, "data": {"kycStatus": status}},
    )
    assert r.status_code == 200, r.text


def pending_then(http: httpx.Client, status: str = "approved") -> str:
    """One applicant's whole story: pending at submission (``submit``), then decided
    (``updated``, then ``approved`` or ``rejected``); its id."""
    sid = create(http, "pending")
    decide(http, sid, status)
    return sid


STORY = ["submit", "updated", "approved"]  # the webhooks of pending_then, in send order
EVENTS = ["submission." + trigger for trigger in STORY]


def records(http: httpx.Client, state: str | None = None) -> list[dict[str, Any]]:
    r = http.get(WEBHOOKS, params={"state": state} if state else None)
    assert r.status_code == 200, r.text
    return r.json()["deliveries"]  # type: ignore[no-any-return]


def triggers(receiver: WebhookReceiver) -> list[str]:
    return [item.body["webhook_trigger"] for item in receiver.received]


# --- the levers document ---
def test_levers_read_back_and_empty_restores_prompt(http: httpx.Client) -> None:
    assert http.get(LEVERS).json() == {}
    for given in ({"duplicate": 1, "hold": False}, {"drop": {"share": 0.5}}):
        assert levers(http, given) == given  # read back as given, defaults not added
        assert http.get(LEVERS).json() == given
    doc = {
        "duplicate": 2,
        "delay_seconds": 1.5,
        "hold": True,
        "drop": {"share": 0.25, "seed": 7},
        "fail_first": 1,
    }
    assert levers(http, doc) == doc
    assert http.get(LEVERS).json() == doc
    assert levers(http, {}) == {}
    assert http.get(LEVERS).json() == {}


@pytest.mark.parametrize(
    "doc",
    [
        {"duplicate": 0},
        {"delay_seconds": -1},
        {"hold": "yes"},
        {"drop": {"first": 1, "share": 0.5}},
        {"drop": {"share": 1.5}},
        {"fail_first": -1},
        {"retry": 3},
        [],
    ],
)
def test_bad_levers_are_refused_and_change_nothing(http: httpx.Client, doc: Any) -> None:
    levers(http, {"duplicate": 3})
    r = http.put(LEVERS, json=doc)
    assert r.status_code == 400
    assert r.json()["message"] in (
        "invalid webhook delivery levers",
        "the body must be a JSON object",
    )
    assert http.get(LEVERS).json() == {"duplicate": 3}


def test_unknown_project_is_404(http: httpx.Client) -> None:
    assert http.get("/__admin/projects/nope/webhook-delivery").status_code == 404
    assert http.put("/__admin/projects/nope/webhook-delivery", json={}).status_code == 404
    assert http.post("/__admin/projects/nope/webhooks/release", json={}).status_code == 404
    assert http.post("/__admin/projects/nope/webhooks/wh-1/resend").status_code == 404


# --- each lever ---
def test_prompt_delivery_records_delivery_id_and_state(
    http: httpx.Client, hook: WebhookReceiver, service: Service
) -> None:
    pending_then(http)
    hook.wait_for(3)
    assert service.webhooks.wait_idle()
    found = records(http)
    assert [(d["event"], d["state"]) for d in found] == [(e, "delivered") for e in EVENTS]
    assert all(d["delivery_id"] == d["id"] for d in found)
    assert triggers(hook) == STORY


def test_duplicate_delivers_each_webhook_n_times_with_the_same_payload(
    http: httpx.Client, hook: WebhookReceiver, service: Service
) -> None:
    levers(http, {"duplicate": 3})
    pending_then(http)
    hook.wait_for(9)
    assert service.webhooks.wait_idle()
    assert len(hook.received) == 9
    assert triggers(hook) == ["submit"] * 3 + ["updated"] * 3 + ["approved"] * 3
    for first in (0, 3, 6):
        copies = hook.received[first : first + 3]
        assert copies[0].body == copies[1].body == copies[2].body
    found = records(http, "delivered")
    assert len(found) == 9
    assert len({d["delivery_id"] for d in found}) == 9
    assert [d.get("copy", 1) for d in found] == [1, 2, 3] * 3


def test_hold_then_release_reversed_sends_approved_before_submit(
    http: httpx.Client, hook: WebhookReceiver, service: Service
) -> None:
    levers(http, {"hold": True})
    pending_then(http)
    held = records(http, "held")
    assert [d["event"] for d in held] == EVENTS
    assert hook.received == []
    r = http.post(WEBHOOKS + "/release", json={"order": "reversed"})
    assert r.status_code == 200
    assert r.json() == {"released": [d["delivery_id"] for d in reversed(held)]}
    hook.wait_for(3)
    assert service.webhooks.wait_idle()
    assert triggers(hook) == ["approved", "updated", "submit"]
    assert records(http, "held") == []
    assert len(records(http, "delivered")) == 3


def test_hold_then_release_reversed_sends_a_later_approval_before_the_rejection(
    http: httpx.Client, hook: WebhookReceiver, service: Service
) -> None:
    """The issue's case: one user rejected, then approved on a second look; the receiver
    gets the approval first and must not let the stale rejection win."""
    levers(http, {"hold": True})
    sid = pending_then(http, "rejected")
    decide(http, sid, "approved")
    held = records(http, "held")
    assert [d["webhook_trigger"] for d in held] == [*STORY[:2], "rejected", "updated", "approved"]
    http.post(WEBHOOKS + "/release", json={"order": "reversed"})
    hook.wait_for(5)
    assert triggers(hook) == ["approved", "updated", "rejected", "updated", "submit"]
    assert {item.body["submission_id"] for item in hook.received} == {sid}


def test_release_an_explicit_list_sends_only_those_in_that_order(
    http: httpx.Client, hook: WebhookReceiver, service: Service
) -> None:
    levers(http, {"hold": True})
    pending_then(http)
    ids = [d["delivery_id"] for d in records(http, "held")]
    r = http.post(WEBHOOKS + "/release", json={"order": [ids[2], ids[0]]})
    assert r.json() == {"released": [ids[2], ids[0]]}
    hook.wait_for(2)
    assert service.webhooks.wait_idle()
    assert triggers(hook) == ["approved", "submit"]
    assert [d["delivery_id"] for d in records(http, "held")] == [ids[1]]
    bad = http.post(WEBHOOKS + "/release", json={"order": [ids[1], "wh-999"]})
    assert bad.status_code == 400
    assert bad.json()["errors"] == ["wh-999"]
    assert [d["delivery_id"] for d in records(http, "held")] == [ids[1]]  # nothing released


def test_release_shuffle_is_seeded(http: httpx.Client, hook: WebhookReceiver) -> None:
    levers(http, {"hold": True})
    for _ in range(4):
        create(http)
    ids = [d["delivery_id"] for d in records(http, "held")]
    released = http.post(WEBHOOKS + "/release", json={"order": "shuffle", "seed": 3}).json()
    import random

    expected = list(ids)
    random.Random(3).shuffle(expected)
    assert released == {"released": expected}
    assert expected != ids


def test_release_queued_keeps_the_order_and_later_webhooks_are_held_again(
    http: httpx.Client, hook: WebhookReceiver, service: Service
) -> None:
    levers(http, {"hold": True})
    pending_then(http)
    assert http.post(WEBHOOKS + "/release", json={}).status_code == 200
    hook.wait_for(3)
    assert triggers(hook) == STORY
    pending_then(http, "rejected")
    assert [d["event"] for d in records(http, "held")] == [
        "submission.submit",
        "submission.updated",
        "submission.rejected",
    ]


def test_drop_first_records_dropped_and_sends_the_rest(
    http: httpx.Client, hook: WebhookReceiver, service: Service
) -> None:
    levers(http, {"drop": {"first": 1}})
    pending_then(http)
    hook.wait_for(2)
    assert service.webhooks.wait_idle()
    assert triggers(hook) == ["updated", "approved"]
    (dropped,) = records(http, "dropped")
    assert dropped["event"] == "submission.submit"
    assert dropped["attempts"] == []
    assert [d["event"] for d in records(http, "delivered")] == EVENTS[1:]


def test_drop_share_is_seeded_and_deterministic(
    http: httpx.Client, hook: WebhookReceiver, service: Service
) -> None:
    outcomes = []
    for _ in range(2):
        levers(http, {"drop": {"share": 0.5, "seed": 11}})  # set again: the draw restarts
        service.webhooks.clear("default")
        for _ in range(5):
            create(http)
        assert service.webhooks.wait_idle()
        outcomes.append([d["state"] for d in records(http)])
    assert outcomes[0] == outcomes[1]
    assert set(outcomes[0]) == {"dropped", "delivered"}


def test_fail_first_exercises_the_retries(
    http: httpx.Client, hook: WebhookReceiver, service: Service
) -> None:
    levers(http, {"fail_first": 2})
    create(http, "pending")  # one webhook: submit
    hook.wait_for(1)
    assert service.webhooks.wait_idle()
    assert len(hook.received) == 1  # failed attempts are never sent
    (record,) = records(http)
    assert record["state"] == "delivered"
    assert [(a["attempt"], a["status_code"]) for a in record["attempts"]] == [
        (1, 503),
        (2, 503),
        (3, 200),
    ]
    assert [a.get("simulated", False) for a in record["attempts"]] == [True, True, False]


def test_fail_first_beyond_the_attempts_fails_the_delivery(
    http: httpx.Client, hook: WebhookReceiver, service: Service
) -> None:
    levers(http, {"fail_first": 3})
    create(http, "pending")
    assert service.webhooks.wait_idle()
    assert hook.received == []
    (record,) = records(http, "failed")
    assert len(record["attempts"]) == 3


def test_delay_waits_on_real_time(
    http: httpx.Client, hook: WebhookReceiver, service: Service
) -> None:
    levers(http, {"delay_seconds": 0.4})
    started = time.monotonic()
    pending_then(http)
    assert [d["state"] for d in records(http)] == ["delayed"] * 3
    hook.wait_for(3, timeout=5)
    assert time.monotonic() - started >= 0.4
    assert triggers(hook) == STORY


def freeze(http: httpx.Client) -> None:
    r = http.patch("/__admin/projects/default", json={"options": {"clock_mode": "frozen"}})
    assert r.status_code == 200, r.text


def advance(http: httpx.Client, seconds: float) -> None:
    r = http.post("/__admin/projects/default/clock/advance", json={"seconds": seconds})
    assert r.status_code == 200, r.text


def test_delay_follows_the_projects_clock_when_moved(
    http: httpx.Client, hook: WebhookReceiver, service: Service
) -> None:
    """On a frozen project an hour's delay is an hour of the project's clock: nothing goes
    out until an advance moves it past the delay, and then at once (the receiver's few
    seconds of patience are all the real time the test allows)."""
    freeze(http)
    levers(http, {"delay_seconds": 3600})
    pending_then(http)
    advance(http, 3599)
    time.sleep(0.05)  # the woken timer thread had its chance: nothing is due yet
    assert hook.received == []
    assert [d["state"] for d in records(http)] == ["delayed"] * 3
    advance(http, 1)
    hook.wait_for(3)
    assert triggers(hook) == STORY
    assert service.webhooks.wait_idle()
    assert [d["state"] for d in records(http)] == ["delivered"] * 3


# --- resend and listing ---
def test_resend_sends_a_dropped_webhook_with_the_same_payload(
    http: httpx.Client, hook: WebhookReceiver, service: Service
) -> None:
    levers(http, {"drop": {"first": 3}})
    pending_then(http)
    assert service.webhooks.wait_idle()
    dropped = records(http, "dropped")
    assert [d["event"] for d in dropped] == EVENTS and hook.received == []
    lost = dropped[2]  # the result
    r = http.post(f"{WEBHOOKS}/{lost['delivery_id']}/resend")
    assert r.status_code == 201
    again = r.json()
    assert again["resend_of"] == lost["delivery_id"]
    assert again["delivery_id"] != lost["delivery_id"]
    (item,) = hook.wait_for(1)
    assert item.body == lost["payload"]
    assert item.body["webhook_trigger"] == "approved"
    assert service.webhooks.wait_idle()
    assert [d["delivery_id"] for d in records(http, "delivered")] == [again["delivery_id"]]
    assert len(records(http, "dropped")) == 3  # the record of what was dropped stays


def test_resend_an_unknown_delivery_is_404(http: httpx.Client) -> None:
    r = http.post(WEBHOOKS + "/wh-404/resend")
    assert r.status_code == 404
    assert r.json()["message"] == "delivery wh-404 not found"


def test_list_by_an_unknown_state_is_400(http: httpx.Client) -> None:
    r = http.get(WEBHOOKS, params={"state": "lost"})
    assert r.status_code == 400


def test_levers_travel_in_the_state_document_and_reset_restores_prompt(
    http: httpx.Client,
) -> None:
    levers(http, {"duplicate": 2, "drop": {"first": 1}})
    state = http.get("/__admin/state").json()
    (default,) = [p for p in state["projects"] if p["project"]["project_id"] == "default"]
    assert default["webhook_delivery"] == {"duplicate": 2, "drop": {"first": 1}}
    assert http.post("/__admin/reset").status_code == 200
    assert http.get(LEVERS).json() == {}
    assert http.put("/__admin/state", json=state).status_code == 200
    assert http.get(LEVERS).json() == {"duplicate": 2, "drop": {"first": 1}}


def test_events_limit_the_levers_to_the_named_events(
    http: httpx.Client, hook: WebhookReceiver, service: Service
) -> None:
    levers(http, {"events": ["submission.approved"], "drop": {"share": 1.0}})
    pending_then(http)
    hook.wait_for(2)
    assert service.webhooks.wait_idle()
    assert triggers(hook) == ["submit", "updated"]
    assert [(d["event"], d["state"]) for d in records(http)] == [
        ("submission.submit", "delivered"),
        ("submission.updated", "delivered"),
        ("submission.approved", "dropped"),
    ]


def test_auto_release_sends_a_held_batch_by_itself_in_the_order_given(
    http: httpx.Client, hook: WebhookReceiver, service: Service
) -> None:
    freeze(http)
    auto = {"after_seconds": 600, "order": "reversed"}
    levers(http, {"hold": True, "auto_release": auto})
    assert http.get(LEVERS).json()["auto_release"] == auto
    pending_then(http)
    advance(http, 599)
    time.sleep(0.05)  # the woken timer thread had its chance: the batch is not due yet
    assert [d["state"] for d in records(http)] == ["held"] * 3
    advance(http, 1)
    hook.wait_for(3)
    assert triggers(hook) == ["approved", "updated", "submit"]


# --- scenario given, in-process and over HTTP ---
SCENARIO = """
name: held webhooks
given:
  webhook_delivery: [{levers: {hold: true}}]
  submissions:
    - {id: ann, overrides: {kyc: {result: pending}}, fire_webhooks: true}
    - {id: bob, overrides: {kyc: {result: approved}}, fire_webhooks: true}
steps: []
"""


def test_scenario_given_sets_levers_before_its_submissions(
    service: Service, hook: WebhookReceiver, tmp_path: Any
) -> None:
    from idv_mock import scenarios

    path = tmp_path / "held.yaml"
    path.write_text(SCENARIO)
    scenarios.apply_given(service, scenarios.load(path))
    assert service.delivery.levers("default") == {"hold": True}
    held = service.delivery.in_state("default", "held")
    assert [(d["event"], d["payload"]["submission_id"]) for d in held] == [
        ("submission.submit", "sub-ann"),
        ("submission.approved", "sub-bob"),
    ]


def test_scenario_given_over_http_sets_levers(http: httpx.Client, tmp_path: Any) -> None:
    from idv_mock.scenarios.control import HttpControl

    HttpControl(http).delivery("default", {"duplicate": 2})
    assert http.get(LEVERS).json() == {"duplicate": 2}
