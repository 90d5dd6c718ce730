"""What the per-call journal and the write guard cost (issue 37), in microseconds.

Run: ``.venv/bin/python bench/call_costs.py``. The app is called as uvicorn calls it (an
ASGI scope, ``receive`` and ``send``), in one event loop, with no server or socket, so the
figures are the mock's own CPU per call: beside them, the same app with the journal's
recording replaced by a no-op (the contract coverage's counting, which rides on it, too),
the counting alone off, and the write guard taken off the routes (the raw ASGI callable of
``raw_asgi.py`` for the floor). Each figure is the median of ROUNDS rounds of the process's
CPU time (``time.process_time``: other work on the machine inflates it far less than wall
time).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from raw_asgi import raw_app
from report import Row

from idv_mock import Service, ServiceConfig, create_app
from idv_mock.backend.parts.calls import Calls
from idv_mock.serving import guard

PART = "10 call costs"
ROUNDS = 7
CALLS = 3000
HEADERS = [(b"host", b"127.0.0.1"), (b"x-api-key", b"mock-api-key")]


def scope(method: str, query: bytes) -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": "/v3/submission",
        "raw_path": b"/v3/submission",
        "root_path": "",
        "query_string": query,
        "headers": [*HEADERS, *([(b"content-type", b"application/json")] * (method != "GET"))],
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8080),
    }


def caller(
    app: Any, method: str, query: bytes, body: bytes
) -> Callable[[], Coroutine[Any, Any, int]]:
    made = scope(method, query)
    if body:
        made["headers"] = [*made["headers"], (b"content-length", str(len(body)).encode())]
    message = {"type": "http.request", "body": body, "more_body": False}

    async def call() -> int:
        status = 0

        async def receive() -> dict[str, Any]:
            return message

        async def send(sent: dict[str, Any]) -> None:
            nonlocal status
            if sent["type"] == "http.response.start":
                status = sent["status"]

        await app(dict(made), receive, send)
        return status

    return call


def per_call(call: Callable[[], Coroutine[Any, Any, int]]) -> float:
    async def rounds() -> list[float]:
        found = []
        assert await call() == 200
        for _ in range(ROUNDS):
            started = time.process_time()
            for _ in range(CALLS):
                await call()
            found.append((time.process_time() - started) / CALLS * 1e6)
        return found

    return statistics.median(asyncio.run(rounds()))


def measure() -> dict[str, float]:
    service = Service(ServiceConfig())
    sid = next(iter(service.project("default").store.blobs))
    query = b"submission_id=" + sid.encode()
    patch = b'{"submissionId":"%s","admin":"admin@example.com","data":{"memo":"checked"}}' % (
        sid.encode()
    )
    app = create_app(service)
    body = asyncio.run(_answer(app, scope("GET", query)))  # the raw callable's same bytes
    figures = {
        "raw ASGI callable": per_call(caller(raw_app(body), "GET", query, b"")),
        "GET by id": per_call(caller(app, "GET", query, b"")),
        "PATCH": per_call(caller(app, "PATCH", b"", patch)),
    }
    counts = service.coverage.counts
    counts.recording = False
    try:
        figures["GET by id, coverage counting off"] = per_call(caller(app, "GET", query, b""))
    finally:
        counts.recording = True
    record = Calls.record
    Calls.record = lambda self, project, row: None  # type: ignore[method-assign]
    try:
        figures["GET by id, journal off"] = per_call(caller(app, "GET", query, b""))
        figures["PATCH, journal off"] = per_call(caller(app, "PATCH", b"", patch))
    finally:
        Calls.record = record  # type: ignore[method-assign]
    unguarded = guard.WriteGuard.__call__
    guard.WriteGuard.__call__ = _straight  # type: ignore[method-assign]
    try:
        figures["PATCH, guard off"] = per_call(caller(app, "PATCH", b"", patch))
    finally:
        guard.WriteGuard.__call__ = unguarded  # type: ignore[method-assign]
    service.close()
    return figures


async def _answer(app: Any, made: dict[str, Any]) -> bytes:
    parts: list[bytes] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(sent: dict[str, Any]) -> None:
        if sent["type"] == "http.response.body":
            parts.append(sent.get("body", b""))

    await app(made, receive, send)
    return b"".join(parts)


async def _straight(self: guard.WriteGuard, scope: Any, receive: Any, send: Any) -> None:
    await self.app(scope, receive, send)


def rows(found: dict[str, float]) -> list[Row]:
    """Every figure, informational: the throughput target (>= 0.7x raw) is part 1's."""
    out = [
        Row(PART, f"{name}, in-app CPU", f"{value:.1f} us", "-", "info")
        for name, value in found.items()
    ]
    for call in ("GET by id", "PATCH"):
        cost = found[call] - found[f"{call}, journal off"]
        out.append(
            Row(
                PART,
                f"{call}: the journal's cost",
                f"{cost:.1f} us ({cost / found[call]:.0%})",
                "-",
                "info",
            )
        )
    cost = found["GET by id"] - found["GET by id, coverage counting off"]
    out.append(
        Row(
            PART,
            "GET by id: contract coverage's counting",
            f"{cost:.1f} us ({cost / found['GET by id']:.0%})",
            "-",
            "info",
        )
    )
    cost = found["PATCH"] - found["PATCH, guard off"]
    out.append(
        Row(
            PART,
            "PATCH: the write guard's cost",
            f"{cost:.1f} us ({cost / found['PATCH']:.0%})",
            "-",
            "info",
        )
    )
    return out


def part(ctx: Any, mode: Any) -> tuple[list[Row], dict[str, Any]]:
    print("10. what the journal and the write guard cost per call (in-app)", flush=True)
    found = measure()
    return rows(found), found


if __name__ == "__main__":
    from report import render

    print(render(rows(measure())))
