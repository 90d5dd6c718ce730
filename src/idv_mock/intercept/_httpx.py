"""The httpx layers: ``HTTPTransport.handle_request`` and its async twin, as pytest-httpx.

Patching the transport class rather than a client covers clients made before the mock
started and clients built deep inside the code under test; the call then reaches the app
through the same in-process transports the fixtures use, so a ``connection_reset`` fault
is the ``httpx.RemoteProtocolError`` a socket would give.

A third layer, on ``httpx.Cookies.extract_cookies``, spares the mock's own answers the
cookie pass httpx makes after every response: for a response without ``Set-Cookie`` (or
``Set-Cookie2``) that pass changes nothing in the jar, but it copies every header into an
``email`` message and parses the URL again for ``http.cookiejar`` (about a fifth of an
intercepted call; the ``idv_client`` fixture skips it the same way). Only the response the
layer itself just answered in this thread is spared; every other response, and any
response that sets a cookie, goes through the cookie jar as it always did.

A fourth layer, on the clients' ``_merge_url``, keeps each client's merged URLs
(``transport.MergedUrls``, as the ``idv_client`` fixture does): httpx otherwise parses a
relative URL and the merged one again on every call of a client with a ``base_url``, about
25 µs, a fifth of an intercepted call. It is a private method, checked by
:mod:`idv_mock.ground.compat`; should httpx drop it, a warning, the layer is left out and calls
merge as they always did.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable

import httpx

from idv_mock.ground import compat
from idv_mock.intercept._layers import Layer
from idv_mock.intercept._routing import Target, decide, split_httpx
from idv_mock.transport import MergedUrls, sets_cookie

SyncHandle = Callable[[httpx.HTTPTransport, httpx.Request], httpx.Response]
AsyncHandle = Callable[[httpx.AsyncHTTPTransport, httpx.Request], Awaitable[httpx.Response]]
Extract = Callable[[httpx.Cookies, httpx.Response], None]


class _Answered(threading.local):
    """The response a layer of this target answered last in this thread, until the client
    hands it to its cookie jar (right after: nothing runs between the two)."""

    response: httpx.Response | None = None


def layers(target: Target) -> list[Layer]:
    answered = _Answered()
    return [
        Layer(
            httpx.HTTPTransport,
            "handle_request",
            lambda real: _sync_layer(target, answered, real),
        ),
        Layer(
            httpx.AsyncHTTPTransport,
            "handle_async_request",
            lambda real: _async_layer(target, answered, real),
        ),
        Layer(httpx.Cookies, "extract_cookies", lambda real: _cookie_layer(answered, real)),
        *_merge_layers(),
    ]


MergeUrl = Callable[[httpx.Client | httpx.AsyncClient, "httpx.URL | str"], httpx.URL]
CACHE_ATTRIBUTE = "_idv_mock_merged_urls"


def _merge_layers() -> list[Layer]:
    owner = compat.httpx_merge_url_owner()
    if owner is None:
        return []  # another httpx (compat warned): nothing to speed up
    return [Layer(owner, "_merge_url", _merge_layer)]


def _merge_layer(real: MergeUrl) -> MergeUrl:
    def merge_url(client: httpx.Client | httpx.AsyncClient, url: httpx.URL | str) -> httpx.URL:
        merged: MergedUrls | None = client.__dict__.get(CACHE_ATTRIBUTE)
        if merged is None:
            merged = MergedUrls()
            setattr(client, CACHE_ATTRIBUTE, merged)
        return merged.merge(client.base_url, url, lambda u: real(client, u))

    return merge_url


def _sync_layer(target: Target, answered: _Answered, real: SyncHandle) -> SyncHandle:
    def handle_request(transport: httpx.HTTPTransport, request: httpx.Request) -> httpx.Response:
        where = split_httpx(request.url)
        path = decide(target, where, request.url)
        if path is None:
            return real(transport, request)
        if path == where[3]:
            response = target.sync.handle_request(request)
        else:
            try:
                response = target.sync.handle_request(_moved(request, path, request.read()))
            except httpx.RequestError as exc:
                exc.request = request
                raise
        answered.response = response
        return response

    return handle_request


def _async_layer(target: Target, answered: _Answered, real: AsyncHandle) -> AsyncHandle:
    async def handle_async_request(
        transport: httpx.AsyncHTTPTransport, request: httpx.Request
    ) -> httpx.Response:
        where = split_httpx(request.url)
        path = decide(target, where, request.url)
        if path is None:
            return await real(transport, request)
        if path == where[3]:
            response = await target.asynchronous.handle_async_request(request)
        else:
            moved = _moved(request, path, await request.aread())
            try:
                response = await target.asynchronous.handle_async_request(moved)
            except httpx.RequestError as exc:
                exc.request = request
                raise
        answered.response = response
        return response

    return handle_async_request


def _cookie_layer(answered: _Answered, real: Extract) -> Extract:
    def extract_cookies(cookies: httpx.Cookies, response: httpx.Response) -> None:
        if response is answered.response:
            answered.response = None
            if not sets_cookie(response):
                return  # the jar's pass would change nothing
        real(cookies, response)

    return extract_cookies


def _moved(request: httpx.Request, path: str, body: bytes) -> httpx.Request:
    """The request as the app serves it (under ``/v3``) when the base URL has another path.

    A copy, so the ``response.request`` the caller sees keeps the URL it called.
    """
    query = request.url.query
    raw_path = path.encode("ascii") + (b"?" + query if query else b"")
    url = request.url.copy_with(raw_path=raw_path)
    return httpx.Request(request.method, url, headers=request.headers.raw, content=body)
