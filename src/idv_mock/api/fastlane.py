"""The fast lane: ``GET /v3/submission`` of an ordinary project answered in plain ASGI.

That call is what load tests hammer, and Starlette's routing, middleware, Request and
Response objects cost more than the work itself. The lane answers it from the scope, with
the same body function (``submission_page.page_json``) and the same journal core
(``journaling.record_call``) as the Starlette route, and so the same bytes and the same
journal entry. It takes only the plain case: no step of the route's own table
(``preconditions.STEPS``: body, rate limit, fault rules, due rules; asked in one call,
``preconditions.any_applies``) applies, the key is known and the handler takes its plain
branch (``get_submission.takes_plain_page``), the query is valid, the headers are within
``limits.MAX_HEADER_BYTES``, CORS is off and no middleware was added. Anything else goes
the whole way (CORS, ``limits.guarded``, Starlette) untouched: nothing read, changed or
recorded, and the route answers as it always did.

The lane is one coroutine in front of everything (each wrapper layer costs a coroutine
per call), and a query string's parsed form is kept (``_Queries``): parsing depends on
nothing but the string for a plain project.

``app.state.fast_lane = False`` turns it off (to compare, or to rule it out when debugging).

Behind the lane, the Starlette app (its routes, middleware and exception handlers) is
built on the first call the lane does not take, once, under a lock (``MockApp.starlette``):
Starlette's requests, routing and responses were half of making an app, and a first test
that only reads ``GET /v3/submission`` never needs them. Whatever a Starlette app offers
(``app.routes``, ``app.router``, ``app.add_middleware``, ``app.user_middleware``,
``app.exception_handlers``, ...) is that app's, built when first asked; ``app.state`` is
the mock's own, and the request's app (``request.app``, ``scope["app"]``) is the
``MockApp``, as when it was a Starlette subclass.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from idv_mock.api.get_submission import takes_plain_page
from idv_mock.api.limits import MAX_HEADER_BYTES, guarded
from idv_mock.api.preconditions import any_applies
from idv_mock.backend import Service
from idv_mock.ground import compat, operations
from idv_mock.serving.http import JSON, PROJECT_SCOPE_KEY, client_gone, grouped, query_pairs
from idv_mock.serving.journaling import record_call
from idv_mock.serving.submission_page import Query, page_json, plain_query

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.datastructures import State
    from starlette.types import Receive, Scope, Send

LANE_PATH = operations.path("getSubmission")
_JSON_TYPE = JSON.encode("latin-1")
_CONTENT_TYPE = (b"content-type", _JSON_TYPE)


# what a Starlette app holds, set on the one behind the lane (``app.debug = True``)
STARLETTE_ATTRIBUTES = frozenset(
    {"debug", "router", "exception_handlers", "user_middleware", "middleware_stack"}
)


class MockApp:
    """The lane in front of a Starlette app (its middleware and routes), which ``build``
    makes on the first call the lane does not take or the first Starlette name asked."""

    def __init__(self, build: Callable[[], Starlette]) -> None:
        # app.state's attributes live in this dict, read per call with no __getattr__
        self.shared: dict[str, Any] = {}
        self._build = build
        self._app: Starlette | None = None
        self._building = threading.Lock()  # two threads' first calls build one app

    @property
    def state(self) -> State:
        """Starlette's ``State`` over ``shared`` (``compat.state_over``), made when first
        asked (``starlette.datastructures`` brings ``anyio`` and ``http.client``: the lane
        and ``create_app`` write ``shared`` itself)."""
        found: State | None = self.__dict__.get("_state")
        if found is None:  # two threads at once: both wrap ``shared``, the first one is kept
            found = self.__dict__.setdefault("_state", compat.state_over(self.shared))
        return found

    @state.setter
    def state(self, value: State) -> None:
        self.__dict__["_state"] = value

    @property
    def starlette(self) -> Starlette:
        """The Starlette app behind the lane, built now if it is not yet."""
        app = self._app
        if app is None:
            with self._building:
                app = self._app
                if app is None:
                    app = self._build()
                    app.state = self.state  # one state: the app's and this one's
                    self._app = app
        return app

    def __getattr__(self, name: str) -> Any:
        """Only for a name this class does not have: the Starlette app's (``routes``,
        ``add_middleware``, ``url_path_for``, ...), the app built if need be."""
        if name.startswith("_"):
            raise AttributeError(f"'MockApp' object has no attribute {name!r}")
        return getattr(self.starlette, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in STARLETTE_ATTRIBUTES:
            setattr(self.starlette, name, value)
        else:
            object.__setattr__(self, name, value)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        state = self.shared  # app.state's own dict (compat.state_over): no __getattr__ per read
        try:  # (a try costs nothing until something is raised)
            cors = state.get("cors")  # CORS, when on, outermost (cors.py)
            if cors is not None:
                await cors(self._guarded, scope, receive, send)
                return
            body = None  # the conditions of _lane, written out: one call less per call
            if (
                scope["type"] == "http"
                and scope["path"] == LANE_PATH
                and scope["method"] == "GET"
                and state.get("fast_lane")
                and not scope.get("root_path")
                and (self._app is None or not self._app.user_middleware)
            ):
                body = answer(state["service"], scope)
            if body is None:  # size limits and the exposure rule first (limits, exposure)
                await guarded(self._behind, scope, receive, send, state["exposure"])
                return
            # the two sends here, not in a coroutine, and _start written out: calls less a call
            # (a new message each call: a middleware around the app may add headers to it)
            length = _LENGTHS.get(len(body)) or _length(body)
            headers = [length, _CONTENT_TYPE]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": body})
        except (OSError, RuntimeError) as exc:
            if not client_gone(exc):
                raise
            # the client closed the connection before its answer was sent (pipelined calls
            # on a socket closed unread): no one to answer, and no traceback to log

    def _lane(self, state: dict[str, Any], scope: Scope) -> bytes | None:
        """The lane's answer, journaled, or None (nothing done) for a call it does not take."""
        if (
            scope["type"] == "http"
            and scope["path"] == LANE_PATH  # not /__admin: the exposure rule has no say
            and scope["method"] == "GET"
            and state.get("fast_lane")
            and not scope.get("root_path")
            and (self._app is None or not self._app.user_middleware)
        ):
            return answer(state["service"], scope)
        return None

    async def _guarded(self, scope: Scope, receive: Receive, send: Send) -> None:
        await guarded(self._dispatch, scope, receive, send, self.shared["exposure"])

    async def _dispatch(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Behind CORS: the lane, else Starlette."""
        body = self._lane(self.shared, scope)
        if body is None:
            await self._behind(scope, receive, send)
            return
        await send(_start(body))
        await send({"type": "http.response.body", "body": body})

    async def _behind(self, scope: Scope, receive: Receive, send: Send) -> None:
        """What ``Starlette.__call__`` does, with this app as the request's app: its
        middleware stack (built once, on the first call) around its router."""
        scope["app"] = self
        app = self._app or self.starlette
        stack = app.middleware_stack
        if stack is None:
            with self._building:
                stack = app.middleware_stack
                if stack is None:
                    stack = app.middleware_stack = app.build_middleware_stack()
        await stack(scope, receive, send)


def _start(body: bytes) -> dict[str, Any]:
    length = _LENGTHS.get(len(body)) or _length(body)
    return {"type": "http.response.start", "status": 200, "headers": [length, _CONTENT_TYPE]}


def _length(body: bytes) -> tuple[bytes, bytes]:
    """The content-length pair, kept per length (immutable, so shared by every message)."""
    if len(_LENGTHS) >= 4096:
        _LENGTHS.clear()
    length = _LENGTHS[len(body)] = (b"content-length", b"%d" % len(body))
    return length


_LENGTHS: dict[int, tuple[bytes, bytes]] = {}


class _Queries:
    """Parsed query strings of plain projects (None: the query is refused), a bounded
    number of them: the same string always parses the same way."""

    LIMIT = 1024

    def __init__(self) -> None:
        self.parsed: dict[bytes, Query | None] = {}

    def get(self, query_string: bytes) -> Query | None:
        parsed = self.parsed
        try:
            return parsed[query_string]
        except KeyError:
            pass
        query: Query | None
        try:
            query = plain_query(grouped(query_pairs(query_string)))
        except Exception:  # an ApiError (or worse): the route renders it, and journals it
            query = None
        if len(parsed) >= self.LIMIT:
            parsed.clear()
        parsed[query_string] = query
        return query


_QUERIES = _Queries()


def answer(service: Service, scope: Scope) -> bytes | None:
    """The body the route would answer, journaled as the route would; None (having done
    neither) if the call is not the plain case."""
    started = time.perf_counter()
    key, has_body, size = None, False, 0
    headers = scope["headers"]
    for name, value in headers:
        size += len(name) + len(value)
        if name == b"x-api-key":
            if key is None:  # Starlette's headers.get: the first one
                key = value
        elif name == b"content-length":
            has_body = has_body or value != b"0"
        elif name == b"transfer-encoding":
            has_body = True
    if key is None or size > MAX_HEADER_BYTES:  # over the cap: limits.guarded answers 431
        return None
    project = service.project_for_key(key.decode("latin-1"))
    scope[PROJECT_SCOPE_KEY] = project  # should the route answer, it need not look it up again
    if project is None or not takes_plain_page(project):
        return None
    if any_applies(project, has_body):  # a step of the route's own (preconditions.STEPS)
        return None
    query_string: bytes = scope["query_string"]
    query = _QUERIES.parsed.get(query_string)  # the usual case inline: a repeated query
    if query is None:
        query = _QUERIES.get(query_string)
        if query is None:
            return None
    try:
        body = page_json(service, project, query)
    except Exception:  # an ApiError (or worse): the route renders it, and journals it
        return None
    record_call(
        service, project, "GET", LANE_PATH, query_string, headers, b"", 200, body, JSON, started
    )
    return body
