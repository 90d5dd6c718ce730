"""Part 5: a call through ``idv_mock.mock()`` beside the same call through ``idv_client``.

The code under test keeps the real base URL and its own plain client; the interception
hands the call to the same in-process transport ``idv_client`` uses. Measured on GET by
id, every client one call in turn (interleaved, so load from other work on the machine
falls on all of them alike), each call timed on its own:

- ``idv_client``: built as the fixture builds it (``inprocess.sync_client``), the reference;
- intercepted ``httpx.Client(base_url=<real>)`` with the same relative path (what the
  integrator clients of the tests do), and a plain ``httpx.Client()`` given the absolute
  URL; both carry the 1.3x target against ``idv_client``;
- the same ``httpx.Client(base_url=...)`` on idv_client's own transport, no interception:
  intercepted / this is the patch layer's own share (also <= 1.3x; below 1x since the
  layer spares the mock's answers httpx's no-op cookie pass, and keeps each client's
  merged URLs, as ``InProcessClient`` does: httpx.Client otherwise parses the URL given,
  and the merged one, on every call);
- ``requests.Session`` with the absolute URL, intercepted (information only);
- async: ``idv_async_client`` against an intercepted ``httpx.AsyncClient``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from contextlib import ExitStack
from typing import Any

import httpx
from benchstate import API_KEY, Call
from inprocess import async_client, stats_us, sync_client
from report import Row, verdict

import idv_mock
from idv_mock import Service
from idv_mock.transport import ASGITransport

REAL = "https://rest-api.argosidentity.com/v3"
TARGET = 1.3  # intercepted call / idv_client call, medians
HEADERS = {"x-api-key": API_KEY}
SyncCall = Callable[[], Any]
AsyncCall = Callable[[], Awaitable[Any]]


def _timed(calls: dict[str, SyncCall], count: int, warmup: int) -> dict[str, list[int]]:
    samples: dict[str, list[int]] = {name: [] for name in calls}
    for i in range(warmup + count):
        for name, call in calls.items():
            start = time.perf_counter_ns()
            call()
            elapsed = time.perf_counter_ns() - start
            if i >= warmup:
                samples[name].append(elapsed)
    return samples


async def _timed_async(
    calls: dict[str, AsyncCall], count: int, warmup: int
) -> dict[str, list[int]]:
    samples: dict[str, list[int]] = {name: [] for name in calls}
    for i in range(warmup + count):
        for name, call in calls.items():
            start = time.perf_counter_ns()
            await call()
            elapsed = time.perf_counter_ns() - start
            if i >= warmup:
                samples[name].append(elapsed)
    return samples


def _checked(response: Any) -> Any:
    if response.status_code != 200:
        raise RuntimeError(f"benchmark call answered {response.status_code}")
    return response


def _sync_calls(service: Service, call: Call, stack: ExitStack) -> dict[str, SyncCall]:
    path, url = call.path, REAL + call.path
    reference = stack.enter_context(sync_client(service))
    based = stack.enter_context(httpx.Client(base_url=REAL, headers=HEADERS))
    plain = stack.enter_context(httpx.Client(headers=HEADERS))
    direct = stack.enter_context(
        httpx.Client(
            transport=ASGITransport(idv_mock.create_app(service)),
            base_url="http://idv-mock/v3",
            headers=HEADERS,
        )
    )
    calls: dict[str, SyncCall] = {
        "idv_client": lambda: _checked(reference.get(path)),
        "httpx_base_url": lambda: _checked(based.get(path)),
        "httpx_absolute": lambda: _checked(plain.get(url)),
        "httpx_no_interception": lambda: _checked(direct.get(path)),
    }
    try:
        import requests  # a test extra: `make bench` installs the package alone
    except ImportError:
        print("    requests is not installed: its figure is skipped", flush=True)
        return calls
    session = requests.Session()
    session.headers.update(HEADERS)
    calls["requests"] = lambda: _checked(session.get(url))
    return calls


def run(service: Service, call: Call, count: int) -> dict[str, Any]:
    """Medians (and p99) of every client, and each one's ratio to ``idv_client``."""
    warmup = max(50, count // 20)
    with ExitStack() as stack, idv_mock.mock(service=service):
        samples = _timed(_sync_calls(service, call, stack), count, warmup)
        samples.update(asyncio.run(_async_samples(service, call, count, warmup)))
    out = {name: stats_us(values) for name, values in samples.items()}
    for name, figures in out.items():
        reference = out["idv_async_client" if "async" in name else "idv_client"]
        figures["ratio"] = figures["median_us"] / reference["median_us"]
        _print(name, figures)
    share = out["httpx_base_url"]["median_us"] / out["httpx_no_interception"]["median_us"]
    out["layer_share"] = {"ratio": share}
    print(f"    interception's own share: {share:.2f}x the same client without it", flush=True)
    return out


async def _async_samples(
    service: Service, call: Call, count: int, warmup: int
) -> dict[str, list[int]]:
    async with (
        async_client(service) as reference,
        httpx.AsyncClient(base_url=REAL, headers=HEADERS) as based,
    ):
        calls: dict[str, AsyncCall] = {
            "idv_async_client": lambda: reference.get(call.path),
            "async_httpx_base_url": lambda: based.get(call.path),
        }
        return await _timed_async(calls, count, warmup)


def _print(name: str, figures: dict[str, Any]) -> None:
    print(
        f"    {name:<22} median {figures['median_us']:8.1f} us"
        f"  p99 {figures['p99_us']:8.1f} us  {figures['ratio']:.2f}x",
        flush=True,
    )


LABELS = {
    "idv_client": ("idv_client (reference)", None),
    "httpx_absolute": ("intercepted httpx.Client, absolute URL", TARGET),
    "httpx_base_url": ("intercepted httpx.Client(base_url=real)", TARGET),
    "httpx_no_interception": ("the same httpx.Client on idv_client's transport", None),
    "requests": ("intercepted requests.Session", None),
    "idv_async_client": ("idv_async_client (reference)", None),
    "async_httpx_base_url": ("intercepted httpx.AsyncClient(base_url=real)", None),
}


def rows(results: dict[str, Any]) -> list[Row]:
    """Each client against idv_client (or idv_async_client), then the layer's own share."""
    part = "5 interception"
    out = []
    for name, (label, target) in LABELS.items():
        figures = results.get(name)
        if figures is None:
            continue
        value = (
            f"median {figures['median_us']:,.0f} us  p99 {figures['p99_us']:,.0f} us"
            f"  = {figures['ratio']:.2f}x"
        )
        if target is None:
            out.append(Row(part, f"GET by id, {label}", value, "-", "info"))
        else:
            ok = figures["ratio"] <= target
            out.append(Row(part, f"GET by id, {label}", value, f"<= {target}x", verdict(ok)))
    share = results["layer_share"]["ratio"]
    figure = "interception's own share (intercepted / same client, no interception)"
    out.append(Row(part, figure, f"{share:.2f}x", f"<= {TARGET}x", verdict(share <= TARGET)))
    return out


def part(ctx: Any, mode: Any) -> tuple[list[Row], Any]:
    """The part as ``run.py`` calls it: the benchmark's service, GET by id."""
    print("5. interception (idv_mock.mock) vs idv_client", flush=True)
    data = run(ctx.service, ctx.calls[0], mode.calls)
    return rows(data), data
