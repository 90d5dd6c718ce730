"""Recording each API call in its project's journal (method, path, query, masked headers,
body — decrypted when it came encrypted — status, response, duration, time)."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import Response

from idv_mock import crypto
from idv_mock.api import secure
from idv_mock.api.http import project_of, service_of
from idv_mock.backend import Project
from idv_mock.clock import iso

MASK = "****"


async def record(request: Request, response: Response, started: float) -> None:
    """Keep the call as raw bytes: decoding happens when someone reads the journal, so the
    hot path pays for a few small dicts, not for parsing every response it just wrote."""
    project = project_of(request)
    if project is None:
        return
    entry: dict[str, Any] = {
        "time": iso(datetime.now(timezone.utc)),
        "method": request.method,
        "path": request.url.path,
        "query": dict(request.query_params.multi_items()),
        "headers": _masked(request),
        "body": _kept(await request.body(), None)[0],
        "status": response.status_code,
        "response": _kept(bytes(response.body), response.media_type),
        "duration_ms": round((time.perf_counter() - started) * 1000, 3),
    }
    with service_of(request).lock:
        if project.journal.decode is None:
            project.journal.decode = _describer(project)
        project.journal.record(entry)


KEEP_BYTES = 64 * 1024  # a journal of 10,000 pages of 50 would otherwise hold gigabytes
NOT_KEPT = "not kept (over 64 KiB)"


def _kept(body: bytes, media_type: str | None) -> tuple[bytes, str | None]:
    if len(body) <= KEEP_BYTES:
        return body, media_type
    return b"", f"{media_type}; {len(body)} bytes, {NOT_KEPT}"


def _describer(project: Project) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def describe(entry: dict[str, Any]) -> dict[str, Any]:
        raw, (answer, media_type) = entry["body"], entry["response"]
        out = {**entry, "body": _decoded(raw), "response": _decoded(answer, media_type)}
        plain = _decrypted(project, entry["query"].get("data") or _form_data(raw))
        if plain is not None:
            out["decrypted"] = plain
        return out

    return describe


def _masked(request: Request) -> dict[str, str]:
    return {k: (MASK if k == "x-api-key" else v) for k, v in request.headers.items()}


def _decoded(raw: bytes, media_type: str | None = None) -> Any:
    if media_type is not None and NOT_KEPT in media_type:
        return f"<{media_type}>"
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
        return secure.ciphertext_from_body(raw)
    except secure.BadCiphertext:
        return None


def _decrypted(project: Project, text: str | None) -> Any:
    if not text or not project.secure:
        return None
    derivation = str(project.options.get("key_derivation", "sha256"))
    try:
        return crypto.decrypt(text, project.api_key, derivation)
    except crypto.CryptoError:
        return None
