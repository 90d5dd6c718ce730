"""The application: the route table, method dispatch, and the error handlers.

``create_app`` makes a ``MockApp`` (``fastlane.py``): the fast lane in front, and the
Starlette app of these routes behind it, built (Starlette, the routes, the pages' mount)
on the first call the lane does not take (``_starlette_app``). Nothing here imports
Starlette until then: a first test that only reads ``GET /v3/submission`` never does."""

from __future__ import annotations

import functools
import importlib
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from idv_mock.api import exposure
from idv_mock.api.exposure import Exposure
from idv_mock.api.fastlane import MockApp
from idv_mock.api.limits import limit_passed, too_large
from idv_mock.api.preconditions import run_steps
from idv_mock.backend import BackendError, Service
from idv_mock.ground import operations
from idv_mock.ground.errors import GENERIC, ApiError, Family
from idv_mock.serving import journaling
from idv_mock.serving.control import shaped_for
from idv_mock.serving.http import error_response, json_response

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import BaseRoute

    from idv_mock.api.hints import Found

Handler = Callable[["Request"], Awaitable["Response"]]
Refusal = Callable[[], ApiError]
# TRACE too, so that every 405 is the path's own, with its Allow header (RFC 9110)
ALL_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE"]
Calls = dict[str, tuple[Handler, Family]]


def _hint(request: Request, response: Response) -> Awaitable[Found]:
    """``hints.apply``, its module (``api/hints.py``) imported on the first answer that goes
    through Starlette: the fast lane's ``GET /v3/submission``, what a first test usually
    calls, never asks for a hint."""
    import idv_mock.api.hints as near_miss

    return near_miss.apply(request, response)


def _generic_not_allowed() -> ApiError:
    return GENERIC.error("method_not_allowed")


class _Row:
    """A row's ``module:function`` under ``idv_mock.api`` (the table names, this resolves),
    imported on its first call: a first test calls one or two of the table's paths, and
    every handler module loaded with the app was a tenth of the app's import. Named as
    the function it stands for (``__module__``, ``__name__``); ``target()`` is that
    function."""

    def __init__(self, ref: str) -> None:
        module, _, name = ref.partition(":")
        self.__module__ = f"idv_mock.api.{module}"
        self.__name__ = self.__qualname__ = name
        self._found: Any = None

    def target(self) -> Any:
        if self._found is None:
            self._found = getattr(importlib.import_module(self.__module__), self.__name__)
        return self._found


class _Handler(_Row):
    async def __call__(self, request: Request) -> Response:
        response: Response = await self.target()(request)
        return response


class _Refusal(_Row):
    def __call__(self) -> ApiError:
        error: ApiError = self.target()()
        return error


def _routes() -> dict[str, tuple[Calls, Refusal]]:
    """Path -> ({method: (handler, error family)}, the path's 405), from the operation
    table (``operations.py``, read from ``schemas/api.json``): nothing listed here."""
    routes: dict[str, tuple[Calls, Refusal]] = {}
    for path, ops in operations.by_path().items():
        calls: Calls = {
            m: (_Handler(op.handler), op.family) for m, op in ops.items() if op.family is not None
        }
        other = ops.get(operations.ANY)
        routes[path] = (calls, _Refusal(other.handler) if other else _generic_not_allowed)
    return routes


API_ROUTES = _routes()
API_FAMILIES = {p: {m: f for m, (_, f) in calls.items()} for p, (calls, _) in API_ROUTES.items()}


def _not_allowed(allow: str, refusal: Refusal = _generic_not_allowed) -> ApiError:
    error = refusal()
    error.headers["Allow"] = allow
    return error


def api_endpoint(calls: Calls, refusal: Refusal) -> Handler:
    """One endpoint per path: the steps before a handler (``preconditions.py``: body size,
    rate limit, fault rules), then the method's handler, else a 405."""
    allow = ", ".join(calls)

    async def answer(request: Request) -> Response:
        if request.method not in calls:
            raise _not_allowed(allow, refusal)
        handler, family = calls[request.method]
        answered = await run_steps(request, family)
        return answered if answered is not None else await handler(request)

    async def endpoint(request: Request) -> Response:
        started = time.perf_counter()
        try:
            response = await answer(request)
        except ApiError as exc:
            response = error_response(exc)
        found = await _hint(request, response)  # near-miss hint (api/hints.py)
        await journaling.record(request, response, started, found.text, found.owner)
        return response

    return endpoint


def admin_endpoint(handlers: dict[str, Handler]) -> Handler:
    """A control-API path: its methods, and the one place a backend refusal becomes 4xx."""
    from idv_mock.api import admin  # with the routes (``_shared_routes``), not the app

    allow = ", ".join(handlers)

    async def endpoint(request: Request) -> Response:
        try:
            if request.method not in handlers:
                raise _not_allowed(allow)
            if too_large(request.scope):
                raise GENERIC.error("admin_payload_too_large", limit_passed(request.scope))
            if not admin.json_body_ok(request):
                raise GENERIC.error("json_required")
            return await handlers[request.method](request)
        except BackendError as exc:
            raise admin.refusal(exc) from None
        except ApiError as exc:  # the control API's one shape (not /openapi.json's)
            raise shaped_for(request.url.path, exc) from None

    return endpoint


async def openapi_json(request: Request) -> Response:
    """The OpenAPI document; ``?version=3.0`` renders it for tools without 3.1 support."""
    from idv_mock.api.openapi import document

    version = request.query_params.get("version", "3.1")
    if version not in ("3.0", "3.1"):
        raise ApiError(400, {"message": "version must be 3.0 or 3.1"})
    return json_response(document(version))


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return error_response(exc)


async def _http_error(request: Request, exc: Exception) -> Response:
    from starlette.exceptions import HTTPException

    assert isinstance(exc, HTTPException)
    code = "not_found" if exc.status_code == 404 else "method_not_allowed"
    error = GENERIC.error(code)
    if exc.status_code == 405 and exc.headers and "Allow" in exc.headers:
        error.headers["Allow"] = exc.headers["Allow"]  # a page's methods (RFC 9110)
    response = error_response(shaped_for(request.url.path, error))
    found = await _hint(request, response)  # journaled only where a key was carried
    if found.owner is not None:
        started = time.perf_counter()
        await journaling.record_request(request, response, started, found.text, found.owner)
    return response


async def _unexpected(request: Request, exc: Exception) -> Response:
    error = GENERIC.error("internal_error")
    return error_response(shaped_for(request.url.path, error))


@functools.cache
def _shared_routes() -> tuple[BaseRoute, ...]:
    """The API, control-API and OpenAPI routes, built once a process and shared by every
    app: nothing in them is an app's own (each endpoint and ``WriteGuard`` find the service
    in the request's app). A mock started per test (``idv_mocked``, ``idv_client``) built
    these 44 routes each time: most of its start. The pages' mount stays each app's own."""
    from starlette.middleware import Middleware

    from idv_mock.api import admin
    from idv_mock.api.lazy_route import LazyRoute
    from idv_mock.serving.guard import WriteGuard

    guard = [Middleware(WriteGuard)]  # 503 on writes while the state file cannot be saved
    api = [  # each built when the router first walks it (lazy_route.py: the lane never does)
        LazyRoute(p, api_endpoint(c, r), methods=ALL_METHODS, middleware=guard)
        for p, (c, r) in API_ROUTES.items()
    ]
    control = [
        LazyRoute(p, admin_endpoint(h), methods=ALL_METHODS, middleware=guard)
        for p, h in admin.ROUTES.items()
    ]
    docs = [LazyRoute("/openapi.json", admin_endpoint({"GET": openapi_json}), methods=ALL_METHODS)]
    return (*api, *control, *docs)


def create_app(
    service: Service | None = None,
    *,
    exposed: bool = False,
    admin_token: str | None = None,
    admin_open: bool = False,
    hints: bool = True,
    cors_origins: Sequence[str] = (),
    bound_host: str | None = None,
    allowed_hosts: Sequence[str] = (),
) -> MockApp:
    """The mock as an ASGI app; ``service`` holds its state (a fresh one if not given).

    A ``MockApp``: the fast lane for ``GET /v3/submission`` in front of Starlette (built
    on the first call the lane does not take: ``fastlane.py``).
    ``exposed`` (the server listens beyond loopback) puts ``/__admin`` behind
    ``admin_token`` unless ``admin_open`` (``exposure.py``). ``hints``: near-miss hints
    (``hints.py``); ``cors_origins``: the origins browsers may call from (``cors.py``).
    ``bound_host`` (the address served on; None in-process) and ``allowed_hosts``: the
    names ``/__admin`` answers to besides localhost and loopback addresses (``exposure.py``).
    """
    app = MockApp(_starlette_app)
    state = app.shared  # app.state's own dict
    state["service"] = service = service or Service()
    service.calls.reader = journaling.readable
    state["api_families"] = API_FAMILIES
    state["fast_lane"] = True  # GET /v3/submission in plain ASGI (api/fastlane.py)
    state["exposure"] = Exposure(
        exposed,
        admin_token,
        admin_open,
        exposure.allowed_hosts(bound_host, tuple(allowed_hosts)),
        frozenset(o for o in cors_origins if o != "*"),
        exposure.machine_names(bound_host) if bound_host and exposed else frozenset(),
    )
    state["hints"] = hints
    state["cors"] = None
    if cors_origins:  # cors.py (and the hints it reads methods from) only when asked for
        from idv_mock.api.cors import Cors

        state["cors"] = Cors(cors_origins)
    return app


def _starlette_app() -> Starlette:
    """The Starlette app behind an app's lane (``MockApp.starlette`` calls this once, on
    the first call the lane does not take): the shared routes, the pages' mount (each
    app's own), the error handlers."""
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException

    from idv_mock import web
    from idv_mock.api.faults import quiet_connection_resets

    app = Starlette(
        routes=[*_shared_routes(), web.lazy_mount()],  # pages load on first use
        exception_handlers={
            ApiError: _api_error,
            HTTPException: _http_error,
            Exception: _unexpected,
        },
    )
    app.router.redirect_slashes = False  # the service does not redirect; neither does the mock
    quiet_connection_resets()  # a connection_reset fault is one log line, not a crash's
    return app
