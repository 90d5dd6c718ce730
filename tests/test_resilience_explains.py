"""The resilience report explains itself (issue 35): a test's own fault rules and levers
win over a profile's, and the HTML page says why a cell failed and what to do.

The rule-precedence false alarm: under ``slow-api`` the profile's catch-all delay rule
was added first and matched first, so a test's own 503 rule never fired."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from idv_mock import Service, ServiceConfig, create_app
from idv_mock.resilience import profiles, report, runner
from idv_mock.transport import ASGITransport, InProcessClient

ROOT = Path(__file__).resolve().parents[1]
OWN_RULES = "tests/resilience_apps/own_rules_suite.py"
QUIET = ["-p", "no:randomly", "-p", "no:cacheprovider", "-q"]


def test_a_tests_own_rule_goes_before_the_profiles_whenever_it_is_added() -> None:
    service = Service(ServiceConfig(seed_count=2))
    profiles.apply(service, "default", profiles.load("slow-api"))
    own = {"match": {"method": "GET", "path": "/v3/submission"}, "respond": {"status": 503}}
    added = service.calls.add_fault("default", own)
    later = service.calls.add_fault("default", {**own, "respond": {"status": 502}})
    ids = [r["id"] for r in service.calls.faults("default")]
    assert ids[:2] == [added["id"], later["id"]] and len(ids) == 3  # the profile's rule last
    client = InProcessClient(
        transport=ASGITransport(create_app(service)),
        base_url="http://idv-mock/v3",
        headers={"x-api-key": "mock-api-key"},
    )
    with client:
        assert client.get("/submission").status_code == 503
        service.calls.remove_faults("default", added["id"])
        assert client.get("/submission").status_code == 502
    hits = {r["id"]: r["hits"] for r in service.calls.faults("default")}
    assert hits == {later["id"]: 1, ids[2]: 0}
    service.close()


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", *args, *QUIET],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def test_own_rules_and_levers_win_under_the_profiles(tmp_path: Path) -> None:
    done = run(
        "--idv-resilience", "--idv-resilience-profiles", "slow-api,duplicates",
        "--idv-resilience-dir", str(tmp_path), OWN_RULES,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    doc = json.loads((tmp_path / "resilience.json").read_text())
    for row in doc["tests"]:
        assert {n: r["outcome"] for n, r in row["results"].items()} == {
            "baseline": "passed",
            "slow-api": "passed",
            "duplicates": "passed",
        }, row["test"]


def test_each_profile_says_what_survives_it() -> None:
    for name in profiles.builtins():
        assert profiles.load(name).survives, name
    page = report.html(
        report.grid([{"profile": profiles.load("duplicates").to_json(), "outcomes": {},
                      "exit_code": 0, "seconds": 1.0, "log": ""}])
    )  # fmt: skip
    told = re.search(r'data-testid="survive-duplicates"><br>([^<]*)<', page)
    assert told is not None
    assert told.group(1) == "To survive it: " + profiles.load("duplicates").survives


def test_a_log_excerpt_is_the_tests_own_failure_section() -> None:
    log = "\n".join(
        [
            "..F.",
            "=================================== FAILURES ===================================",
            "___________________________ test_a ___________________________",
            "    def test_a():",
            ">       assert 2 == 1",
            "E       assert 2 == 1",
            "___________________________ TestB.test_b[1] ___________________________",
            "E       assert 'x' == 'y'",
            "=========================== short test summary info ============================",
        ]
    )
    assert runner.excerpt(log, "t.py::test_a").splitlines() == [
        "___________________________ test_a ___________________________",
        "    def test_a():",
        ">       assert 2 == 1",
        "E       assert 2 == 1",
    ]
    assert runner.excerpt(log, "t.py::TestB::test_b[1]").endswith("E       assert 'x' == 'y'")


def test_both_reports_link_to_each_other(tmp_path: Path) -> None:
    grid_dir, coverage_dir = tmp_path / "resilience", tmp_path / "coverage"
    done = run(
        "--idv-resilience", "--idv-resilience-profiles", "duplicates",
        "--idv-resilience-dir", str(grid_dir), f"--idv-coverage={coverage_dir}",
        "tests/coverage_apps/sample_suite.py",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "(baseline's run) idv-mock contract coverage: 4/" in done.stdout
    grid_page = (grid_dir / "resilience.html").read_text()
    coverage_page = (coverage_dir / "coverage.html").read_text()
    assert 'data-testid="coverage-link" href="../coverage/coverage.html"' in grid_page
    assert 'data-testid="resilience-link" href="../resilience/resilience.html"' in coverage_page
    doc = json.loads((coverage_dir / "coverage.json").read_text())
    # the baseline run's counts: no duplicate the profile made
    assert {i["id"] for i in doc["items"] if i["count"]} >= {"webhook approved"}
    assert not any(i["count"] for i in doc["items"] if i["id"] == "delivery duplicate")
