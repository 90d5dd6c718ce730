"""The state file's saver under failing saves (issue 14, defect 1): it keeps retrying,
leaves no temporary file, shows its health, refuses writes with 503 while saves fail, and
a SIGTERM ends with a final save (exit 0) or one clear line (exit 1), never a traceback."""

from __future__ import annotations

import errno
import os
import shutil
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from starlette.testclient import TestClient

from conftest import ServeProcess
from idv_mock import Service, ServiceConfig, create_app
from idv_mock.tools import persistence

REFUSED = (
    "Writes are refused: the last save of the state file failed (No space left on device "
    "(ENOSPC)); they are accepted again after the next successful save"
)


def wait_until(condition: Callable[[], bool], limit: float = 20.0) -> None:
    """Poll ``condition`` (bounded); the test fails if it never holds."""
    deadline = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < deadline, "condition never held"
        time.sleep(0.05)


@pytest.fixture
def disk_full(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Callable[[bool], None]]:
    """Switch ENOSPC on and off for the rename of every save into ``tmp_path`` (only
    there: other threads of the test process keep their disk)."""
    real = os.replace
    full = {"on": False}

    def replace(src: Any, dst: Any) -> None:
        if full["on"] and Path(dst).parent == tmp_path:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(src, dst)

    monkeypatch.setattr(persistence.os, "replace", replace)
    yield lambda on: full.update(on=on)


def saving_service(
    tmp_path: Path, *, stop_writes: bool = True
) -> tuple[Service, persistence.StateFile]:
    service = Service(ServiceConfig(seed_count=3))
    state = persistence.StateFile(service, tmp_path / "state.json", stop_writes=stop_writes)
    state.open()
    return service, state


def test_failed_saves_are_retried_refuse_writes_and_leave_no_temporary_file(
    tmp_path: Path, disk_full: Callable[[bool], None]
) -> None:
    service, state = saving_service(tmp_path)
    saver = persistence.PeriodicSaver(state, 0.05).start()
    client = TestClient(create_app(service))
    try:
        disk_full(True)
        service.create_submission("default", {"userid": "before-the-failure"})
        wait_until(lambda: state.health.consecutive_failures >= 2)  # still retrying
        assert os.listdir(tmp_path) == ["state.json"]
        refused = client.post("/__admin/projects/default/submissions", json={"userid": "x"})
        assert (refused.status_code, refused.json()) == (503, {"message": REFUSED, "errors": []})
        patch = client.patch("/v3/submission", headers={"x-api-key": "mock-api-key"}, json={})
        assert patch.status_code == 503
        assert client.get("/__admin/projects/default/submissions/nope").status_code == 404
        summary = client.get("/__admin/state", params={"summary": "true"}).json()
        assert summary["projects"] == {"default": 4}  # the refused write changed nothing
        saver_health = summary["saver"]
        assert saver_health["last_error"] == "No space left on device (ENOSPC)"
        assert saver_health["writes_refused"] is True
        assert saver_health["consecutive_failures"] >= 2
        disk_full(False)
        wait_until(lambda: state.health.consecutive_failures == 0)
        accepted = client.post("/__admin/projects/default/submissions", json={"userid": "y"})
        assert accepted.status_code == 201
    finally:
        saver.stop()
    saved = orjson.loads((tmp_path / "state.json").read_bytes())
    assert "before-the-failure" in {s["userid"] for s in saved["projects"][0]["submissions"]}


def test_writes_stay_accepted_when_stop_writes_is_off(
    tmp_path: Path, disk_full: Callable[[bool], None]
) -> None:
    service, state = saving_service(tmp_path, stop_writes=False)
    client = TestClient(create_app(service))
    disk_full(True)
    with pytest.raises(OSError):
        state.save()
    assert client.get("/__admin/state?summary=true").json()["saver"]["writes_refused"] is False
    assert client.post("/__admin/projects/default/submissions", json={}).status_code == 201


def test_fault_rules_and_journal_clearing_pass_while_writes_are_refused(
    tmp_path: Path, disk_full: Callable[[bool], None]
) -> None:
    service, state = saving_service(tmp_path)
    client = TestClient(create_app(service))
    disk_full(True)
    with pytest.raises(OSError):
        state.save()
    rule = {"match": {"path": "/v3/projection"}, "respond": {"status": 500}}
    assert client.post("/__admin/projects/default/faults", json=rule).status_code == 201
    assert client.delete("/__admin/projects/default/requests").status_code == 200
    assert client.post("/__admin/reset").status_code == 503


def test_no_saver_health_without_a_state_file() -> None:
    client = TestClient(create_app(Service(ServiceConfig(seed_count=2))))
    assert client.get("/__admin/state?summary=true").json() == {
        "message": "state summary",
        "projects": {"default": 2},
    }


def add(base: str, userid: str) -> httpx.Response:
    return httpx.post(base + "/__admin/projects/default/submissions", json={"userid": userid})


def saved_userids(path: Path) -> set[str]:
    try:
        doc = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return set()
    return {s["userid"] for s in doc["projects"][0]["submissions"]}


@pytest.mark.live
def test_a_live_saver_survives_a_vanished_folder_and_sigterm_exits_0(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    state = folder / "state.json"
    with ServeProcess(
        "--seed-count", "3", "--state-file", str(state), "--save-interval", "0.2"
    ) as server:
        assert add(server.base, "first").status_code == 201
        wait_until(lambda: "first" in saved_userids(state))
        shutil.move(folder, tmp_path / "away")  # saves now fail (as root too, unlike chmod)
        assert add(server.base, "during").status_code == 201  # before the failed save
        wait_until(lambda: add(server.base, "probe").status_code == 503)
        shutil.move(tmp_path / "away", folder)
        wait_until(lambda: add(server.base, "after").status_code == 201)
        wait_until(lambda: "after" in saved_userids(state))  # the saver lives on
        output = server.stop(signal.SIGTERM)
    assert server.proc.returncode == 0
    assert "save to" in output and "No such file or directory (ENOENT)" in output
    assert "Traceback" not in output
    assert {"first", "during", "after"} <= saved_userids(state)
    assert sorted(os.listdir(folder)) == ["state.json"]


@pytest.mark.live
def test_sigterm_with_a_failing_final_save_prints_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    state = folder / "state.json"
    with ServeProcess(
        "--seed-count", "3", "--state-file", str(state), "--save-interval", "0"
    ) as server:
        assert add(server.base, "lost").status_code == 201
        shutil.rmtree(folder)
        output = server.stop(signal.SIGTERM)
    assert server.proc.returncode == 1
    assert "Traceback" not in output
    last = output.strip().splitlines()[-1]
    assert last.startswith(f"idv-mock serve: final save to {state} failed (No such file")
    assert last.endswith("are lost")
