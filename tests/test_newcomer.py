"""What a newcomer tripped on (issue 15): each case as the README states it, checked as a
user would see it: over HTTP, in the command's output, or in a fresh interpreter."""

from __future__ import annotations

import re
import subprocess
import sys
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from conftest import ADMIN, HEADERS, ServeProcess, free_port
from idv_mock import Service, ServiceConfig, create_app
from idv_mock.api import limits
from idv_mock.fake.romanize import romanize

JSON_TYPE = {"content-type": "application/json"}

ROOT = Path(__file__).resolve().parents[1]
FORM = {"content-type": "application/x-www-form-urlencoded"}  # what `curl -d` sends


@pytest.fixture(scope="module")
def server() -> Iterator[ServeProcess]:
    with ServeProcess("--seed-count", "5") as live:
        yield live


# --- 1. a made-up nationality, stored through the control API, reaches invalid_country ---


def test_a_nationality_of_three_letters_is_stored_and_screening_refuses_it(
    server: ServeProcess,
) -> None:
    """The README's two curl calls, as written (``--json`` to the control API, ``-d`` to
    the API: a form content type, which the API takes and the control API refuses)."""
    import httpx

    url = f"{server.base}/__admin/projects/default/submissions"
    text = '{"data": {"nationality": "ZZZ"}}'
    refused = httpx.post(url, content=text, headers=FORM)
    assert (refused.status_code, refused.json()["message"]) == (
        415,
        "The control API takes JSON bodies: send Content-Type: application/json",
    )
    r = httpx.post(url, content=text, headers=JSON_TYPE)
    assert r.status_code == 201, r.text
    sub = r.json()
    assert sub["data"]["nationality"] == "ZZZ"
    # the fields whose schema takes only real codes get a real one
    assert sub["data"]["idcard_issuingCountry"] == "USA"
    assert sub["pre_verification"]["country_code"] == "USA"
    body = f'{{"submissionId": "{sub["submission_id"]}", "amlThreshold": 80}}'
    r = httpx.post(f"{server.base}/v3/submission/aml", content=body, headers={**HEADERS, **FORM})
    assert (r.status_code, r.json()) == (
        400,
        {"errorCode": "invalid_country", "message": "The nationality is invalid: ZZZ"},
    )


def test_a_real_nationality_still_sets_the_issuing_country(client: TestClient) -> None:
    r = client.post("/__admin/projects/default/submissions", json={"data": {"nationality": "CHE"}})
    assert r.status_code == 201
    assert r.json()["data"]["idcard_issuingCountry"] == "CHE"
    assert r.json()["pre_verification"]["country_code"] == "CHE"


# --- 3. monitoring's fault-only errors: the POST only, as the README says ---

MONITOR = "/v3/submission/aml/monitor"


def test_monitoring_fault_errors_are_the_posts_only(client: TestClient) -> None:
    faults = "/__admin/projects/default/faults"
    for method, name in (("GET", "processing_failed"), ("DELETE", "internal_server_error")):
        rule = {"match": {"method": method, "path": f"{MONITOR}/*"}, "error": name}
        r = client.post(faults, json=rule)
        template = (
            f"{MONITOR}/{{worklistId}}/{{recordId}}"
            if method == "GET"
            else f"{MONITOR}/{{worklistId}}"
        )
        assert (r.status_code, r.json()) == (
            400,
            {
                "message": "invalid fault rule",
                "errors": [f"{method} {template} has no error {name!r}"],
            },
        )
    r = client.post(faults, json={"match": {"path": f"{MONITOR}/*"}, "error": "processing_failed"})
    assert r.status_code == 201
    worklist = {"id": "wl", "name": "W"}
    assert client.post("/__admin/projects/default/worklists", json=worklist).status_code == 201
    posted = client.post(f"{MONITOR}/wl", json={"submissionIds": ["x"], "admin": ADMIN})
    assert (posted.status_code, posted.json()) == (
        500,
        {"errorCode": "processing_failed", "errorMessage": "Processing failed"},
    )
    assert "x-idv-mock-fault" in posted.headers
    read = client.get(f"{MONITOR}/wl/r1")
    deleted = client.request("DELETE", f"{MONITOR}/wl", json={"admin": ADMIN, "recordIds": ["r1"]})
    for answer in (read, deleted):  # answered normally: the rule does not apply to them
        assert answer.status_code == 400 and "x-idv-mock-fault" not in answer.headers
        assert answer.json()["errorCode"] == "invalid_record"
    assert client.get(faults).json()["faults"][0]["hits"] == 1


# --- 4. one shape for every control-API error ---


def _shape(body: dict[str, Any]) -> None:
    assert set(body) - {"errorCode"} == {"message", "errors"}, body
    assert isinstance(body["message"], str) and isinstance(body["errors"], list)


def test_every_control_api_error_has_message_and_errors(raw_client: TestClient) -> None:
    c = raw_client
    answers = {
        "unknown project": c.get("/__admin/projects/nope"),
        "unknown submission": c.get("/__admin/projects/default/submissions/nope"),
        "unknown path": c.get("/__admin/nothing-here"),
        "wrong method": c.put("/__admin/reset"),
        "id taken": c.post("/__admin/projects", json={"project_id": "default", "api_key": "k"}),
        "not JSON": c.post(
            "/__admin/projects", content=b"{nope", headers={"content-type": "application/json"}
        ),
        "not an object": c.post("/__admin/projects", json=[1]),
        "schema": c.post("/__admin/projects/default/submissions", json={"kyc": {"result": 7}}),
        "fault rule": c.post("/__admin/projects/default/faults", json={"match": {}}),
        "hosted form": c.post(
            "/__admin/projects/default/hosted-submissions", json={"token": "x", "bad": 1}
        ),
    }
    expected = {
        "unknown project": 404,
        "unknown submission": 404,
        "unknown path": 404,
        "wrong method": 405,
        "id taken": 409,
    }
    for what, r in answers.items():
        assert r.status_code == expected.get(what, 400), (what, r.text)
        _shape(r.json())
    assert answers["unknown path"].json() == {"message": "Not Found", "errors": []}
    assert answers["wrong method"].json() == {"message": "Method Not Allowed", "errors": []}
    assert answers["wrong method"].headers["allow"] == "POST"
    assert answers["id taken"].json()["errors"] == []
    assert answers["schema"].json()["errors"]  # the problems are listed
    assert answers["fault rule"].json()["errors"]


def test_the_hosted_forms_own_refusal_keeps_its_code(raw_client: TestClient) -> None:
    r = raw_client.post("/__admin/projects/default/hosted-submissions", json={"token": "garbage"})
    assert r.status_code == 400
    _shape(r.json())
    assert r.json()["errors"] == [] and r.json()["errorCode"] == "PV-40001"


def test_size_and_header_limits_answer_the_shape_under_admin_only(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    raw_client = TestClient(create_app(service))  # a 431 of /v3 is in no api.json entry
    monkeypatch.setattr(limits, "MAX_STATE_BODY", 1024)
    r = raw_client.put("/__admin/state", content=b"{" + b" " * 2000 + b"}")
    assert (r.status_code, r.json()) == (
        413,
        {"message": "Request body too large (limit 1 KiB)", "errors": []},
    )
    big = {"x-padding": "a" * (limits.MAX_HEADER_BYTES + 10)}
    admin = raw_client.get("/__admin/projects", headers=big)
    api = raw_client.get("/v3/submission", headers={**HEADERS, **big})
    message = "Request header fields too large (limit 16 KiB)"
    assert (admin.status_code, admin.json()) == (431, {"message": message, "errors": []})
    assert (api.status_code, api.json()) == (431, {"message": message})


def test_v3_error_bodies_are_unchanged(client: TestClient, service: Service) -> None:
    assert client.get("/v3/nothing").json() == {"message": "Not Found"}
    assert client.put("/v3/submission").json() == {"message": "Method Not Allowed"}
    assert client.put("/v3/projection").json() == {
        "message": "Method not allowed for /projections path"
    }
    plain = TestClient(create_app(service))  # not an operation of api.json: no schema check
    assert plain.get("/openapi.json", params={"version": "2"}).json() == {
        "message": "version must be 3.0 or 3.1"
    }


def test_an_exposed_servers_refusal_has_the_shape() -> None:
    app = create_app(Service(ServiceConfig(seed_count=1)), exposed=True, admin_token="t")
    r = TestClient(app).get("/__admin/projects")
    assert r.status_code == 403
    _shape(r.json())
    assert r.json()["errors"] == []


# --- 5. the 405s of the projection paths are the spec's own texts ---


def test_the_docs_state_both_405_bodies() -> None:
    readme = (ROOT / "docs" / "gaps.md").read_text()
    assert '405 `{"message": "Method Not Allowed"}`' in readme
    assert "Method not allowed for /projections path" in readme
    assert "Method not allowed for /projections/projectionId path" in readme


# --- 6. the strategies' extra ---


def test_strategies_without_hypothesis_name_the_extra() -> None:
    code = "import sys; sys.modules['hypothesis'] = None; import idv_mock.strategies"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ModuleNotFoundError: idv_mock.strategies needs Hypothesis")
    assert "pip install 'idv-mock[strategies]'" in last


def test_the_extra_is_declared_and_documented() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert any(d.startswith("hypothesis") for d in project["optional-dependencies"]["strategies"])
    assert "pip install 'idv-mock[strategies]'" in (ROOT / "docs" / "pytest.md").read_text()
    assert project["optional-dependencies"]["pytest"] == ["pytest>=7.0"]  # the plugin's floor
    assert "pip install 'path/to/idv-mock[pytest]'" in (ROOT / "README.md").read_text()


# --- friction: the banner, fault rules, full_name_en ---


def test_a_refused_state_file_prints_its_error_and_no_banner(tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    state.write_text('{"not": "an idv-mock state"}')
    cmd = [sys.executable, "-m", "idv_mock.cli", "serve", "--port", str(free_port())]
    done = subprocess.run(
        [*cmd, "--state-file", str(state)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert done.stdout == ""  # no "idv-mock serving ..." before the refusal
    assert done.stderr.startswith("idv-mock serve: ")


def test_the_banner_says_secure_transfer_is_on() -> None:
    with ServeProcess("--seed-count", "1", "--secure-transfer") as live:
        pass
    assert "Secure Data Transfer: on for the default project" in live.output
    with ServeProcess("--seed-count", "1") as plain:
        pass
    assert "Secure Data Transfer" not in plain.output


def test_the_banner_lists_a_scenarios_projects_and_keys() -> None:
    with ServeProcess("--seed-count", "1", "--scenario", "admin-edit") as live:
        pass
    line = next(x for x in live.output.splitlines() if "projects (id: api key)" in x)
    assert "default: mock-api-key" in line and "acme: acme-key" in line


def test_a_rule_with_respond_and_fault_is_refused_plainly(client: TestClient) -> None:
    rule = {
        "match": {"path": "/v3/submission"},
        "respond": {"status": 503, "body": {}},
        "fault": "connection_reset",
    }
    r = client.post("/__admin/projects/default/faults", json=rule)
    assert (r.status_code, r.json()) == (
        400,
        {
            "message": "invalid fault rule",
            "errors": ["a rule takes one of respond, error, fault, not respond and fault"],
        },
    )


def test_seeded_english_names_are_the_same_persons() -> None:
    client = TestClient(create_app(Service(ServiceConfig(seed_count=50))), headers=HEADERS)
    items = client.get("/v3/submission", params={"count": "50"}).json()["Items"]
    pairs = {(i["data"]["full_name"], i["data"]["full_name_en"]) for i in items}
    assert ("손 예준", "Son Yejun") in pairs
    assert ("田中 七夏", "Tanaka Nanami") in pairs
    for item in items:
        name, latin = item["data"]["full_name"], item["data"]["full_name_en"]
        if re.fullmatch(r"[\w .'-]+", name) and all(c.isascii() for c in name):
            assert latin == name
        assert len(latin.split()) == len(name.split()), (name, latin)
        letters = [c for c in latin if c.isalpha()]
        assert all("LATIN" in unicodedata.name(c) for c in letters), latin
        local = "".join(c for c in latin.lower().replace(" ", ".") if c.isalnum() or c == ".")
        if latin.isascii():  # the e-mail is made from the same name
            assert item["email"].startswith(local) or item["email"] in _shared_emails(items)
    assert not {"Scott Anderson"} & {latin for _, latin in pairs}


def _shared_emails(items: list[dict[str, Any]]) -> set[str]:
    """E-mails the seed gives to several people on purpose ("people sharing an e-mail")."""
    seen: dict[str, set[str]] = {}
    for item in items:
        seen.setdefault(item["email"], set()).add(item["data"]["full_name"])
    return {email for email, names in seen.items() if len(names) > 1}


@pytest.mark.parametrize(
    ("name", "family_first", "latin"),
    [
        ("김 민준", True, "Kim Minjun"),
        ("木村 京助", True, "Kimura Kyosuke"),
        ("きょうこ", False, "Kyouko"),
        ("Nguyễn Văn An", True, "Nguyễn Văn An"),
        ("Иван Петров", False, "Ivan Petrov"),
        ("Γιώργος Παπαδόπουλος", False, "Giorgos Papadopoulos"),
        ("王 伟", True, "Wang Wei"),
    ],
)
def test_romanisation(name: str, family_first: bool, latin: str) -> None:
    assert romanize(name, family_first=family_first) == latin
