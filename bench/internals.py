"""What each use of a dependency's internals buys (``idv_mock.ground.compat``), in microseconds.

Run: ``.venv/bin/python bench/internals.py``. Each figure is the median of several rounds
of many calls; each use is measured against the public way of doing the same thing:

- httpx ``Client._merge_url`` kept per client (``transport.MergedUrls``) against httpx's own;
- httpx ``Client._cookies`` replaced by a jar that skips responses without cookies
  against httpx's own jar;
- a whole in-process ``GET /v3/submission/{id}`` with both, one, or neither;
- Starlette's ``State._state`` read directly against the dict given to ``State(...)``
  (public) and against attribute reads (``State.__getattr__``).

uvicorn's ``HttpToolsProtocol`` subclass (``--request-timeout``) is a feature, not a speed-up:
it adds a timer per connection and nothing per request, so it is not timed here.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import httpx
from starlette.datastructures import State

from idv_mock import Service, ServiceConfig, create_app
from idv_mock.transport import ASGITransport, InProcessClient, _SetCookieOnly

ROUNDS = 7
BASE_URL = "http://idv-mock/v3"


def per_call(func: Callable[[], Any], calls: int) -> float:
    """Median microseconds per call of ``func`` over ROUNDS rounds of ``calls`` calls."""
    rounds = []
    for _ in range(ROUNDS):
        started = time.perf_counter()
        for _ in range(calls):
            func()
        rounds.append((time.perf_counter() - started) / calls * 1e6)
    return statistics.median(rounds)


class PlainMerge(InProcessClient):
    """The in-process client with httpx's own URL merging."""

    def _merge_url(self, url: httpx.URL | str) -> httpx.URL:
        return httpx.Client._merge_url(self, url)


def _clients(app: Any) -> dict[str, httpx.Client]:
    both = InProcessClient(transport=ASGITransport(app), base_url=BASE_URL)
    merge_only = InProcessClient(transport=ASGITransport(app), base_url=BASE_URL)
    merge_only._cookies = httpx.Cookies()
    cookies_only = PlainMerge(transport=ASGITransport(app), base_url=BASE_URL)
    neither = httpx.Client(transport=ASGITransport(app), base_url=BASE_URL)
    return {
        "both": both,
        "merge only": merge_only,
        "cookies only": cookies_only,
        "neither": neither,
    }


def httpx_figures() -> None:
    service = Service(ServiceConfig(seed_count=20))
    app = create_app(service)
    project = service.project_for_key(ServiceConfig().api_key)
    assert project is not None
    headers = {"x-api-key": ServiceConfig().api_key}
    first = httpx.Client(transport=ASGITransport(app), base_url=BASE_URL)
    page = first.get("/submission", headers=headers).json()
    path = f"/submission?submission_id={page['Items'][0]['submission_id']}"

    plain = httpx.Client(base_url=BASE_URL)
    fast = InProcessClient(base_url=BASE_URL)
    merge_plain = per_call(lambda: plain._merge_url(path), 20_000)
    merge_fast = per_call(lambda: fast._merge_url(path), 20_000)
    print(f"httpx _merge_url: {merge_plain:.2f} µs own, {merge_fast:.2f} µs kept per client")

    response = first.get(path, headers=headers)
    jar, skipping = httpx.Cookies(), _SetCookieOnly(httpx.Cookies())
    jar_cost = per_call(lambda: jar.extract_cookies(response), 20_000)
    skip_cost = per_call(lambda: skipping.extract_cookies(response), 20_000)
    print(f"httpx cookie pass: {jar_cost:.2f} µs own jar, {skip_cost:.2f} µs skipping jar")

    for name, client in _clients(app).items():
        cost = per_call(lambda c=client: c.get(path, headers=headers), 2_000)  # type: ignore[misc]
        print(f"in-process GET by id, {name}: {cost:.1f} µs")
    service.close()


def starlette_figures() -> None:
    shared: dict[str, Any] = {"cors": None, "fast_lane": True, "service": 1, "exposure": 2}
    state = State(shared)

    def private() -> None:
        s = state._state
        s.get("cors"), s.get("fast_lane"), s["service"], s["exposure"]

    def public_dict() -> None:
        s = shared
        s.get("cors"), s.get("fast_lane"), s["service"], s["exposure"]

    def attributes() -> None:
        state.cors, state.fast_lane, state.service, state.exposure  # noqa: B018

    for name, func in (("State._state", private), ("State(dict)", public_dict)):
        print(f"4 state reads per call, {name}: {per_call(func, 200_000):.3f} µs")
    print(f"4 state reads per call, attributes: {per_call(attributes, 200_000):.3f} µs")


if __name__ == "__main__":
    httpx_figures()
    starlette_figures()
