"""Scenario files: every built-in one runs green, in-process and live; bad files say where."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from conformance import check_response
from conftest import LiveServer, ServeProcess, free_port
from idv_mock import Service, ServiceConfig, scenarios
from idv_mock.scenarios.matching import differences

REPO = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "idv_mock.cli"]
FLOWS = (  # the flows of the spec the built-in scenarios must cover (issue 6)
    "onboarding-approved",
    "onboarding-rejected",
    "admin-edit",
    "delete-submission",
    "partial-delete",
    "projection-filtering",
    "aml-red-flag-report",
    "monitoring-batch",
    "secure-transfer",
)
WRONG = """\
name: a wrong expectation
given:
  submissions:
    - id: ann
      overrides: {kyc: {result: approved}}
steps:
  - name: reads the submission
    request: {method: GET, path: /submission, query: {submission_id: "${ann}"}}
    expect: {status: 200, body: {Items: [{submission_id: sub-ann}]}}
  - name: expects the wrong result
    request: {method: GET, path: /submission, query: {submission_id: sub-ann}}
    expect:
      body: {Items: [{kyc: {result: rejected}}]}
"""


@pytest.fixture
def service() -> Iterator[Service]:
    svc = Service(ServiceConfig(seed_count=5, webhook_backoff=(0.05, 0.1)))
    yield svc
    svc.close()


def failures(results: list[scenarios.StepResult]) -> list[str]:
    return [str(r) for r in results if not r.passed]


# --- the built-in scenarios ---
def test_builtins_are_the_files_of_the_scenarios_folder() -> None:
    assert scenarios.BUILTIN_DIR == REPO / "scenarios"
    files = sorted(p.stem for p in (REPO / "scenarios").glob("*.yaml"))
    assert scenarios.builtins() == files
    assert set(FLOWS) <= set(files)


@pytest.mark.parametrize("name", scenarios.builtins())
def test_builtin_scenario_runs_green_in_process(name: str, service: Service) -> None:
    scenario = scenarios.builtin(name)
    assert scenario.steps
    results = scenarios.run(scenario, service=service, on_response=check_response)
    assert failures(results) == []
    assert len(results) == len(scenario.steps)


def test_run_on_a_fresh_service_by_default() -> None:
    results = scenarios.run(scenarios.builtin("onboarding-approved"))
    assert failures(results) == []


@pytest.mark.live
@pytest.mark.parametrize("name", ["projection-filtering", "secure-transfer"])
def test_builtin_scenario_runs_green_against_a_live_server(name: str, service: Service) -> None:
    with LiveServer(service) as live:
        scenario = scenarios.builtin(name)
        results = scenarios.run(scenario, base_url=live.base_url, on_response=check_response)
        assert failures(results) == []
        assert service.project("acme" if name != "secure-transfer" else "vault").store
        again = scenarios.run(scenario, base_url=live.base_url, reset=True)
    assert failures(again) == []


def test_apply_given_binds_ids_and_gives_deterministic_submission_ids(service: Service) -> None:
    bound = scenarios.apply_given(service, scenarios.builtin("projection-filtering"))
    assert bound["hana"] == "sub-hana"
    assert (
        bound["no_birth"] == service.project("acme").projections.by_name("no_birth").projection_id
    )
    stored = service.stored_submission("acme", "sub-hana")
    assert stored["projection"]["projectionName"] == "no_birth"
    assert service.project("beta").options["projection_style"] == "null"


# --- malformed files ---
STEP = """\
name: x
steps:
  - name: s
    request: {method: GET, path: /submission}
"""
MALFORMED = [  # (text, line, problem)
    (STEP + "    expect:\n      staus: 200\n", 6, "'staus' was unexpected"),
    (STEP + "    expect:\n      status: '200'\n", 6, 'steps[0].expect.status: "200"'),
    (STEP.replace("GET", "FETCH"), 4, "'FETCH' is not one of"),
    (STEP.replace("    request", "    requests"), 4, "'requests' was unexpected"),
    ("name: x\nsteps:\n  - name: only a name\n", 3, "'request' is a required property"),
    ("steps: []\n", 1, "'name' is a required property"),
    (STEP + "    json: [broken\n", 6, "not valid YAML"),
    ("name: x\nname: y\n", 2, "duplicate key 'name'"),
    (
        STEP.replace("/submission", "'/x/${later}'") + "    save: {later: Items.0}\n",
        4,
        "${later} is not a given id",
    ),
    (STEP + "    expect: {body: {Items: $absnet}}\n", 5, "unknown matcher '$absnet'"),
    (STEP + "    expect: {body: {id: '$re:('}}\n", 5, "not a regular expression"),
    (
        "name: x\ngiven:\n  worklists:\n    - {id: a, name: A}\n  submissions:\n    - id: a\n",
        6,
        "id 'a' is used twice",
    ),
    (
        "name: x\ngiven:\n  submissions:\n    - id: a\n      overrides: {kyc: {result: maybe}}\n",
        5,
        "given.submissions[0].overrides.kyc.result: 'maybe' is not one of",
    ),
    (
        "name: x\ngiven:\n  submissions:\n    - hosted: {token: {}}\n      fire_webhooks: true\n",
        4,
        "given.submissions[0]: ",
    ),
]


@pytest.mark.parametrize(("text", "line", "problem"), MALFORMED)
def test_malformed_file_names_file_line_and_problem(
    tmp_path: Path, text: str, line: int, problem: str
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(scenarios.ScenarioError) as caught:
        scenarios.load(path)
    assert (caught.value.file, caught.value.line) == (str(path), line), str(caught.value)
    assert problem in caught.value.problem
    assert str(caught.value).startswith(f"{path}:{line}: ")


def test_unknown_scenario_name_or_path() -> None:
    with pytest.raises(scenarios.ScenarioError, match="monitoring-batch"):
        scenarios.find("no-such-scenario")
    with pytest.raises(scenarios.ScenarioError, match="no built-in scenario"):
        scenarios.builtin("no-such-scenario")
    assert scenarios.find("secure-transfer") == REPO / "scenarios" / "secure-transfer.yaml"


# --- failures ---
def test_wrong_expectation_fails_that_step_only() -> None:
    results = scenarios.run(scenarios.loads(WRONG, "wrong.yaml"))
    assert [r.passed for r in results] == [True, False]
    assert results[1].line == 10
    assert results[1].problems == ('body.Items[0].kyc.result: expected "rejected", got "approved"',)
    assert str(results[1]).startswith("FAIL expects the wrong result (line 10)\n    body.")


def test_refused_given_entry_is_a_failed_given_step() -> None:
    text = "name: x\ngiven:\n  watchlist_submissions:\n    - id: w\n      entry_id: NOPE\n"
    results = scenarios.run(scenarios.loads(text, "x.yaml"))
    assert [(r.name, r.passed, r.line) for r in results] == [("given", False, 4)]
    assert "watchlist entry NOPE not found" in results[0].problems[0]


MATCHING = """\
name: matchers
given:
  submissions:
    - id: m
      overrides: {userid: u-m, email: m@example.com, kyc: {result: approved}}
steps:
  - name: matchers and list operators
    request: {method: GET, path: /submission, query: {submission_id: "${m}"}}
    expect:
      body:
        Items:
          length: 1
          contains:
            - submission_id: $re:sub-${m}|${m}
              email: $re:[a-z]+@example\\.com
              userid: $string
              kyc: {result: approved, commentCode: $any}
              status: $absent
              no_such_member: $absent
    save: {first: Items.0}
  - name: a saved object is used whole and in text
    request: {method: GET, path: /submission, query: {userid: "${first.userid}"}}
    expect:
      body: {Items: [{submission_id: "${first.submission_id}", email: "$$-free ${first.email}"}]}
"""


def test_matchers_variables_and_escapes() -> None:
    results = scenarios.run(scenarios.loads(MATCHING))
    assert [r.passed for r in results] == [True, False]
    assert results[1].problems == (
        'body.Items[0].email: expected "$-free m@example.com", got "m@example.com"',
    )


def test_booleans_and_numbers_do_not_match_each_other() -> None:
    """A boolean never matches a number, 1 included, and the problem shows it as written."""
    text = WRONG.replace("{Items: [{kyc: {result: rejected}}]}", "{Items: {length: true}}")
    results = scenarios.run(scenarios.loads(text))
    assert not results[1].passed
    assert results[1].problems == ("body.Items: expected true items, got 1",)
    for expected, actual in [(1, True), (True, 1), (0, False), (False, 0)]:
        shown = (str(expected).lower(), str(actual).lower())
        assert differences({"a": expected}, {"a": actual}) == [
            f"payload.a: expected {shown[0]}, got {shown[1]}"
        ]


# --- the command line ---
def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=120)


def test_cli_run_passes_and_fails(tmp_path: Path) -> None:
    ok = cli("scenario", "run", "onboarding-rejected")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "PASS the submission reads back rejected" in ok.stdout
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text(WRONG)
    failed = cli("scenario", "run", str(wrong))
    assert failed.returncode == 1
    assert "PASS reads the submission" in failed.stdout
    assert "FAIL expects the wrong result (line 10)" in failed.stdout
    assert 'expected "rejected", got "approved"' in failed.stdout
    assert "1 passed, 1 failed" in failed.stdout


def test_cli_malformed_file_exits_2_with_where_and_what(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(MALFORMED[0][0])
    result = cli("scenario", "run", str(bad))
    assert result.returncode == 2
    assert f"{bad}:6: steps[0].expect: Additional properties" in result.stderr
    assert result.stdout == ""


@pytest.mark.live
def test_serve_with_a_scenario_starts_with_its_state() -> None:
    scenario = str(REPO / "scenarios" / "monitoring-batch.yaml")
    with ServeProcess("--seed-count", "2", "--api-key", "k-1", "--scenario", scenario) as server:
        base = server.base
        r = httpx.get(
            f"{base}/v3/submission",
            params={"submission_id": "sub-lena"},
            headers={"x-api-key": "acme-key"},
        )
        assert r.json()["Items"][0]["data"]["full_name"] == "Lena Berg"
        worklists = httpx.get(f"{base}/__admin/projects/acme/worklists").json()["worklists"]
        assert {w["id"] for w in worklists} == {"wl-main", "wl-old"}
        run = cli(
            "scenario",
            "run",
            "monitoring-batch",
            "--base-url",
            f"{base}/v3",
            "--api-key",
            "k-1",
            "--reset",
        )
        assert run.returncode == 0, run.stdout + run.stderr
        again = cli("scenario", "run", "monitoring-batch", "--base-url", f"{base}/v3")
        assert again.returncode == 1
        assert "wl-main exists already" in again.stdout and "--reset" in again.stdout
    output = server.output
    assert "scenario: monitoring batch with mixed results" in output


def test_serve_with_a_malformed_scenario_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nname: y\n")
    result = cli("serve", "--port", str(free_port()), "--scenario", str(bad))
    assert result.returncode == 2
    assert f"{bad}:2: duplicate key 'name'" in result.stderr
