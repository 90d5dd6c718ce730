"""Bad input of any kind: a documented 4xx, never a 500, and no change of state."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from conftest import snapshot, some_submission
from idv_mock import Service

BAD_BODIES = [
    b"",
    b"{",
    b"null",
    b"[]",
    b'"text"',
    b"\xff\xfe\x00garbage",
    b'{"submissionId": 1, "admin": "admin@example.com", "data": {"gender": "male"}}',
    b'{"submissionId": "x", "admin": ["a"], "data": {"gender": "male"}}',
    b'{"submissionId": "x", "admin": "admin@example.com", "data": [1]}',
    b'{"submissionId": "x", "admin": "admin@example.com", "data": {"gender": 1}}',
    b'{"submissionId": "x", "admin": "admin@example.com", "data": {"gender": null}}',
    b'{"submissionId": "x", "admin": "admin@example.com", "data": {"fullName": {"a": 1}}}',
    b'{"submissionId": "' + b"x" * 100_000 + b'", "admin": "a", "data": {"memo": "m"}}',
]


@pytest.mark.parametrize("body", BAD_BODIES)
def test_patch_bad_bodies(client: TestClient, service: Service, body: bytes) -> None:
    before = snapshot(service)
    r = client.patch("/v3/submission", content=body)
    assert r.status_code == 400
    assert set(r.json()) == {"errorCode", "message"}
    assert snapshot(service) == before


QUERIES = [
    "count=99999999999999999999999",
    "count=%00",
    "start_date=%FF%FE",
    "submission_id=" + "a" * 50_000,
    "userid=%C3%28",
    "email=%00%01",
    "request_type=KYC",
    "nextpage_id=a&nextpage_date=2024-01-01-00-00-00-000&count=1",
    "a=1&b=2",
    "=x",
    "&&&",
]


@pytest.mark.parametrize("query", QUERIES)
def test_get_odd_queries(client: TestClient, service: Service, query: str) -> None:
    before = snapshot(service)
    r = client.get("/v3/submission?" + query)
    assert r.status_code in (200, 400)
    assert snapshot(service) == before


@pytest.mark.parametrize(
    "query",
    [
        "fields=%FF",
        "fields=data&data_fields=%00",
        "submission_id=%FF&fields=email",
        "fields=" + "x," * 5000,
    ],
)
def test_partial_delete_odd_queries(client: TestClient, service: Service, query: str) -> None:
    before = snapshot(service)
    r = client.delete("/v3/submission/partial?" + query)
    assert r.status_code == 400
    assert snapshot(service) == before


def test_partial_delete_with_a_non_json_body(client: TestClient, service: Service) -> None:
    sid = some_submission(service)["submission_id"]
    before = snapshot(service)
    r = client.request(
        "DELETE", "/v3/submission/partial", params={"submission_id": sid}, content=b"\xff{"
    )
    assert r.status_code == 400
    assert r.json()["message"].startswith("invalid format for fields: ")
    assert snapshot(service) == before


def test_unknown_paths_and_methods(client: TestClient) -> None:
    assert client.get("/v3/nothing").json() == {"message": "Not Found"}
    r = client.put("/v3/submission", json={})
    assert (r.status_code, r.json()) == (405, {"message": "Method Not Allowed"})
    assert r.headers["allow"] == "GET, PATCH, DELETE"
    r = client.post("/v3/submission/partial")
    assert r.status_code == 405
    assert r.headers["allow"] == "DELETE"


def test_non_ascii_api_key_header(raw_client: TestClient) -> None:
    r = raw_client.get("/v3/submission", headers={"x-api-key": "ключ".encode()})
    assert r.json() == {"errorCode": "invalid_project", "message": "Invalid project"}
