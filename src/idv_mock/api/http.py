"""Small request and response helpers shared by every resource module."""

from __future__ import annotations

from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import Response

from idv_mock.backend import Project, Service
from idv_mock.errors import ApiError

JSON = "application/json"


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    """orjson-encoded JSON: stdlib json costs about as much as the rest of a request."""
    return Response(orjson.dumps(body), status, headers=headers, media_type=JSON)


def error_response(error: ApiError) -> Response:
    return json_response(error.body, error.status, error.headers)


def service_of(request: Request) -> Service:
    service: Service = request.app.state.service
    return service


def query_lists(request: Request) -> dict[str, list[str]]:
    """Every query parameter with all its values, in the order they came."""
    found: dict[str, list[str]] = {}
    for name, value in request.query_params.multi_items():
        found.setdefault(name, []).append(value)
    return found


def parse_json(raw: bytes) -> Any:
    """The decoded body; raises ValueError for anything that is not UTF-8 JSON."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ValueError("not JSON") from exc


def api_key(request: Request) -> str | None:
    return request.headers.get("x-api-key")


def project_of(request: Request) -> Project | None:
    """The project the request's ``x-api-key`` names; None for a missing or unknown key."""
    return service_of(request).project_for_key(api_key(request) or "")
