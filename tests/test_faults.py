"""Fault rules: every fault-only error of the spec is reachable, exact, and harmless."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

from conftest import assert_refused, snapshot, some_submission
from idv_mock import Service
from idv_mock.ground import crypto

FAULTS = "/__admin/projects/default/faults"


def add_rule(client: TestClient, rule: dict[str, Any]) -> dict[str, Any]:
    r = client.post(FAULTS, json=rule)
    assert r.status_code == 201, r.text
    return dict(r.json())


@pytest.mark.parametrize(
    ("method", "path", "error", "status", "body"),
    [
        ("GET", "/v3/submission", "invalid_admin", 400,
         {"errorCode": "invalid_admin", "message": "Invalid admin"}),
        ("GET", "/v3/submission", "Failed to complete migration", 500,
         {"errorCode": "processing_error", "message": "Failed to complete migration"}),
        ("PATCH", "/v3/submission", "Data Processing Error.", 400,
         {"errorCode": "data_processing_error", "message": "Data Processing Error."}),
        ("DELETE", "/v3/submission", "delete Process FAIL", 400,
         {"message": "delete Process FAIL", "statusCode": 400}),
        ("DELETE", "/v3/submission/partial", "Internal server error", 400,
         {"message": "Internal server error", "statusCode": 400}),
    ],
)  # fmt: skip
def test_fault_only_errors_are_reachable(
    client: TestClient,
    service: Service,
    method: str,
    path: str,
    error: str,
    status: int,
    body: dict[str, Any],
) -> None:
    sid = some_submission(service)["submission_id"]
    add_rule(client, {"match": {"method": method, "path": path}, "error": error, "times": 1})
    before = snapshot(service)
    patch = {"submissionId": sid, "admin": "admin@example.com", "data": {"fullName": "X"}}
    params = (
        {"submission_id": sid, "fields": "email"} if "partial" in path else {"submission_id": sid}
    )
    kwargs: dict[str, Any] = {"json": patch} if method == "PATCH" else {"params": params}
    assert_refused(
        client.request(method, path, **kwargs), status, body, service=service, before=before
    )
    r = client.request(method, path, **kwargs)  # times: 1, so the call now goes through
    assert r.status_code == 200


def test_error_named_by_code_or_by_message_is_the_same(client: TestClient) -> None:
    add_rule(client, {"match": {"path": "/v3/submission"}, "error": "processing_error"})
    by_code = client.get("/v3/submission")
    client.delete(FAULTS)
    add_rule(client, {"match": {"path": "/v3/submission"}, "error": "Failed to complete migration"})
    assert client.get("/v3/submission").json() == by_code.json()


def test_data_processing_error_on_a_secure_project(client: TestClient, service: Service) -> None:
    service.create_project(
        {"project_id": "sec", "api_key": "sec-key", "admins": ["admin@example.com"],
         "options": {"secure_transfer": True}}
    )  # fmt: skip
    sid = service.create_submission("sec")["submission_id"]
    rule = {
        "match": {"method": "PATCH", "path": "/v3/submission"},
        "error": "data_processing_error",
    }
    assert client.post("/__admin/projects/sec/faults", json=rule).status_code == 201
    body = {"submissionId": sid, "admin": "admin@example.com", "data": {"memo": "m"}}
    form = {"data": crypto.encrypt(body, "sec-key")}
    r = client.patch("/v3/submission", data=form, headers={"x-api-key": "sec-key"})
    assert r.json() == {"errorCode": "data_processing_error", "message": "Data Processing Error."}
    assert service.stored_submission("sec", sid)["memo"]["text"] == ""


def test_respond_with_any_status_and_body(client: TestClient) -> None:
    add_rule(
        client,
        {"match": {"method": "GET", "path": "/v3/submission", "query": {"userid": "u1"}},
         "respond": {"status": 503, "body": {"message": "busy"}}},
    )  # fmt: skip
    assert client.get("/v3/submission", params={"userid": "u2"}).status_code == 200
    r = client.get("/v3/submission", params={"userid": "u1"})
    assert (r.status_code, r.json()) == (503, {"message": "busy"})


def test_body_subset_match(client: TestClient, service: Service) -> None:
    sid = some_submission(service)["submission_id"]
    add_rule(
        client,
        {"match": {"path": "/v3/submission", "body": {"data": {"gender": "male"}}},
         "error": "Data Processing Error."},
    )  # fmt: skip
    base = {"submissionId": sid, "admin": "admin@example.com"}
    assert (
        client.patch("/v3/submission", json={**base, "data": {"gender": "female"}}).status_code
        == 200
    )
    r = client.patch("/v3/submission", json={**base, "data": {"gender": "male", "memo": "x"}})
    assert r.json()["errorCode"] == "data_processing_error"


def test_rules_are_listed_with_hits_and_removed(client: TestClient) -> None:
    rule = add_rule(
        client, {"match": {"path": "/v3/submission*"}, "error": "Internal server error"}
    )
    assert rule["id"] and rule["hits"] == 0
    client.delete("/v3/submission/partial", params={"submission_id": "x", "fields": "email"})
    assert client.get(FAULTS).json()["faults"][0]["hits"] == 1
    assert client.delete(f"{FAULTS}/{rule['id']}").json() == {"removed": 1}
    assert client.delete(f"{FAULTS}/{rule['id']}").status_code == 404
    assert client.get(FAULTS).json() == {"faults": []}


def test_rules_belong_to_one_project(client: TestClient, service: Service) -> None:
    service.create_project({"project_id": "p2", "api_key": "k2"})
    add_rule(client, {"match": {"path": "/v3/submission"}, "error": "invalid_admin"})
    assert client.get("/v3/submission", headers={"x-api-key": "k2"}).status_code == 200
    assert client.get("/v3/submission").status_code == 400


def test_reset_removes_rules(client: TestClient) -> None:
    add_rule(client, {"match": {"path": "/v3/submission"}, "error": "invalid_admin"})
    client.post("/__admin/reset")
    assert client.get(FAULTS).json() == {"faults": []}


def test_probability_zero_never_fires(client: TestClient) -> None:
    add_rule(
        client, {"match": {"path": "/v3/submission"}, "error": "invalid_admin", "probability": 0}
    )
    assert all(client.get("/v3/submission").status_code == 200 for _ in range(5))


@pytest.mark.parametrize(
    "rule",
    [
        {"match": {"path": "/v3/submission"}, "error": "no such error"},
        {"match": {"method": "GET", "path": "/v3/submission"}, "error": "delete Process FAIL"},
        {"match": {"path": "/v3/nowhere"}, "error": "invalid_admin"},
        {"match": {"path": "/v3/submission"}, "error": "invalid_admin", "respond": {"status": 500}},
        {"match": {"path": "/v3/submission"}, "times": 0},
        {"match": {}},
        {"error": "invalid_admin"},
        {"match": {"path": "/v3/submission"}, "id": "mine"},
        {"match": {"path": "/v3/submission"}, "respond": {"status": 101}},
        {
            "match": {"path": "/v3/submission"},
            "respond": {"status": 200, "headers": {"Bad Name": "x"}},
        },
        {
            "match": {"path": "/v3/submission"},
            "respond": {"status": 200, "headers": {"x": "a\r\nb"}},
        },
    ],
)
def test_bad_rules_are_refused(client: TestClient, rule: dict[str, Any]) -> None:
    assert client.post(FAULTS, json=rule).status_code == 400
    assert client.get(FAULTS).json() == {"faults": []}


def test_rules_of_an_unknown_project(client: TestClient) -> None:
    rule = {"match": {"path": "/v3/submission"}, "error": "invalid_admin"}
    assert client.post("/__admin/projects/nope/faults", json=rule).status_code == 404
    assert client.get("/__admin/projects/nope/faults").status_code == 404


def test_python_api(service: Service) -> None:
    rule = service.calls.add_fault(
        "default", {"match": {"path": "/v3/submission"}, "error": "invalid_admin"}
    )
    assert service.calls.faults("default") == [rule]
    assert service.calls.remove_faults("default") == 1


@pytest.mark.live
def test_network_faults_over_real_http(service: Service) -> None:
    from conftest import LiveServer

    with LiveServer(service) as server, httpx.Client(timeout=10) as http:
        url = f"http://127.0.0.1:{server.port}/v3/submission"
        headers = {"x-api-key": "mock-api-key"}

        def once(kind: str) -> None:
            service.calls.add_fault(
                "default", {"match": {"path": "/v3/submission"}, "fault": kind, "times": 1}
            )

        once("malformed_json")
        r = http.get(url, headers=headers)
        assert r.status_code == 200 and r.headers["x-idv-mock-fault"]
        with pytest.raises(ValueError):
            r.json()
        once("empty_response")
        assert http.get(url, headers=headers).content == b""
        once("connection_reset")
        with pytest.raises(httpx.TransportError):
            http.get(url, headers=headers)
        assert http.get(url, headers=headers).status_code == 200  # the server is still up


def test_network_fault_with_a_delay_and_a_catalogue_error_are_exclusive(client: TestClient) -> None:
    rule = {
        "match": {"path": "/v3/submission"},
        "fault": "malformed_json",
        "error": "invalid_admin",
    }
    assert client.post(FAULTS, json=rule).status_code == 400
    ok = {"match": {"path": "/v3/submission"}, "fault": "empty_response", "delay_ms": 10}
    assert client.post(FAULTS, json=ok).status_code == 201


MONITOR, RECORD = "/v3/submission/aml/monitor/*", "/v3/submission/aml/monitor/*/*"
NAMED = {
    MONITOR: "/v3/submission/aml/monitor/{worklistId}",
    RECORD: "/v3/submission/aml/monitor/{worklistId}/{recordId}",
}


@pytest.mark.parametrize(
    ("method", "path", "error", "own"),
    [
        ("GET", RECORD, "all_submissions_failed", ("POST", MONITOR)),
        ("POST", MONITOR, "invalide_worklist", ("DELETE", MONITOR)),
        ("GET", RECORD, "Worklist is inactive", ("POST", MONITOR)),
    ],
)
def test_monitoring_errors_belong_to_their_own_call(
    client: TestClient, method: str, path: str, error: str, own: tuple[str, str]
) -> None:
    """On another call the error is refused, naming that call, and adds no rule; on its own
    call it is taken."""
    rule = {"match": {"method": method, "path": path}, "error": error}
    r = client.post(FAULTS, json=rule)
    why = f"{method} {NAMED[path]} has no error {error!r}"
    assert (r.status_code, r.json()) == (400, {"message": "invalid fault rule", "errors": [why]})
    assert client.get(FAULTS).json() == {"faults": []}
    add_rule(client, {"match": {"method": own[0], "path": own[1]}, "error": error})


def test_faulted_monitoring_errors_carry_their_whole_body(client: TestClient) -> None:
    add_rule(client, {"match": {"method": "POST", "path": "/v3/submission/aml/monitor/*"},
                      "error": "all_submissions_failed"})  # fmt: skip
    add_rule(client, {"match": {"method": "DELETE", "path": "/v3/submission/aml/monitor/*"},
                      "error": "invalid_record"})  # fmt: skip
    body = {"submissionIds": ["x"], "admin": "admin@example.com"}
    r = client.post("/v3/submission/aml/monitor/w", json=body)
    assert r.status_code == 500
    assert r.json() == {
        "errorCode": "all_submissions_failed", "errorMessage": "All submissions failed",
        "success": False, "successCount": 0, "failedCount": 0,
        "successResults": [], "failedResults": [],
    }  # fmt: skip
    r = client.request(
        "DELETE", "/v3/submission/aml/monitor/w", json={"admin": "a", "recordIds": ["r"]}
    )
    assert r.json()["errorMessage"] == "Some records do not exist"
    assert r.json()["details"][0]["error"]["code"] == "MAPI-001"


@pytest.mark.parametrize(
    ("respond", "why"),
    [
        ({"status": 204, "body": {"a": 1}}, "respond: status 204 has no body"),
        (
            {"status": 200, "headers": {"Content-Length": "9"}},
            "respond.headers: Content-Length is set by the server",
        ),
    ],
)
def test_responses_the_server_cannot_send_are_refused(
    client: TestClient, respond: dict[str, Any], why: str
) -> None:
    """Refused with the reason, and no rule is added: the next call answers as usual."""
    rule = {"match": {"path": "/v3/submission"}, "respond": respond}
    r = client.post(FAULTS, json=rule)
    assert (r.status_code, r.json()) == (400, {"message": "invalid fault rule", "errors": [why]})
    assert client.get(FAULTS).json() == {"faults": []}
    assert client.get("/v3/submission", headers={"x-api-key": "mock-api-key"}).status_code == 200
