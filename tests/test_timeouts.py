"""Slow clients (issue 14, defect 8): ``idv-mock serve`` closes a connection whose request
does not arrive whole within ``--request-timeout``, so slow senders cannot hold it open.

The second half tests the deadline's one timer per connection (``api/timeouts.py``): a
timer that fires while a later request is on its way sets itself for that request's own
deadline, and one that fires on an idle keep-alive connection does nothing. Its pauses are
far from both the deadline and uvicorn's keep-alive timeout (5 s)."""

from __future__ import annotations

import select
import socket
import time
from collections.abc import Iterator

import httpx
import pytest

from conftest import ServeProcess
from wire import read_answer

pytestmark = pytest.mark.live

TIMEOUT_BODY = b'{"message": "Request not received in time"}'
DEADLINE = 2.0  # the ticking server's
PROMPT = b"GET /__admin/projects HTTP/1.1\r\nHost: localhost\r\n\r\n"
TIMEOUT_STATUS = b"HTTP/1.1 408 Request Timeout\r\n"


@pytest.fixture(scope="module")
def server() -> Iterator[ServeProcess]:
    with ServeProcess("--seed-count", "2", "--request-timeout", "0.5") as running:
        yield running


@pytest.fixture(scope="module")
def ticking() -> Iterator[ServeProcess]:
    """A deadline long enough to pause within, and to see a timer fire meanwhile."""
    with ServeProcess("--seed-count", "2", "--request-timeout", str(DEADLINE)) as running:
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
    first = b"GET /__admin/projects HTTP/1.1\r\nHost: localhost\r\n\r\n"
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
    head = b"POST /__admin/projects HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\n"
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


# --- the one timer per connection ---


def test_an_idle_keep_alive_connection_outlives_the_deadline(ticking: ServeProcess) -> None:
    with connect(ticking) as sock:
        sock.sendall(PROMPT)
        assert read_answer(sock)[0].startswith(b"HTTP/1.1 200 ")
        time.sleep(DEADLINE * 1.6)  # the connection's timer fires meanwhile, with no request
        sock.sendall(PROMPT)
        assert read_answer(sock)[0].startswith(b"HTTP/1.1 200 ")


def test_a_late_request_after_a_prompt_one_still_times_out(ticking: ServeProcess) -> None:
    with connect(ticking) as sock:
        sock.sendall(PROMPT)
        assert read_answer(sock)[0].startswith(b"HTTP/1.1 200 ")
        time.sleep(DEADLINE * 0.6)  # the timer, armed at the connection's start, fires while
        sock.sendall(b"GET /__admin/projects HTTP/1.1\r\nHo")  # this one is unfinished
        assert read_all(sock).startswith(TIMEOUT_STATUS)


def test_a_request_sent_in_parts_within_its_own_deadline_is_served(ticking: ServeProcess) -> None:
    with connect(ticking) as sock:
        sock.sendall(PROMPT)
        assert read_answer(sock)[0].startswith(b"HTTP/1.1 200 ")
        time.sleep(DEADLINE * 0.6)
        sock.sendall(PROMPT[:20])
        time.sleep(DEADLINE * 0.6)  # past the connection's first timer, within its own
        sock.sendall(PROMPT[20:])
        assert read_answer(sock)[0].startswith(b"HTTP/1.1 200 ")


def test_a_first_request_is_timed_from_the_connections_start(ticking: ServeProcess) -> None:
    """Silent for most of the deadline, then headers a byte at a time: cut off at the
    deadline from the connection's start (one tick late at most, 0.2 s here), not given a
    deadline of its own (which would hold the connection until about 3.8 s)."""
    with connect(ticking) as sock:
        opened = time.monotonic()
        time.sleep(DEADLINE * 0.9)
        # never complete; stop sending just before the deadline (or once the server has
        # answered), so no byte is in flight when it closes (which would reset the socket)
        for byte in PROMPT[:-4]:
            if time.monotonic() - opened > DEADLINE * 0.97:
                break
            if select.select([sock], [], [], 0.01)[0]:
                break
            sock.sendall(bytes([byte]))
        answer = read_all(sock)
        closed_after = time.monotonic() - opened
    assert answer.startswith(TIMEOUT_STATUS)
    assert closed_after < DEADLINE * 1.5


def test_another_uvicorns_protocol_turns_the_deadline_off_with_one_warning(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The deadline reads uvicorn's own request state (``scope``, ``cycle``): a uvicorn
    without those names gets one warning and connections without a deadline, not an
    error at every tick."""
    from idv_mock.api import timeouts

    monkeypatch.setattr(timeouts, "_WARNED", False)

    class Transport:
        def is_closing(self) -> bool:
            return False

    class Loop:
        def time(self) -> float:
            return 0.0

    protocol = object.__new__(timeouts.timed(1.0))  # as if uvicorn's __init__ set no scope
    protocol.transport, protocol.loop = Transport(), Loop()  # type: ignore[assignment]
    protocol._timer = None
    for _ in range(3):
        protocol._check()
    assert protocol._timer is None  # not set again: this connection has no deadline
    warnings = [r.getMessage() for r in caplog.records if r.name == "idv_mock.timeouts"]
    assert warnings == [
        "--request-timeout is off: this uvicorn's httptools protocol has no scope "
        "(api/timeouts.py reads uvicorn 0.54's)"
    ]
