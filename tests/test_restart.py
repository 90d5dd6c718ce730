"""Restarts from a state file (issue 14, defects 2 and 3): ids never handed out twice for
the life of a state file (kill -9 included), saves only when something changed, a file the
server wrote itself loads without the schema check, stale temporary files removed."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Collection
from pathlib import Path

import httpx
import orjson
import pytest

from conftest import ServeProcess
from idv_mock import Service, ServiceConfig
from idv_mock.ground import schemas
from idv_mock.tools import persistence

KEY = {"x-api-key": "mock-api-key"}
POLICY = {"name": "no_birth", "mode": "exclude", "fields": ["date_of_birth"]}


def serve(state: Path, *extra: str) -> ServeProcess:
    return ServeProcess("--seed-count", "3", "--state-file", str(state), *extra)


def add(base: str) -> str:
    r = httpx.post(base + "/__admin/projects/default/submissions", json={})
    return str(r.json()["submission_id"])


def new_projection(base: str) -> str:
    r = httpx.post(base + "/v3/projection", json=POLICY, headers=KEY)
    return str(r.json()["projection_id"])


@pytest.mark.live
def test_ids_lost_to_a_kill_are_not_handed_out_again(tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    with serve(state, "--save-interval", "0") as server:
        lost = add(server.base)  # never saved: the server is killed
        server.stop(signal.SIGKILL)
    with serve(state, "--save-interval", "0") as server:
        again = add(server.base)
    assert again != lost


@pytest.mark.live
def test_a_deleted_projection_id_is_not_reused_after_a_restart(tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    with serve(state, "--save-interval", "0") as server:
        deleted = new_projection(server.base)
        httpx.delete(f"{server.base}/v3/projection/{deleted}", headers=KEY)
    with serve(state, "--save-interval", "0") as server:
        fresh = new_projection(server.base)
    assert fresh != deleted


def started(folder: Path) -> tuple[Service, persistence.StateFile]:
    service = Service(ServiceConfig(seed_count=3))
    state = persistence.StateFile(service, folder / "state.json")
    state.open()
    return service, state


def test_ids_are_deterministic_for_a_seed_and_history(tmp_path: Path) -> None:
    runs = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        service, state = started(tmp_path / name)
        first = service.create_submission("default")["submission_id"]
        state.save()
        service, state = started(tmp_path / name)  # a restart: the next epoch
        runs.append((first, service.create_submission("default")["submission_id"]))
    assert runs[0] == runs[1]
    assert runs[0][0] != runs[0][1]


def test_a_reset_does_not_hand_out_the_ids_again(tmp_path: Path) -> None:
    service, _ = started(tmp_path)
    before = service.create_submission("default")["submission_id"]
    service.reset()
    assert service.create_submission("default")["submission_id"] != before


def test_the_seeded_start_state_is_unchanged_by_a_new_state_file(tmp_path: Path) -> None:
    plain = Service(ServiceConfig(seed_count=3)).export_state_json()
    service, _ = started(tmp_path)
    assert service.export_state_json() == plain
    saved = orjson.loads((tmp_path / "state.json").read_bytes())
    assert saved.pop("state_file")["epoch"] == 1
    assert [p.pop("line_index") for p in saved["projects"]]  # the reader's index, then the same
    assert orjson.dumps(saved) == plain


def test_each_start_saves_its_epoch_at_once(tmp_path: Path) -> None:
    for epoch in (1, 2, 3):
        _, state = started(tmp_path)
        assert state.epoch == epoch
        header = orjson.loads((tmp_path / "state.json").read_bytes())["state_file"]
        assert header["epoch"] == epoch


@pytest.mark.live
def test_an_idle_server_does_not_rewrite_its_file(tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    with serve(state, "--save-interval", "0.1") as server:
        start_save = state.stat().st_ino  # every save is a new file renamed into place
        time.sleep(1.0)  # ten intervals without a change
        idle = state.stat().st_ino
        add(server.base)
        deadline = time.monotonic() + 20
        while state.stat().st_ino == start_save and time.monotonic() < deadline:
            time.sleep(0.05)
        changed = state.stat().st_ino
    assert idle == start_save
    assert changed != start_save


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the schemas documents are checked against, as they are checked."""
    names: list[str] = []
    real = schemas.errors

    def counting(name: str, instance: object, ignore: Collection[str] = ()) -> list[str]:
        names.append(name)
        return real(name, instance, ignore)

    monkeypatch.setattr(schemas, "errors", counting)
    return names


def test_a_file_the_server_wrote_is_not_schema_checked_again(
    tmp_path: Path, checked: list[str]
) -> None:
    source, state = started(tmp_path)
    source.create_submission("default", {"userid": "kept"})
    state.save()
    other = Service(ServiceConfig(seed_count=0))
    assert persistence.load(other, tmp_path / "state.json")
    assert "state.json" not in checked
    assert other.export_state_json() == source.export_state_json()


def test_an_edited_file_gets_the_full_check_once(tmp_path: Path, checked: list[str]) -> None:
    started(tmp_path)
    path = tmp_path / "state.json"
    path.write_bytes(path.read_bytes().replace(b'"version":1', b'"version":2'))
    with pytest.raises(persistence.StateFileError, match="not an idv-mock state file"):
        persistence.load(Service(ServiceConfig(seed_count=0)), path)
    assert checked.count("state.json") == 1


def test_a_file_from_before_the_header_still_loads(tmp_path: Path) -> None:
    source = Service(ServiceConfig(seed_count=3, random_seed=4))
    path = tmp_path / "state.json"
    path.write_bytes(source.export_state_json())  # what 0.2 wrote
    service = Service(ServiceConfig(seed_count=0))
    state = persistence.StateFile(service, path)
    assert state.open() is True
    assert state.epoch == 1
    assert service.export_state_json() == source.export_state_json()


@pytest.mark.live
def test_stale_temporary_files_are_removed_at_start(tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    dead = tmp_path / ".state.json.999999999.tmp"  # no such process
    dead.write_bytes(b"x" * 1000)
    other = tmp_path / ".other.json.999999999.tmp"  # another file's: not ours to remove
    other.write_bytes(b"y")
    with serve(state, "--save-interval", "0"):
        pass
    assert sorted(os.listdir(tmp_path)) == [".other.json.999999999.tmp", "state.json"]
