"""Contract coverage (issue 36): the catalogue, what each project showed, over HTTP.

A live server on a free port, a real webhook receiver; every item is checked by what
``GET /__admin/coverage`` answers (schema-checked by the ``http`` fixture).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from idv_mock import Service, ServiceConfig
from idv_mock.backend.events import EVENT_NAMES
from idv_mock.backend.liveform_flow import STEPS
from idv_mock.delivery.receiver import WebhookReceiver
from idv_mock.ground import crypto, errors, operations

COVERAGE = "/__admin/coverage"


@pytest.fixture
def service() -> Iterator[Service]:
    svc = Service(ServiceConfig(seed_count=3, webhook_backoff=(0.01, 0.01)))
    yield svc
    svc.close()


def report(http: httpx.Client, project: str | None = "default") -> dict[str, Any]:
    r = http.get(COVERAGE, params={"project": project} if project else {})
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


def count(doc: dict[str, Any], item_id: str) -> int:
    found = [i for i in doc["items"] if i["id"] == item_id]
    assert len(found) == 1, item_id
    return int(found[0]["count"])


def item(doc: dict[str, Any], item_id: str) -> dict[str, Any]:
    return next(i for i in doc["items"] if i["id"] == item_id)


def test_the_catalogue_is_derived_from_the_mocks_tables(service: Service) -> None:
    doc = service.coverage.report()
    ids = [i["id"] for i in doc["items"]]
    assert len(ids) == len(set(ids)) == doc["catalogue"]
    expected_responses = 0
    for op in operations.operations():
        if op.family is None:
            continue
        successes = [s for s in op.entry["responses"] if int(s) < 400]
        expected_responses += len(successes) + len({e.key for e in op.family.entries})
    kinds = [i["kind"] for i in doc["items"]]
    assert kinds.count("response") == expected_responses
    assert [i for i in ids if i.startswith("webhook ")] == [f"webhook {t}" for t in EVENT_NAMES]
    assert [i for i in ids if i.startswith("time ")] == [
        "time token_expiry",
        "time incomplete_timeout",
        "time monitoring_cycle",
    ]
    pages = {e.key for e in errors.LIVEFORM.entries}
    assert kinds.count("page") == len(STEPS) + len(pages)
    for example in (
        "GET /v3/submission 200",
        "GET /v3/submission 400 invalid_parameter",
        "webhook approved",
        "delivery duplicate",
        "page /error-page/expired-start-valid-until",
        "page /liveform/s/{session}/consent",
        "DELETE /v3/submission/aml/monitor/{worklistId} 400 missing_records",
    ):
        assert example in ids
    assert doc["met"] == 0
    assert doc["never"][0] == "webhook created"  # ranked: webhooks, time, delivery, errors
    order = [i["kind"] for i in doc["items"] if i["id"] in doc["never"]]
    assert set(order) == {"response", "webhook", "time", "delivery", "page"}
    ranked_kinds = [next(i["kind"] for i in doc["items"] if i["id"] == n) for n in doc["never"]]
    first_page = ranked_kinds.index("page")
    assert "webhook" not in ranked_kinds[ranked_kinds.index("time") :]
    assert set(ranked_kinds[first_page:]) == {"page"}


def test_responses_are_counted_by_operation_status_and_error(http: httpx.Client) -> None:
    assert http.get("/v3/submission").status_code == 200
    assert http.get("/v3/submission").status_code == 200
    r = http.get("/v3/submission", params={"foo": "1"})
    assert r.status_code == 400 and r.json()["errorCode"] == "invalid_parameter"
    r = http.delete("/v3/submission", params={"submission_id": "nope"})
    assert r.status_code == 400 and r.json()["message"] == errors.NO_SUBMISSION_DATA
    assert http.get("/v3/projection/nope").status_code == 404
    doc = report(http)
    assert count(doc, "GET /v3/submission 200") == 2
    assert count(doc, "GET /v3/submission 400 invalid_parameter") == 1
    assert count(doc, "DELETE /v3/submission 400 submission_not_found") == 1
    assert count(doc, "GET /v3/projection/{projectionId} 404 not_found") == 1
    assert count(doc, "GET /v3/submission 400 invalid_format") == 0
    assert doc["met"] == 4
    assert "GET /v3/submission 200" not in doc["never"]
    assert "GET /v3/submission 400 invalid_format" in doc["never"]
    assert item(doc, "GET /v3/submission 400 invalid_format")["how"].startswith("send a call")


def test_a_fault_rule_error_is_counted_as_that_error(http: httpx.Client) -> None:
    rule = {"match": {"method": "GET", "path": "/v3/submission"}, "error": "processing_error"}
    assert http.post("/__admin/projects/default/faults", json=rule).status_code == 201
    assert http.get("/v3/submission").status_code == 500
    assert count(report(http), "GET /v3/submission 500 processing_error") == 1


def create(http: httpx.Client, result: str) -> None:
    r = http.post(
        "/__admin/projects/default/submissions",
        params={"fire_webhooks": "true"},
        json={"kyc": {"result": result}},
    )
    assert r.status_code == 201, r.text


def test_webhooks_and_the_receivers_answers(
    http: httpx.Client, hook: WebhookReceiver, service: Service
) -> None:
    hook.statuses = [503, 404]  # the first attempts answered 503 and 404, the third 200
    create(http, "approved")
    hook.wait_for(3)
    assert service.webhooks.wait_idle()
    doc = report(http)
    approved = item(doc, "webhook approved")
    assert approved["count"] == 1  # one webhook, three attempts
    assert approved["receiver"] == {"5xx": 1, "4xx": 1, "2xx": 1}
    assert item(doc, "webhook rejected") == {**item(doc, "webhook rejected"), "count": 0}
    assert item(doc, "webhook rejected")["receiver"] == {}
    assert item(doc, "webhook rejected")["how"] == "idv-mock trigger rejected"


def test_an_unreachable_receiver(http: httpx.Client, service: Service) -> None:
    from conftest import free_port

    url = f"http://127.0.0.1:{free_port()}/hook"  # nobody listens there
    service.update_project("default", {"options": {"webhook_url": url}})
    create(http, "rejected")
    assert service.webhooks.wait_idle()
    rejected = item(report(http), "webhook rejected")
    assert rejected["count"] == 1
    assert rejected["receiver"] == {"unreachable": 3}


def test_delivery_faults(http: httpx.Client, hook: WebhookReceiver, service: Service) -> None:
    levers = {"duplicate": 2, "fail_first": 1}
    assert http.put("/__admin/projects/default/webhook-delivery", json=levers).status_code == 200
    create(http, "approved")
    hook.wait_for(2)
    assert service.webhooks.wait_idle()
    doc = report(http)
    assert count(doc, "delivery duplicate") == 1
    assert count(doc, "delivery fail_first") == 1
    assert count(doc, "delivery hold") == 0
    # the attempt failed on purpose is no receiver's answer: two webhooks, each 2xx once
    assert item(doc, "webhook approved")["receiver"] == {"2xx": 2}
    assert count(doc, "webhook approved") == 2
    assert http.put("/__admin/projects/default/webhook-delivery", json={"hold": True})
    create(http, "rejected")
    assert count(report(http), "delivery hold") == 1


def test_time_rules_and_pages(http: httpx.Client) -> None:
    with httpx.Client(base_url=str(http.base_url)) as pages:  # pages: no API schema check
        form_pages(http, pages)


def form_pages(http: httpx.Client, pages: httpx.Client) -> None:
    sealed = crypto.encrypt({"token": "tok-12345678"}, "mock-api-key")
    first = pages.get("/liveform/", params={"pid": "default", "encrypted": sealed})
    assert first.status_code == 303
    page = pages.get(first.headers["location"])
    assert page.status_code == 200
    doc = report(http)
    assert count(doc, "page /liveform/s/{session}/consent") == 1
    assert count(doc, "time token_expiry") == 0
    advanced = http.post("/__admin/projects/default/clock/advance", json={"seconds": 86400})
    assert advanced.status_code == 200
    fired = {f["what"] for f in advanced.json()["fired"]}
    assert fired == {"token_expiry"}  # the form's timeout starts at its document step
    doc = report(http)
    assert count(doc, "time token_expiry") == 1
    assert count(doc, "time incomplete_timeout") == 0
    assert count(doc, "time monitoring_cycle") == 0
    expired = "2000-01-01T00:00:00Z"
    sealed = crypto.encrypt({"startValidUntil": expired}, "mock-api-key")
    first = pages.get("/liveform/", params={"pid": "default", "encrypted": sealed})
    assert "/error-page/expired-start-valid-until" in first.headers["location"]
    assert pages.get(first.headers["location"]).status_code == 400
    assert count(report(http), "page /error-page/expired-start-valid-until") == 1
    unknown = pages.get("/liveform/", params={"pid": "nobody"})
    assert pages.get(unknown.headers["location"]).status_code == 404
    assert count(report(http, None), "page /error-page/bad-path") == 1  # an unknown project
    assert count(report(http), "page /error-page/bad-path") == 0


def test_reset_keeps_the_counts_and_delete_clears_them(http: httpx.Client) -> None:
    assert http.get("/v3/submission").status_code == 200
    assert http.post("/__admin/projects/default/reset").status_code == 200
    assert http.post("/__admin/reset").status_code == 200
    assert count(report(http), "GET /v3/submission 200") == 1
    r = http.delete(COVERAGE, params={"project": "default"})
    assert r.status_code == 200 and r.json() == {"cleared": ["default"]}
    assert report(http)["met"] == 0
    assert http.get("/v3/submission").status_code == 200
    assert http.delete(COVERAGE).json() == {"cleared": ["default"]}
    doc = report(http, None)
    assert doc["met"] == 0 and len(doc["never"]) == doc["catalogue"]


def test_an_unknown_project_is_404(http: httpx.Client) -> None:
    for method in ("GET", "DELETE"):
        r = http.request(method, COVERAGE, params={"project": "nobody"})
        assert r.status_code == 404
        assert r.json()["message"] == "project nobody not found"


def test_every_project_or_one(http: httpx.Client, service: Service) -> None:
    service.create_project({"project_id": "other", "api_key": "other-key"})
    assert http.get("/v3/submission", headers={"x-api-key": "other-key"}).status_code == 200
    assert http.get("/v3/submission", params={"foo": "x"}).status_code == 400
    assert count(report(http, "other"), "GET /v3/submission 200") == 1
    assert count(report(http, "other"), "GET /v3/submission 400 invalid_parameter") == 0
    every = report(http, None)
    assert count(every, "GET /v3/submission 200") == 1
    assert count(every, "GET /v3/submission 400 invalid_parameter") == 1
    assert every["met"] == 2


def test_paths_with_ids_count_under_their_operation(http: httpx.Client, service: Service) -> None:
    """A load test on ids keeps one count per operation, not one per id."""
    for n in range(30):
        assert http.get(f"/v3/projection/p-{n}").status_code == 404
    assert http.get("/v3/nowhere").status_code == 404  # no operation's: not counted
    assert count(report(http), "GET /v3/projection/{projectionId} 404 not_found") == 30
    assert len(service.coverage.counts.projects["default"].responses) == 1
