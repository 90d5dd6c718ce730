"""The contract coverage report (issue 36): ``pytest --idv-coverage`` over a small sample
suite (tests/coverage_apps/sample_suite.py), item by item in the JSON and the HTML, and
``idv-mock coverage`` against a live mock (``--url``, ``--fail-under``) and a suite."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from conftest import LiveServer
from idv_mock import Service, ServiceConfig
from idv_mock.coverage import report

ROOT = Path(__file__).resolve().parents[1]
SUITE = "tests/coverage_apps/sample_suite.py"
MET = {
    "GET /v3/submission 200": 1,
    "GET /v3/submission 400 invalid_parameter": 1,
    "GET /v3/projection/{projectionId} 404 not_found": 1,  # on the test's own service
    "webhook approved": 1,
}
QUIET = ["-p", "no:randomly", "-p", "no:cacheprovider", "-q"]


def run_pytest(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", *args, *QUIET],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], str, str]:
    out = tmp_path_factory.mktemp("coverage")
    done = run_pytest(SUITE, f"--idv-coverage={out}")
    assert done.returncode == 0, done.stdout + done.stderr
    doc = json.loads((out / "coverage.json").read_text())
    return doc, (out / "coverage.html").read_text(), done.stdout


def test_the_json_names_what_the_suite_met_and_never_met(sample: Any) -> None:
    doc, _, _ = sample
    met = {i["id"]: i["count"] for i in doc["items"] if i["count"]}
    assert met == MET
    assert doc["met"] == len(MET)
    never = [i["id"] for i in doc["items"] if not i["count"]]
    assert sorted(doc["never"]) == sorted(never) and doc["catalogue"] == len(never) + len(MET)
    (approved,) = [i for i in doc["items"] if i["id"] == "webhook approved"]
    assert approved["receiver"] == {"5xx": 1, "2xx": 1}  # the app's 500, then the retry
    assert doc["never"][:3] == ["webhook created", "webhook retry", "webhook submit"]
    assert "GET /v3/submission 400 invalid_format" in doc["never"]
    assert doc["never"][-1].startswith("page /error-page/")


def rows(page: str) -> dict[str, tuple[str, str]]:
    """Item id -> (its state cell, its last cell) in the HTML."""
    found = re.findall(
        r'<tr class="(met|never)" data-testid="item"><td><code>([^<]*)</code></td>'
        r'<td>[^<]*</td><td class="state">([^<]*)</td><td>(.*?)</td></tr>',
        page,
    )
    return {item.replace("&#x27;", "'"): (state, last) for _, item, state, last in found}


def test_the_html_shows_every_item_by_area_with_how_to_cause_it(sample: Any) -> None:
    doc, page, _ = sample
    shown = rows(page)
    assert len(shown) == doc["catalogue"]
    for item in doc["items"]:
        state, last = shown[item["id"]]
        if item["count"]:
            assert state == f"met: {item['count']}"
        else:
            assert state == "never"
            assert "how to cause" not in last and last.startswith('<span class="how">')
    assert shown["webhook approved"][1] == "2xx: 1, 5xx: 1"
    assert "idv-mock trigger rejected" in shown["webhook rejected"][1]
    assert "idv_webhook_delivery(duplicate=...)" in shown["delivery duplicate"][1]
    assert "/clock/advance" in shown["time token_expiry"][1]
    fault = shown["GET /v3/submission 500 processing_error"][1]
    assert "POST /__admin/projects/{project}/faults" in fault and "processing_error" in fault
    for area in report.by_area(doc):
        assert f'data-testid="table-{area}"' in page
    assert "<script" not in page and "http://" not in page and "https://" not in page
    assert 'data-testid="resilience-link"' not in page  # no resilience run beside it


def test_the_terminal_summary(sample: Any) -> None:
    doc, _, stdout = sample
    assert f"idv-mock contract coverage: 4/{doc['catalogue']}" in stdout
    assert "  submission   2/" in stdout and "  webhooks     1/12" in stdout
    assert "never met (first 10 of" in stdout
    assert "  webhook created  (idv-mock trigger created)" in stdout


def test_xdist_workers_are_combined(tmp_path: Path) -> None:
    done = run_pytest(SUITE, f"--idv-coverage={tmp_path}", "-n", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    doc = json.loads((tmp_path / "coverage.json").read_text())
    assert {i["id"]: i["count"] for i in doc["items"] if i["count"]} == MET


def test_a_test_path_after_the_bare_flag_is_refused() -> None:
    done = run_pytest("--idv-coverage", "tests/coverage_apps")
    assert done.returncode == 4
    assert "--idv-coverage took tests/coverage_apps as the report's directory" in done.stderr


# --- idv-mock coverage --url, against a live mock ---
@pytest.fixture
def live_url() -> Iterator[tuple[str, Service]]:
    service = Service(ServiceConfig(seed_count=2))
    with LiveServer(service) as server:
        yield f"http://127.0.0.1:{server.port}", service
    service.close()


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "idv_mock.cli", "coverage", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def test_cli_url_fail_under_and_files(live_url: tuple[str, Service], tmp_path: Path) -> None:
    url, service = live_url
    headers = {"x-api-key": "mock-api-key"}
    assert httpx.get(f"{url}/v3/submission", headers=headers).status_code == 200
    doc = service.coverage.report()
    share = 100 * doc["met"] / doc["catalogue"]
    out_json, out_html = tmp_path / "c.json", tmp_path / "c.html"
    done = cli("--url", url, "--json", str(out_json), "--html", str(out_html))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"idv-mock contract coverage: 1/{doc['catalogue']}")
    assert json.loads(out_json.read_text())["met"] == 1
    assert rows(out_html.read_text())["GET /v3/submission 200"][0] == "met: 1"
    below = cli("--url", url, "--fail-under", f"{share + 0.01:.2f}")
    assert below.returncode == 1
    assert f"{share:.1f}% is below --fail-under" in below.stdout
    assert cli("--url", url, "--fail-under", f"{share - 0.01:.2f}").returncode == 0
    assert cli("--url", url + "/v3", "--project", "default").returncode == 0
    unknown = cli("--url", url, "--project", "nobody")
    assert unknown.returncode == 2 and "answered 404" in unknown.stderr
    assert cli().returncode == 2  # neither --url nor a suite


def test_curl_client_reads_the_report(live_url: tuple[str, Service]) -> None:
    """A client in another language (curl here) reads the same control call."""
    curl = shutil.which("curl")
    if curl is None:
        pytest.skip("curl is not installed")
    url, _ = live_url
    api = [curl, "-s", "-H", "x-api-key: mock-api-key"]
    subprocess.run([*api, f"{url}/v3/submission?foo=1"], check=True, capture_output=True)
    got = subprocess.run(
        [curl, "-s", f"{url}/__admin/coverage?project=default"],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    doc = json.loads(got.stdout)
    assert doc["met"] == 1
    assert [i["id"] for i in doc["items"] if i["count"]] == [
        "GET /v3/submission 400 invalid_parameter"
    ]
    gate = cli("--url", url, "--fail-under", "50")
    assert gate.returncode == 1


def test_cli_runs_a_suite_on_its_own_mock(tmp_path: Path) -> None:
    out = tmp_path / "report"
    done = cli("--dir", str(out), "--fail-under", "100", "--", "pytest", SUITE, *QUIET)
    assert done.returncode == 1, done.stdout + done.stderr  # 4 items of the catalogue
    assert "is below --fail-under 100%" in done.stdout
    doc = json.loads((out / "coverage.json").read_text())
    assert {i["id"]: i["count"] for i in doc["items"] if i["count"]} == MET
    assert cli("--dir", str(out), "--", "pytest", SUITE, *QUIET).returncode == 0
    assert os.path.isfile(out / "coverage.html")
