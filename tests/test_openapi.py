"""The OpenAPI document, and machine-checked conformance with Schemathesis."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from openapi_spec_validator import validate
from starlette.testclient import TestClient

from conftest import LiveServer, report_summary
from idv_mock import Service, ServiceConfig, make_submission
from idv_mock.api import openapi
from idv_mock.api.app import API_ROUTES
from idv_mock.backend import events
from idv_mock.backend.monitoring import DEFAULT_WORKLIST
from idv_mock.ground import operations, schemas

SCHEMATHESIS = Path(sys.executable).with_name("schemathesis")
CONFIG = Path(__file__).parents[1] / "schemathesis.toml"
# The three checks whose expectation the spec itself contradicts (docs/conformance.md).
EXCLUDED_CHECKS = "ignored_auth,unsupported_method,positive_data_acceptance"
# Schemathesis starts its stateful scenarios only at calls it judges likely to succeed (POST
# /projection, the token pool) when there are any, and the list of submissions is not one (its
# filters name resources no answer yields): a second, stateful-only pass on this chain starts
# there (docs/conformance.md).
MONITORING_CHAIN = (
    "getSubmission",
    "postSubmissionAmlMonitorWorklistId",
    "getSubmissionAmlMonitorWorklistIdRecordId",
)


@pytest.mark.parametrize("version", ["3.1", "3.0"])
def test_document_is_valid_openapi(version: str) -> None:
    validate(openapi.document(version))


def test_every_operation_of_the_index_is_documented() -> None:
    doc = openapi.document()
    for op in schemas.load("api.json")["operations"]:
        if op["method"] != "*":
            path = op["path"].removeprefix("/v3")
            assert op["method"].lower() in doc["paths"][path], op
    assert doc["components"]["securitySchemes"]["apiKey"]["name"] == "x-api-key"


def test_fields_are_not_copied_but_referenced() -> None:
    doc = openapi.document()
    get = doc["paths"]["/submission"]["get"]
    ok = get["responses"]["200"]["content"]["application/json"]["schema"]
    assert {"$ref": "#/components/schemas/get_submission_response"} in ok["anyOf"]
    item = doc["components"]["schemas"]["get_submission_response"]["properties"]["Items"]
    assert item["items"] == {"$ref": "#/components/schemas/submission_fields"}


def test_error_responses_carry_spec_examples() -> None:
    doc = openapi.document()
    bad = doc["paths"]["/submission"]["patch"]["responses"]["400"]["content"]["application/json"]
    assert bad["example"] == {"errorCode": "missing_api_key", "message": "API-Key is required."}


def test_webhooks_section_has_one_post_per_trigger_with_its_schema() -> None:
    doc = openapi.document()
    validate(doc)  # the webhooks section included
    index = schemas.load("api.json")["webhooks"]
    assert list(doc["webhooks"]) == list(index)
    models = doc["components"]["schemas"]
    for trigger, entry in index.items():
        post = doc["webhooks"][trigger]["post"]
        body = post["requestBody"]["content"]["application/json"]["schema"]
        title = schemas.load(entry["schema"])["title"]
        assert body == {"$ref": f"#/components/schemas/{title}"}
        assert models[title]["properties"]["webhook_trigger"]["const"] == trigger
        assert post["parameters"][0]["schema"] == {"type": "string", "enum": [entry["event"]]}
        assert "200" in post["responses"]
    # relative references inside the webhooks folder resolve to components
    cf = models["ApprovedWebhook"]["properties"]["cf"]
    assert cf == {"$ref": "#/components/schemas/WebhookCommon.cf"}
    created = models["SubmitWebhook"]["properties"]["created_at"]
    assert created == {"$ref": "#/components/schemas/defs.iso_timestamp"}
    assert "webhooks" not in openapi.document("3.0")  # 3.0 has no webhooks


def test_openapi_python_client_generates_the_webhook_models(tmp_path: Path) -> None:
    """Generated clients get a class per payload (issue 24); openapi-python-client is in
    the test extra."""
    tool = Path(sys.executable).with_name("openapi-python-client")
    spec = tmp_path / "openapi.json"
    spec.write_bytes(orjson.dumps(openapi.document()))
    out = tmp_path / "client"
    subprocess.run(
        [str(tool), "generate", "--path", str(spec), "--output-path", str(out)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    names = {p.name for p in out.glob("*/models/*.py")}
    for title in ("approved", "rejected", "submit", "updated", "token_expired", "aml_monitor"):
        assert f"{title}_webhook.py" in names
    # a payload the mock sends goes through the generated model and back unchanged
    sub = make_submission({"kyc": {"result": "approved"}}, seed=3)
    payload = events.approved_event(sub).payload
    (package,) = [p.parent.name for p in out.glob("*/models")]
    check = (
        "import json, sys; from " + package + ".models import ApprovedWebhook; "
        "p = json.loads(sys.stdin.read()); assert ApprovedWebhook.from_dict(p).to_dict() == p"
    )
    done = subprocess.run([sys.executable, "-c", check], cwd=out, input=orjson.dumps(payload),
                          capture_output=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()


def test_3_0_rendering_has_no_3_1_keywords() -> None:
    text = str(openapi.document("3.0")["components"])
    assert "'const'" not in text
    assert "'type': 'null'" not in text


def test_served_document_is_the_generated_one(client: TestClient) -> None:
    assert client.get("/openapi.json").json() == openapi.document()
    assert client.get("/openapi.json", params={"version": "3.0"}).json()["openapi"] == "3.0.3"


@pytest.mark.live
def test_schemathesis_finds_no_failure(tmp_path: Path) -> None:
    """Every operation, positive and negative data, stateful links; all checks but three, and
    the spec's 500 of the monitoring POST (schemathesis.toml); every link followed to a 200."""
    examples = "25" if os.environ.get("CI") else "15"
    with LiveServer(Service(ServiceConfig(seed_count=20))) as server:
        base = f"http://127.0.0.1:{server.port}"
        done = _schemathesis(base, tmp_path / "all", "--max-examples", examples)
    # the chain on a fresh project: the first pass may have deleted the submission the list
    # shows first, and the link then meets "Cannot find submission" (with CI's 25 examples)
    with LiveServer(Service(ServiceConfig(seed_count=20))) as server:
        base = f"http://127.0.0.1:{server.port}"
        chain = [f"--include-operation-id={op}" for op in MONITORING_CHAIN]
        stateful = ("--phases", "stateful", "--mode", "positive", "--max-examples", "15")
        chained = _schemathesis(base, tmp_path / "chain", *stateful, *chain)
        posted = httpx.get(f"{base}/__admin/projects/default/requests", params={"method": "POST"})
    lines = done.stdout.splitlines()
    summary = [ln.strip() for ln in lines if "Tested:" in ln or re.search(r"\d+ generated", ln)]
    followed = _followed_links(tmp_path)
    to_200 = sorted(name for name, statuses in followed.items() if 200 in statuses)
    report_summary(
        "Schemathesis: " + " | ".join(summary) + " | links to a 200: " + ", ".join(to_200)
    )
    for run in (done, chained):
        assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    rows = [op for op in operations.operations() if op.method != operations.ANY]
    assert f"Tested: {len(rows)}" in done.stdout  # every row of the table (21 today)
    # every link of the document was followed, with the values it extracts, to a 200
    assert {name for links in openapi.LINKS.values() for name in links} <= set(to_200), followed
    monitored = [
        (r["status"], r["response"]) for r in posted.json()["requests"]
        if r["path"] == f"/v3/submission/aml/monitor/{DEFAULT_WORKLIST}"
    ]  # fmt: skip
    # the mock saw them too: a record registered; the only 500 is the spec's for a failed batch
    assert any(status == 200 and body["successCount"] >= 1 for status, body in monitored)
    assert all(status != 500 or body["errorCode"] == "all_submissions_failed"
               for status, body in monitored)  # fmt: skip
    # the example worklist id reached the seeded worklist: past its check, into the body's
    assert all(body.get("errorCode") != "invalid_worklist" for _, body in monitored)


def _schemathesis(base: str, report: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """One ``schemathesis run`` with the project's config file, its events kept as NDJSON."""
    report.mkdir()
    cmd = [
        str(SCHEMATHESIS), "--config-file", str(CONFIG), "run", f"{base}/openapi.json",
        "--checks", "all", "--exclude-checks", EXCLUDED_CHECKS,
        "--header", "x-api-key: mock-api-key", "--seed", "20261122", "--no-color",
        "--report", "ndjson", "--report-dir", str(report), *args,
    ]  # fmt: skip
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=report)


def _followed_links(reports: Path) -> dict[str, set[int | None]]:
    """Each link Schemathesis followed with a value it extracted, and the statuses it got:
    from the stateful scenarios its NDJSON events record."""
    followed: dict[str, set[int | None]] = {}
    for path in reports.glob("*/*.ndjson"):
        for line in path.read_bytes().splitlines():
            recorder = orjson.loads(line).get("ScenarioFinished", {}).get("recorder", {})
            for case_id, node in recorder.get("cases", {}).items():
                if not node.get("is_transition_applied"):
                    continue
                # the transition's id: "GET /submission -> [200] MonitorSubmission -> POST ..."
                name = node["transition"]["id"].split(" -> ")[1].split("] ", 1)[1]
                answer = recorder["interactions"].get(case_id, {}).get("response") or {}
                followed.setdefault(name, set()).add(answer.get("status_code"))
    return followed


def test_every_405_names_the_allowed_methods(client: TestClient) -> None:
    """RFC 9110: a 405 carries Allow; monitoring (spec) and the token pool (endpoints.md)
    answer 400 invalid_path for another method, with Allow too."""
    own_400 = ("/v3/submission/aml/monitor", "/v3/submission/tokens")
    for path, (calls, _) in API_ROUTES.items():
        url = path.replace("{worklistId}", DEFAULT_WORKLIST).replace("{recordId}", "r")
        url = url.replace("{projectionId}", "p")
        for method in ("TRACE", "PUT"):
            if method in calls:
                continue
            r = client.request(method, url, headers={"x-api-key": "mock-api-key"})
            expected = 400 if path.startswith(own_400) else 405
            assert r.status_code == expected, (method, path, r.text)
            assert r.headers["allow"] == ", ".join(calls), (method, path)
    r = client.request("TRACE", "/openapi.json")
    assert (r.status_code, r.headers["allow"]) == (405, "GET")


def test_generators_get_typed_enums_and_items() -> None:
    """What code generators need: every array with items, every enum/const typed, no
    allOf of a model next to its own properties, one request content type per call."""
    for version in ("3.1", "3.0"):
        doc = openapi.document(version)
        for where, node in _walk(doc, ""):
            assert node.get("type") != "array" or "items" in node, (version, where)
            if "enum" in node or "const" in node:
                assert "type" in node or "$ref" in node, (version, where)
            refs = [p for p in node.get("allOf", []) if "$ref" in p]
            assert not (refs and "properties" in node), (version, where)
        for path, methods in doc["paths"].items():
            for method, op in methods.items():
                body = op.get("requestBody", {"content": {"application/json": {}}})
                assert len(body["content"]) == 1, (method, path)
    params = openapi.document()["paths"]["/submission/aml/monitor/{worklistId}"]["post"]
    assert params["parameters"][0]["example"] == DEFAULT_WORKLIST


def _walk(node: Any, where: str) -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(node, dict):
        yield where, node
        for key, value in node.items():
            yield from _walk(value, f"{where}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _walk(value, f"{where}/{i}")


@pytest.mark.parametrize("version", ["3.1", "3.0"])
def test_cli_prints_a_valid_document(version: str) -> None:
    cmd = [sys.executable, "-m", "idv_mock.cli", "openapi", "--openapi-version", version]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=True)
    validate(__import__("json").loads(done.stdout))


def test_cli_verify_is_wired() -> None:
    cmd = [sys.executable, "-m", "idv_mock.cli", "verify", "--help"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=True)
    assert "--base-url" in done.stdout


def test_every_request_example_fits_its_schema() -> None:
    index = {(op["method"], op["path"].removeprefix("/v3")): op for op in
             schemas.load("api.json")["operations"] if op["method"] != "*"}  # fmt: skip
    assert openapi.REQUEST_EXAMPLES
    for (method, path), example in openapi.REQUEST_EXAMPLES.items():
        body = openapi.document()["paths"][path][method.lower()]["requestBody"]
        assert body["content"]["application/json"]["example"] == example
        assert any(not schemas.errors(n, example) for n in index[method, path]["body"])


def test_every_json_response_has_an_example_that_fits_its_schema() -> None:
    doc = openapi.document()
    index = {(op["method"].lower(), op["path"].removeprefix("/v3")): op for op in
             schemas.load("api.json")["operations"] if op["method"] != "*"}  # fmt: skip
    for path, methods in doc["paths"].items():
        for method, operation in methods.items():
            for status, response in operation["responses"].items():
                body = response["content"].get("application/json")
                if body is None:
                    continue  # the PDF report
                assert "example" in body, (method, path, status)
                names = index[(method, path)]["responses"][status]
                assert any(not schemas.errors(n, body["example"]) for n in names), (
                    method, path, status, body["example"],
                )  # fmt: skip
