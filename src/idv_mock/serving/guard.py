"""Refuse writes with 503 while the state file cannot be saved (Redis's
``stop-writes-on-bgsave-error``): a write accepted then would be lost by the next crash
while the client believes it kept.

The one place the web layer asks the backend (``service.save_health.refusal``). Installed on
the ``/v3`` and ``/__admin`` routes and on the pages' writes (the dashboard's forms, the
hosted form's steps); reads (``GET``, ``HEAD``, ``OPTIONS``) always pass, and
so do the writes the state file does not keep: fault rules and clearing the request
journal, which a tester may need while the disk is full.

It also ends quietly a call whose client went away while sending its body (a slow body
cut off by ``--request-timeout``, see ``api/timeouts.py``): there is no one to answer, and
a traceback per slow client would only flood the log.
"""

from __future__ import annotations

import re

from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Receive, Scope, Send

from idv_mock.ground.errors import ApiError
from idv_mock.serving.control import shaped_for
from idv_mock.serving.http import send_json

WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
NOT_SAVED = re.compile(
    r"^/__admin/(projects/[^/]+/(faults(/[^/]+)?|requests)"
    r"|ui/(faults(/[^/]+/delete)?|login|project))$"  # the dashboard's: rules, cookies
)


class WriteGuard:
    """ASGI middleware: 503 ``{"message": ...}`` for a write while writes are refused."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        reason = _refusal(scope) if scope["type"] == "http" else None
        if reason is None:
            try:  # (not contextlib.suppress: a context manager object per call)
                await self.app(scope, receive, send)
            except ClientDisconnect:  # nothing answered, nothing can be
                return
            return
        error = shaped_for(scope["path"], ApiError(503, {"message": reason}))
        await send_json(send, error.status, error.body, [(b"retry-after", b"1")])


def _refusal(scope: Scope) -> str | None:
    if scope["method"] not in WRITE_METHODS or NOT_SAVED.match(scope["path"]):
        return None
    reason: str | None = scope["app"].state.service.save_health.refusal()
    return reason
