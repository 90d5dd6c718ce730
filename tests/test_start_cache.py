"""A service started from a saved start state is the seeded one, byte for byte (issue 26:
the pytest plugin keeps the session's start in pytest's cache to skip Faker and seeding)."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import orjson
import pytest
from pytest_idv_mock import fixtures

from idv_mock import Service, ServiceConfig


def test_a_restored_start_is_the_seeded_start_and_goes_on_the_same() -> None:
    config = ServiceConfig(seed_count=20, random_seed=3)
    seeded = Service(config)
    restored = Service(config, start=seeded.export_state())
    assert restored.export_state_json() == seeded.export_state_json()
    made = [s.create_submission("default", {"userid": "u1"}) for s in (seeded, restored)]
    assert made[0] == made[1]
    for service in (seeded, restored):
        service.reset()
    assert restored.export_state_json() == seeded.export_state_json()
    seeded.close()
    restored.close()


def test_the_plugin_writes_the_start_once_and_restores_it(tmp_path: Path) -> None:
    (tmp_path / "test_one.py").write_text(
        "def test_one(idv_service):\n    assert len(idv_service.project('default').store) == 20\n"
    )
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "test_one.py"]
    command += ["--idv-mock-seed-count", "20"]  # not the default start, which ships prebuilt
    for _ in range(2):
        done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
    (saved,) = (tmp_path / ".pytest_cache" / "d" / "idv-mock").glob("start-*.json")
    assert b'"projects"' in saved.read_bytes()
    saved.write_text("not json")  # a damaged file: seeded as usual, and written again
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"PytestCacheWarning: idv-mock: the cached start {saved} was not used" in done.stdout
    assert saved.read_bytes().startswith(b"{")


def test_the_default_start_is_the_packages_own_and_not_copied_to_the_cache(
    tmp_path: Path,
) -> None:
    (tmp_path / "test_one.py").write_text(
        "import sys\n"
        "def test_one(idv_service):\n"
        "    assert idv_service.started_prebuilt\n"
        "    assert len(idv_service.project('default').store) == 50\n"
    )
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "test_one.py"]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert not list((tmp_path / ".pytest_cache" / "d").glob("idv-mock/start-*.json"))


CACHED = ServiceConfig(seed_count=5, random_seed=7)  # not the default: no prebuilt start


def _session_service(folder: Path) -> Service:
    """The plugin's session service, with pytest's cache in ``folder``."""
    config = SimpleNamespace(cache=SimpleNamespace(mkdir=lambda name: folder))
    return fixtures._started_service(CACHED, cast(pytest.Config, config))


def _cached_start(folder: Path) -> Path:
    first = _session_service(folder)  # seeds, and writes the start
    first.close()
    (saved,) = folder.glob("start-*.json")
    return saved


def _no_clock(doc: dict[str, Any]) -> bytes:
    del doc["clock"]
    return orjson.dumps(doc)


def _one_project_twice(doc: dict[str, Any]) -> bytes:
    doc["projects"] *= 2
    return orjson.dumps(doc)


def _no_submission_ids(doc: dict[str, Any]) -> bytes:
    for sub in doc["projects"][0]["submissions"]:
        del sub["submission_id"]
    return orjson.dumps(doc)


DAMAGES = {
    "cut short": (lambda doc: orjson.dumps(doc)[:100], "unexpected end of data: line 1 column 101"),
    "not a state document": (lambda doc: b"[]", "not a version 1 state document"),
    "another version": (lambda doc: orjson.dumps({**doc, "version": 2}), "not a version 1"),
    "no clock": (_no_clock, "(root): 'clock' is a required property"),
    "a project twice": (_one_project_twice, "two projects share an api_key"),
    "submissions without ids": (
        _no_submission_ids,
        "projects/0/submissions/0: 'submission_id' is a required property",
    ),
}


@pytest.mark.parametrize("damage", DAMAGES)
def test_a_damaged_cached_start_is_named_in_a_warning_and_seeded_again(
    tmp_path: Path, damage: str
) -> None:
    saved = _cached_start(tmp_path)
    good = saved.read_bytes()
    damaged, reason = DAMAGES[damage]
    saved.write_bytes(damaged(orjson.loads(good)))
    with pytest.warns(pytest.PytestCacheWarning) as caught:
        service = _session_service(tmp_path)
    (warning,) = caught
    assert str(warning.message).startswith(f"idv-mock: the cached start {saved} was not used (")
    assert str(warning.message).endswith("): seeded and written again")
    assert reason in str(warning.message)
    assert service.export_state_json() == good  # seeded as the first session was
    assert saved.read_bytes() == good  # and written again
    service.close()


def test_under_warnings_as_errors_a_damaged_start_fails_one_session_only(tmp_path: Path) -> None:
    saved = _cached_start(tmp_path)
    good = saved.read_bytes()
    saved.write_text("not json")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(pytest.PytestCacheWarning, match="was not used"):
            _session_service(tmp_path)
    assert saved.read_bytes() == good  # written before the warning: the next session restores
    service = _session_service(tmp_path)
    assert service.export_state_json() == good
    service.close()


def test_a_good_cached_start_is_restored_without_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    saved = _cached_start(tmp_path)
    seeded: list[Service] = []
    monkeypatch.setattr(Service, "_seed", lambda self, progress: seeded.append(self))
    service = _session_service(tmp_path)  # the project's filterwarnings make a warning fail
    assert seeded == []
    assert service.export_state_json() == saved.read_bytes()
    service.close()


def test_a_bug_restoring_a_good_cached_start_is_raised_not_reseeded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    saved = _cached_start(tmp_path)
    before = saved.stat().st_mtime_ns

    def broken(self: Service, state: dict[str, Any], progress: Any = None) -> None:
        raise TypeError("a bug in restoring")

    monkeypatch.setattr(Service, "_restore", broken)
    with pytest.raises(TypeError, match="a bug in restoring"):
        _session_service(tmp_path)
    assert saved.stat().st_mtime_ns == before  # not written again


def test_an_error_no_damage_raises_is_raised_not_reseeded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _cached_start(tmp_path)

    def broken(self: Service, state: dict[str, Any], progress: Any = None) -> None:
        raise RuntimeError("a bug in restoring")

    monkeypatch.setattr(Service, "_restore", broken)
    with pytest.raises(RuntimeError, match="a bug in restoring"):
        _session_service(tmp_path)
