"""``idv-mock serve --state-file``: load, periodic and shutdown saves, kill -9, refusals."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from conftest import ServeProcess, free_port
from idv_mock import Service, ServiceConfig
from idv_mock.tools import persistence

JSON_TYPE = {"content-type": "application/json"}

pytestmark = pytest.mark.live


def start(state: Path, *extra: str) -> tuple[ServeProcess, str]:
    server = ServeProcess("--seed-count", "3", "--state-file", str(state), *extra).__enter__()
    return server, server.base


def stop(server: ServeProcess, sig: int = signal.SIGTERM) -> str:
    return server.stop(sig)


def add(base: str, userid: str) -> str:
    r = httpx.post(base + "/__admin/projects/default/submissions", json={"userid": userid})
    return str(r.json()["submission_id"])


def test_state_survives_a_restart(tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    proc, base = start(state, "--save-interval", "0")
    sid = add(base, "kept")
    stop(proc)
    proc, base = start(state, "--save-interval", "0")
    r = httpx.get(base + "/v3/submission", params={"userid": "kept"},
                  headers={"x-api-key": "mock-api-key"})  # fmt: skip
    stop(proc, signal.SIGINT)
    assert [i["submission_id"] for i in r.json()["Items"]] == [sid]


def test_kill_9_loses_at_most_the_last_interval(tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    proc, base = start(state, "--save-interval", "0.3")
    sid = add(base, "saved")
    time.sleep(1.0)
    stop(proc, signal.SIGKILL)
    doc = json.loads(state.read_text())  # a complete document, never half written
    subs = doc["projects"][0]["submissions"]
    assert sid in {s["submission_id"] for s in subs}
    assert not list(tmp_path.glob(".state.json.*.tmp"))


@pytest.mark.parametrize("content", [b"{not json", b'{"hello": "world"}', b"\x00\xff"])
def test_a_corrupt_or_foreign_file_is_refused_and_kept(tmp_path: Path, content: bytes) -> None:
    state = tmp_path / "state.json"
    state.write_bytes(content)
    port = free_port()
    cmd = [
        sys.executable,
        "-m",
        "idv_mock.cli",
        "serve",
        "--port",
        str(port),
        "--state-file",
        str(state),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "not overwriting it" in done.stderr
    assert state.read_bytes() == content


def test_save_is_atomic_and_loads_back(tmp_path: Path) -> None:
    service = Service(ServiceConfig(seed_count=4))
    path = tmp_path / "s.json"
    persistence.save(service, path)
    other = Service(ServiceConfig(seed_count=0, random_seed=5))
    assert persistence.load(other, path)
    assert other.export_state() == service.export_state()
    assert os.listdir(tmp_path) == ["s.json"]
    assert persistence.load(other, tmp_path / "missing.json") is False


DEEP_STATE = (
    b'{"version": 1, "clock": {"mode": "tick", "now": "2026-01-01T09:00:00Z"}, "projects": '
    + b"[" * 1000
    + b"]" * 1000
    + b"}"
)


def test_a_deeply_nested_state_file_is_refused_with_exit_2(tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    state.write_bytes(DEEP_STATE)
    cmd = [sys.executable, "-m", "idv_mock.cli", "serve", "--port", str(free_port())]
    done = subprocess.run(
        [*cmd, "--state-file", str(state)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "JSON nested deeper than 72 levels" in done.stderr
    assert "not overwriting it" in done.stderr
    assert state.read_bytes() == DEEP_STATE


def test_a_deeply_nested_state_import_is_a_400_and_changes_nothing() -> None:
    from starlette.testclient import TestClient

    from idv_mock import create_app

    client = TestClient(create_app(Service(ServiceConfig(seed_count=2))))
    before = client.get("/__admin/state").content
    r = client.put(
        "/__admin/state", content=DEEP_STATE, headers={"content-type": "application/json"}
    )
    assert r.status_code == 400
    assert "JSON nested deeper than 72 levels is refused" in r.text
    assert client.get("/__admin/state").content == before


def nested(levels: int) -> object:
    value: object = "leaf"
    for _ in range(levels):
        value = [value]
    return value


def test_the_depth_limit_is_64_levels() -> None:
    from idv_mock.ground.jsondepth import MAX_DEPTH, too_deep

    assert MAX_DEPTH == 64
    assert not too_deep(nested(64))
    assert too_deep(nested(65))
    assert not too_deep({"a": nested(63)})
    assert too_deep({"a": nested(64)})
    assert not too_deep("text") and not too_deep(None)
    assert too_deep(nested(100_000))  # iterative: no RecursionError
