"""The request deadline keeps one timer per connection (``api/timeouts.py``): a timer that
fires while a later request is on its way sets itself for that request's own deadline, and
one that fires on an idle keep-alive connection does nothing. Outcomes only, no timings:
the pauses are far from both the deadline and uvicorn's keep-alive timeout (5 s)."""

from __future__ import annotations

import select
import socket
import time
from collections.abc import Iterator

import pytest

from conftest import ServeProcess

pytestmark = pytest.mark.live

DEADLINE = 2.0
PROMPT = b"GET /__admin/projects HTTP/1.1\r\nHost: x\r\n\r\n"
TIMEOUT_STATUS = b"HTTP/1.1 408 Request Timeout\r\n"


@pytest.fixture(scope="module")
def server() -> Iterator[ServeProcess]:
    with ServeProcess("--seed-count", "2", "--request-timeout", str(DEADLINE)) as running:
        yield running


def connect(server: ServeProcess) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    sock.settimeout(10)
    return sock


def one_answer(sock: socket.socket) -> bytes:
    """The head and body of one answer with a content-length."""
    received = b""
    while b"\r\n\r\n" not in received:
        received += sock.recv(4096)
    head, _, body = received.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        body += sock.recv(4096)
    return head


def read_all(sock: socket.socket) -> bytes:
    received = b""
    while chunk := sock.recv(4096):
        received += chunk
    return received


def test_an_idle_keep_alive_connection_outlives_the_deadline(server: ServeProcess) -> None:
    with connect(server) as sock:
        sock.sendall(PROMPT)
        assert one_answer(sock).startswith(b"HTTP/1.1 200 ")
        time.sleep(DEADLINE * 1.6)  # the connection's timer fires meanwhile, with no request
        sock.sendall(PROMPT)
        assert one_answer(sock).startswith(b"HTTP/1.1 200 ")


def test_a_late_request_after_a_prompt_one_still_times_out(server: ServeProcess) -> None:
    with connect(server) as sock:
        sock.sendall(PROMPT)
        assert one_answer(sock).startswith(b"HTTP/1.1 200 ")
        time.sleep(DEADLINE * 0.6)  # the timer, armed at the connection's start, fires while
        sock.sendall(b"GET /__admin/projects HTTP/1.1\r\nHo")  # this one is unfinished
        assert read_all(sock).startswith(TIMEOUT_STATUS)


def test_a_request_sent_in_parts_within_its_own_deadline_is_served(server: ServeProcess) -> None:
    with connect(server) as sock:
        sock.sendall(PROMPT)
        assert one_answer(sock).startswith(b"HTTP/1.1 200 ")
        time.sleep(DEADLINE * 0.6)
        sock.sendall(PROMPT[:20])
        time.sleep(DEADLINE * 0.6)  # past the connection's first timer, within its own
        sock.sendall(PROMPT[20:])
        assert one_answer(sock).startswith(b"HTTP/1.1 200 ")


def test_a_first_request_is_timed_from_the_connections_start(server: ServeProcess) -> None:
    """Silent for most of the deadline, then headers a byte at a time: cut off at the
    deadline from the connection's start (one tick late at most, 0.2 s here), not given a
    deadline of its own (which would hold the connection until about 3.8 s)."""
    with connect(server) as sock:
        opened = time.monotonic()
        time.sleep(DEADLINE * 0.9)
        for byte in PROMPT[:-4]:  # never complete; stop once the server has answered
            if select.select([sock], [], [], 0.05)[0]:
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
