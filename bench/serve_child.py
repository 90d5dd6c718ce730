"""A server process for the throughput runs: the mock, or one of the two bare baselines.

Run as ``python bench/serve_child.py KIND PORT [BODY_FILE]`` under ``taskset`` by
``servers.py``. Every kind uses the uvicorn settings of ``idv-mock serve`` (uvloop,
httptools, log level warning) with the access log off, so the baselines differ from the
mock only in what the application does per request.

Kinds:
- ``mock``: the mock's app over ``benchstate.build_service()``;
- ``mock-uncounted``: the same with contract coverage's counting off, to measure its cost;
- ``bytes``: bare Starlette answering GET /v3/submission with the stored body as
  pre-serialized bytes (the ceiling for any Python ASGI mock);
- ``dict``: the same body kept as a dict and serialized with orjson on every request.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import orjson
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

JSON = "application/json"


def bare_app(body: bytes, per_request: bool) -> Starlette:
    """One route, no checks: what is left of a mock once it does no work of its own."""
    doc: Any = orjson.loads(body)

    async def preserialized(request: Request) -> Response:
        return Response(body, media_type=JSON)

    async def serialized(request: Request) -> Response:
        return Response(orjson.dumps(doc), media_type=JSON)

    endpoint = serialized if per_request else preserialized
    return Starlette(routes=[Route("/v3/submission", endpoint, methods=["GET"])])


def mock_app(counted: bool = True) -> Any:
    from benchstate import build_service

    from idv_mock import create_app

    service = build_service()
    service.coverage.counts.recording = counted
    return create_app(service)


def app_for(kind: str, body_file: str | None) -> Any:
    if kind in ("mock", "mock-uncounted"):
        return mock_app(counted=kind == "mock")
    if body_file is None:
        raise SystemExit(f"{kind} needs a body file")
    if kind == "raw":  # no framework at all: the ceiling (raw_asgi.py)
        from raw_asgi import raw_app

        return raw_app(Path(body_file).read_bytes())
    return bare_app(Path(body_file).read_bytes(), per_request=kind == "dict")


def main(argv: list[str]) -> None:
    kind, port = argv[0], int(argv[1])
    app = app_for(kind, argv[2] if len(argv) > 2 else None)
    uvicorn.run(
        app,
        host="127.0.0.1",
        port=port,
        loop="uvloop",
        http=_protocol(kind),
        log_level="warning",
        access_log=False,
    )


def _protocol(kind: str) -> Any:
    """The mock runs with ``idv-mock serve``'s request deadline (its default, 20 s): one
    timer per connection, re-armed every 20 s at most, and a clock read per request; so
    does ``mock-uncounted`` (it differs from ``mock`` in the counting alone, what its
    ratio measures); the bare baselines keep plain httptools, the ceiling."""
    if kind not in ("mock", "mock-uncounted"):
        return "httptools"
    from idv_mock.api.timeouts import timed

    return timed(20.0)


if __name__ == "__main__":
    main(sys.argv[1:])
