"""The pytest fixtures' live server: a small asyncio HTTP/1.1 server on a daemon thread.

The fixtures ran uvicorn, whose import (its config, ``configparser``, its protocol) and
start (``Config.load``, its main loop) were about 12 ms of CPU of a first ``idv_server``'s
72, and whose stop waited on its 0.1 s main-loop tick (0.12-0.19 s of wall per stop, paid
by every test with a server of its own); this one's is about 1.5 ms, its stop well under
one. This server speaks to the app as uvicorn's
httptools protocol does, and to a client as it did: the same ASGI 3 ``http`` scopes, the
same response bytes (``date`` and ``server: uvicorn`` first, ``content-length`` or
chunked, ``connection: close``), the same 400 on a request its parser refuses and the
same 500 on an app's exception (checked side by side with uvicorn in
``tests/test_thread_server.py``). ``idv-mock serve`` keeps uvicorn.

What it leaves out, since a test's loopback server needs none of it: TLS, WebSockets and
the upgrade to them (as the fixtures' ``ws="none"``), lifespan (``lifespan="off"``),
``X-Forwarded-*`` (the socket's peer is the client), ASGI 2 apps, the access log, the 5 s
idle keep-alive timeout (an idle connection stays until its client or the stop closes
it), and a chunked request's trailers (read and dropped; httptools added them to the
scope's headers as they arrived).

Its parser is a hand-written one (``bytes.find``/``partition``), as strict as httptools'
(llhttp) where a client could notice: the request line, the HTTP version (0.9, 1.0, 1.1,
2.0), known methods, header names as tokens, control characters, ``Content-Length``
(digits, once, never with ``Transfer-Encoding``), chunked bodies. httptools' import alone
cost about 1.5 ms of a first use; a test's few requests parse in microseconds either way.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import unquote

LOG = logging.getLogger(__name__)

Message = MutableMapping[str, Any]
App = Callable[
    [Message, Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]],
    Awaitable[None],
]

MAX_HEAD = 1024 * 1024  # bytes of request line and headers: a guard, far above limits.py's 431
HIGH_WATER = 65536  # as uvicorn: a body buffered beyond this pauses reading until received
STOP_GRACE = 5.0  # seconds the stop lets in-flight requests finish
SERVER_HEADER = (b"server", b"uvicorn")  # what the fixtures' clients always saw

# llhttp's request methods (httptools refuses any other with 400)
METHODS = frozenset(
    b"DELETE GET HEAD POST PUT CONNECT OPTIONS TRACE COPY LOCK MKCOL MOVE PROPFIND PROPPATCH "
    b"SEARCH UNLOCK BIND REBIND UNBIND ACL REPORT MKACTIVITY CHECKOUT MERGE M-SEARCH NOTIFY "
    b"SUBSCRIBE UNSUBSCRIBE PATCH PURGE MKCALENDAR LINK UNLINK SOURCE QUERY".split()
)
VERSIONS = {b"HTTP/1.1": "1.1", b"HTTP/1.0": "1.0", b"HTTP/2.0": "2.0", b"HTTP/0.9": "0.9"}
# byte classes, checked with ``bytes.translate(None, allowed)`` (empty: every byte allowed),
# which costs no regular expression's compilation at import
_ALL = bytes(range(256))
TOKEN = b"!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
TARGET = bytes(range(0x21, 0x7F))  # llhttp's request target: visible ASCII
VALUE = bytes(b for b in _ALL if b == 9 or 0x20 <= b != 0x7F)  # no control but tab
HEXDIGITS = b"0123456789abcdefABCDEF"
# uvicorn's checks of the app's response headers (its HEADER_RE, HEADER_VALUE_RE)
NAME_OUT = bytes(b for b in _ALL if b > 0x1F and b != 0x7F and b not in b'()<>@,;:[]={} \t\\"')
VALUE_OUT = VALUE


def _only(data: bytes, allowed: bytes) -> bool:
    return not data.translate(None, allowed)


BAD_REQUEST_TEXT = b"Invalid HTTP request received."
ERROR_500: list[tuple[bytes, bytes]] = [
    (b"content-type", b"text/plain; charset=utf-8"),
    (b"content-length", b"21"),
    (b"connection", b"close"),
]
_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_status_lines: dict[int, bytes] = {}
_date: list[Any] = [0, b""]  # the second it was made for, the header


class BadRequest(Exception):
    """What httptools raises as ``HttpParserError``: the request is answered 400, closed."""


def status_line(code: int) -> bytes:
    line = _status_lines.get(code)
    if line is None:
        from http import HTTPStatus

        try:
            phrase = HTTPStatus(code).phrase.encode()
        except ValueError:
            phrase = b""
        line = _status_lines[code] = b"HTTP/1.1 %d %s\r\n" % (code, phrase)
    return line


def default_headers() -> list[tuple[bytes, bytes]]:
    """``date`` (RFC 9110's IMF-fixdate, made once a second) and ``server``, as uvicorn's."""
    now = int(time.time())
    if _date[0] != now:
        t = time.gmtime(now)
        day, month = _DAYS[t.tm_wday], _MONTHS[t.tm_mon - 1]
        text = f"{day}, {t.tm_mday:02d} {month} {t.tm_year:04d} "
        text += f"{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d} GMT"
        _date[:] = [now, text.encode()]
    return [(b"date", _date[1]), SERVER_HEADER]


def _address(info: Any) -> tuple[str, int] | None:
    if isinstance(info, (list, tuple)) and len(info) >= 2:
        return (str(info[0]), int(info[1]))
    return None


class Head:
    """A request's line and headers, read as httptools reads them."""

    __slots__ = (
        "chunked",
        "expect_continue",
        "headers",
        "http_version",
        "keep_alive",
        "length",
        "method",
        "query",
        "raw_path",
        "upgrade",
    )

    def __init__(self, data: bytes) -> None:
        if data.count(b"\n") != data.count(b"\r\n"):  # a bare LF: httptools refuses it
            raise BadRequest
        line, *lines = data.split(b"\r\n")
        method, _, rest = line.partition(b" ")
        if method not in METHODS:
            raise BadRequest
        target, _, version = rest.lstrip(b" ").partition(b" ")
        if not version and not lines:  # HTTP/0.9: ``GET /``
            version = b"HTTP/0.9"
        if version not in VERSIONS or not target or not _only(target, TARGET):
            raise BadRequest
        self.method = method.decode("ascii")
        self.http_version = VERSIONS[version]
        self.raw_path, self.query = _split_target(target)
        headers: list[tuple[bytes, bytes]] = []
        length: bytes | None = None
        codings: list[bytes] = []
        tokens: list[bytes] = []
        upgrade = expect = False
        for header in lines:
            name, colon, value = header.partition(b":")
            if not colon or not name or not _only(name, TOKEN) or not _only(value, VALUE):
                raise BadRequest
            name = name.lower()
            value = value.lstrip(b" \t")
            if name == b"content-length":
                digits = value.rstrip(b" \t")
                if length is not None or not digits.isdigit():
                    raise BadRequest
                length = digits
            elif name == b"transfer-encoding":
                codings += [c.strip().lower() for c in value.split(b",")]
            elif name == b"connection":
                tokens += [t.strip().lower() for t in value.split(b",")]
            elif name == b"upgrade":
                upgrade = True
            elif name == b"expect" and value.lower() == b"100-continue":
                expect = True
            headers.append((name, value))
        if codings and (length is not None or codings[-1] != b"chunked"):
            raise BadRequest
        self.headers = headers
        self.length = int(length) if length is not None else 0
        self.chunked = bool(codings)
        self.expect_continue = expect
        # llhttp: an upgrade (``Connection: upgrade`` with ``Upgrade``, or CONNECT) ends the
        # message at its headers, and the parser reads nothing after it
        self.upgrade = (upgrade and b"upgrade" in tokens) or method == b"CONNECT"
        if self.http_version == "1.1":
            self.keep_alive = b"close" not in tokens
        else:  # uvicorn closes HTTP/1.0 whatever it asks; llhttp the others but keep-alive
            self.keep_alive = self.http_version != "1.0" and b"keep-alive" in tokens


def _split_target(target: bytes) -> tuple[bytes, bytes]:
    """The path and query of a request target, as ``httptools.parse_url`` gives them."""
    if target == b"*":
        return target, b""
    if not target.startswith(b"/"):  # absolute form: ``http://host:port/path?query``
        scheme, sep, rest = target.partition(b"://")
        slash = rest.find(b"/")
        if not sep or not scheme or slash <= 0:
            raise BadRequest
        target = rest[slash:]
    target = target.partition(b"#")[0]
    path, _, query = target.partition(b"?")
    return path, query


class Cycle:
    """One request and its response: what uvicorn's ``RequestResponseCycle`` does."""

    def __init__(self, conn: Connection, scope: Message, head: Head) -> None:
        self.conn = conn
        self.scope = scope
        self.event = asyncio.Event()
        self.keep_alive = head.keep_alive
        self.waiting_for_100 = head.expect_continue
        self.head_only = head.method == "HEAD"
        self.body = bytearray()
        self.more_body = True
        self.disconnected = False
        self.response_started = False
        self.response_complete = False
        self.chunked: bool | None = None
        self.expected_length = 0

    async def run(self, app: App) -> None:
        try:
            result: object = await app(self.scope, self.receive, self.send)  # type: ignore[func-returns-value]
        except BaseException:
            LOG.exception("Exception in ASGI application")
            if not self.response_started:
                await self.send_500()
            else:
                self.conn.transport.close()
        else:
            if result is not None:
                LOG.error("ASGI callable should return None, but returned '%s'.", result)
                self.conn.transport.close()
            elif not self.response_started and not self.disconnected:
                LOG.error("ASGI callable returned without starting response.")
                await self.send_500()
            elif not self.response_complete and not self.disconnected:
                LOG.error("ASGI callable returned without completing response.")
                self.conn.transport.close()

    async def send_500(self) -> None:
        await self.send({"type": "http.response.start", "status": 500, "headers": ERROR_500})
        await self.send({"type": "http.response.body", "body": b"Internal Server Error"})

    async def receive(self) -> Message:
        conn = self.conn
        if self.waiting_for_100 and not conn.transport.is_closing():
            conn.transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            self.waiting_for_100 = False
        if not self.disconnected and not self.response_complete:
            conn.resume_reading()
            await self.event.wait()
            self.event.clear()
        if self.disconnected or self.response_complete:
            return {"type": "http.disconnect"}
        message = {"type": "http.request", "body": bytes(self.body), "more_body": self.more_body}
        self.body = bytearray()
        return message

    async def send(self, message: Message) -> None:
        conn = self.conn
        if conn.write_paused is not None and not self.disconnected:
            await conn.write_paused
        if self.disconnected:
            return
        kind = message["type"]
        if not self.response_started:
            if kind != "http.response.start":
                raise RuntimeError(
                    f"Expected ASGI message 'http.response.start', but got '{kind}'."
                )
            self.response_started = True
            self.waiting_for_100 = False
            conn.transport.write(self._head(message))
        elif not self.response_complete:
            if kind != "http.response.body":
                expected = "Expected ASGI message 'http.response.body'"
                raise RuntimeError(f"{expected}, but got '{kind}'.")
            body = message.get("body", b"")
            more_body = message.get("more_body", False)
            if self.head_only:
                self.expected_length = 0
            elif self.chunked:
                out = b"%x\r\n%s\r\n" % (len(body), body) if body else b""
                conn.transport.write(out if more_body else out + b"0\r\n\r\n")
            else:
                if len(body) > self.expected_length:
                    raise RuntimeError("Response content longer than Content-Length")
                self.expected_length -= len(body)
                conn.transport.write(body)
            if not more_body:
                if self.expected_length != 0:
                    raise RuntimeError("Response content shorter than Content-Length")
                self.response_complete = True
                self.event.set()
                if not self.keep_alive:
                    conn.transport.close()
                conn.response_complete(self)
        else:
            raise RuntimeError(
                f"Unexpected ASGI message '{kind}' sent, after response already completed."
            )

    def _head(self, message: Message) -> bytes:
        status = message["status"]
        content = [status_line(status)]
        closing = False
        for name, value in default_headers() + list(message.get("headers", [])):
            if not _only(name, NAME_OUT):
                raise RuntimeError("Invalid HTTP header name.")
            if not _only(value, VALUE_OUT):
                raise RuntimeError("Invalid HTTP header value.")
            name = name.lower()
            if name == b"content-length" and self.chunked is None:
                self.expected_length = int(value.decode())
                self.chunked = False
            elif name == b"transfer-encoding" and value.lower() == b"chunked":
                self.expected_length = 0
                self.chunked = True
            elif name == b"connection" and b"close" in [
                token.lower().strip() for token in value.split(b",")
            ]:
                self.keep_alive = False
                closing = True
            content += [name, b": ", value, b"\r\n"]
        if not self.keep_alive and not closing:
            content.append(b"connection: close\r\n")
        if self.chunked is None and not self.head_only and status not in (204, 304):
            self.chunked = True
            content.append(b"transfer-encoding: chunked\r\n")
        content.append(b"\r\n")
        return b"".join(content)


class Connection(asyncio.Protocol):
    """One client connection: its bytes parsed a request at a time, answered in order.

    A pipelined request's head is parsed only once the one before it is answered, so
    requests run one at a time per connection, as uvicorn runs them.
    """

    def __init__(self, server: ThreadServer) -> None:
        self.server = server
        self.transport: asyncio.Transport = None  # type: ignore[assignment]
        self.buffer = bytearray()
        self.cycle: Cycle | None = None
        self.reading_body = False  # the cycle's body is still arriving
        self.remaining = 0  # bytes of the body (or of the current chunk) still to come
        self.chunked = False
        self.done = False  # refused, upgraded or lost: the rest of the input is ignored
        self.paused = False
        self.write_paused: asyncio.Future[None] | None = None
        self.client: tuple[str, int] | None = None
        self.local: tuple[str, int] | None = None

    # --- asyncio's callbacks ---
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.server.connections.add(self)
        self.client = _address(transport.get_extra_info("peername"))
        self.local = _address(transport.get_extra_info("sockname"))

    def connection_lost(self, exc: Exception | None) -> None:
        self.server.connections.discard(self)
        self.done = True
        cycle = self.cycle
        if cycle is not None:
            if not cycle.response_complete:
                cycle.disconnected = True
            cycle.event.set()
        self.resume_writing()
        if not self.server.connections:
            self.server.all_closed.set()

    def data_received(self, data: bytes) -> None:
        if self.done:
            return
        self.buffer += data
        try:
            self.parse()
        except BadRequest:
            self.refuse()

    def eof_received(self) -> bool | None:
        return None

    def pause_writing(self) -> None:
        if self.write_paused is None:
            self.write_paused = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        waiter, self.write_paused = self.write_paused, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    # --- reading ---
    def pause_reading(self) -> None:
        if not self.paused:
            self.paused = True
            self.transport.pause_reading()

    def resume_reading(self) -> None:
        if self.paused and not self.done:
            self.paused = False
            self.transport.resume_reading()

    def parse(self) -> None:
        buffer = self.buffer
        while not self.done:
            if self.reading_body:
                if not self.read_body():
                    return
                continue
            if self.cycle is not None and not self.cycle.response_complete:
                if len(buffer) > HIGH_WATER:  # a pipelined request waits its turn
                    self.pause_reading()
                return
            while buffer[:2] == b"\r\n":  # llhttp skips blank lines between requests
                del buffer[:2]
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(buffer) > MAX_HEAD or buffer.count(b"\n") != buffer.count(b"\r\n"):
                    raise BadRequest
                return
            if end > MAX_HEAD:
                raise BadRequest
            head = Head(bytes(buffer[:end]))
            del buffer[: end + 4]
            self.start(head)

    def start(self, head: Head) -> None:
        scope: Message = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": head.http_version,
            "server": self.local,
            "client": self.client,
            "scheme": "http",
            "root_path": "",
            "headers": head.headers,
            "state": {},
            "method": head.method,
            "path": unquote(head.raw_path.decode("ascii")) if b"%" in head.raw_path else
            head.raw_path.decode("ascii"),
            "raw_path": head.raw_path,
            "query_string": head.query,
        }  # fmt: skip
        cycle = self.cycle = Cycle(self, scope, head)
        if head.upgrade:  # as httptools: the message ends here, nothing more is read
            self.done = True
            self.buffer.clear()
        elif head.chunked:
            self.reading_body, self.chunked, self.remaining = True, True, -1
        elif head.length:
            self.reading_body, self.chunked, self.remaining = True, False, head.length
        if not self.reading_body:  # else the event is set as the body arrives
            cycle.more_body = False
            cycle.event.set()
        self.server.run(cycle)

    def read_body(self) -> bool:
        """Move what has arrived of the body to the cycle; False when it needs more bytes."""
        buffer, cycle = self.buffer, self.cycle
        assert cycle is not None
        if self.remaining > 0:
            if not buffer:
                return False
            taken = bytes(buffer[: self.remaining])
            del buffer[: len(taken)]
            self.remaining -= len(taken)
            if not cycle.response_complete:
                cycle.body += taken
                if len(cycle.body) > HIGH_WATER:
                    self.pause_reading()
                cycle.event.set()
            if self.remaining:
                return False
            if not self.chunked:
                self.body_complete()
                return True
        return self.read_chunk_edges()

    def read_chunk_edges(self) -> bool:
        """A chunk's closing CRLF and the next chunk's size line, or the last chunk and its
        trailers; ``remaining`` is -1 before a size line, -2 after the last chunk."""
        buffer = self.buffer
        if self.remaining == 0:  # a chunk's data is in: its CRLF
            if len(buffer) < 2:
                return False
            if buffer[:2] != b"\r\n":
                raise BadRequest
            del buffer[:2]
            self.remaining = -1
        if self.remaining == -1:
            end = buffer.find(b"\r\n")
            if end < 0:
                if len(buffer) > 4096:
                    raise BadRequest
                return False
            size = bytes(buffer[:end]).partition(b";")[0].rstrip(b" \t")
            if not 0 < len(size) <= 16 or not _only(size, HEXDIGITS):
                raise BadRequest
            del buffer[: end + 2]
            self.remaining = int(size, 16)
            if self.remaining:
                return True
            self.remaining = -2
        while True:  # trailers, up to the empty line
            end = buffer.find(b"\r\n")
            if end < 0:
                if len(buffer) > MAX_HEAD:
                    raise BadRequest
                return False
            del buffer[: end + 2]
            if end == 0:
                self.body_complete()
                return True

    def body_complete(self) -> None:
        self.reading_body = False
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete:
            cycle.more_body = False
            cycle.event.set()

    def refuse(self) -> None:
        """uvicorn's answer to what its parser refuses: 400, and the connection closed."""
        self.done = True
        head = b"".join(b"%s: %s\r\n" % pair for pair in default_headers())
        self.transport.write(
            status_line(400)
            + head
            + b"content-type: text/plain; charset=utf-8\r\ncontent-length: %d\r\n"
            b"connection: close\r\n\r\n%s" % (len(BAD_REQUEST_TEXT), BAD_REQUEST_TEXT)
        )
        self.transport.close()

    # --- the cycle's end, the server's stop ---
    def response_complete(self, cycle: Cycle) -> None:
        if self.transport.is_closing():
            return
        self.resume_reading()
        if self.buffer and not self.done:
            try:
                self.parse()
            except BadRequest:
                self.refuse()

    def shutdown(self) -> None:
        """Close when idle; else after the response in flight (``connection: close``)."""
        cycle = self.cycle
        if cycle is None or cycle.response_complete:
            self.transport.close()
        else:  # its body still read; nothing after it (the close follows its response)
            cycle.keep_alive = False


class ThreadServer:
    """``app`` served on ``host``:``port`` by an event loop of its own on a daemon thread.

    :meth:`start` returns once the socket listens (an event, not a poll); :meth:`stop`
    closes the listener, lets requests in flight finish (at most ``STOP_GRACE``), closes
    the connections and joins the thread: no tick to wait for, each step is awaited.
    """

    def __init__(self, app: App, host: str = "127.0.0.1", port: int = 0) -> None:
        self.app = app
        self.host = host
        self.port = port
        self.connections: set[Connection] = set()
        self.tasks: set[asyncio.Task[None]] = set()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True, name="idv-mock-server")
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self.stopping: asyncio.Event | None = None
        self.all_closed: asyncio.Event = None  # type: ignore[assignment]

    def start(self) -> int:
        """The bound port (port 0: the free one the system gave); ``OSError`` when the
        socket could not be bound."""
        self.thread.start()
        self._ready.wait()
        if self.error is not None:
            self.thread.join()
            raise self.error
        return self.port

    def stop(self) -> None:
        loop, stopping = self._loop, self.stopping
        if loop is not None and stopping is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop ended meanwhile
                loop.call_soon_threadsafe(stopping.set)
        self.thread.join(STOP_GRACE + 5)

    def run(self, cycle: Cycle) -> None:
        task = asyncio.get_running_loop().create_task(cycle.run(self.app))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def _run(self) -> None:
        try:
            loop = asyncio.new_event_loop()
            try:
                loop.run_until_complete(self._serve(loop))
            finally:
                loop.close()
        except BaseException as exc:
            if not self._ready.is_set():  # :meth:`start` raises it
                self.error = exc
            raise
        finally:
            self._ready.set()

    async def _serve(self, loop: asyncio.AbstractEventLoop) -> None:
        self.stopping = asyncio.Event()
        self.all_closed = asyncio.Event()
        try:
            listener = await loop.create_server(
                lambda: Connection(self), host=self.host, port=self.port, backlog=2048
            )
        except BaseException as exc:  # the port taken, an address not this machine's
            self.error = exc
            self._ready.set()
            return
        self.port = int(listener.sockets[0].getsockname()[1])
        self._loop = loop
        self._ready.set()
        await self.stopping.wait()
        listener.close()
        for conn in list(self.connections):
            conn.shutdown()
        if self.tasks:
            await asyncio.wait(list(self.tasks), timeout=STOP_GRACE)
        for conn in list(self.connections):
            conn.transport.close()
        if self.connections:  # each closes once its last bytes are written
            self.all_closed.clear()
            try:
                await asyncio.wait_for(self.all_closed.wait(), STOP_GRACE)
            except asyncio.TimeoutError:
                for conn in list(self.connections):
                    conn.transport.abort()
                await asyncio.sleep(0)
        for task in list(self.tasks):
            task.cancel()
        if self.tasks:
            await asyncio.wait(list(self.tasks), timeout=1.0)
