"""Recording each API call in its project's journal (method, path, query, masked headers,
body — decrypted when it came encrypted — status, response, duration, time)."""

from __future__ import annotations

import time
from datetime import datetime, timezone
from typing import Any
from urllib.parse import parse_qs

import orjson
from starlette.requests import Request
from starlette.responses import Response

from idv_mock import crypto
from idv_mock.api.http import api_key, service_of
from idv_mock.backend import Project
from idv_mock.clock import iso

MASK = "****"


async def record(request: Request, response: Response, started: float) -> None:
    project = service_of(request).project_for_key(api_key(request) or "")
    if project is None:
        return
    raw = await request.body()
    query = {k: v for k, v in request.query_params.multi_items()}
    entry: dict[str, Any] = {
        "time": iso(datetime.now(timezone.utc)),
        "method": request.method,
        "path": request.url.path,
        "query": query,
        "headers": _masked(request),
        "body": _decoded(raw),
        "status": response.status_code,
        "response": _decoded(bytes(response.body), response.media_type),
        "duration_ms": round((time.perf_counter() - started) * 1000, 3),
    }
    plain = _decrypted(project, query.get("data") or _form_data(raw))
    if plain is not None:
        entry["decrypted"] = plain
    with service_of(request).lock:
        project.journal.record(entry)


def _masked(request: Request) -> dict[str, str]:
    return {k: (MASK if k == "x-api-key" else v) for k, v in request.headers.items()}


def _decoded(raw: bytes, media_type: str | None = None) -> Any:
    if media_type is not None and media_type != "application/json":
        return f"<{len(raw)} bytes {media_type}>"
    if not raw:
        return None
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return raw.decode("utf-8", "replace")[:10_000]


def _form_data(raw: bytes) -> str | None:
    try:
        doc = orjson.loads(raw)
        return str(doc["data"]) if isinstance(doc, dict) and "data" in doc else None
    except orjson.JSONDecodeError:
        values = parse_qs(raw.decode("utf-8", "replace")).get("data")
        return values[0] if values else None


def _decrypted(project: Project, text: str | None) -> Any:
    if not text or not project.secure:
        return None
    derivation = str(project.options.get("key_derivation", "sha256"))
    try:
        return crypto.decrypt(text, project.api_key, derivation)
    except crypto.CryptoError:
        return None
