"""The Starlette application: the route table, method dispatch, and the error handlers."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from idv_mock import admin
from idv_mock.api.delete_submission import delete_partial, delete_submission
from idv_mock.api.get_submission import get_submission
from idv_mock.api.http import error_response
from idv_mock.api.patch_submission import patch_submission
from idv_mock.backend import Service
from idv_mock.errors import GENERIC, ApiError

Handler = Callable[[Request], Awaitable[Response]]
ALL_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

# path -> {method: handler}; the spec's /v3 API
API_ROUTES: dict[str, dict[str, Handler]] = {
    "/v3/submission": {
        "GET": get_submission,
        "PATCH": patch_submission,
        "DELETE": delete_submission,
    },
    "/v3/submission/partial": {"DELETE": delete_partial},
}


def dispatch(handlers: dict[str, Handler]) -> Handler:
    """One endpoint per path: other methods get a JSON 405 with an ``Allow`` header."""
    allow = ", ".join(handlers)

    async def endpoint(request: Request) -> Response:
        handler = handlers.get(request.method)
        if handler is None:
            raise _not_allowed(allow)
        return await handler(request)

    return endpoint


def _not_allowed(allow: str) -> ApiError:
    error = GENERIC.error("method_not_allowed")
    error.headers["Allow"] = allow
    return error


def routes(table: dict[str, dict[str, Handler]]) -> list[Route]:
    return [Route(path, dispatch(h), methods=ALL_METHODS) for path, h in table.items()]


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return error_response(exc)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    code = "not_found" if exc.status_code == 404 else "method_not_allowed"
    return error_response(GENERIC.error(code))


async def _unexpected(request: Request, exc: Exception) -> Response:
    return error_response(GENERIC.error("internal_error"))


def create_app(service: Service | None = None) -> Starlette:
    """The mock as an ASGI app; ``service`` holds its state (a fresh one if not given)."""
    app = Starlette(
        routes=routes(API_ROUTES) + routes(admin.ROUTES),
        exception_handlers={
            ApiError: _api_error,
            HTTPException: _http_error,
            Exception: _unexpected,
        },
    )
    app.state.service = service or Service()
    return app
