"""Part 7: what a user pays before the first call (issue 15): import, pytest, serve, --help.

Every figure is a fresh process, timed from outside as a user's shell would, median of
several runs (a shared 2-core machine moves single runs by tens of ms):

- ``python -c "import pytest_idv_mock"`` minus a bare ``python -c pass``: what installing
  the package adds to every Python that loads the plugin (target <= 50 ms);
- ``pytest --co -q`` on a generated one-test downstream suite, with the plugin and with
  ``-p no:idv_mock`` (target: within 100 ms of each other);
- ``idv-mock serve`` (default 50 submissions) from the command to the first answered API
  call, polled every 5 ms (median of 5, target <= 0.6 s);
- ``idv-mock --help`` (target < 0.3 s).

Children run as a user's shell runs them: with bytecode caching on (``PYTHONDONTWRITEBYTECODE``
removed from their environment; with it, every import compiles its source and the figures
double), and each command once untimed first, so the caches are warm.

``python bench/startup.py`` runs it alone.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from report import Row, verdict

PART = "7 start-up"
IMPORT_MS = 50.0
COLLECT_MS = 100.0
SERVE_S = 0.6
HELP_S = 0.3
RUNS = 5
IMPORT_RUNS = 9
BIN = Path(sys.executable).parent
DOWNSTREAM_TEST = "def test_one():\n    assert 1 + 1 == 2\n"
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(cmd: list[str], cwd: Path | None = None) -> float:
    """Seconds from start to exit of ``cmd`` (which must succeed)."""
    started = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True, text=True, timeout=120)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {done.stdout[-400:]}{done.stderr[-400:]}")
    return elapsed


def medians(commands: dict[str, Callable[[], float]], runs: int) -> dict[str, float]:
    """Each measurement ``runs`` times, interleaved (so a busy moment hits all alike)."""
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for measure in commands.values():
        measure()  # untimed: bytecode and OS caches warm, as on a user's second run
    for _ in range(runs):
        for name, measure in commands.items():
            samples[name].append(measure())
    return {name: statistics.median(values) for name, values in samples.items()}


def import_cost() -> dict[str, float]:
    python = sys.executable
    found = medians(
        {
            "bare": lambda: timed([python, "-c", "pass"]),
            "plugin": lambda: timed([python, "-c", "import pytest_idv_mock"]),
        },
        IMPORT_RUNS,
    )
    return {**found, "added": found["plugin"] - found["bare"]}


def collect_cost() -> dict[str, float]:
    """``pytest --co -q`` of a one-test project of its own (no ini, no conftest above it)."""
    with tempfile.TemporaryDirectory(prefix="idv-mock-downstream-") as tmp:
        root = Path(tmp)
        (root / "pytest.ini").write_text("[pytest]\n")  # the rootdir: nothing above is read
        (root / "test_downstream.py").write_text(DOWNSTREAM_TEST)
        base = [sys.executable, "-m", "pytest", "--co", "-q", "-p", "no:cacheprovider"]
        found = medians(
            {
                "with_plugin": lambda: timed(base, root),
                "without_plugin": lambda: timed([*base, "-p", "no:idv_mock"], root),
            },
            RUNS,
        )
    return {**found, "apart": found["with_plugin"] - found["without_plugin"]}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _answers(port: int) -> bool:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request("GET", "/v3/submission?count=1", headers={"x-api-key": "mock-api-key"})
        return conn.getresponse().status == 200
    except OSError:
        return False
    finally:
        conn.close()


def serve_once() -> float:
    """``idv-mock serve`` as a user types it, until its first answered API call."""
    port = _free_port()
    cmd = [str(BIN / "idv-mock"), "serve", "--port", str(port)]
    started = time.perf_counter()
    proc = subprocess.Popen(
        cmd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        while not _answers(port):
            if proc.poll() is not None or time.perf_counter() - started > 60:
                raise RuntimeError(f"idv-mock serve did not answer (exit {proc.poll()})")
            time.sleep(0.005)
        return time.perf_counter() - started
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def measure() -> dict[str, Any]:
    imported = import_cost()
    print(f"    import pytest_idv_mock: +{imported['added'] * 1000:.0f} ms", flush=True)
    collected = collect_cost()
    print(
        f"    pytest --co, plugin vs -p no:idv_mock: {collected['apart'] * 1000:+.0f} ms",
        flush=True,
    )
    served = medians({"serve": serve_once}, RUNS)["serve"]
    print(f"    idv-mock serve to first answer: {served:.2f} s", flush=True)
    helped = medians({"help": lambda: timed([str(BIN / "idv-mock"), "--help"])}, RUNS)["help"]
    print(f"    idv-mock --help: {helped:.2f} s", flush=True)
    return {"import": imported, "collect": collected, "serve_s": served, "help_s": helped}


def rows(data: dict[str, Any]) -> list[Row]:
    imported, collected = data["import"], data["collect"]
    added_ms, apart_ms = imported["added"] * 1000, collected["apart"] * 1000
    return [
        Row(
            PART,
            'python -c "import pytest_idv_mock" over bare python',
            f"+{added_ms:.0f} ms  ({imported['plugin'] * 1000:.0f} vs"
            f" {imported['bare'] * 1000:.0f} ms)",
            f"<= {IMPORT_MS:.0f} ms",
            verdict(added_ms <= IMPORT_MS),
        ),
        Row(
            PART,
            "pytest --co -q, 1-test suite: plugin vs -p no:idv_mock",
            f"{apart_ms:+.0f} ms  ({collected['with_plugin']:.2f} vs"
            f" {collected['without_plugin']:.2f} s)",
            f"<= {COLLECT_MS:.0f} ms apart",
            verdict(apart_ms <= COLLECT_MS),
        ),
        Row(
            PART,
            "idv-mock serve (50 submissions) to first answer, median of 5",
            f"{data['serve_s']:.2f} s",
            f"<= {SERVE_S} s",
            verdict(data["serve_s"] <= SERVE_S),
        ),
        Row(
            PART,
            "idv-mock --help",
            f"{data['help_s']:.2f} s",
            f"< {HELP_S} s",
            verdict(data["help_s"] < HELP_S),
        ),
    ]


def part(ctx: Any, mode: Any) -> tuple[list[Row], dict[str, Any]]:
    print("7. start-up (fresh processes)", flush=True)
    data = measure()
    return rows(data), data


if __name__ == "__main__":
    from report import render

    os.chdir(Path(__file__).resolve().parent)
    found = measure()
    print(render(rows(found)))
    print(json.dumps(found, indent=2))
