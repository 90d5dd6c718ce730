"""The true ceiling (issue 15): a raw ASGI callable, no framework, beside bare Starlette.

Bare Starlette (baseline (a)) still pays for routing, a Request and a Response per call; a
raw callable that checks the path and sends two pre-built messages pays only for uvicorn
itself. It serves the same pre-serialised bytes as the mock's GET by id, so the ratio
"mock GET by id / raw ASGI" is what the mock costs over the server alone (target >= 0.7x).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from report import Row, verdict

PATH = "/v3/submission"
RAW_FACTOR = 0.7  # mock GET by id / raw ASGI, at least
COUNTED_FACTOR = 0.97  # contract coverage's counting costs at most 3% of GET throughput
LABEL = "raw ASGI callable, no framework, pre-serialized bytes"

Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


def raw_app(body: bytes) -> Callable[[Message, Receive, Send], Awaitable[None]]:
    """One path, one answer, built once: what is left when nothing but the server works."""
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    start = {"type": "http.response.start", "status": 200, "headers": headers}
    answer = {"type": "http.response.body", "body": body}
    missing = {"type": "http.response.start", "status": 404, "headers": []}

    async def app(scope: Message, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["path"] != PATH:
            await send(missing)
            await send({"type": "http.response.body", "body": b""})
            return
        await send(start)
        await send(answer)

    return app


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


def rows(summary: dict[str, Any]) -> list[Row]:
    """The raw callable's figure, bare Starlette and the mock's GET by id against it."""
    part = "1 throughput"
    raw = summary.get("baseline_raw")
    if raw is None:
        return []
    found = [
        Row(
            part, LABEL, f"{raw['rps']:,.0f} req/s  p50 {raw['p50_ms']:.2f} ms", "reference", "info"
        )
    ]
    starlette = summary.get("baseline_bytes", {}).get("vs_baseline_raw")
    if starlette is not None:
        found.append(
            Row(part, "bare Starlette (a) vs raw ASGI", f"{starlette:.3g}x", "reference", "info")
        )
    mock = summary.get("mock_get_by_id", {}).get("vs_baseline_raw")
    if mock is not None:
        ok = mock >= RAW_FACTOR
        label = "mock GET by id (coverage counted) vs raw ASGI"
        found.append(Row(part, label, f"{mock:.3g}x", f">= {RAW_FACTOR}x", verdict(ok)))
    counted = summary.get("mock_get_by_id_counted", {}).get("vs_mock_get_by_id_uncounted")
    if counted is not None:
        label = "mock GET by id, coverage counted vs not"
        target = f">= {COUNTED_FACTOR}x"
        found.append(
            Row(part, label, f"{counted:.3g}x", target, verdict(counted >= COUNTED_FACTOR))
        )
    return found
