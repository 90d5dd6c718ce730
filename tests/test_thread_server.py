"""The fixtures' live server (``idv_mock.serving.thread_server``) over raw sockets.

What a client sees must be what the fixtures' uvicorn sent: the same bytes (side by side
with uvicorn, on the same requests), the same scopes for the app, keep-alive, pipelining,
chunked bodies both ways, HEAD, 400 on what the parser refuses, 500 on an app's
exception; a client gone is a disconnect; a stop lets the request in flight finish,
frees the port and waits on no timer.
"""

from __future__ import annotations

import asyncio
import re
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from pytest_idv_mock.fixtures import serve_in_thread

from idv_mock.serving.thread_server import ThreadServer

IMF_DATE = rb"(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d\d:\d\d:\d\d GMT"  # noqa: E501
BAD_REQUEST = (
    b"HTTP/1.1 400 Bad Request\r\ndate: D\r\nserver: uvicorn\r\n"
    b"content-type: text/plain; charset=utf-8\r\ncontent-length: 30\r\nconnection: close\r\n"
    b"\r\nInvalid HTTP request received."
)
ERROR_500 = (
    b"HTTP/1.1 500 Internal Server Error\r\ndate: D\r\nserver: uvicorn\r\n"
    b"content-type: text/plain; charset=utf-8\r\ncontent-length: 21\r\nconnection: close\r\n"
    b"\r\nInternal Server Error"
)


async def echo(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Answers with the scope it got and the body it read (``/stream``: a chunked answer,
    ``/boom``: an exception, ``/nothing``: no answer at all)."""
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    if scope["path"] == "/boom":
        raise ValueError("boom")
    if scope["path"] == "/nothing":
        return
    if scope["path"] == "/stream":
        await send({"type": "http.response.start", "status": 200, "headers": [(b"x-s", b"1")]})
        for part, more in ((b"ab", True), (b"", True), (b"cd", False)):
            await send({"type": "http.response.body", "body": part, "more_body": more})
        return
    seen = {k: v for k, v in scope.items() if k not in ("client", "server")}
    out = repr({**seen, "body": body}).encode()
    headers = [(b"content-type", b"text/plain"), (b"content-length", b"%d" % len(out))]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": out})


def exchange(port: int, data: bytes, timeout: float = 10.0) -> bytes:
    """What the server sends back to ``data`` until it closes the connection."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(data)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    return received


def dated(answer: bytes) -> bytes:
    """``answer`` with each ``date`` header's value checked and replaced by ``D``."""
    for value in re.findall(rb"\r\ndate: ([^\r]*)\r\n", answer):
        assert re.fullmatch(IMF_DATE, value), value
    return re.sub(rb"\r\ndate: [^\r]*\r\n", b"\r\ndate: D\r\n", answer)


def read_one(sock: socket.socket, buffered: bytearray) -> bytes:
    """One answer with a ``content-length`` from ``sock`` (what is left stays buffered)."""
    while b"\r\n\r\n" not in buffered:
        buffered += sock.recv(65536)
    end = buffered.index(b"\r\n\r\n") + 4
    length = int(re.search(rb"content-length: (\d+)", bytes(buffered[:end])).group(1))  # type: ignore[union-attr]
    while len(buffered) < end + length:
        buffered += sock.recv(65536)
    answer = bytes(buffered[: end + length])
    del buffered[: end + length]
    return answer


@pytest.fixture
def server() -> Iterator[Any]:
    with serve_in_thread(echo) as running:
        yield running


@contextmanager
def uvicorn_serving(app: Any) -> Iterator[int]:
    """uvicorn as the fixtures ran it before (httptools, asyncio, no lifespan, quiet)."""
    pytest.importorskip("httptools")
    import uvicorn

    version = tuple(int(part) for part in uvicorn.__version__.split(".")[:2])
    if version < (0, 54):  # 0.29 said spec_version 2.4, chunked its 500, kept HTTP/1.0 open
        pytest.skip(f"the fixtures' server answers as uvicorn 0.54 did, not {uvicorn.__version__}")

    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=0,
        log_level="critical",
        log_config=None,
        access_log=False,
        ws="none",
        loop="asyncio",
        http="httptools",
        lifespan="off",
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        assert thread.is_alive()
        thread.join(0.01)
    try:
        yield int(server.servers[0].sockets[0].getsockname()[1])
    finally:
        server.should_exit = True
        thread.join(10)


# each closes its connection, so an answer is everything up to the close
SIDE_BY_SIDE = [
    b"GET /a%20b/c?x=1&y=%20 HTTP/1.1\r\nHost: x\r\nX-Up: Val \r\nConnection: close\r\n\r\n",
    b"GET / HTTP/1.0\r\nHost: x\r\n\r\n",
    b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
    b"HEAD / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    b"POST /p HTTP/1.1\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
    b"POST /p HTTP/1.1\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    b"5\r\nhello\r\n3;ext=1\r\nabc\r\nA\r\n0123456789\r\n0\r\n\r\n",
    b"POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\nConnection: close\r\n\r\n"
    b"3\r\nabc\r\n0\r\n\r\n",
    b"POST / HTTP/1.0\r\nTransfer-Encoding: CHUNKED\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
    b"GET /stream HTTP/1.1\r\nConnection: close\r\n\r\n",
    b"HEAD /stream HTTP/1.1\r\nConnection: close\r\n\r\n",
    b"GET /boom HTTP/1.1\r\n\r\n",
    b"GET /nothing HTTP/1.1\r\n\r\n",
    b"garbage\r\n\r\n",
    b"FOO / HTTP/1.1\r\n\r\n",
    b"get / HTTP/1.1\r\n\r\n",
    b"GET / HTTP/2.0\r\n\r\n",
    b"GET / HTTP/1.2\r\nConnection: close\r\n\r\n",
    b"GET /\r\n\r\n",
    b"GET http://example.com:80/abs?q=1 HTTP/1.1\r\nConnection: close\r\n\r\n",
    b"GET http://example.com HTTP/1.1\r\nConnection: close\r\n\r\n",
    b"OPTIONS * HTTP/1.1\r\nConnection: close\r\n\r\n",
    b"GET /\xc3\xa9 HTTP/1.1\r\nConnection: close\r\n\r\n",
    b"GET /a b HTTP/1.1\r\n\r\n",
    b"GET /x?a#frag HTTP/1.1\r\nConnection: close\r\n\r\n",
    b"GET / HTTP/1.1\nHost: x\nConnection: close\n\n",
    b"GET / HTTP/1.1\r\nHost : x\r\n\r\n",
    b"GET / HTTP/1.1\r\nX: a\r\n  folded\r\nConnection: close\r\n\r\n",
    b"GET / HTTP/1.1\r\nX:\r\nY:   \r\nConnection: close\r\n\r\n",
    b"GET / HTTP/1.1\r\nX: a\x00b\r\n\r\n",
    b"GET / HTTP/1.1\r\nX: caf\xc3\xa9\tz\r\nConnection: close\r\n\r\n",
    b"POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc",
    b"POST / HTTP/1.1\r\nContent-Length: x\r\n\r\n",
    b"POST / HTTP/1.1\r\nContent-Length: +3\r\n\r\nabc",
    b"POST / HTTP/1.1\r\nContent-Length:  3 \r\nConnection: close\r\n\r\nabc",
    b"POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"
    b"3\r\nabc\r\n0\r\n\r\n",
    b"POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n",
    b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n",
    b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n0\r\n\r\n",
    b"GET / HTTP/1.1\r\nConnection: keep-alive, Close\r\n\r\n",
    b"GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n\r\nGET /c HTTP/1.1\r\nConnection: close\r\n\r\n",
    b"POST /a HTTP/1.1\r\nContent-Length: 2\r\n\r\nxyGET /b HTTP/1.1\r\nConnection: close\r\n\r\n",
    b"GET /a HTTP/1.1\r\nConnection: close\r\n\r\nGET /b HTTP/1.1\r\n\r\n",
    b"POST /e HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi",
    b"\r\nGET /lead HTTP/1.1\r\nConnection: close\r\n\r\n",
    b"GET  / HTTP/1.1\r\nConnection: close\r\n\r\n",
    b"GET / HTTP/1.1 \r\n\r\n",
    b"GET /%zz%41/a%2Fb HTTP/1.1\r\nConnection: close\r\n\r\n",
    b"GET /?%C3%A9=1 HTTP/1.1\r\nConnection: close\r\n\r\n",
    b"GET / HTTP/1.1\r\nNoColon\r\n\r\n",
    b"PROPFIND / HTTP/1.1\r\nConnection: close\r\n\r\n",
]


def test_a_client_gets_the_bytes_uvicorn_sent_and_the_app_the_same_scopes() -> None:
    """Each request of the list, to uvicorn (httptools) and to this server: the same bytes
    back (dates aside), and so the same scope seen by the app (it echoes it)."""
    with uvicorn_serving(echo) as port:
        theirs = [dated(exchange(port, data)) for data in SIDE_BY_SIDE]
    with serve_in_thread(echo) as running:
        ours = [dated(exchange(running.port, data)) for data in SIDE_BY_SIDE]
    different = [(d, t, o) for d, t, o in zip(SIDE_BY_SIDE, theirs, ours, strict=True) if t != o]
    assert different == []
    assert theirs[12] == BAD_REQUEST and theirs[10] == ERROR_500  # garbage, /boom


def test_the_mock_answers_with_uvicorns_headers_in_uvicorns_order(idv_server: Any) -> None:
    """What the fixtures' clients always saw: ``date`` and ``server: uvicorn`` first, then
    the app's headers, ``content-length`` for a whole body."""
    request = (
        f"GET /v3/submission?count=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"x-api-key: {idv_server.api_key}\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", idv_server.port), timeout=10) as sock:
        sock.sendall(request)
        answer = read_one(sock, bytearray())
    head = dated(answer).split(b"\r\n\r\n")[0].split(b"\r\n")
    length = len(answer.split(b"\r\n\r\n", 1)[1])
    assert head == [
        b"HTTP/1.1 200 OK",
        b"date: D",
        b"server: uvicorn",
        b"content-length: %d" % length,
        b"content-type: application/json",
    ]


def test_keep_alive_serves_one_request_after_another(server: Any) -> None:
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        buffered = bytearray()
        for path in (b"/one", b"/two"):
            sock.sendall(b"GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % path)
            answer = read_one(sock, buffered)
            assert answer.startswith(b"HTTP/1.1 200 OK\r\n")
            assert b"connection: close" not in answer
            assert b"'path': '%s'" % path in answer


def test_pipelined_requests_are_answered_in_order(server: Any) -> None:
    requests = b"".join(
        b"POST /%d HTTP/1.1\r\nContent-Length: 1\r\n\r\n%d" % (n, n) for n in range(5)
    )
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(requests)
        buffered = bytearray()
        answers = [read_one(sock, buffered) for _ in range(5)]
    assert [re.search(rb"'path': '/(\d)'", a).group(1) for a in answers] == [  # type: ignore[union-attr]
        b"0",
        b"1",
        b"2",
        b"3",
        b"4",
    ]
    assert [re.search(rb"'body': b'(\d)'", a).group(1) for a in answers] == [  # type: ignore[union-attr]
        b"0",
        b"1",
        b"2",
        b"3",
        b"4",
    ]


def test_a_chunked_request_arriving_in_pieces_is_read_whole(server: Any) -> None:
    parts = [
        b"POST /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n4",
        b"\r\nwi",
        b"ki\r",
        b"\n5\r\npedia\r\n0\r\n",
        b"Trailer: dropped\r\n\r\n",
    ]
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        for part in parts:
            sock.sendall(part)
        answer = read_one(sock, bytearray())
    assert b"'body': b'wikipedia'" in answer
    assert b"trailer" not in answer  # a trailer is read, not added to the scope's headers


def test_a_streamed_answer_is_chunked_and_a_head_answer_has_no_body(server: Any) -> None:
    get = exchange(server.port, b"GET /stream HTTP/1.1\r\nConnection: close\r\n\r\n")
    assert dated(get) == (
        b"HTTP/1.1 200 OK\r\ndate: D\r\nserver: uvicorn\r\nx-s: 1\r\nconnection: close\r\n"
        b"transfer-encoding: chunked\r\n\r\n2\r\nab\r\n2\r\ncd\r\n0\r\n\r\n"
    )
    head = exchange(server.port, b"HEAD / HTTP/1.1\r\nConnection: close\r\n\r\n")
    assert head.endswith(b"\r\nconnection: close\r\n\r\n")
    assert re.search(rb"content-length: [1-9]\d*\r\n", head)


def test_garbage_gets_400_and_the_connection_closed(server: Any) -> None:
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(b"GET /ok HTTP/1.1\r\n\r\n")
        assert read_one(sock, bytearray()).startswith(b"HTTP/1.1 200 OK\r\n")
        sock.sendall(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n")  # TLS, say
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    assert dated(answer) == BAD_REQUEST


def test_an_apps_exception_is_a_500_and_a_close(server: Any) -> None:
    assert dated(exchange(server.port, b"GET /boom HTTP/1.1\r\n\r\n")) == ERROR_500


def test_a_client_gone_is_a_disconnect_for_the_app() -> None:
    told: list[dict[str, Any]] = []
    entered, gone = threading.Event(), threading.Event()

    async def waits(scope: dict[str, Any], receive: Any, send: Any) -> None:
        told.append(await receive())  # the (empty) body
        entered.set()
        told.append(await receive())  # waits until the client goes
        gone.set()

    with serve_in_thread(waits) as running:
        sock = socket.create_connection(("127.0.0.1", running.port), timeout=10)
        sock.sendall(b"GET / HTTP/1.1\r\n\r\n")
        assert entered.wait(10)
        sock.close()
        assert gone.wait(10)
    assert told == [
        {"type": "http.request", "body": b"", "more_body": False},
        {"type": "http.disconnect"},
    ]


def test_stop_lets_a_request_in_flight_finish_closes_idle_ones_and_frees_the_port() -> None:
    entered = threading.Event()
    server_of: list[ThreadServer] = []

    async def slow(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await receive()
        entered.set()
        stopping = server_of[0].stopping
        assert stopping is not None
        await stopping.wait()  # still answering once the stop has begun
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"late"})

    with serve_in_thread(slow) as running:
        server_of.append(running.server)
        port = running.port
        idle = socket.create_connection(("127.0.0.1", port), timeout=10)
        busy = socket.create_connection(("127.0.0.1", port), timeout=10)
        busy.sendall(b"GET / HTTP/1.1\r\n\r\n")
        assert entered.wait(10)
    assert not running.thread.is_alive()
    answer = b""
    while chunk := busy.recv(65536):
        answer += chunk
    assert dated(answer) == (
        b"HTTP/1.1 200 OK\r\ndate: D\r\nserver: uvicorn\r\nconnection: close\r\n"
        b"transfer-encoding: chunked\r\n\r\n4\r\nlate\r\n0\r\n\r\n"
    )
    assert idle.recv(1) == b""  # closed, nothing sent
    idle.close()
    busy.close()
    with socket.socket() as again:  # the port is free (as after uvicorn: SO_REUSEADDR)
        again.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        again.bind(("127.0.0.1", port))


def test_stop_waits_on_no_timer(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each step of a stop is awaited (the listener, the requests, the closes): every timer
    the server's loop set in a stop is cancelled, none ran out. uvicorn's stop waited for
    its main loop's next 0.1 s tick."""
    timers: list[asyncio.TimerHandle] = []
    call_at = asyncio.BaseEventLoop.call_at

    def recorded(self: Any, when: float, callback: Any, *args: Any, **kwargs: Any) -> Any:
        handle = call_at(self, when, callback, *args, **kwargs)
        timers.append(handle)
        return handle

    monkeypatch.setattr(asyncio.BaseEventLoop, "call_at", recorded)
    with serve_in_thread(echo) as running:
        sock = socket.create_connection(("127.0.0.1", running.port), timeout=10)
        sock.sendall(b"GET / HTTP/1.1\r\n\r\n")
        read_one(sock, bytearray())  # an idle keep-alive connection at the stop
        timers.clear()
        running.stop()
        assert sock.recv(1) == b""
        sock.close()
    assert not running.thread.is_alive()
    assert all(timer.cancelled() for timer in timers)


def test_a_port_in_use_is_the_same_runtime_error_as_before() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with (
            pytest.raises(
                RuntimeError, match=f"^idv-mock server did not start on 127.0.0.1:{port}$"
            ),
            serve_in_thread(echo, port=port),
        ):
            pass


def test_stop_still_reads_the_body_of_a_request_in_flight() -> None:
    """A stop that begins while a request's body is arriving waits for the rest of it and
    answers (as uvicorn's shutdown: only the keep-alive is ended)."""
    entered = threading.Event()

    async def reads(scope: dict[str, Any], receive: Any, send: Any) -> None:
        body = b""
        while True:
            message = await receive()
            body += message["body"]
            entered.set()
            if not message["more_body"]:
                break
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": body})

    serving = serve_in_thread(reads)
    running = serving.__enter__()
    sock = socket.create_connection(("127.0.0.1", running.port), timeout=10)
    sock.sendall(b"POST / HTTP/1.1\r\nContent-Length: 6\r\n\r\nabc")
    assert entered.wait(10)
    stopper = threading.Thread(target=serving.__exit__, args=(None, None, None))
    stopper.start()
    while not (running.server.stopping and running.server.stopping.is_set()):
        stopper.join(0.001)
    sock.sendall(b"def")
    answer = b""
    while chunk := sock.recv(65536):
        answer += chunk
    sock.close()
    stopper.join(10)
    assert not running.thread.is_alive()
    assert dated(answer).endswith(
        b"connection: close\r\ntransfer-encoding: chunked\r\n\r\n6\r\nabcdef\r\n0\r\n\r\n"
    )
