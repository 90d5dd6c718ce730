"""Small request and response helpers shared by every resource module."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl

import orjson

from idv_mock.backend import Project, Service
from idv_mock.ground.errors import ApiError
from idv_mock.ground.jsondepth import MAX_DEPTH, STATE_MESSAGE, too_deep
from idv_mock.ground.jsondepth import MESSAGE as DEPTH_MESSAGE

if TYPE_CHECKING:  # Starlette loads with the app behind the fast lane (api/fastlane.py)
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.types import Scope

JSON = "application/json"
# where a request's project is kept once looked up: the key is read by several steps
PROJECT_SCOPE_KEY = "idv_mock.project"


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    """orjson-encoded JSON: stdlib json costs about as much as the rest of a request."""
    from starlette.responses import Response  # loaded by then: a dict look-up

    return Response(orjson.dumps(body), status, headers=headers, media_type=JSON)


async def send_json(
    send: Any, status: int, body: Any, extra_headers: Iterable[tuple[bytes, bytes]] = ()
) -> None:
    """A JSON answer in plain ASGI, for the layers in front of Starlette (``limits.py``,
    ``guard.py``), which have no ``Response`` to return."""
    content = orjson.dumps(body)
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(content)).encode("latin-1")),
        *extra_headers,
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": content})


def error_response(error: ApiError) -> Response:
    return json_response(error.body, error.status, error.headers)


def service_of(request: Request) -> Service:
    service: Service = request.app.state.service
    return service


def query_pairs(raw: bytes) -> list[tuple[str, str]]:
    """A raw query string as Starlette's ``QueryParams`` reads it (latin-1, blanks kept), for
    callers that have the ASGI scope but no ``Request``: both then see the same parameters."""
    return parse_qsl(raw.decode("latin-1"), keep_blank_values=True)


def grouped(pairs: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    """Every parameter with all its values, in the order they came."""
    found: dict[str, list[str]] = {}
    for name, value in pairs:
        found.setdefault(name, []).append(value)
    return found


def query_lists(request: Request) -> dict[str, list[str]]:
    """Every query parameter with all its values, in the order they came."""
    return grouped(request.query_params.multi_items())


def parse_json(raw: bytes, depth: int = MAX_DEPTH) -> Any:
    """The decoded body; raises ValueError for anything that is not UTF-8 JSON, or that
    nests deeper than ``depth`` (each caller answers its own parse error)."""
    try:
        doc = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ValueError("not JSON") from exc
    if too_deep(doc, depth):
        raise ValueError(DEPTH_MESSAGE if depth == MAX_DEPTH else STATE_MESSAGE)
    return doc


def says_body(scope: Scope) -> bool:
    """A non-zero ``content-length`` or any ``transfer-encoding``: a body may follow."""
    for name, value in scope["headers"]:
        if (name == b"content-length" and value != b"0") or name == b"transfer-encoding":
            return True
    return False


async def body_of(request: Request) -> bytes:
    """The request's body, without waiting on the server for one the request says it does
    not have (HTTP/1.1: no ``content-length`` and no ``transfer-encoding``, no body): the
    hints and the journal ask on every call, and most calls are GETs."""
    return await request.body() if says_body(request.scope) else b""


def path_of(request: Request) -> str:
    """``request.url.path``, without Starlette building and parsing the whole URL for it
    (about 4 µs a call): the scope's path, which is the URL's for every path that starts
    with one slash and has no character the URL changes."""
    path: str = request.scope["path"]
    if path[:1] != "/" or path[:2] == "//" or _CHANGED_IN_URL.search(path):
        return request.url.path  # the odd ones: Starlette's own answer
    return path


# what the URL escapes (?, #, backslash) or urlsplit drops (tab, CR, LF) in a path
_CHANGED_IN_URL = re.compile(r"[?#\\\t\r\n]")


def api_key(request: Request) -> str | None:
    return request.headers.get("x-api-key")


def project_of(request: Request) -> Project | None:
    """The project the request's ``x-api-key`` names; None for a missing or unknown key.

    Looked up once per request and kept in the scope: the limits, the fault rules, the
    handler and the journal all ask, and they must agree even if an admin call replaces the
    project meanwhile.
    """
    scope = request.scope
    if PROJECT_SCOPE_KEY in scope:
        found: Project | None = scope[PROJECT_SCOPE_KEY]
        return found
    project = service_of(request).project_for_key(api_key(request) or "")
    scope[PROJECT_SCOPE_KEY] = project
    return project


GONE = ("closed=True", "handler is closed", "Transport is closed")  # uvloop's, asyncio's


def client_gone(exc: BaseException) -> bool:
    """Whether ``exc``, raised while answering, says the client's connection is gone: a
    send on a closed transport (uvloop raises RuntimeError, asyncio and the ASGI spec an
    OSError) or a reset or broken connection."""
    if isinstance(exc, (ConnectionError, BrokenPipeError)):
        return True
    return isinstance(exc, (RuntimeError, OSError)) and any(g in str(exc) for g in GONE)
