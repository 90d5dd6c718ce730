"""Size limits counted on what actually arrives, in front of everything else.

A ``content-length`` check alone let a chunked body of any size through, and nothing
capped headers (the probe of issue 14 sent 64 MiB chunked and 32 MiB of headers). Like
nginx and Jetty, the mock counts: headers over ``MAX_HEADER_BYTES`` in all are answered
431 at once; a body is read up to its path's limit (512 MiB for the control API's state
import, which carries whole states; 1 MiB for every other call: ``/v3``, the rest of the
control API, the pages) and no further: a 200 MiB body to ``POST /__admin/projects`` costs
1 MiB of memory, not 1.3 GB.
A body past its limit is not answered here: the scope is marked, the app sees the part
read so far, and the call's own step (``preconditions``, ``admin_endpoint``) answers 413,
so the refusal is journaled like any other.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from idv_mock.api.exposure import Exposure, is_page
from idv_mock.ground.errors import GENERIC
from idv_mock.serving.control import CONTROL_PREFIX, shaped_for
from idv_mock.serving.http import says_body, send_json

if TYPE_CHECKING:
    from starlette.types import Message, Receive, Scope, Send

MAX_BODY = 1024 * 1024
MAX_STATE_BODY = 512 * 1024 * 1024  # PUT /__admin/state: a whole state, 100k submissions
STATE_PATH = CONTROL_PREFIX + "/state"
MAX_HEADER_BYTES = 16 * 1024
TOO_LARGE = "idv_mock.body_too_large"  # scope key: the limit the body went past

App = Callable[["Scope", "Receive", "Send"], Awaitable[None]]


def body_limit(path: str) -> int:
    """The state import takes whole states; every other call (the control API's included:
    a project, a submission's overrides, a fault rule, a form) the API's 1 MiB."""
    return MAX_STATE_BODY if path == STATE_PATH else MAX_BODY


def shown(limit: int) -> str:
    """A limit as the 413's message says it."""
    return f"{limit // (1024 * 1024)} MiB" if limit >= 1024 * 1024 else f"{limit // 1024} KiB"


def headers_size(scope: Scope) -> int:
    return sum(len(name) + len(value) for name, value in scope["headers"])


async def guarded(
    app: App, scope: Scope, receive: Receive, send: Send, exposure: Exposure | None = None
) -> None:
    """``app`` behind the header cap, the control API's exposure rule and the body count."""
    if scope["type"] != "http":
        await app(scope, receive, send)
        return
    if headers_size(scope) > MAX_HEADER_BYTES:
        await _answer(send, "headers_too_large", scope["path"])
        return
    path = scope["path"]
    if path.startswith(CONTROL_PREFIX) and not is_page(path):
        send = _sandboxed(send)
    refused = None if exposure is None else exposure.refusal(scope)
    if refused is not None:
        await _answer(send, refused[0], scope["path"], *refused[1:])
        return
    if not says_body(scope):
        await app(scope, receive, send)
        return
    limit = body_limit(scope["path"])
    body, too_large = await _read(receive, limit)
    if too_large:
        scope[TOO_LARGE] = limit
    await app(scope, _replay(body, receive), send)


SANDBOX = (b"content-security-policy", b"sandbox; default-src 'none'; frame-ancestors 'none'")


def _sandboxed(send: Send) -> Send:
    """``send`` marking the control API's answers as documents with no origin of their own:
    a page of the mock's origin that opens one (a window, a frame) cannot read it."""

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", ()), SANDBOX]}
        await send(message)

    return sending


async def _read(receive: Receive, limit: int) -> tuple[bytes, bool]:
    """The body, read until its end or until it passes ``limit`` (then not all of it)."""
    parts: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(parts), False  # the client went away: the app will see it too
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return b"".join(parts), True
        parts.append(chunk)
        if not message.get("more_body", False):
            return b"".join(parts), False


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives the read body once, then whatever the server sends next."""
    given = False

    async def replayed() -> Message:
        nonlocal given
        if given:
            return await receive()
        given = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replayed


async def _answer(send: Send, code: str, path: str, *args: str) -> None:
    error = shaped_for(path, GENERIC.error(code, *args))  # /v3's bodies stay as they are
    await send_json(send, error.status, error.body, [(b"connection", b"close")])


def too_large(scope: dict[str, Any] | Scope) -> bool:
    return bool(scope.get(TOO_LARGE))


def limit_passed(scope: dict[str, Any] | Scope) -> str:
    """The limit a body went past, as the 413 says it."""
    return shown(int(scope.get(TOO_LARGE) or MAX_BODY))
