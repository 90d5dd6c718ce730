"""The state a server starts from is its start: after ``serve --state-file F`` loaded an
existing F, ``POST /__admin/reset`` and a project's reset go back to F's state as loaded
(not to the seeding, not to a later save), and an existing F is not seeded first."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from conftest import ServeProcess
from idv_mock import Service, ServiceConfig
from idv_mock.tools import persistence

ADMIN = "admin@example.com"


def _file_with_edits(path: Path) -> None:
    """A state file unlike the seeding: a submission added to the default project, with
    its own user id, and a second project with one."""
    service = Service(ServiceConfig(seed_count=3))
    service.create_project({"project_id": "second", "api_key": "second-key", "admins": [ADMIN]})
    service.create_submission("default", {"userid": "from-file"})
    service.create_submission("second", {"userid": "second-user"})
    persistence.save(service, path, epoch=1)
    service.close()


def _counts(base: str) -> dict[str, int]:
    answer = httpx.get(base + "/__admin/state", params={"summary": "true"})
    assert answer.status_code == 200
    counts: dict[str, int] = answer.json()["projects"]
    return counts


def _users(base: str, userid: str) -> list[str]:
    answer = httpx.get(
        base + "/v3/submission", params={"userid": userid}, headers={"x-api-key": "mock-api-key"}
    )
    assert answer.status_code == 200
    return [item["userid"] for item in answer.json().get("Items", [])]


@pytest.mark.live
def test_both_resets_go_back_to_the_state_file_as_loaded(tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    _file_with_edits(state)
    loaded = {"default": 4, "second": 1}
    with ServeProcess("--seed-count", "3", "--state-file", str(state)) as server:
        base = server.base
        assert _counts(base) == loaded and _users(base, "from-file") == ["from-file"]
        for project in ("default", "default", "second"):
            made = httpx.post(f"{base}/__admin/projects/{project}/submissions", json={})
            assert made.status_code == 201
        spec = {"project_id": "third", "api_key": "third-key", "admins": [ADMIN]}
        assert httpx.post(base + "/__admin/projects", json=spec).status_code == 201
        assert _counts(base) == {"default": 6, "second": 2, "third": 0}

        answer = httpx.post(base + "/__admin/reset")
        assert answer.status_code == 200
        assert answer.json()["message"] == "reset to the state file's start state"
        assert answer.json()["projects"] == loaded
        assert _counts(base) == loaded and _users(base, "from-file") == ["from-file"]

        httpx.post(f"{base}/__admin/projects/default/submissions", json={}).raise_for_status()
        httpx.post(f"{base}/__admin/projects/second/submissions", json={}).raise_for_status()
        answer = httpx.post(base + "/__admin/projects/default/reset")
        assert answer.status_code == 200
        assert _counts(base) == {"default": 4, "second": 2}  # the other project untouched
        assert _users(base, "from-file") == ["from-file"]


@pytest.mark.live
def test_an_existing_state_file_is_loaded_without_seeding_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--seed-count 5000`` beside an existing file: no seeding (the banner says so), so
    no start cache entry either; the file's state is what serves."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    state = tmp_path / "state.json"
    _file_with_edits(state)
    with ServeProcess("--seed-count", "5000", "--state-file", str(state)) as server:
        assert _counts(server.base) == {"default": 4, "second": 1}
        output = server.stop()
    assert server.proc.returncode == 0, output
    assert "  project: default (not seeded: the state file is the start; seed 0)" in output
    assert "5000 submissions" not in output and "start cache" not in output
    assert not cache.exists()


@pytest.mark.live
def test_the_banner_says_the_state_file_is_the_start_with_seed_count_zero(
    tmp_path: Path,
) -> None:
    """``--seed-count 0`` beside an existing file: the banner names the file as the start,
    not "0 submissions" (the count the flag asked for is not what serves)."""
    state = tmp_path / "state.json"
    _file_with_edits(state)
    with ServeProcess("--seed-count", "0", "--state-file", str(state)) as server:
        assert _counts(server.base) == {"default": 4, "second": 1}
        output = server.stop()
    assert server.proc.returncode == 0, output
    assert "  project: default (not seeded: the state file is the start; seed 0)" in output
    assert "0 submissions" not in output


@pytest.mark.live
def test_a_missing_state_file_is_seeded_and_reset_goes_back_to_the_seeding(
    tmp_path: Path,
) -> None:
    state = tmp_path / "state.json"
    with ServeProcess("--seed-count", "5", "--state-file", str(state)) as server:
        httpx.post(f"{server.base}/__admin/projects/default/submissions", json={})
        answer = httpx.post(server.base + "/__admin/reset")
        assert answer.json()["message"] == "reset to the seeded start state"
        assert answer.json()["projects"] == {"default": 5}
        output = server.stop()
    assert "  project: default (5 submissions, seed 0)" in output


def test_a_later_save_or_an_import_is_not_a_new_start(tmp_path: Path) -> None:
    """What a reset goes back to is the file as the server loaded it: neither a save
    since (the periodic saver's) nor an explicit import (``PUT /__admin/state``)."""
    path = tmp_path / "state.json"
    _file_with_edits(path)
    service = Service(ServiceConfig(seed_count=3))
    state = persistence.StateFile(service, path)
    assert state.open()
    loaded = service.export_state_json()
    service.create_submission("default", {"userid": "after-the-load"})
    state.save()
    service.reset()
    assert service.export_state_json() == loaded
    other = Service(ServiceConfig(seed_count=7))
    service.import_state(other.export_state())
    assert service.submission_counts() == {"default": 7}
    service.reset()
    assert service.export_state_json() == loaded
    other.close()
    service.close()
