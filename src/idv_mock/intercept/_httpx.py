"""The httpx layers: ``HTTPTransport.handle_request`` and its async twin, as pytest-httpx.

Patching the transport class rather than a client covers clients made before the mock
started and clients built deep inside the code under test; the call then reaches the app
through the same in-process transports the fixtures use, so a ``connection_reset`` fault
is the ``httpx.RemoteProtocolError`` a socket would give.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import httpx

from idv_mock.intercept._layers import Layer
from idv_mock.intercept._routing import Target, decide, split_httpx

SyncHandle = Callable[[httpx.HTTPTransport, httpx.Request], httpx.Response]
AsyncHandle = Callable[[httpx.AsyncHTTPTransport, httpx.Request], Awaitable[httpx.Response]]


def layers(target: Target) -> list[Layer]:
    return [
        Layer(httpx.HTTPTransport, "handle_request", lambda real: _sync_layer(target, real)),
        Layer(
            httpx.AsyncHTTPTransport,
            "handle_async_request",
            lambda real: _async_layer(target, real),
        ),
    ]


def _sync_layer(target: Target, real: SyncHandle) -> SyncHandle:
    def handle_request(transport: httpx.HTTPTransport, request: httpx.Request) -> httpx.Response:
        where = split_httpx(request.url)
        path = decide(target, where, request.url)
        if path is None:
            return real(transport, request)
        if path == where[3]:
            return target.sync.handle_request(request)
        try:
            return target.sync.handle_request(_moved(request, path, request.read()))
        except httpx.RequestError as exc:
            exc.request = request
            raise

    return handle_request


def _async_layer(target: Target, real: AsyncHandle) -> AsyncHandle:
    async def handle_async_request(
        transport: httpx.AsyncHTTPTransport, request: httpx.Request
    ) -> httpx.Response:
        where = split_httpx(request.url)
        path = decide(target, where, request.url)
        if path is None:
            return await real(transport, request)
        if path == where[3]:
            return await target.asynchronous.handle_async_request(request)
        moved = _moved(request, path, await request.aread())
        try:
            return await target.asynchronous.handle_async_request(moved)
        except httpx.RequestError as exc:
            exc.request = request
            raise

    return handle_async_request


def _moved(request: httpx.Request, path: str, body: bytes) -> httpx.Request:
    """The request as the app serves it (under ``/v3``) when the base URL has another path.

    A copy, so the ``response.request`` the caller sees keeps the URL it called.
    """
    query = request.url.query
    raw_path = path.encode("ascii") + (b"?" + query if query else b"")
    url = request.url.copy_with(raw_path=raw_path)
    return httpx.Request(request.method, url, headers=request.headers.raw, content=body)
