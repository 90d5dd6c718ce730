"""Limits and hostile input: a clean 4xx every time, and the server stays up."""

from __future__ import annotations

import socket

import httpx
import pytest
from starlette.testclient import TestClient

from conftest import LiveServer, snapshot
from idv_mock import Service


def test_bodies_over_one_mib_get_413(client: TestClient, service: Service) -> None:
    before = snapshot(service)
    r = client.patch("/v3/submission", content=b"x" * (1024 * 1024 + 1))
    assert (r.status_code, r.json()) == (413, {"message": "Request body too large (limit 1 MiB)"})
    assert snapshot(service) == before


def test_rate_limit_answers_429_with_retry_after(client: TestClient) -> None:
    client.patch("/__admin/projects/default", json={"options": {"rate_limit_per_second": 3}})
    statuses = [client.get("/v3/submission", params={"count": "1"}).status_code for _ in range(6)]
    assert statuses[:3] == [200, 200, 200]
    assert 429 in statuses[3:]
    r = client.get("/v3/submission")
    if r.status_code == 429:
        assert r.json() == {"errorCode": "too_many_requests", "message": "Too many requests"}
        assert r.headers["retry-after"] == "1"


def test_retry_after_is_the_wait_for_the_next_token(client: TestClient) -> None:
    """At half a call per second the next token is two seconds away, not one."""
    client.patch("/__admin/projects/default", json={"options": {"rate_limit_per_second": 0.5}})
    assert client.get("/v3/submission", params={"count": "1"}).status_code == 200
    r = client.get("/v3/submission", params={"count": "1"})
    assert (r.status_code, r.headers["retry-after"]) == (429, "2")


def test_rate_limit_is_per_project(client: TestClient, service: Service) -> None:
    service.create_project({"project_id": "p2", "api_key": "k2"})
    client.patch("/__admin/projects/default", json={"options": {"rate_limit_per_second": 1}})
    client.get("/v3/submission")
    assert client.get("/v3/submission").status_code == 429
    assert client.get("/v3/submission", headers={"x-api-key": "k2"}).status_code == 200


def test_deeply_nested_json(client: TestClient) -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    assert client.patch("/v3/submission", content=deep).status_code == 400
    assert client.post("/v3/projection", content=deep).status_code == 400
    assert client.post("/v3/submission/aml", content=deep).status_code == 400


def test_many_query_parameters(client: TestClient) -> None:
    query = "&".join(f"p{n}=v" for n in range(5_000))
    r = client.get("/v3/submission?" + query)
    assert r.json() == {"errorCode": "invalid_parameter", "message": "invalid parameter: p0"}


@pytest.mark.live
def test_live_server_survives_hostile_requests(service: Service) -> None:
    with LiveServer(service) as server, httpx.Client(timeout=10) as http:
        base = f"http://127.0.0.1:{server.port}"
        headers = {"x-api-key": "mock-api-key"}
        r = http.get(f"{base}/v3/submission", headers={**headers, "x-long": "a" * 60_000})
        assert r.status_code < 500
        r = http.patch(f"{base}/v3/submission", headers=headers, content=b"\xff\xfe" * 1000)
        assert r.status_code == 400
        r = http.patch(f"{base}/v3/submission", headers=headers, content=b"y" * 2_000_000)
        assert r.status_code == 413
        assert raw_get(server.port, "&".join(f"p{n}=v" for n in range(10_000))).startswith(
            b"HTTP/1.1 4"
        )
        assert http.get(f"{base}/v3/submission", headers=headers).status_code == 200


def raw_get(port: int, query: str) -> bytes:
    """A request httpx refuses to build (an 80 KB URL), over a plain socket."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        head = f"GET /v3/submission?{query} HTTP/1.1\r\nHost: x\r\nx-api-key: mock-api-key\r\n"
        sock.sendall((head + "Connection: close\r\n\r\n").encode())
        return sock.recv(64)


def test_a_rate_below_one_per_second_still_lets_calls_in(client: TestClient) -> None:
    client.patch("/__admin/projects/default", json={"options": {"rate_limit_per_second": 0.5}})
    assert client.get("/v3/submission").status_code == 200
    assert client.get("/v3/submission").status_code == 429
