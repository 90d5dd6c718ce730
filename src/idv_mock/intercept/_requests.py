"""The requests layer: ``HTTPAdapter.send``, as ``responses`` patches it.

The prepared request is handed to the app through the same in-process transport as an
httpx call, and the answer is made into what a socket would have given the adapter (a
urllib3 response), so ``build_response`` does the rest: encoding, cookies, ``raw``
streaming, redirects through the session. A ``connection_reset`` fault becomes
:class:`ConnectionDropped`, both ``requests.ConnectionError`` and the
``ChunkedEncodingError`` requests raises when a server drops a connection mid-body.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import requests
from requests.adapters import HTTPAdapter
from urllib3 import HTTPHeaderDict, HTTPResponse
from urllib3.exceptions import ProtocolError
from urllib3.util.request import body_to_chunks

from idv_mock.intercept._layers import Layer
from idv_mock.intercept._routing import Target, decide, split_text

Send = Callable[..., requests.Response]
BLOCK = 16384
SET_COOKIE = ("set-cookie", "set-cookie2")


def layers(target: Target) -> list[Layer]:
    return [Layer(HTTPAdapter, "send", lambda real: _layer(target, real))]


def _layer(target: Target, real: Send) -> Send:
    def send(
        adapter: HTTPAdapter, request: requests.PreparedRequest, *args: Any, **kwargs: Any
    ) -> requests.Response:
        url = request.url or ""
        where = split_text(url)
        path = decide(target, where, url)
        if path is None:
            return real(adapter, request, *args, **kwargs)
        if path != where[3]:
            url = urlunsplit(urlsplit(url)._replace(path=path))
        return _answer(target, adapter, request, url)

    return send


def _answer(
    target: Target, adapter: HTTPAdapter, request: requests.PreparedRequest, url: str
) -> requests.Response:
    method = request.method or "GET"
    headers = [(key, value) for key, value in request.headers.items()]
    app_request = httpx.Request(method, url, headers=headers, content=_body(request, method))
    try:
        answer = target.sync.handle_request(app_request)
    except httpx.RemoteProtocolError as exc:
        error = ProtocolError("Connection broken: the server dropped the connection", exc)
        raise ConnectionDropped(error, request=request) from exc
    return adapter.build_response(request, _raw(answer, method, request.url or url))


class ConnectionDropped(requests.ConnectionError, requests.exceptions.ChunkedEncodingError):
    """The server dropped the connection mid-response (a ``connection_reset`` fault).

    Over a socket requests reports this as ``ChunkedEncodingError`` (the body was cut
    short); code that guards against dropped connections often catches
    ``requests.ConnectionError``. Both catch this, so either kind of client code behaves
    as it would against a real server that drops the connection.
    """


def _body(request: requests.PreparedRequest, method: str) -> bytes:
    """The bytes urllib3 would send for the prepared body (text, bytes, file or iterable)."""
    chunks = body_to_chunks(request.body, method, BLOCK).chunks
    if chunks is None:
        return b""
    return b"".join(c.encode("utf-8") if isinstance(c, str) else bytes(c) for c in chunks)


def _raw(answer: httpx.Response, method: str, url: str) -> HTTPResponse:
    """The urllib3 response a socket would have produced, body unread (``stream=True`` works)."""
    headers = HTTPHeaderDict()
    for key, value in answer.headers.multi_items():
        headers.add(key, value)
    return HTTPResponse(
        body=io.BytesIO(answer.read()),
        headers=headers,
        status=answer.status_code,
        reason=answer.reason_phrase,
        preload_content=False,
        original_response=_original(headers),
        request_method=method,
        request_url=url,
    )


def _original(headers: HTTPHeaderDict) -> Any:
    """What requests reads cookies from (``_original_response.msg``), made only when needed."""
    if not any(key.lower() in SET_COOKIE for key in headers):
        return None
    closed = io.BytesIO()
    closed.close()
    return HTTPResponse(body=closed, msg=headers, preload_content=False)  # type: ignore[arg-type]
