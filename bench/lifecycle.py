"""Part 3: what a test session pays besides requests: server start, default reset, project reset.

Runs in a fresh child process (``python bench/lifecycle.py``) so that the first server
start pays what it pays at the start of a pytest session (the server's loop and
protocol imports), not what is left warm by the other parts.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def run(repeats: int) -> dict[str, Any]:
    """The child's figures (JSON on its last line of output)."""
    cmd = [sys.executable, str(HERE / "lifecycle.py"), str(repeats)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=900, cwd=HERE)
    if done.returncode != 0:
        raise RuntimeError(f"lifecycle child failed: {done.stderr[-800:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _ms(samples: list[int]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "median_ms": ordered[len(ordered) // 2] / 1e6,
        "max_ms": ordered[-1] / 1e6,
        "runs": len(ordered),
    }


def start_server_once(service: Any) -> int:
    """Exactly what the plugin's ``_idv_live`` fixture does, until its server listens (the
    fixtures' own server, ``idv_mock.serving.thread_server``, since session 14; it was
    uvicorn); the stop is not counted."""
    from pytest_idv_mock.fixtures import serve_in_thread, server_app

    start = time.perf_counter_ns()
    serving = serve_in_thread(server_app(service))
    serving.__enter__()
    elapsed = time.perf_counter_ns() - start
    serving.__exit__(None, None, None)
    return elapsed


def _dirty(service: Any) -> None:
    """A write or two, as a test makes before the next reset (so no reset can be a no-op)."""
    project = service.project("default")
    sid = project.store.order[-1][1]
    service.edit(project, sid, "admin@example.com", {"memo": "dirty"})
    service.create_submission("default")


def _timed_resets(service: Any, reset: Callable[[], object], repeats: int) -> list[int]:
    samples = []
    for _ in range(repeats):
        _dirty(service)
        start = time.perf_counter_ns()
        reset()
        samples.append(time.perf_counter_ns() - start)
    return samples


def child(repeats: int) -> dict[str, Any]:
    from idv_mock import Service, ServiceConfig

    # the plugin's session service: 50 seeded submissions, short webhook back-off
    started = time.perf_counter_ns()
    service = Service(ServiceConfig(seed_count=50, webhook_backoff=(0.1, 0.2)))
    build_ns = time.perf_counter_ns() - started
    first = start_server_once(service)
    warm = [start_server_once(service) for _ in range(max(3, repeats // 4))]
    default_reset = _timed_resets(service, service.reset, repeats)
    big = Service(ServiceConfig(seed_count=1000))
    project_reset = _timed_resets(big, lambda: big.reset_project("default"), max(5, repeats // 3))
    return {
        "service_build_50_ms": build_ns / 1e6,
        "server_start_first_ms": first / 1e6,
        "server_start_warm": _ms(warm),
        "reset_default": _ms(default_reset),
        "reset_project_1000": _ms(project_reset),
    }


if __name__ == "__main__":
    print(json.dumps(child(int(sys.argv[1]))))
