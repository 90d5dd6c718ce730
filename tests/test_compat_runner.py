""".ci/compat.py, the runner of `make test-compat` (issue 28): inside CI's time limit it
starts a cell only while the budget covers one, reports the rest as skipped for time,
stops a cell still running when the budget is spent, and says so when a Python is missing.
The cells themselves are not built here (minutes each): their choice and their ends are."""

from __future__ import annotations

import importlib.util
import stat
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

RUNNER = Path(__file__).resolve().parents[1] / ".ci" / "compat.py"


@pytest.fixture
def compat(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    spec = importlib.util.spec_from_file_location("ci_compat", RUNNER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "ci_compat", module)  # its dataclasses look it up
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "HOME", tmp_path / ".venv-compat")
    for name in ("BUDGET", "MISSING", "CELLS", "TESTS", "FULL"):
        monkeypatch.delenv(name, raising=False)
    return module


def shim_python(cell: Path) -> Path:
    """The cell's ``bin/python``: this venv's (pytest-xdist), as a real cell's would be."""
    (cell / "bin").mkdir(parents=True)
    python = cell / "bin" / "python"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    python.chmod(python.stat().st_mode | stat.S_IEXEC)
    return python


def run_one_real_cell(
    compat: ModuleType,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    pair: tuple[str, str],
    file_name: str,
    text: str,
) -> int:
    """``main()`` over one cell (``pair``: its Python and resolution) that runs pytest for
    real on one test file (``file_name``, holding ``text``), only its install and Python faked."""
    version, resolution = pair
    python = shim_python(tmp_path / "home" / f"py{version}-{resolution}")
    tests = tmp_path / file_name
    tests.write_text(text)
    monkeypatch.setattr(compat, "ROOT", tmp_path)
    monkeypatch.setattr(compat, "HOME", tmp_path / "home")
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.setenv("PYTEST_PLUGINS", "xdist.plugin")
    monkeypatch.setattr(compat, "build", lambda *a: "starlette==1.0\n")
    monkeypatch.setattr(compat, "find_python", lambda v: compat.Python(str(python), v, "here"))
    monkeypatch.setattr(compat, "ORDER", (pair,))
    monkeypatch.setenv("TESTS", str(tests))
    return compat.main()


def no_cell_may_run(*args: object) -> None:
    raise AssertionError("a cell was started")


def test_the_next_cell_is_guessed_from_the_longest_so_far(compat: ModuleType) -> None:
    assert compat.estimate([]) == compat.FIRST_GUESS_S
    assert compat.estimate([100.0, 240.0, 180.0]) == 300.0


def test_a_missing_python_is_skipped_with_its_reason_when_asked(
    compat: ModuleType, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(compat, "find_python", lambda version: None)
    monkeypatch.setattr(compat, "run_cell", no_cell_may_run)
    monkeypatch.setenv("MISSING", "skip")
    assert compat.main() == 0
    out = capsys.readouterr().out
    for name in ("py3.10-lowest-direct", "py3.13-highest", "py3.13-lowest-direct"):
        assert f"test-compat: {name} skipped: no Python 3.1" in out
    results = (compat.HOME / "results.md").read_text(encoding="utf-8")
    assert results.count("skipped: no Python 3.10 here (uv cannot download one") == 3
    assert results.count("skipped: no Python 3.13 here") == 2


def test_a_missing_python_fails_make_test_compat_run_by_hand(
    compat: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(compat, "find_python", lambda version: None)
    with pytest.raises(SystemExit, match=r"test-compat: no Python 3\.10 here"):
        compat.main()


def test_cells_the_budget_cannot_cover_are_skipped_for_time(
    compat: ModuleType, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    found = compat.Python("/usr/bin/python3.x", "3.10.13", "on the machine")
    monkeypatch.setattr(compat, "find_python", lambda version: found)
    started: list[str] = []

    def run_cell(cell: Any, python: Any, tests: Any, left: float) -> tuple[str, bool, float]:
        started.append(cell.name)
        assert 0 < left <= 1000
        return "| row |", False, 840.0  # the first cell took 840 s: the next needs 1050

    monkeypatch.setattr(compat, "run_cell", run_cell)
    monkeypatch.setenv("BUDGET", "1000")
    assert compat.main() == 0
    # the order: the lowest first; the plugin's floor cell has a guess of its own (120 s)
    assert started == ["py3.10-lowest-direct", "py3.10-pytest-floor"]
    out = capsys.readouterr().out
    assert "test-compat: py3.13-highest skipped: for time (" in out
    assert "s left of the 1000 s budget, a cell takes about 1050 s)" in out
    assert out.count("-highest skipped: for time") + out.count("-direct skipped: for time") == 3


def test_the_tools_floors_run_in_the_lowest_direct_cells_only(
    compat: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = compat.Python("/usr/bin/python3.x", "3.13.0", "on the machine")
    monkeypatch.setattr(compat, "find_python", lambda version: found)
    ran: dict[str, list[str]] = {}

    def run_cell(cell: Any, python: Any, tests: list[str], left: Any) -> tuple[str, bool, float]:
        ran[cell.name] = tests
        return "| row |", False, 1.0

    monkeypatch.setattr(compat, "run_cell", run_cell)
    assert compat.main() == 0
    tools = set(compat.FLOOR_TOOL_TESTS)
    for name, tests in ran.items():
        assert tools <= set(tests) if name.endswith("-lowest-direct") else not tools & set(tests)
    assert ran["py3.10-pytest-floor"] == list(compat.PLUGIN_FLOOR_TESTS)
    monkeypatch.setenv("TESTS", "tests/test_openapi.py")  # a narrowed run stays as asked
    assert compat.main() == 0
    assert ran["py3.10-lowest-direct"] == ["tests/test_openapi.py"]


def test_a_red_cell_fails_the_run(compat: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    found = compat.Python("/usr/bin/python3.x", "3.13.0", "on the machine")
    monkeypatch.setattr(compat, "find_python", lambda version: found)
    reds = iter([False, True, False, False, False])
    monkeypatch.setattr(compat, "run_cell", lambda *a: ("| row |", next(reds), 1.0))
    assert compat.main() == 1


def test_a_red_cells_failures_are_printed_after_the_table(
    compat: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    """CI shows the end of its output: the failing test's name and assertion are there."""
    code = run_one_real_cell(
        compat, tmp_path, monkeypatch, ("3.13", "highest"), "test_some.py",
        "def test_fine(): pass\n"
        "def test_broken():\n    left = 41\n    assert left + 1 == 43, 'off by one'\n",
    )  # fmt: skip
    assert code == 1
    printed = capsys.readouterr().out
    table_end = printed.index("| 3.13 (here) | highest |")
    tail = printed[table_end:]
    assert "test-compat: failures in py3.13-highest:" in tail
    assert "assert left + 1 == 43, 'off by one'" in tail  # the traceback's end
    assert "FAILED test_some.py::test_broken - AssertionError: off by one" in tail
    assert "test_fine" not in tail


def test_a_test_that_fails_once_and_passes_run_again_is_named_not_red(
    compat: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    runs = tmp_path / "runs"
    code = run_one_real_cell(
        compat, tmp_path, monkeypatch, ("3.10", "highest"), "test_timing.py",
        "import pathlib\n"
        "def test_steady(): pass\n"
        "def test_first_time_late():\n"
        f"    runs = pathlib.Path({str(runs)!r})\n"
        "    first = not runs.exists()\n"
        "    runs.write_text('ran')\n"
        "    assert not first, 'late under load'\n",
    )  # fmt: skip
    assert code == 0
    printed = capsys.readouterr().out
    row = next(line for line in printed.splitlines() if line.startswith("| 3.10 (here)"))
    assert "1 failed, 1 passed" in row
    assert "1 failed, then passed run again: test_timing.py::test_first_time_late" in row
    tail = printed[printed.index(row) :]
    assert "test-compat: failed, then passed run again, in py3.10-highest:" in tail
    assert "AssertionError: late under load" in tail


def test_which_failures_are_run_again(compat: ModuleType) -> None:
    output = (
        "FAILED tests/test_a.py::test_x[p - q] - AssertionError: no\n"
        "ERROR tests/test_b.py::test_y - TimeoutError\n"
        "FAILED tests/test_a.py::test_x[p - q] - again\n"
    )
    assert compat.failed_tests(output) == [
        "tests/test_a.py::test_x[p - q]",
        "tests/test_b.py::test_y",
    ]
    # an error outside any test (an import that fails) is never run again: the cell stays red
    assert compat.failed_tests(output + "ERROR tests/test_c.py - ImportError: no x\n") == []


def test_a_stopped_cell_is_red_only_if_a_test_had_failed(compat: ModuleType) -> None:
    assert compat.red_so_far("bringing up nodes...\n....s..F...x [ 12%]\n....") is True
    assert compat.red_so_far("bringing up nodes...\n....s.....x [ 12%]\n....") is False
    assert compat.red_so_far("FAILED here is prose, not progress\n...") is False


def test_a_cell_over_its_time_is_stopped_with_its_workers(
    compat: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cell = tmp_path / "cell"
    shim_python(cell)
    slow = tmp_path / "test_slow.py"
    marker = tmp_path / "alive"
    slow.write_text(
        "import time, pathlib\n"
        "def test_slow(worker_id):\n"
        f"    p = pathlib.Path({str(marker)!r} + worker_id)\n"
        "    for _ in range(600):\n"
        "        p.write_text(str(time.time())); time.sleep(0.1)\n"
        "def test_slow_too(worker_id): test_slow(worker_id)\n"
    )
    monkeypatch.setattr(compat, "ROOT", tmp_path)
    # only xdist: the workers start in seconds even on a loaded machine
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.setenv("PYTEST_PLUGINS", "xdist.plugin")
    started = time.monotonic()
    assert compat.run_tests(cell, [str(slow)], timeout=10.0) is None
    assert time.monotonic() - started < 30
    log = (cell / "pytest.log").read_text(encoding="utf-8")
    assert log.endswith("test-compat: stopped at the time budget\n")
    beats = {p: p.stat().st_mtime for p in tmp_path.glob("alive*")}
    assert beats  # the workers had started ...
    time.sleep(0.5)
    assert {p: p.stat().st_mtime for p in tmp_path.glob("alive*")} == beats  # ... and are gone


def test_the_listed_files_and_deselected_tests_exist(compat: ModuleType) -> None:
    root = RUNNER.parents[1]
    for name in compat.COMPAT_TESTS:
        assert (root / name).is_file(), name
    for name in compat.FLOOR_TOOL_TESTS:
        assert (root / name).exists(), name
        assert name not in compat.COMPAT_TESTS
    for test in compat.COMPAT_DESELECT:
        path, function = test.split("::")
        assert path in compat.COMPAT_TESTS
        assert f"def {function}(" in (root / path).read_text(encoding="utf-8"), test
    assert compat.deselected(list(compat.COMPAT_TESTS))[0].startswith("--deselect=tests/")
    assert compat.deselected(["tests/test_openapi.py"]) == []
