"""Deeply nested JSON (issue 14, defect 4): refused with the call's own 400 before anything
is stored, and never a 500 afterwards, in the journal above all."""

from __future__ import annotations

from typing import Any

from starlette.testclient import TestClient

from conftest import assert_refused, snapshot
from idv_mock import Service


def nested(levels: int, inner: Any = 1) -> Any:
    value = inner
    for _ in range(levels):
        value = {"a": value}
    return value


def deep_text(levels: int) -> bytes:
    return b'{"a":' * levels + b"1" + b"}" * levels


def test_a_deep_patch_is_a_parse_error_and_the_journal_still_reads(
    client: TestClient, service: Service
) -> None:
    """The probe: a 300-level PATCH answered 400, then every journal read answered 500."""
    body = {"submissionId": "x", "admin": "admin@example.com", "data": nested(300)}
    assert_refused(
        lambda: client.patch("/v3/submission", json=body),
        400,
        {"errorCode": "parse_error", "message": "data parsing error. please check input data."},
        service=service,
    )
    r = client.get("/__admin/projects/default/requests")
    assert r.status_code == 200
    [entry] = r.json()["requests"]
    assert entry["method"] == "PATCH"
    assert isinstance(entry["body"], str)  # kept as text: too deep to encode again
    assert entry["body"].startswith('{"submissionId":"x"')


def test_a_fault_rule_with_a_deep_body_is_refused_and_not_stored(
    client: TestClient, service: Service
) -> None:
    rule = {"match": {"path": "/v3/submission"}, "respond": {"status": 200, "body": nested(300)}}
    r = client.post("/__admin/projects/default/faults", json=rule)
    assert r.status_code == 400
    assert client.get("/__admin/projects/default/faults").json() == {"faults": []}


def test_a_deep_submission_through_the_control_api_changes_nothing(
    client: TestClient, service: Service
) -> None:
    """The probe: a deep ``aml.raw_data`` answered 500 and the clock had moved."""
    before = snapshot(service)
    r = client.post(
        "/__admin/projects/default/submissions", json={"aml": {"raw_data": nested(300)}}
    )
    assert r.status_code == 400
    assert snapshot(service) == before


def test_deep_documents_are_refused_in_process_too(service: Service) -> None:
    before = snapshot(service)
    for call in (
        lambda: service.calls.add_fault(
            "default", {"match": {"path": "/v3/x"}, "respond": {"status": 200, "body": nested(90)}}
        ),
        lambda: service.create_submission("default", {"aml": {"raw_data": nested(90)}}),
    ):
        try:
            call()
        except Exception as exc:  # the backend's refusal, never a RecursionError
            assert type(exc).__name__ == "InvalidInput", exc
        else:
            raise AssertionError("a document 90 levels deep was accepted")
    assert snapshot(service) == before


def test_every_api_call_refuses_deep_bodies_with_a_4xx(client: TestClient) -> None:
    calls = [
        ("PATCH", "/v3/submission"),
        ("DELETE", "/v3/submission/partial?submission_id=x"),
        ("POST", "/v3/submission/aml"),
        ("POST", "/v3/submission/aml/monitor/w1"),
        ("DELETE", "/v3/submission/aml/monitor/w1"),
        ("POST", "/v3/projection"),
        ("PUT", "/__admin/state"),
        ("POST", "/__admin/projects"),
        ("POST", "/__admin/projects/default/watchlist"),
        ("POST", "/__admin/projects/default/worklists"),
    ]
    for method, url in calls:
        r = client.request(method, url, content=deep_text(500))
        assert 400 <= r.status_code < 500, (method, url, r.status_code, r.text)
    assert client.get("/__admin/projects/default/requests").status_code == 200


def test_the_limit_is_sixty_four_levels(client: TestClient) -> None:
    """The root object, ``aml`` and 62 levels of ``raw_data``: 64, taken; one more, refused."""
    url = "/__admin/projects/default/submissions"
    assert client.post(url, json={"aml": {"raw_data": nested(62)}}).status_code == 201
    r = client.post(url, json={"aml": {"raw_data": nested(63)}})
    assert (r.status_code, r.json()) == (
        400,
        {"message": "JSON nested deeper than 64 levels is refused", "errors": []},
    )
