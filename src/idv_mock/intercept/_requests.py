"""The requests layer: ``HTTPAdapter.send``, as ``responses`` patches it.

The prepared request is handed to the app through the same in-process transport as an
httpx call, and the answer is made into what a socket would have given the adapter (a
urllib3 response), so ``build_response`` does the rest: encoding, cookies, ``raw``
streaming, redirects through the session. Only names urllib3 1.26 and 2.x share are used.
A ``connection_reset`` fault becomes
:class:`ConnectionDropped`, both ``requests.ConnectionError`` and the
``ChunkedEncodingError`` requests raises when a server drops a connection mid-body.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from http.client import HTTPMessage
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import requests
from requests.adapters import HTTPAdapter
from urllib3.exceptions import ProtocolError
from urllib3.response import HTTPResponse

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
    body: Any = request.body
    if body is None:
        return b""
    if isinstance(body, str):
        return body.encode("utf-8")
    if isinstance(body, (bytes, bytearray, memoryview)):
        return bytes(body)
    if hasattr(body, "read"):  # a file: read in blocks, as urllib3 sends it
        return b"".join(_encoded(block) for block in iter(lambda: body.read(BLOCK), b""))
    return b"".join(_encoded(chunk) for chunk in body)  # an iterable (generator) of chunks


def _encoded(chunk: str | bytes) -> bytes:
    return chunk.encode("utf-8") if isinstance(chunk, str) else bytes(chunk)


def _raw(answer: httpx.Response, method: str, url: str) -> HTTPResponse:
    """The urllib3 response a socket would have produced, body unread (``stream=True`` works).

    Headers go in as pairs, which urllib3 1.26 and 2.x both take (repeats kept)."""
    headers = answer.headers.multi_items()
    return HTTPResponse(
        body=io.BytesIO(answer.read()),
        headers=headers,  # type: ignore[arg-type]  # pairs: HTTPHeaderDict.extend takes them
        status=answer.status_code,
        reason=answer.reason_phrase,
        preload_content=False,
        original_response=_original(headers),
        request_method=method,
        request_url=url,
    )


def _original(headers: list[tuple[str, str]]) -> Any:
    """What requests reads cookies from (``_original_response.msg``, the standard library's
    message a socket's response has), made only when needed."""
    if not any(key.lower() in SET_COOKIE for key, _ in headers):
        return None
    message = HTTPMessage()
    for key, value in headers:
        message[key] = value  # appends: repeated headers are all kept
    closed = io.BytesIO()
    closed.close()
    return HTTPResponse(body=closed, msg=message, preload_content=False)
