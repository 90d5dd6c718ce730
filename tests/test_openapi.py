"""The OpenAPI document, and machine-checked conformance with Schemathesis."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from openapi_spec_validator import validate
from starlette.testclient import TestClient

from conftest import LiveServer, report_summary
from idv_mock import Service, ServiceConfig, openapi, schemas

SCHEMATHESIS = Path(sys.executable).with_name("schemathesis")
# The three checks whose expectation the spec itself contradicts (README, "Conformance").
EXCLUDED_CHECKS = "ignored_auth,unsupported_method,positive_data_acceptance"


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


def test_3_0_rendering_has_no_3_1_keywords() -> None:
    text = str(openapi.document("3.0")["components"])
    assert "'const'" not in text
    assert "'type': 'null'" not in text


def test_served_document_is_the_generated_one(client: TestClient) -> None:
    assert client.get("/openapi.json").json() == openapi.document()
    assert client.get("/openapi.json", params={"version": "3.0"}).json()["openapi"] == "3.0.3"


@pytest.mark.live
def test_schemathesis_finds_no_failure(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Every operation, positive and negative data, stateful links; all checks but three."""
    examples = "25" if os.environ.get("CI") else "15"
    # a call without x-api-key is refused with the spec's 400; older Schemathesis (4.1, the
    # lowest-direct cell of make test-compat) expects only 406 by default, newer ones this list
    (tmp_path / "schemathesis.toml").write_text(
        '[checks.missing_required_header]\nexpected-statuses = ["400", "401", "403", "406", '
        '"415", "422"]\n'
    )
    with LiveServer(Service(ServiceConfig(seed_count=20))) as server:
        base = f"http://127.0.0.1:{server.port}"
        cmd = [
            str(SCHEMATHESIS), "run", f"{base}/openapi.json",
            "--checks", "all", "--exclude-checks", EXCLUDED_CHECKS,
            "--header", "x-api-key: mock-api-key",
            "--max-examples", examples, "--seed", "20261122", "--no-color",
        ]  # fmt: skip
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    lines = done.stdout.splitlines()
    summary = [ln.strip() for ln in lines if "Tested:" in ln or re.search(r"\d+ generated", ln)]
    report_summary("Schemathesis: " + " | ".join(summary))
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert "Tested: 13" in done.stdout


@pytest.mark.parametrize("version", ["3.1", "3.0"])
def test_cli_prints_a_valid_document(version: str) -> None:
    cmd = [sys.executable, "-m", "idv_mock.cli", "openapi", "--openapi-version", version]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=True)
    validate(__import__("json").loads(done.stdout))


def test_cli_verify_is_wired() -> None:
    cmd = [sys.executable, "-m", "idv_mock.cli", "verify", "--help"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=True)
    assert "--base-url" in done.stdout


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
