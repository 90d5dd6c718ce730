"""The resilience report (issue 26): profiles, the grid, and a run over two integrator apps.

``tests/resilience_apps/integrator_suite.py`` tests two small apps on one applicant's
webhooks (pending: ``submit``; a reviewer's approval: ``updated``, then ``approved``): one
that trusts each webhook (state from the last status webhook to arrive, an e-mail per
``approved``) and one that reads the submission back on each webhook. ``pytest
--idv-resilience`` runs that file once per profile; the JSON grid must show the first
failing under ``duplicates``, ``reordered`` and ``lost-result`` and the second passing
everywhere.
"""

from __future__ import annotations

import html as html_lib
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pytest_idv_mock import without_resilience_flags

from idv_mock import Service, ServiceConfig
from idv_mock.resilience import profiles, report

ROOT = Path(__file__).resolve().parents[1]
SUITE = "tests/resilience_apps/integrator_suite.py"
TRUSTING = f"{SUITE}::test_trusting_app_records_the_approval"
IDEMPOTENT = f"{SUITE}::test_idempotent_app_records_the_approval"


# --- profiles ---
def test_every_builtin_profile_loads_in_the_reports_order() -> None:
    assert profiles.builtins() == list(profiles.ORDER)
    for name in profiles.builtins():
        found = profiles.load(name)
        assert found.name == name and found.description


def test_a_profile_is_applied_to_a_project() -> None:
    service = Service(ServiceConfig(seed_count=1))
    profiles.apply(service, "default", profiles.load("rate-limited"))
    profiles.apply(service, "default", profiles.load("duplicates"))
    assert service.delivery.levers("default") == {"duplicate": 2}
    (rule,) = service.calls.faults("default")
    assert rule["respond"]["status"] == 429 and rule["times"] == 2
    service.close()


def test_an_unknown_or_bad_profile_is_refused(tmp_path: Path) -> None:
    with pytest.raises(profiles.ProfileError, match="no such file or built-in profile"):
        profiles.load("nope")
    bad = tmp_path / "bad.yaml"
    bad.write_text("description: x\nwebhook_delivery: {duplicate: 0}\n")
    with pytest.raises(profiles.ProfileError, match=r"bad\.yaml"):
        profiles.load(str(bad))


def test_a_copied_profile_file_is_used_by_path(tmp_path: Path) -> None:
    mine = tmp_path / "triple.yaml"
    mine.write_text("description: three of each\nwebhook_delivery: {duplicate: 3}\n")
    assert profiles.load(str(mine)).webhook_delivery == {"duplicate": 3}


# --- the command line a profile's run gets ---
def test_resilience_flags_are_removed_from_the_runs_command_line() -> None:
    args = [
        "--idv-resilience",
        "--idv-resilience-profiles",
        "a,b",
        "--idv-resilience-dir=out",
        "--idv-resilience-jobs",
        "4",
        "-n",
        "2",
        "tests/x.py",
    ]
    assert without_resilience_flags(args) == ["-n", "2", "tests/x.py"]


# --- the grid ---
def run(name: str, outcomes: dict[str, Any], code: int = 0) -> dict[str, Any]:
    profile = {"name": name, "description": name, "webhook_delivery": {}, "faults": []}
    return {"profile": profile, "outcomes": outcomes, "exit_code": code, "seconds": 1.0, "log": ""}


def ok() -> dict[str, str]:
    return {"outcome": "passed", "message": ""}


def test_grid_regressions_are_tests_passing_under_baseline_only() -> None:
    broken = {"outcome": "failed", "message": "AssertionError: assert 2 == 1"}
    doc = report.grid(
        [
            run("baseline", {"t::a": ok(), "t::b": broken}),
            run("duplicates", {"t::a": broken, "t::b": broken}, 1),
        ]
    )
    assert doc["regressions"] == [
        {"test": "t::a", "profile": "duplicates", **broken},
    ]
    assert doc["exit_code"] == 1
    text = report.text(doc).splitlines()
    assert text[:3] == [
        "in t:",
        "test  baseline  duplicates",
        "a     pass      FAIL",
    ]
    assert "  a [duplicates]: AssertionError: assert 2 == 1" in text
    page = report.html(doc)
    assert "<script" not in page and "http" not in page.replace("http-equiv", "")
    assert 'class="fail"' in page and "assert 2 == 1" in page


def test_grid_without_regressions_exits_0_and_a_broken_run_2() -> None:
    assert (
        report.grid([run("baseline", {"t::a": ok()}), run("late", {"t::a": ok()})])["exit_code"]
        == 0
    )
    doc = report.grid([run("baseline", {"t::a": ok()}), run("late", {}, 4)])
    assert doc["exit_code"] == 2 and doc["broken_runs"] == ["late"]


# --- the report over the two apps ---
@pytest.fixture(scope="module")
def grid(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("resilience")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--idv-resilience", "--idv-resilience-dir", str(out),
         SUITE, "-p", "no:randomly", "-p", "no:cacheprovider", "-q"],
        cwd=ROOT, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr  # the trusting app regresses
    assert "[8/8] rate-limited" in done.stdout  # progress, one line per profile
    assert (out / "resilience.html").read_text().startswith("<!doctype html>")
    doc: dict[str, Any] = json.loads((out / "resilience.json").read_text())
    doc["stdout"] = done.stdout
    doc["page"] = (out / "resilience.html").read_text()
    return doc


def outcomes(doc: dict[str, Any], test: str) -> dict[str, str]:
    (row,) = [r for r in doc["tests"] if r["test"] == test]
    return {name: found["outcome"] for name, found in row["results"].items()}


def test_report_trusting_app_fails_under_duplicates_and_reordered(grid: dict[str, Any]) -> None:
    assert grid["profile_names"] == list(profiles.ORDER)
    found = outcomes(grid, TRUSTING)
    assert found["baseline"] == "passed"
    assert found["duplicates"] == "failed"
    assert found["reordered"] == "failed"
    assert found["lost-result"] == "failed"
    messages = {r["profile"]: r["message"] for r in grid["regressions"] if r["test"] == TRUSTING}
    assert messages["duplicates"] == "AssertionError: assert 2 == 1"
    assert messages["reordered"] == "AssertionError: assert 'pending' == 'approved'"


def test_a_failing_cell_explains_itself(grid: dict[str, Any]) -> None:
    """The assertion's message with pytest's explanation, the webhooks the test received in
    order, and a link to the test's part of the profile's log, kept in the same page."""
    (row,) = [r for r in grid["tests"] if r["test"] == TRUSTING]
    found = row["results"]["duplicates"]
    assert found["detail"].startswith("AssertionError: assert 2 == 1")
    assert "where 2 = len(" in found["detail"]  # what was compared, not only the values
    events = [line.split(" ")[0] for line in found["webhooks"]]
    twice = ["submission.submit", "submission.updated", "submission.approved"]
    assert events == [event for event in twice for _ in range(2)]  # each delivered twice
    assert all(line.endswith(": 200") for line in found["webhooks"])
    assert "test_trusting_app_records_the_approval" in found["log_excerpt"].splitlines()[0]
    assert "assert 2 == 1" in found["log_excerpt"]
    page = grid["page"]
    cell = re.search(r'<td class="fail" data-testid="cell-duplicates">(.*?)</td>', page, re.S)
    assert cell is not None
    shown = cell.group(1)
    assert "where 2 = len(" in html_lib.unescape(shown)
    assert "webhooks received, in order:" in shown
    assert shown.count("submission.approved") == 2
    link = re.search(r'<a href="#([^"]+)" data-testid="log-link">', shown)
    assert link is not None
    anchor = re.search(rf'<h3 id="{link.group(1)}">[^<]*</h3><pre[^>]*>([^<]*)</pre>', page, re.S)
    assert anchor is not None and "assert 2 == 1" in html_lib.unescape(anchor.group(1))
    assert "<script" not in page
    for profile in grid["profiles"]:
        assert f'data-testid="survive-{profile["name"]}"' in page


def test_report_idempotent_app_passes_everywhere(grid: dict[str, Any]) -> None:
    assert set(outcomes(grid, IDEMPOTENT).values()) == {"passed"}
    assert all(r["test"] != IDEMPOTENT for r in grid["regressions"])
    assert "Passing under baseline, failing under a profile:" in grid["stdout"]


def test_cli_alias_runs_chosen_profiles_side_by_side(tmp_path: Path) -> None:
    out = tmp_path / "report"
    done = subprocess.run(
        [sys.executable, "-m", "idv_mock.cli", "resilience", "--profiles", "duplicates",
         "--jobs", "2", "--dir", str(out), "--", "pytest", SUITE, "-p", "no:randomly", "-q"],
        cwd=ROOT, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    doc = json.loads((out / "resilience.json").read_text())
    assert doc["profile_names"] == ["baseline", "duplicates"]
    assert outcomes(doc, TRUSTING) == {"baseline": "passed", "duplicates": "failed"}
    assert outcomes(doc, IDEMPOTENT) == {"baseline": "passed", "duplicates": "passed"}
    assert (out / "logs" / "duplicates.txt").is_file()


def test_cli_lists_the_profiles() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "idv_mock.cli", "resilience", "--list"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    names = [line.split()[0] for line in done.stdout.splitlines()]
    assert names == list(profiles.ORDER)
