"""httpx transports that call an ASGI app in-process, at a small fraction of the usual cost.

``httpx.ASGITransport`` creates an event and an async body iterator per call, and
Starlette's ``TestClient`` crosses an anyio thread portal about eight times per call
(milliseconds), so with either one the client, not the app, is most of an in-process call.
These two do the least the ASGI contract needs::

    httpx.AsyncClient(transport=AsyncASGITransport(app), base_url="http://idv-mock/v3")
    httpx.Client(transport=ASGITransport(app), base_url="http://idv-mock/v3")

The scope is the one uvicorn (what ``idv-mock serve`` runs) gives the app: ``path``
percent-decoded once, ``raw_path`` and ``query_string`` as sent, header names lowercased
and values as the bytes httpx sends, ``server`` with the scheme's default port, a fresh
``state``; Starlette adds ``scope["app"]`` itself. The request body is read in full and
given once, later ``receive()`` calls wait until the response is complete and then answer
``http.disconnect`` (as httpx.ASGITransport does), so streaming responses are not cut.

The app's lifespan is not run, as with ``httpx.ASGITransport``: the mock's app has no
startup or shutdown work (Starlette's default lifespan does nothing), and running it
would tie the app to one event loop for the life of the client.

An exception raised by the app propagates to the caller by default (as with
``httpx.ASGITransport`` and ``TestClient``); with ``raise_app_exceptions=False`` it
becomes a 500 when no response had started, else the response sent so far. A
``BaseException`` that is no cancellation or exit, raised after the response started, is
how the mock drops a connection (the ``connection_reset`` fault): the caller gets
``httpx.RemoteProtocolError``, as over a socket, where TestClient and
``httpx.ASGITransport`` leak the raw exception (and TestClient breaks its portal).

``InProcessClient``/``AsyncInProcessClient`` (what the pytest fixtures return) are
``httpx.Client``/``httpx.AsyncClient`` minus two per-call costs of httpx's own that do not
change what is sent or received; together with the transport they make an in-process
call cost a fraction of what it did with TestClient. Both use private names of httpx
(``Client._merge_url``, ``Client._cookies``), through :mod:`idv_mock.ground.compat`: with an httpx
that lacks them, a warning and httpx's own way.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import Awaitable, Callable, Coroutine, MutableMapping
from typing import Any
from urllib.parse import unquote

import httpx

from idv_mock.ground import compat

__all__ = ["ASGITransport", "AsyncASGITransport", "AsyncInProcessClient", "InProcessClient"]

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[MutableMapping[str, Any], Receive, Send], Awaitable[None]]

DEFAULT_PORTS = {"http": 80, "https": 443}
STOP_SECONDS = 10  # closing waits this long for calls still running on the background loop
ABORTED = "peer closed connection without sending complete message body"  # httpx's words


class _Exchange:
    """One request/response cycle: the ASGI ``receive`` and ``send`` of a single call.

    A class with two bound methods costs less per call than two closures sharing cells,
    and the event a second ``receive()`` waits on is only created when one happens.
    """

    __slots__ = ("body", "complete", "head", "headers", "parts", "status", "waiter")

    def __init__(self, body: bytes, head: bool) -> None:
        self.body: bytes | None = body
        self.head = head
        self.status: int | None = None
        self.headers: list[tuple[bytes, bytes]] = []
        self.parts: list[bytes] = []
        self.complete = False
        self.waiter: Any = None  # an anyio.Event, made only if the app waits for disconnect

    async def receive(self) -> Message:
        body = self.body
        if body is not None:
            self.body = None
            return {"type": "http.request", "body": body, "more_body": False}
        if not self.complete:
            if self.waiter is None:
                import anyio  # the rare path; anyio keeps trio (via anyio) working too

                self.waiter = anyio.Event()
            await self.waiter.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: Message) -> None:
        kind = message["type"]
        if kind == "http.response.body":
            if self.status is None:
                raise RuntimeError('ASGI app sent "http.response.body" before the start')
            if self.complete:
                raise RuntimeError('ASGI app sent "http.response.body" after the last one')
            body = message.get("body", b"")
            if body and not self.head:
                self.parts.append(body)
            if not message.get("more_body", False):
                self._finish()
        elif kind == "http.response.start":
            if self.status is not None:
                raise RuntimeError('ASGI app sent "http.response.start" twice')
            self.status = message["status"]
            self.headers = list(message.get("headers", ()))

    def _finish(self) -> None:
        self.complete = True
        if self.waiter is not None:
            self.waiter.set()


def _is_abort(exc: BaseException) -> bool:
    """Whether the app dropped the connection on purpose (e.g. a ``connection_reset`` fault).

    The mock raises a ``BaseException`` past Starlette's handlers mid-response so that a
    server drops the connection; over HTTP the client then sees this error. Cancellation
    and interpreter exits are not aborts and propagate unchanged.
    """
    if isinstance(exc, (Exception, KeyboardInterrupt, SystemExit, GeneratorExit)):
        return False
    import anyio

    return not isinstance(exc, anyio.get_cancelled_exc_class())


class AsyncASGITransport(httpx.AsyncBaseTransport):
    """An ``httpx.AsyncClient`` transport calling ``app`` directly, in the caller's loop."""

    def __init__(
        self,
        app: ASGIApp,
        raise_app_exceptions: bool = True,
        root_path: str = "",
        client: tuple[str, int] = ("127.0.0.1", 123),
    ) -> None:
        self.app = app
        self.raise_app_exceptions = raise_app_exceptions
        self.root_path = root_path
        self.client = client

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await self.call(request, await request.aread())

    async def call(self, request: httpx.Request, body: bytes) -> httpx.Response:
        """The response of ``app`` to ``request`` with ``body`` (the shared path of both)."""
        url = request.url
        raw_path, _, _ = url.raw_path.partition(b"?")
        path = raw_path.decode("ascii")
        if "%" in path:
            path = unquote(path)
        scheme = url.scheme
        root_path = self.root_path
        scope: dict[str, Any] = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1",
            "method": request.method,
            "scheme": scheme,
            "path": root_path + path,
            "raw_path": root_path.encode("ascii") + raw_path if root_path else raw_path,
            "query_string": url.query,
            "root_path": root_path,
            "headers": [(key.lower(), value) for key, value in request.headers.raw],
            "server": (url.host, url.port or DEFAULT_PORTS.get(scheme)),
            "client": self.client,
            "state": {},
        }
        exchange = _Exchange(body, request.method == "HEAD")
        try:
            await self.app(scope, exchange.receive, exchange.send)
        except Exception:  # httpx.ASGITransport's contract: raised, or a 500 when asked
            if self.raise_app_exceptions:
                raise
            if exchange.status is None:
                exchange.status, exchange.headers, exchange.parts = 500, [], []
        except BaseException as exc:
            if exchange.status is None or not _is_abort(exc):
                raise
            raise httpx.RemoteProtocolError(ABORTED, request=request) from exc
        finally:
            exchange._finish()  # nothing may wait for a disconnect that cannot come
        status = exchange.status
        if status is None:
            raise RuntimeError("ASGI app returned without sending a response")
        parts = exchange.parts
        content = parts[0] if len(parts) == 1 else b"".join(parts)
        return httpx.Response(status, headers=exchange.headers, stream=httpx.ByteStream(content))


class ASGITransport(httpx.BaseTransport):
    """An ``httpx.Client`` transport calling ``app`` on an event loop of its own.

    The loop runs in the calling thread (``run_until_complete``), one per thread that uses
    the transport, created on first use and closed by ``close()``: no thread hop per call.
    A caller whose thread already runs an event loop (a sync client inside an async test)
    cannot block in a nested loop, so its calls run on one background thread's loop.
    """

    def __init__(
        self,
        app: ASGIApp,
        raise_app_exceptions: bool = True,
        root_path: str = "",
        client: tuple[str, int] = ("127.0.0.1", 123),
    ) -> None:
        self._async = AsyncASGITransport(app, raise_app_exceptions, root_path, client)
        self._local = threading.local()
        self._loops = _Loops()
        self._finalizer = weakref.finalize(self, self._loops.close)

    @property
    def app(self) -> ASGIApp:
        return self._async.app

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        body = request.read()
        if asyncio._get_running_loop() is not None:
            return self._loops.in_background(lambda: self._async.call(request, body))
        loop: asyncio.AbstractEventLoop | None = getattr(self._local, "loop", None)
        if loop is None or loop.is_closed():
            loop = self._local.loop = self._loops.new()
        return loop.run_until_complete(self._async.call(request, body))

    def close(self) -> None:
        """Close every loop this transport made (and stop its background thread)."""
        self._finalizer()


class _Loops:
    """The event loops of one ``ASGITransport``, kept apart so closing needs no transport."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.loops: list[asyncio.AbstractEventLoop] = []
        self.background: tuple[asyncio.AbstractEventLoop, threading.Thread] | None = None
        self.closed = False

    def new(self) -> asyncio.AbstractEventLoop:
        loop = asyncio.new_event_loop()
        with self.lock:
            if self.closed:
                loop.close()
                raise RuntimeError("the transport is closed")
            self.loops.append(loop)
        return loop

    def in_background(
        self, call: Callable[[], Coroutine[Any, Any, httpx.Response]]
    ) -> httpx.Response:
        with self.lock:
            if self.closed:
                raise RuntimeError("the transport is closed")
            if self.background is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(
                    target=loop.run_forever, name="idv-mock-transport", daemon=True
                )
                thread.start()
                self.background = (loop, thread)
            loop = self.background[0]
        future = asyncio.run_coroutine_threadsafe(call(), loop)
        return future.result()

    def close(self) -> None:
        with self.lock:
            self.closed = True
            loops, self.loops = self.loops, []
            background, self.background = self.background, None
        for loop in loops:
            _close_idle(loop)
        if background is not None:
            loop, thread = background
            try:
                asyncio.run_coroutine_threadsafe(_cleanup(loop), loop).result(STOP_SECONDS)
            finally:
                loop.call_soon_threadsafe(loop.stop)
                thread.join(STOP_SECONDS)
            if not thread.is_alive():  # else a call hangs in it: leave the loop to its thread
                loop.close()


def _close_idle(loop: asyncio.AbstractEventLoop) -> None:
    """Close a loop that is not running, cancelling what the app left on it if possible."""
    if loop.is_closed():
        return
    if asyncio._get_running_loop() is None and not loop.is_running():
        loop.run_until_complete(_cleanup(loop))
    loop.close()


async def _cleanup(loop: asyncio.AbstractEventLoop) -> None:
    """What ``asyncio.run`` does before closing: cancel leftover tasks, end async generators."""
    current = asyncio.current_task()
    tasks = [task for task in asyncio.all_tasks(loop) if task is not current]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await loop.shutdown_asyncgens()


class _SetCookieOnly(httpx.Cookies):
    """A cookie jar that skips the work of a response without cookies.

    httpx hands every response to ``http.cookiejar`` through adapters that copy all its
    headers and re-parse the URL (about a fifth of an in-process call); for a response
    with no ``Set-Cookie``/``Set-Cookie2`` header that work changes nothing.
    """

    def extract_cookies(self, response: httpx.Response) -> None:
        if sets_cookie(response):
            super().extract_cookies(response)


def sets_cookie(response: httpx.Response) -> bool:
    """Whether the response has a ``Set-Cookie`` (or ``Set-Cookie2``) header: without one,
    httpx's cookie pass changes nothing in the jar."""
    return any(key.lower() in SET_COOKIE for key, _ in response.headers.raw)


SET_COOKIE = (b"set-cookie", b"set-cookie2")
MERGED_URLS = 1024  # per client; a test suite calls far fewer distinct URL strings
MERGE_URL = compat.httpx_merge_url_owner() is not None  # checks httpx's version, at import


class MergedUrls:
    """Merged request URLs by the string given, for the base URL they were merged with.

    httpx parses a relative URL and then the merged one again on every call (a third of
    an in-process call); ``httpx.URL`` is immutable, so a merged URL can be reused. Used by
    the in-process clients and, for every httpx client, by the interception
    (``intercept/_httpx.py``).
    """

    __slots__ = ("base", "urls")

    def __init__(self) -> None:
        self.base: httpx.URL | None = None
        self.urls: dict[str, httpx.URL] = {}

    def merge(
        self, base: httpx.URL, url: httpx.URL | str, merge_url: Callable[[Any], httpx.URL]
    ) -> httpx.URL:
        if not isinstance(url, str):
            return merge_url(url)
        urls = self.urls
        if base is not self.base:  # the client's base_url was replaced
            urls = self.urls = {}
            self.base = base
        merged = urls.get(url)
        if merged is None:
            merged = merge_url(url)
            if len(urls) >= MERGED_URLS:
                urls.clear()
            # into the dict of the base it was merged with: should another thread replace
            # the base meanwhile, this merge lands in a dict no longer read
            urls[url] = merged
        return merged


class InProcessClient(httpx.Client):
    """``httpx.Client`` without two per-call costs: URL merging and empty cookie handling.

    Behaves as ``httpx.Client`` in every respect (same requests, same responses, cookies
    still kept when a response sets them); what the ``idv_client`` fixture returns.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        compat.skip_empty_cookie_passes(self, _SetCookieOnly)
        self._merged_urls = MergedUrls()

    if MERGE_URL:  # httpx's private URL merge, where it is the one compat checked

        def _merge_url(self, url: httpx.URL | str) -> httpx.URL:
            return self._merged_urls.merge(self.base_url, url, super()._merge_url)


class AsyncInProcessClient(httpx.AsyncClient):
    """The same for ``httpx.AsyncClient``; what the ``idv_async_client`` fixture returns."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        compat.skip_empty_cookie_passes(self, _SetCookieOnly)
        self._merged_urls = MergedUrls()

    if MERGE_URL:  # httpx's private URL merge, where it is the one compat checked

        def _merge_url(self, url: httpx.URL | str) -> httpx.URL:
            return self._merged_urls.merge(self.base_url, url, super()._merge_url)
