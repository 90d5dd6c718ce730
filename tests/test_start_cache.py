"""A service started from a saved start state is the seeded one, byte for byte (issue 26:
the pytest plugin keeps the session's start in pytest's cache to skip Faker and seeding)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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
