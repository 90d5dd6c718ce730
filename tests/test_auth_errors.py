"""The server setting ``auth_errors`` (gaps.md "Values an integrator branches on"): by
default a missing or wrong key gets api-v3.md's error of each call; with ``gateway`` the
vendor gateway's 403 ``{"message": "Forbidden"}`` (liveform-and-values.md 7), so a client's
403 branch can be tested. Over HTTP: a live server, ``idv-mock serve`` for the flag."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from conftest import ServeProcess
from idv_mock import Service, ServiceConfig, mock

FORBIDDEN = {"message": "Forbidden"}
INVALID_PROJECT = {"errorCode": "invalid_project", "message": "Invalid project"}
CALLS = [  # (method, path, params, json): one of each error family
    ("GET", "/v3/submission", {}, None),
    ("GET", "/v3/submission/applicant", {"applicant_id": "x"}, None),
    ("POST", "/v3/submission/aml", {}, {"submissionId": "x"}),
    ("DELETE", "/v3/submission", {"submission_id": "x"}, None),
    ("GET", "/v3/submission/tokens", {}, None),
    ("POST", "/v3/submission/review", {}, {"submissionId": "x"}),
]


@pytest.fixture
def http(idv_server: Any) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=idv_server.root_url, timeout=10) as client:
        yield client


def test_default_is_each_calls_own_error(http: httpx.Client) -> None:
    assert http.get("/__admin/settings").json() == {"auth_errors": "api-v3"}
    r = http.get("/v3/submission", headers={"x-api-key": "wrong"})
    assert (r.status_code, r.json()) == (400, INVALID_PROJECT)


def test_gateway_answers_403_forbidden_for_a_missing_or_wrong_key(
    http: httpx.Client, idv_server: Any, idv_service: Service
) -> None:
    r = http.put("/__admin/settings", json={"auth_errors": "gateway"})
    assert (r.status_code, r.json()) == (200, {"auth_errors": "gateway"})
    assert http.get("/__admin/settings").json() == {"auth_errors": "gateway"}
    before = idv_service.export_state()
    for method, path, params, body in CALLS:
        for headers in ({}, {"x-api-key": "wrong"}):
            r = http.request(method, path, params=params, json=body, headers=headers)
            assert (r.status_code, r.json()) == (403, FORBIDDEN), (method, path, headers)
    assert idv_service.export_state() == before  # nothing changed
    r = http.get("/v3/submission", params={"count": "1"}, headers={"x-api-key": idv_server.api_key})
    assert r.status_code == 200 and len(r.json()["Items"]) == 1  # the right key still works
    assert http.post("/__admin/reset").status_code == 200
    assert http.get("/__admin/settings").json() == {"auth_errors": "api-v3"}  # serve's value
    r = http.get("/v3/submission", headers={"x-api-key": "wrong"})
    assert (r.status_code, r.json()) == (400, INVALID_PROJECT)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"auth_errors": "aws"}, "auth_errors must be one of: api-v3, gateway"),
        ({"auth_error": "gateway"}, "unknown settings: auth_error; known: auth_errors"),
    ],
)
def test_a_bad_setting_is_refused_and_changes_nothing(
    http: httpx.Client, body: dict[str, str], message: str
) -> None:
    r = http.put("/__admin/settings", json=body)
    assert (r.status_code, r.json()["message"]) == (400, message)
    assert http.get("/__admin/settings").json() == {"auth_errors": "api-v3"}


def test_serve_flag_sets_it_and_a_reset_keeps_it() -> None:
    with ServeProcess("--seed-count", "2", "--auth-errors", "gateway") as server:
        base = server.base
        r = httpx.get(f"{base}/v3/submission", headers={"x-api-key": "wrong"})
        assert (r.status_code, r.json()) == (403, FORBIDDEN)
        httpx.put(f"{base}/__admin/settings", json={"auth_errors": "api-v3"})
        r = httpx.get(f"{base}/v3/submission")
        assert (r.status_code, r.json()) == (400, INVALID_PROJECT)
        httpx.post(f"{base}/__admin/reset")
        assert httpx.get(f"{base}/__admin/settings").json() == {"auth_errors": "gateway"}


def test_mock_option_of_the_same_name() -> None:
    with mock(auth_errors="gateway") as service:  # the vendor's base URL
        r = httpx.get("https://rest-api.argosidentity.com/v3/submission")
        assert (r.status_code, r.json()) == (403, FORBIDDEN)
    assert service.server_settings() == {"auth_errors": "gateway"}
    assert Service(ServiceConfig(seed_count=0)).server_settings() == {"auth_errors": "api-v3"}
