"""Recording each API call in its project's journal (method, path, query, masked headers,
body — decrypted when it came encrypted — status, response, duration, time)."""

from __future__ import annotations

import time
from collections.abc import Iterable
from datetime import datetime, timezone
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from idv_mock import crypto
from idv_mock.api import secure
from idv_mock.api.http import parse_json, project_of, query_pairs, service_of
from idv_mock.backend import Project, Service
from idv_mock.clock import iso

MASK = "****"
# headers that carry credentials: kept in the journal as MASK
CREDENTIALS = frozenset(
    {"x-api-key", "authorization", "proxy-authorization", "cookie", "x-idv-mock-admin-token"}
)
RawHeaders = Iterable[tuple[bytes, bytes]]


async def record(
    request: Request,
    response: Response,
    started: float,
    hint: str | None = None,
    owner: Project | None = None,
) -> None:
    """The Starlette path's call, through the same core as the fast lane's; ``owner`` is
    the project of a key sent elsewhere than ``x-api-key`` (``hints.py``), ``hint`` the
    call's near-miss hint."""
    await record_request(request, response, started, hint, owner)


async def record_unmatched(
    request: Request, response: Response, hint: str | None, owner: Project
) -> None:
    """A call no route took (404, 405 of the router), kept with hints on in the journal
    of the project whose key it carried: ``assert_called`` then shows it, with its hint."""
    await record_request(request, response, time.perf_counter(), hint, owner)


async def record_request(
    request: Request,
    response: Response,
    started: float,
    hint: str | None = None,
    owner: Project | None = None,
) -> None:
    project = project_of(request) or owner
    if project is None:
        return
    record_call(
        service_of(request),
        project,
        request.method,
        request.url.path,
        request.scope["query_string"],
        request.scope["headers"],
        await request.body(),
        response.status_code,
        bytes(response.body),
        response.media_type,
        started,
        hint,
    )


def record_call(
    service: Service,
    project: Project,
    method: str,
    path: str,
    query_string: bytes,
    headers: RawHeaders,
    body: bytes,
    status: int,
    response: bytes,
    media_type: str | None,
    started: float,
    hint: str | None = None,
) -> None:
    """Keep the call raw (query string, header pairs, bytes, clock readings): every call pays
    for one small dict, and the parsing, masking, decoding and formatting happen in
    ``describe`` when someone reads the journal, which is rare."""
    entry: dict[str, Any] = {
        "time": time.time(),
        "method": method,
        "path": path,
        "query": query_string[:KEEP_BYTES],
        "headers": tuple(headers),
        "body": _kept(body, None)[0],
        "status": status,
        "response": _kept(response, media_type),
        "duration_ms": time.perf_counter() - started,
    }
    if hint is not None:  # optional: most calls have none
        entry["hint"] = hint
    service.record_call(project, entry)


KEEP_BYTES = 64 * 1024  # a journal of 10,000 pages of 50 would otherwise hold gigabytes
NOT_KEPT = "not kept (over 64 KiB)"


def _kept(body: bytes, media_type: str | None) -> tuple[bytes, str | None]:
    if len(body) <= KEEP_BYTES:
        return body, media_type
    return b"", f"{media_type}; {len(body)} bytes, {NOT_KEPT}"


def readable(project: Project, entry: dict[str, Any]) -> dict[str, Any]:
    """A raw entry as the control API shows it (the service's ``journal_reader``)."""
    raw, (answer, media_type) = entry["body"], entry["response"]
    query = dict(query_pairs(entry["query"]))
    out = {
        **entry,
        "time": iso(datetime.fromtimestamp(entry["time"], timezone.utc)),
        "query": query,
        "headers": _masked(entry["headers"]),
        "body": _decoded(raw),
        "response": _decoded(answer, media_type),
        "duration_ms": round(entry["duration_ms"] * 1000, 3),
    }
    plain = _decrypted(project, query.get("data") or _form_data(raw))
    if plain is not None:
        out["decrypted"] = plain
    return out


def _masked(headers: RawHeaders) -> dict[str, str]:
    """As ``request.headers.items()`` gives them (latin-1, a repeated name's last value)."""
    out: dict[str, str] = {}
    for key, value in headers:
        name = key.decode("latin-1")
        out[name] = MASK if name in CREDENTIALS else value.decode("latin-1")
    return out


def _decoded(raw: bytes, media_type: str | None = None) -> Any:
    if media_type is not None and NOT_KEPT in media_type:
        return f"<{media_type}>"
    if media_type is not None and media_type != "application/json":
        return f"<{len(raw)} bytes {media_type}>"
    if not raw:
        return None
    try:
        return parse_json(raw)
    except ValueError:  # not JSON, or too deep to encode again: kept as text
        return raw.decode("utf-8", "replace")[:10_000]


def _form_data(raw: bytes) -> str | None:
    try:
        return secure.ciphertext_from_body(raw)
    except secure.BadCiphertext:
        return None


def _decrypted(project: Project, text: str | None) -> Any:
    if not text or not project.secure:
        return None
    derivation = project.derivation
    try:
        return crypto.decrypt(text, project.api_key, derivation)
    except crypto.CryptoError:
        return None
