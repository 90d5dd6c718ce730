"""The fast lane: ``GET /v3/submission`` of an ordinary project answered in plain ASGI.

That call is what load tests hammer, and Starlette's routing, middleware, Request and
Response objects cost more than the work itself. The lane answers it from the scope, with
the same body function (``get_submission.plain_page``) and the same journal core
(``journaling.record_call``) as the Starlette route, and so the same bytes and the same
journal entry. It takes only the plain case: no step of the route's own table
(``preconditions.STEPS``: body, rate limit, fault rules) applies, the key is known and the
handler takes its plain branch (``get_submission.takes_plain_page``), the query is valid
and no middleware was added. Anything else goes to Starlette untouched (nothing read,
changed or recorded), and the route answers as it always did.

``app.state.fast_lane = False`` turns it off (to compare, or to rule it out when debugging).
"""

from __future__ import annotations

import time

from starlette.applications import Starlette
from starlette.types import Receive, Scope, Send

from idv_mock.api.get_submission import plain_page, takes_plain_page
from idv_mock.api.http import JSON, PROJECT_SCOPE_KEY, grouped, query_pairs
from idv_mock.api.journaling import record_call
from idv_mock.api.limits import guarded
from idv_mock.api.preconditions import Facts, pending
from idv_mock.backend import Service

LANE_PATH = "/v3/submission"
_JSON_TYPE = JSON.encode("latin-1")


class MockApp(Starlette):
    """Starlette with the lane in front of its middleware and routes."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        cors = getattr(self.state, "cors", None)  # CORS, when on, outermost (cors.py)
        if cors is None:
            await self._guarded(scope, receive, send)
        else:
            await cors(self._guarded, scope, receive, send)

    async def _guarded(self, scope: Scope, receive: Receive, send: Send) -> None:
        # size limits and the exposure rule first (limits.py, exposure.py)
        await guarded(self._dispatch, scope, receive, send, self.state.exposure)

    async def _dispatch(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] == "http"
            and scope["path"] == LANE_PATH
            and scope["method"] == "GET"
            and not scope.get("root_path")
            and not self.user_middleware
            and self.state.fast_lane
            and await answer(self.state.service, scope, send)
        ):
            return
        await super().__call__(scope, receive, send)


async def answer(service: Service, scope: Scope, send: Send) -> bool:
    """Answer and journal the call as the route would; False (having done neither) if the
    call is not the plain case."""
    started = time.perf_counter()
    key, has_body = None, False
    for name, value in scope["headers"]:
        if name == b"x-api-key":
            if key is None:  # Starlette's headers.get: the first one
                key = value
        elif name == b"content-length":
            has_body = has_body or value != b"0"
        elif name == b"transfer-encoding":
            has_body = True
    if key is None:
        return False
    project = service.project_for_key(key.decode("latin-1"))
    scope[PROJECT_SCOPE_KEY] = project  # should the route answer, it need not look it up again
    if project is None or not takes_plain_page(project) or pending(Facts(project, has_body)):
        return False
    try:
        query_string: bytes = scope["query_string"]
        body = plain_page(service, project, grouped(query_pairs(query_string)))
    except Exception:  # an ApiError (or worse): the route renders it, and journals it
        return False
    headers = scope["headers"]
    record_call(
        service, project, "GET", LANE_PATH, query_string, headers, b"", 200, body, JSON, started
    )
    length = str(len(body)).encode("latin-1")
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-length", length), (b"content-type", _JSON_TYPE)],
        }
    )
    await send({"type": "http.response.body", "body": body})
    return True
