"""Recording each API call in its project's journal (method, path, query, masked headers,
body — decrypted when it came encrypted — status, response, duration, time)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from idv_mock.backend import Project, Service
from idv_mock.ground.clock import iso
from idv_mock.serving import secure
from idv_mock.serving.http import body_of, parse_json, path_of, project_of, query_pairs, service_of

if TYPE_CHECKING:  # the fast lane's calls journal without them (record_call)
    from starlette.requests import Request
    from starlette.responses import Response

MASK = "****"
# headers that carry credentials: kept in the journal as MASK
CREDENTIALS = frozenset(
    {"x-api-key", "authorization", "proxy-authorization", "cookie", "x-idv-mock-admin-token"}
)
RawHeaders = Sequence[tuple[bytes, bytes]]


async def record_request(
    request: Request,
    response: Response,
    started: float,
    hint: str | None = None,
    owner: Project | None = None,
) -> None:
    """A call Starlette answered (a route, or the router's 404 and 405), through the same
    core as the fast lane's; ``owner`` is the project of a key sent elsewhere than
    ``x-api-key`` (``hints.py``), ``hint`` the call's near-miss hint."""
    project = project_of(request) or owner
    if project is None:
        return
    record_call(
        service_of(request),
        project,
        request.method,
        path_of(request),
        request.scope["query_string"],
        tuple(request.scope["headers"]),  # kept: nothing may change it afterwards
        await body_of(request),
        response.status_code,
        bytes(response.body),
        response.media_type,
        started,
        hint,
    )


# what the routes call; the router's 404 and 405 call record_request (tests that spy on
# ``record`` count the calls the routes answered)
record = record_request


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
    """Keep the call raw (query string, header pairs, bytes, clock readings) as one tuple
    (``backend/journal.py``): every call pays for it, and the parsing, masking, decoding
    and formatting happen in :func:`readable` when someone reads the journal, which is
    rare. ``headers`` is kept as given: a sequence nobody changes afterwards."""
    if len(query_string) > KEEP_BYTES:
        query_string = query_string[:KEEP_BYTES]
    truncated = None
    if len(body) > KEEP_BYTES or len(response) > KEEP_BYTES:  # kept cut, with their sizes
        truncated = (len(body), len(response))
        body, response = body[:KEEP_BYTES], response[:KEEP_BYTES]
    # values equal to the last call's kept once (_Shared), tested inline: every call runs this
    # (each read once into a local: other threads record calls too, in interception mode)
    shared = _SHARED
    last = shared.last
    last_headers, last_query, last_millisecond, last_time = last
    if headers == last_headers:
        headers = last_headers
    if query_string == last_query:
        query_string = last_query
    now = time.time()
    millisecond = int(now * 1000)
    if millisecond == last_millisecond:  # shown to the millisecond: the same reading
        now = last_time
    if headers is not last_headers or query_string is not last_query or now is not last_time:
        shared.last = (headers, query_string, millisecond, now)
    micros = round((time.perf_counter() - started) * 1_000_000)  # mostly a cached small int
    service.calls.record(
        project,
        (
            now,
            method,
            path,
            query_string,
            headers,
            body,
            status,
            response,
            media_type,
            micros,
            hint,
            truncated,
        ),
    )


class _Shared:
    """The last call's header pairs, query string and clock reading, which the next call's
    row holds instead of its own when they are equal. Under load every row would otherwise
    hold its own, allocated per call and freed 10,000 calls later: measured, that memory
    traffic cost more than the rest of the journal (about 4 µs of a 33 µs GET by id). A
    client sends the same headers (and often the same query) call after call, and the
    journal shows times to the millisecond."""

    __slots__ = ("last",)

    def __init__(self) -> None:
        # headers, query string, millisecond, its time.time() reading: replaced whole
        self.last: tuple[RawHeaders, bytes, int, float] = ((), b"", 0, 0.0)


_SHARED = _Shared()


KEEP_BYTES = 16 * 1024  # a body or response past this is kept cut to it (and marked)


def readable(project: Project, entry: dict[str, Any]) -> dict[str, Any]:
    """A raw entry (``Journal.find``) as the control API shows it (the service's
    ``calls.reader``)."""
    raw = entry["body"]
    query = dict(query_pairs(entry["query"]))
    out = {
        "id": entry["id"],
        "time": iso(datetime.fromtimestamp(entry["time"], timezone.utc)),
        "method": entry["method"],
        "path": entry["path"],
        "query": query,
        "headers": _masked(entry["headers"]),
        "body": _decoded(raw),
        "status": entry["status"],
        "response": _decoded(entry["response"], entry["media_type"]),
        "duration_ms": entry["duration"] / 1000,
    }
    if entry["hint"] is not None:
        out["hint"] = entry["hint"]
    if entry["truncated"] is not None:  # the sizes sent; what is shown is the first 16 KiB
        out["truncated"] = _truncated(*entry["truncated"])
    plain = _decrypted(project, query.get("data") or _form_data(raw))
    if plain is not None:
        out["decrypted"] = plain
    return out


def _truncated(body: int, response: int) -> dict[str, Any]:
    """What was cut: each part over ``KEEP_BYTES`` with its size as sent."""
    sizes = {"body": body, "response": response}
    cut = {part: size for part, size in sizes.items() if size > KEEP_BYTES}
    return {"kept_bytes": KEEP_BYTES, **{f"{p}_bytes": s for p, s in cut.items()}}


def _masked(headers: RawHeaders) -> dict[str, str]:
    """As ``request.headers.items()`` gives them (latin-1, a repeated name's last value)."""
    out: dict[str, str] = {}
    for key, value in headers:
        name = key.decode("latin-1")
        out[name] = MASK if name in CREDENTIALS else value.decode("latin-1")
    return out


def _decoded(raw: bytes, media_type: str | None = None) -> Any:
    if media_type is not None and media_type != "application/json":
        return f"<{len(raw)} bytes {media_type}>"
    if not raw:
        return None
    try:
        return parse_json(raw)
    except ValueError:  # not JSON, or too deep to encode again: kept as text
        return raw.decode("utf-8", "replace")[:KEEP_BYTES]


def _form_data(raw: bytes) -> str | None:
    try:
        return secure.ciphertext_from_body(raw)
    except secure.BadCiphertext:
        return None


def _decrypted(project: Project, text: str | None) -> Any:
    if not text or not project.secure:
        return None
    from idv_mock.ground import crypto  # a secure project's journal, when read

    derivation = project.derivation
    try:
        return crypto.decrypt(text, project.api_key, derivation)
    except crypto.CryptoError:
        return None
