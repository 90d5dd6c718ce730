"""CORS for browser clients, in plain ASGI, off unless origins are given (``--cors-origin``).

The real API sends no CORS headers, so by default neither does the mock: a browser
front-end that works against the mock with CORS on may still be refused by the service.
With origins given, a preflight (``OPTIONS`` with ``Access-Control-Request-Method``) from
one of them is answered here, 204 with what the path allows, and every other answer to
such an origin carries ``Access-Control-Allow-Origin`` (and ``Vary: Origin``). A request
from another origin passes untouched and gets no CORS header, as a browser expects.
It sits in front of everything (``MockApp.__call__``), so the fast lane's answers, the
size limits' and the hints' get the headers too. The control API (``/__admin``, the
dashboard included) answers CORS only for origins named exactly: ``*`` never opens it
(a foreign page read every key through it, issue 39).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from starlette.types import Message, Receive, Scope, Send

from idv_mock.api.hints import HEADER as HINT_HEADER
from idv_mock.api.hints import methods_of
from idv_mock.serving.control import is_control

App = Callable[[Scope, Receive, Send], Awaitable[None]]
ANY = "*"
ALLOWED_HEADERS = b"x-api-key, content-type"
OTHER_PATHS = ("GET", "POST", "PUT", "PATCH", "DELETE")  # outside /v3: the control API
MAX_AGE = b"600"


class Cors:
    """The allowed origins, and the ASGI wrapper that answers for them."""

    def __init__(self, origins: Sequence[str]) -> None:
        self.origins = frozenset(origins)

    def allow_origin(self, origin: bytes, path: str = "/v3") -> bytes | None:
        """The ``Access-Control-Allow-Origin`` value for ``origin`` on ``path``, or None if
        refused; under ``/__admin`` only an origin named exactly is."""
        if origin.decode("latin-1") in self.origins:
            return origin
        return b"*" if ANY in self.origins and not is_control(path) else None

    async def __call__(self, app: App, scope: Scope, receive: Receive, send: Send) -> None:
        origin = _header(scope, b"origin") if scope["type"] == "http" else None
        allowed = None if origin is None else self.allow_origin(origin, scope["path"])
        if allowed is None:
            await app(scope, receive, send)
            return
        if scope["method"] == "OPTIONS" and _header(scope, b"access-control-request-method"):
            await _preflight(scope, send, allowed)
            return
        await app(scope, receive, _with_headers(send, allowed))


def allowed_methods(path: str) -> bytes:
    """The methods of the path: the contract's for ``/v3``, the control API's otherwise."""
    methods = methods_of(path) if path.startswith("/v3") else OTHER_PATHS
    return ", ".join(methods or OTHER_PATHS).encode("latin-1")


async def _preflight(scope: Scope, send: Send, allowed: bytes) -> None:
    headers = [
        *_common(allowed),
        (b"access-control-allow-methods", allowed_methods(scope["path"])),
        (b"access-control-allow-headers", ALLOWED_HEADERS),
        (b"access-control-max-age", MAX_AGE),
        (b"content-length", b"0"),
    ]
    await send({"type": "http.response.start", "status": 204, "headers": headers})
    await send({"type": "http.response.body", "body": b""})


def _with_headers(send: Send, allowed: bytes) -> Send:
    """``send`` adding the CORS headers to the response's start."""

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = [*message.get("headers", ()), *_common(allowed)]
            headers.append((b"access-control-expose-headers", HINT_HEADER.encode("latin-1")))
            message = {**message, "headers": headers}
        await send(message)

    return sending


def _common(allowed: bytes) -> list[tuple[bytes, bytes]]:
    return [(b"access-control-allow-origin", allowed), (b"vary", b"Origin")]


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope["headers"]:
        if key == name:
            return bytes(value)
    return None
