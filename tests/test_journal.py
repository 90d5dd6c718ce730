"""Request journal, verification helpers, per-project reset and per-test projects."""

from __future__ import annotations

import time

import pytest
from starlette.testclient import TestClient

from conftest import some_submission
from idv_mock import Service, ServiceConfig
from idv_mock.ground import crypto

REQUESTS = "/__admin/projects/default/requests"


def test_every_api_call_is_recorded_oldest_first(client: TestClient, service: Service) -> None:
    sid = some_submission(service)["submission_id"]
    client.get("/v3/submission", params={"count": "1"})
    body = {"submissionId": sid, "admin": "admin@example.com", "data": {"memo": "m"}}
    client.patch("/v3/submission", json=body)
    client.get("/v3/submission", params={"count": "0"})
    calls = client.get(REQUESTS).json()["requests"]
    assert [(c["method"], c["status"]) for c in calls] == [
        ("GET", 200),
        ("PATCH", 200),
        ("GET", 400),
    ]
    assert calls[0]["query"] == {"count": "1"}
    assert calls[1]["body"] == body
    assert calls[1]["response"] == {"message": "success to edit.", "statusCode": 200}
    assert calls[2]["response"] == {
        "errorCode": "invalid_format",
        "message": "invalid format: count",
    }
    assert calls[0]["headers"]["x-api-key"] == "****"
    assert all(c["duration_ms"] >= 0 for c in calls)


def test_filter_by_method_and_path_glob(client: TestClient) -> None:
    client.get("/v3/submission")
    client.get("/v3/projection")
    client.delete("/v3/submission/partial", params={"submission_id": "x", "fields": "email"})
    assert len(client.get(REQUESTS, params={"method": "get"}).json()["requests"]) == 2
    found = client.get(REQUESTS, params={"path": "/v3/submission*"}).json()["requests"]
    assert [c["path"] for c in found] == ["/v3/submission", "/v3/submission/partial"]


def test_encrypted_bodies_are_recorded_decrypted(client: TestClient, service: Service) -> None:
    service.create_project(
        {"project_id": "sec", "api_key": "sec-key", "options": {"secure_transfer": True}}
    )
    data = crypto.encrypt({"submission_id": "abc"}, "sec-key")
    client.get("/v3/submission", params={"data": data}, headers={"x-api-key": "sec-key"})
    calls = client.get("/__admin/projects/sec/requests").json()["requests"]
    assert calls[0]["decrypted"] == {"submission_id": "abc"}
    assert client.get(REQUESTS).json() == {"requests": []}  # other projects see nothing


def test_unknown_keys_and_control_calls_are_not_recorded(raw_client: TestClient) -> None:
    raw_client.get("/v3/submission", headers={"x-api-key": "nope"})
    raw_client.get("/__admin/projects")
    assert raw_client.get(REQUESTS).json() == {"requests": []}


def test_clear_and_bound() -> None:
    service = Service(ServiceConfig(seed_count=1))
    service.project("default").journal.size = 3
    with TestClient(__import__("idv_mock").create_app(service)) as c:
        for n in range(5):
            c.get(
                "/v3/submission",
                params={"count": str(n + 1)},
                headers={"x-api-key": "mock-api-key"},
            )
        calls = c.get(REQUESTS).json()["requests"]
        assert [c_["query"]["count"] for c_ in calls] == ["3", "4", "5"]
        assert c.delete(REQUESTS).json() == {"removed": 3}
        assert c.get(REQUESTS).json() == {"requests": []}


def test_reset_of_one_project(client: TestClient, service: Service) -> None:
    service.create_project({"project_id": "p2", "api_key": "k2"})
    service.create_submission("p2")
    sid = some_submission(service)["submission_id"]
    client.delete("/v3/submission", params={"submission_id": sid})
    r = client.post("/__admin/projects/default/reset")
    assert r.status_code == 200
    assert "status" not in service.stored_submission("default", sid)
    assert len(service.project("p2").store) == 1  # untouched
    assert client.post("/__admin/projects/p2/reset").json()["submission_count"] == 0
    assert client.post("/__admin/projects/nope/reset").status_code == 404


def test_reset_of_a_project_with_1000_submissions_is_quick() -> None:
    """Timing is printed for the record, not asserted (bench/ measures it properly)."""
    service = Service(ServiceConfig(seed_count=1000))
    started = time.perf_counter()
    service.reset_project("default")
    took = (time.perf_counter() - started) * 1000
    print(f"reset of 1000 submissions: {took:.1f} ms")
    assert len(service.project("default").store) == 1000


PLUGIN_TEST = """
import httpx

def test_verify(idv_server):
    httpx.get(idv_server.base_url + "/submission", params={"count": "1"},
              headers={"x-api-key": idv_server.api_key})
    idv_server.assert_called("GET", "/v3/submission", times=1)
    try:
        idv_server.assert_called("PATCH", "/v3/submission")
    except AssertionError as exc:
        assert "GET /v3/submission {'count': '1'}" in str(exc)
    else:
        raise AssertionError("no failure")

def test_own_project_a(idv_project):
    url = idv_project.admin_url + f"/projects/{idv_project.project_id}/submissions"
    assert httpx.post(url, json={"submission_id": "same"}).status_code == 201

def test_own_project_next_to_the_resetting_fixtures(idv_project, idv_server, idv_client):
    r = httpx.get(idv_project.base_url + "/submission", headers={"x-api-key": idv_project.api_key})
    assert r.json() == {"Items": []}
    key = {"x-api-key": idv_project.api_key}
    with idv_project.fault({"match": {"path": "/v3/submission"}, "error": "invalid_admin"}):
        r = httpx.get(idv_project.base_url + "/submission", headers=key)
        assert r.json()["errorCode"] == "invalid_admin"

def test_a_misspelled_fault_error_is_refused(idv_server):
    import pytest
    typo = {"match": {"path": "/v3/submission"}, "error": "Data Procesing Error."}
    with pytest.raises(ValueError), idv_server.fault(typo):
        pass

def test_own_project_b(idv_project):
    r = httpx.get(idv_project.base_url + "/submission", headers={"x-api-key": idv_project.api_key})
    assert r.json() == {"Items": []}
"""


def test_plugin_verification_and_own_projects(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_it=PLUGIN_TEST)
    pytester.runpytest_subprocess("--idv-mock-seed-count", "3").assert_outcomes(passed=5)


def test_empty_filters_filter_nothing(client: TestClient) -> None:
    client.get("/v3/submission")
    assert len(client.get(REQUESTS + "?method=&path=").json()["requests"]) == 1


def test_reset_of_an_imported_project(client: TestClient, service: Service) -> None:
    state = client.get("/__admin/state").json()
    extra = {**state["projects"][0], "project": {**state["projects"][0]["project"],
             "project_id": "imp", "api_key": "imp-key"}}  # fmt: skip
    state["projects"].append(extra)
    assert client.put("/__admin/state", json=state).status_code == 200
    service.create_submission("imp")
    r = client.post("/__admin/projects/imp/reset")
    assert (r.status_code, r.json()["submission_count"]) == (200, 30)


def test_journal_size_comes_from_the_config() -> None:
    service = Service(ServiceConfig(seed_count=0, journal_size=2))
    assert service.project("default").journal.size == 2
    service.create_project({"project_id": "p", "api_key": "k"})
    assert service.project("p").journal.size == 2


def test_large_responses_are_kept_cut_and_marked(client: TestClient) -> None:
    page = client.get("/v3/submission", params={"count": "30"})
    assert len(page.content) > 16 * 1024
    [call] = client.get(REQUESTS).json()["requests"]
    assert call["response"] == page.content[: 16 * 1024].decode()
    assert call["truncated"] == {"kept_bytes": 16 * 1024, "response_bytes": len(page.content)}
