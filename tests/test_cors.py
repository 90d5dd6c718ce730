"""CORS (api/cors.py): off by default like the real API; with ``--cors-origin`` a browser
of that origin gets its preflight answered and the CORS headers on every answer."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from starlette.testclient import TestClient

from conftest import HEADERS, ServeProcess
from idv_mock import Service
from idv_mock.api.app import create_app
from idv_mock.cli import build_parser

ORIGIN = "http://localhost:3000"
PREFLIGHT = {
    "origin": ORIGIN,
    "access-control-request-method": "PATCH",
    "access-control-request-headers": "x-api-key, content-type",
}


@pytest.fixture
def cors(service: Service) -> Iterator[TestClient]:
    with TestClient(create_app(service, cors_origins=[ORIGIN, "http://other.test"])) as client:
        yield client


def test_a_preflight_is_answered_with_the_methods_of_the_path(cors: TestClient) -> None:
    r = cors.options("/v3/submission", headers=PREFLIGHT)
    assert r.status_code == 204 and r.content == b""
    assert r.headers["access-control-allow-origin"] == ORIGIN
    assert r.headers["access-control-allow-methods"] == "GET, PATCH, DELETE"
    assert r.headers["access-control-allow-headers"] == "x-api-key, content-type"
    assert r.headers["vary"] == "Origin"
    r = cors.options("/v3/projection/abc", headers=PREFLIGHT)
    assert r.headers["access-control-allow-methods"] == "GET, DELETE"


def test_an_actual_request_carries_the_allow_origin_header(cors: TestClient) -> None:
    for path in ("/v3/submission?count=1", "/v3/submission/abc"):  # fast lane, and a 404
        r = cors.get(path, headers={**HEADERS, "origin": ORIGIN})
        assert r.headers["access-control-allow-origin"] == ORIGIN, path
        assert r.headers["vary"] == "Origin"
        assert "x-idv-mock-hint" in r.headers["access-control-expose-headers"]
    r = cors.patch("/v3/submission", headers={**HEADERS, "origin": ORIGIN}, json={})
    assert r.status_code == 400 and r.headers["access-control-allow-origin"] == ORIGIN


def test_the_answer_itself_is_unchanged(service: Service, cors: TestClient) -> None:
    with TestClient(create_app(Service(service.config))) as plain:
        a = cors.get("/v3/submission?count=2", headers={**HEADERS, "origin": ORIGIN})
        b = plain.get("/v3/submission?count=2", headers=HEADERS)
    assert (a.status_code, a.content) == (b.status_code, b.content)


def test_an_origin_not_allowed_gets_no_cors_headers(cors: TestClient) -> None:
    evil = {"origin": "http://evil.test"}
    r = cors.options("/v3/submission", headers={**PREFLIGHT, **evil})
    assert r.status_code == 405 and "access-control-allow-origin" not in r.headers
    r = cors.get("/v3/submission?count=1", headers={**HEADERS, **evil})
    assert r.status_code == 200 and "access-control-allow-origin" not in r.headers


def test_a_star_allows_every_origin(service: Service) -> None:
    with TestClient(create_app(service, cors_origins=["*"])) as client:
        r = client.options("/v3/submission", headers={**PREFLIGHT, "origin": "http://any.test"})
        assert r.status_code == 204 and r.headers["access-control-allow-origin"] == "*"


def test_cors_is_off_by_default(client: TestClient) -> None:
    r = client.options("/v3/submission", headers=PREFLIGHT)
    assert r.status_code == 405 and "access-control-allow-origin" not in r.headers
    r = client.get("/v3/submission?count=1", headers={"origin": ORIGIN})
    assert r.status_code == 200 and "access-control-allow-origin" not in r.headers


def test_serve_flag_is_repeatable() -> None:
    args = build_parser().parse_args(["serve", "--cors-origin", ORIGIN, "--cors-origin", "*"])
    assert args.cors_origin == [ORIGIN, "*"]
    assert build_parser().parse_args(["serve"]).cors_origin == []


def test_idv_mock_serve_passes_both_flags_on() -> None:
    """``--cors-origin`` and ``--no-hints`` reach the app of a real ``idv-mock serve``."""
    with ServeProcess("--cors-origin", ORIGIN, "--no-hints", "--seed-count", "1") as server:
        preflight = httpx.options(server.base + "/v3/submission", headers=PREFLIGHT)
        missing = httpx.get(server.base + "/v3/submissions", headers=HEADERS)
    assert preflight.status_code == 204
    assert preflight.headers["access-control-allow-origin"] == ORIGIN
    assert missing.status_code == 404 and "x-idv-mock-hint" not in missing.headers
    with ServeProcess("--seed-count", "1") as server:
        missing = httpx.get(server.base + "/v3/submissions", headers=HEADERS)
        output = server.stop()
    assert "/v3/submission" in missing.headers["x-idv-mock-hint"]
    assert "idv-mock: hint: GET /v3/submissions -> 404: " in output
