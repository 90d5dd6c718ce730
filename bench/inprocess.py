"""Part 2: the cost of one call through the in-process clients tests use.

Both clients are built exactly as the fixtures build them: the sync one as ``idv_client``
(``idv_mock.transport.InProcessClient``, an ``httpx.Client``, on ``ASGITransport``, which
runs the app on an event loop of its own in the calling thread), the async one as
``idv_async_client`` (``AsyncInProcessClient``, an ``httpx.AsyncClient``, on
``AsyncASGITransport``). Each call is timed on its own with ``time.perf_counter_ns``; the
first calls are a warm-up and not kept.
"""

from __future__ import annotations

import asyncio
import cProfile
import io
import pstats
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
from benchstate import API_KEY, Call, projection_body, projection_key

from idv_mock import Service, create_app
from idv_mock.transport import (
    ASGITransport,
    AsyncASGITransport,
    AsyncInProcessClient,
    InProcessClient,
)

BASE_URL = "http://idv-mock/v3"
Request = tuple[str, str, bytes | None, dict[str, str]]


@dataclass
class ProjectionLoop:
    """Alternates POST (a fresh name) and DELETE of what the POST created, like wrk's script."""

    key: str = projection_key(0)
    pending: str | None = None
    counter: int = 0

    def next(self) -> Request:
        headers = {"x-api-key": self.key, "content-type": "application/json"}
        if self.pending is not None:
            pid, self.pending = self.pending, None
            return ("DELETE", f"/projection/{pid}", None, headers)
        self.counter += 1
        return ("POST", "/projection", projection_body(f"inproc_{self.counter}"), headers)

    def feed(self, response: httpx.Response) -> None:
        if response.request.method == "POST" and response.status_code == 200:
            self.pending = response.json()["projection_id"]


def request_source(call: Call) -> tuple[Callable[[], Request], Callable[[httpx.Response], None]]:
    """What to send next for ``call``, and what to learn from each answer."""
    if call.lua == "projection":
        loop = ProjectionLoop()
        return loop.next, loop.feed
    headers = {"x-api-key": call.api_key, "content-type": "application/json"}
    fixed: Request = (call.method, call.path, call.body, headers)
    return (lambda: fixed), (lambda response: None)


def _check(response: httpx.Response, call: Call) -> None:
    if response.status_code >= 300:
        raise RuntimeError(f"{call.name} answered {response.status_code}: {response.text[:200]}")


def time_sync(client: httpx.Client, call: Call, count: int, warmup: int) -> list[int]:
    next_request, feed = request_source(call)
    samples: list[int] = []
    for i in range(warmup + count):
        method, url, body, headers = next_request()
        start = time.perf_counter_ns()
        response = client.request(method, url, content=body, headers=headers)
        elapsed = time.perf_counter_ns() - start
        _check(response, call)
        feed(response)
        if i >= warmup:
            samples.append(elapsed)
    return samples


async def time_async(client: httpx.AsyncClient, call: Call, count: int, warmup: int) -> list[int]:
    next_request, feed = request_source(call)
    samples: list[int] = []
    for i in range(warmup + count):
        method, url, body, headers = next_request()
        start = time.perf_counter_ns()
        response = await client.request(method, url, content=body, headers=headers)
        elapsed = time.perf_counter_ns() - start
        _check(response, call)
        feed(response)
        if i >= warmup:
            samples.append(elapsed)
    return samples


def sync_client(service: Service, app: Any = None) -> httpx.Client:
    """As the ``idv_client`` fixture builds it (``app``: another app, for the client floor)."""
    transport = ASGITransport(app or create_app(service))
    return InProcessClient(transport=transport, base_url=BASE_URL, headers={"x-api-key": API_KEY})


def async_client(service: Service, app: Any = None) -> httpx.AsyncClient:
    """As the ``idv_async_client`` fixture builds it."""
    transport = AsyncASGITransport(app or create_app(service))
    return AsyncInProcessClient(
        transport=transport, base_url=BASE_URL, headers={"x-api-key": API_KEY}
    )


def count_for(call: Call, calls: int) -> int:
    """A page of 50 costs far more per call; fewer calls keep the part short."""
    return max(200, calls // 4) if call.name == "get_page" else calls


def stats_us(samples: list[int]) -> dict[str, Any]:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return {
        "median_us": ordered[len(ordered) // 2] / 1000,
        "p99_us": p99 / 1000,
        "calls": len(ordered),
    }


def run(service: Service, calls: list[Call], count: int, body: bytes) -> dict[str, dict[str, Any]]:
    """``{"sync": {call: stats}, "async": {call: stats}}``, each with a ``floor`` entry.

    The floor is GET by id against the bare pre-serialized app of the throughput part,
    through the same client: what the client itself costs, so that the mock's own share
    of a call can be read off.
    """
    from serve_child import bare_app

    warmup = max(50, count // 20)
    floor_app = bare_app(body, per_request=False)
    out: dict[str, dict[str, Any]] = {"sync": {}, "async": {}}
    with sync_client(service, floor_app) as client:
        out["sync"]["floor"] = stats_us(time_sync(client, calls[0], count, warmup))
        _print("sync ", "floor", out["sync"]["floor"])
    with sync_client(service) as client:
        for call in calls:
            samples = time_sync(client, call, count_for(call, count), warmup)
            out["sync"][call.name] = stats_us(samples)
            _print("sync ", call.name, out["sync"][call.name])

    async def all_async() -> None:
        async with async_client(service, floor_app) as client:
            out["async"]["floor"] = stats_us(await time_async(client, calls[0], count, warmup))
            _print("async", "floor", out["async"]["floor"])
        async with async_client(service) as client:
            for call in calls:
                samples = await time_async(client, call, count_for(call, count), warmup)
                out["async"][call.name] = stats_us(samples)
                _print("async", call.name, out["async"][call.name])

    asyncio.run(all_async())
    return out


def _print(kind: str, name: str, figures: dict[str, Any]) -> None:
    print(
        f"    {kind} {name:<14} median {figures['median_us']:8.1f} us"
        f"  p99 {figures['p99_us']:8.1f} us  ({figures['calls']} calls)",
        flush=True,
    )


def profile(service: Service, call: Call, count: int, top: int = 30) -> str:
    """cProfile of ``count`` calls through the async client: where one call's time goes."""

    async def loop(client: httpx.AsyncClient) -> list[int]:
        return await time_async(client, call, count, warmup=0)

    async def main(profiler: cProfile.Profile) -> None:
        async with async_client(service) as client:
            await loop(client)  # warm-up, not profiled
            profiler.enable()
            await loop(client)
            profiler.disable()

    profiler = cProfile.Profile()
    asyncio.run(main(profiler))
    text = io.StringIO()
    stats = pstats.Stats(profiler, stream=text).strip_dirs()
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return text.getvalue()
