"""Slow clients (issue 14, defect 8): ``idv-mock serve`` closes a connection whose request
does not arrive whole within ``--request-timeout``, so slow senders cannot hold it open."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import httpx
import pytest

from conftest import ServeProcess

pytestmark = pytest.mark.live

TIMEOUT_BODY = b'{"message": "Request not received in time"}'


@pytest.fixture(scope="module")
def server() -> Iterator[ServeProcess]:
    with ServeProcess("--seed-count", "2", "--request-timeout", "0.5") as running:
        yield running


def connect(server: ServeProcess) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    sock.settimeout(10)  # far beyond the server's deadline: a hang fails the test
    return sock


def read_all(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    received = b""
    while chunk := sock.recv(4096):
        received += chunk
    return received


def test_slow_headers_get_a_408_and_the_connection_is_closed(server: ServeProcess) -> None:
    with connect(server) as sock:
        sock.sendall(b"GET /v3/submission HTTP/1.1\r\nHost: 127.0.0.1\r\nx-api-key: mo")
        answer = read_all(sock)
    assert answer.startswith(b"HTTP/1.1 408 Request Timeout\r\n")
    assert answer.endswith(TIMEOUT_BODY)


def test_a_slow_request_behind_a_complete_one_is_timed_out_too(server: ServeProcess) -> None:
    first = b"GET /__admin/projects HTTP/1.1\r\nHost: x\r\n\r\n"
    with connect(server) as sock:
        sock.sendall(first + b"GET /__admin/projects HTTP/1.1\r\nHo")  # pipelined, unfinished
        answer = read_all(sock)
    assert answer.startswith(b"HTTP/1.1 200 OK\r\n")
    assert b"HTTP/1.1 408 Request Timeout\r\n" in answer
    assert answer.endswith(TIMEOUT_BODY)


def test_a_silent_connection_is_closed(server: ServeProcess) -> None:
    with connect(server) as sock:
        answer = read_all(sock)
    assert answer.startswith(b"HTTP/1.1 408 ")


def test_a_slow_body_closes_the_connection_quietly() -> None:
    head = b"POST /__admin/projects HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n"
    with ServeProcess("--seed-count", "2", "--request-timeout", "0.5") as server:
        with connect(server) as sock:
            sock.sendall(head + b'{"project_id"')
            assert read_all(sock) == b""
        projects = httpx.get(server.base + "/__admin/projects").json()["projects"]
        output = server.stop()
    assert [p["project_id"] for p in projects] == ["default"]  # nothing half-made stored
    assert "Traceback" not in output


def test_prompt_clients_are_served(server: ServeProcess) -> None:
    r = httpx.get(server.base + "/v3/submission", headers={"x-api-key": "mock-api-key"})
    assert r.status_code == 200
    assert len(r.json()["Items"]) == 2
