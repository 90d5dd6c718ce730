"""A typed Python client generated from our OpenAPI document parses the live mock's answers.

openapi-python-client (the test extra) generates a package from the 3.1 document and from
the 3.0 rendering; the generation must print no warning (with ruff on PATH, as
docs/conformance.md says; without it, only ruff's absence), the package must import, and its
call of every /v3 operation, through a client made as docs/conformance.md's recipe makes it
(``AuthenticatedClient(..., prefix="", auth_header_name="x-api-key")``), must come back as
the model the document promises (not ``None``, not the other member of a union) on a live
server.
"""

from __future__ import annotations

import ast
import base64
import importlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from starlette.testclient import TestClient

from conftest import LiveServer
from idv_mock import Service, ServiceConfig
from idv_mock.api import openapi
from idv_mock.backend import images
from idv_mock.backend.monitoring import DEFAULT_WORKLIST

GENERATOR = Path(sys.executable).with_name("openapi-python-client")
ADMIN = "admin@example.com"
pytestmark = pytest.mark.skipif(
    not GENERATOR.exists(),
    reason="openapi-python-client is not installed (pip install -e '.[test]')",
)


ROOT = Path(__file__).resolve().parents[1]
# docs/conformance.md's recipe: the Python block that makes the generated AuthenticatedClient
RECIPE = next(
    code
    for code in re.findall(
        r"^```py\n(.*?)^```$", (ROOT / "docs" / "conformance.md").read_text(), re.M | re.S
    )
    if "AuthenticatedClient(" in code
)


def _generate(version: str, workdir: Path, path: str | None = None) -> tuple[str, str]:
    """Generate package ``idv_client_<v>`` under ``workdir``; the generator's output.
    ``path``: the PATH it runs with (default: the test's environment's bin first)."""
    name = "idv_client_" + version.replace(".", "")
    spec = workdir / f"openapi-{version}.json"
    spec.write_text(json.dumps(openapi.document(version)))
    if path is None:
        path = f"{GENERATOR.parent}{os.pathsep}{os.environ['PATH']}"
    env = {**os.environ, "PATH": path}
    cmd = [str(GENERATOR), "generate", "--path", str(spec), "--output-path",
           str(workdir / name), "--meta", "none"]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    return name, done.stdout + done.stderr


@pytest.fixture(scope="module", params=["3.1", "3.0"])
def generated(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, str]]:
    workdir = tmp_path_factory.mktemp("client")
    name, output = _generate(request.param, workdir)
    sys.path.insert(0, str(workdir))
    try:
        yield name, output
    finally:
        sys.path.remove(str(workdir))
        for module in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            del sys.modules[module]
        shutil.rmtree(workdir, ignore_errors=True)


def test_generation_prints_no_warning(generated: tuple[str, str]) -> None:
    _, output = generated
    assert "warning" not in output.lower(), output
    assert "Unable to" not in output and "Cannot" not in output, output


def test_without_ruff_the_only_warning_is_ruffs_absence(tmp_path: Path) -> None:
    """What docs/conformance.md says of a PATH without ruff: the client is written, and the
    warnings are the post-generation hooks' "ruff is not in PATH", nothing else."""
    bare = os.pathsep.join(
        d for d in os.environ["PATH"].split(os.pathsep)
        if d and not (Path(d) / "ruff").exists() and Path(d) != GENERATOR.parent
    )  # fmt: skip
    name, output = _generate("3.1", tmp_path, path=bare)
    assert (tmp_path / name / "client.py").is_file()
    assert "Warning(s) encountered while generating" in output, output
    reasons = {line.strip() for line in output.splitlines() if "PATH" in line}
    assert reasons == {"ruff is not in PATH"}, output
    assert "Unable to" not in output and "Cannot" not in output, output


class Api:
    """The generated package's call modules and models, by short names."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.models = importlib.import_module(f"{name}.models")

    def call(self, module: str) -> ModuleType:
        return importlib.import_module(f"{self.name}.api.{module}")


def _ok(response: Any, model: type) -> Any:
    assert response.status_code == 200, response.content
    assert isinstance(response.parsed, model), (type(response.parsed), response.content)
    return response.parsed


def test_every_operation_parses_into_its_model(generated: tuple[str, str]) -> None:
    api = Api(generated[0])
    with LiveServer(Service(ServiceConfig(seed_count=12))) as server:
        client, listed = _recipe_client(api, server.base_url)
        assert len(_ok_parsed(listed, api.models.GetSubmissionResponse).items) == 12
        with client:
            _check_submissions(api, client, server.service)
            _check_tokens(api, client)
            _check_review_and_images(api, client, server.service)
            _check_migration(api, client)


def _recipe_client(api: Api, base_url: str) -> tuple[Any, Any]:
    """docs/conformance.md's recipe run as written, for this package and this server: what
    it read, and a new client made by its own ``AuthenticatedClient(...)`` call."""
    code = RECIPE.replace("idv_client", api.name).replace("http://127.0.0.1:8080/v3", base_url)
    namespace: dict[str, Any] = {}
    exec(compile(code, "docs/conformance.md", "exec"), namespace)
    call = next(
        node
        for node in ast.walk(ast.parse(code))
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "AuthenticatedClient"
    )
    client = eval(ast.get_source_segment(code, call) or "", namespace)
    return client, namespace["listed"]


def _ok_parsed(parsed: Any, model: type) -> Any:
    assert isinstance(parsed, model), parsed
    return parsed


def _check_submissions(api: Api, client: Any, service: Service) -> None:
    m = api.models
    listed = _ok(
        api.call("submission.get_submission").sync_detailed(client=client),
        m.GetSubmissionResponse,
    )
    assert len(listed.items) == 12
    first = listed.items[0]
    assert isinstance(first, m.SubmissionFields)
    assert first.submission_id and first.kyc.result in ("approved", "rejected", "pending")
    sid = first.submission_id
    one = api.call("submission.get_submission").sync_detailed(client=client, submission_id=sid)
    assert _ok(one, m.GetSubmissionResponse).items[0].submission_id == sid

    edit = m.PatchSubmissionRequest.from_dict(
        {"submissionId": sid, "admin": ADMIN, "data": {"memo": "typed"}}
    )
    patched = api.call("submission.patch_submission").sync_detailed(client=client, body=edit)
    assert _ok(patched, m.PatchSubmissionResponse).message == "success to edit."

    screened = api.call("aml.post_submission_aml").sync_detailed(
        client=client, body=m.AmlRequest(submission_id=sid, aml_threshold=80)
    )
    assert _ok(screened, m.AmlResult).message == "complete to search AML."
    _check_report(api, client, service)

    approved = next(s.submission_id for s in listed.items if s.kyc.result == "approved")
    _check_monitoring(api, client, approved)
    _check_projection(api, client)

    partial = api.call("submission.delete_submission_partial").sync_detailed(
        client=client, submission_id=sid, fields="email"
    )
    assert _ok(partial, m.DeleteSuccess).message == "success"
    deleted = api.call("submission.delete_submission").sync_detailed(
        client=client, submission_id=sid
    )
    assert sid in _ok(deleted, m.DeleteSuccess).content


def _check_report(api: Api, client: Any, service: Service) -> None:
    """A listed person screened (Red Flag), then the match's report as a PDF."""
    m = api.models
    listed = service.screening.watchlist_submission("default", "WL-0001")
    screened = api.call("aml.post_submission_aml").sync_detailed(
        client=client, body=m.AmlRequest(submission_id=listed["submission_id"], aml_threshold=80)
    )
    assert _ok(screened, m.AmlResult).result == "Red Flag"
    got = api.call("submission.get_submission").sync_detailed(
        client=client, submission_id=listed["submission_id"]
    )
    match = _ok(got, m.GetSubmissionResponse).items[0].aml.matches[0]
    report = api.call("aml.get_report_aml").sync_detailed(
        client=client, resource_id=match.resource_id
    )
    assert report.status_code == 200, report.content
    assert report.parsed.payload.read().startswith(b"%PDF")


def _check_monitoring(api: Api, client: Any, sid: str) -> None:
    m = api.models
    body = m.MonitorRequest(submission_ids=[sid], admin=ADMIN)
    added = api.call("monitoring.post_submission_aml_monitor_worklist_id").sync_detailed(
        DEFAULT_WORKLIST, client=client, body=body
    )
    added_body = _ok(added, m.MonitorResponse)
    record_id = added_body.success_results[0].record_ids[0]
    record = api.call("monitoring.get_submission_aml_monitor_worklist_id_record_id")
    got = record.sync_detailed(DEFAULT_WORKLIST, record_id, client=client)
    assert _ok(got, m.MonitoringRecord).submission_id == sid
    gone = api.call("monitoring.delete_submission_aml_monitor_worklist_id").sync_detailed(
        DEFAULT_WORKLIST,
        client=client,
        body=m.MonitorDeleteRequest(admin=ADMIN, record_ids=[record_id]),
    )
    assert _ok(gone, m.MonitorDeleteResponse).message == "records deleted successfully"


def _check_projection(api: Api, client: Any) -> None:
    m = api.models
    policy = m.ProjectionRequest.from_dict(
        {"name": "typed", "mode": "exclude", "fields": ["date_of_birth"]}
    )
    made = api.call("projection.post_projection").sync_detailed(client=client, body=policy)
    pid = _ok(made, m.ProjectionCreateResponse).projection_id
    listed = api.call("projection.get_projection").sync_detailed(client=client)
    assert [p.projection_id for p in _ok(listed, m.ProjectionListResponse).items] == [pid]
    one = api.call("projection.get_projection_projection_id").sync_detailed(pid, client=client)
    assert _ok(one, m.ProjectionGetResponse).item.fields == ["date_of_birth"]
    gone = api.call("projection.delete_projection_projection_id").sync_detailed(pid, client=client)
    assert _ok(gone, m.ProjectionDeleteResponse).message == "Delete projection success"


def _check_tokens(api: Api, client: Any) -> None:
    """The token pool (endpoints.md 1-3): each GET form parses into its own member."""
    m, call = api.models, api.call("tokens.get_submission_tokens").sync_detailed
    count = getattr(m, "GetSubmissionTokensType", str)("count")  # 3.0: an enum; 3.1: a Literal
    body = m.TokenRequest(token_id=["user001a", "user002b"])
    added = api.call("tokens.post_submission_tokens").sync_detailed(client=client, body=body)
    assert _ok(added, m.TokenRegisterResponse).summary.processed == 2
    one = _ok(call(client=client, token_id="user001a"), m.TokenGetResponseType0)
    assert (one.data.token_id, one.data.status, one.data.expired) == (
        "user001a",
        "registered",
        False,
    )
    page = _ok(call(client=client), m.TokenGetResponseType1)
    assert sorted(t.token_id for t in page.data) == ["user001a", "user002b"]
    assert _ok(call(client=client, type_=count), m.TokenGetResponseType2).count == 2
    gone = api.call("tokens.delete_submission_tokens").sync_detailed(
        client=client, body=m.TokenDeleteRequestType0(token_id=["user001a"])
    )
    assert _ok(gone, m.TokenDeleteResponse).summary.deleted == 1
    assert _ok(call(client=client, type_=count), m.TokenGetResponseType2).count == 1


def _check_review_and_images(api: Api, client: Any, service: Service) -> None:
    """A pending submission approved by the client; an image put as multipart, read back."""
    m = api.models
    sid = service.create_submission("default", {"kyc": {"result": "pending"}})["submission_id"]
    decision = m.ReviewRequest.from_dict(
        {"admin": ADMIN, "submissionId": sid, "status": "approved"}
    )
    reviewed = api.call("review.post_submission_review").sync_detailed(client=client, body=decision)
    assert _ok(reviewed, m.ReviewResponse).final_status == "approved"
    selfie = images.sample("another-id", "selfieImage")
    put = m.PutImageRequest.from_dict(
        {"submissionId": sid, "admin": ADMIN, "selfieImage": base64.b64encode(selfie).decode()}
    )
    done = api.call("images.put_submission_image").sync_detailed(client=client, body=put)
    assert _ok(done, m.PutImageResponse).message == "complete to update image."
    got = api.call("images.get_image").sync_detailed(
        client=client, submission_id=sid, type_=m.GetImageType("selfieImage")
    )
    assert got.status_code == 200, got.content
    assert got.parsed.payload.read() == selfie


def _check_migration(api: Api, client: Any) -> None:
    m = api.models
    legacy = m.MigrationRequest.from_dict({"admin": ADMIN, "email": "jane@example.com",
        "fullName": "Jane Roe", "birthDate": "1990-02-03", "kycStatus": "approved"})  # fmt: skip
    moved = api.call("migration.post_submission_migration").sync_detailed(
        client=client, body=legacy
    )
    sid = _ok(moved, m.MigrationResponse).submission_id
    got = api.call("submission.get_submission").sync_detailed(client=client, submission_id=sid)
    item = _ok(got, m.GetSubmissionResponse).items[0]
    assert (item.email, item.kyc.result) == ("jane@example.com", "approved")


CODEGEN = Path(sys.executable).with_name("datamodel-codegen")
SCHEMAS = Path(__file__).resolve().parents[1] / "schemas"


@pytest.mark.skipif(not CODEGEN.exists(), reason="datamodel-code-generator is not installed")
def test_pydantic_models_from_the_schemas(tmp_path: Path, client: TestClient) -> None:
    """datamodel-code-generator reads schemas/ as it is: one module per file, each top-level
    class named by the file's title, and the models validate real answers."""
    cmd = [str(CODEGEN), "--input", str(SCHEMAS), "--input-file-type", "jsonschema",
           "--output", str(tmp_path / "idv_models"), "--output-model-type",
           "pydantic_v2.BaseModel", "--formatters", "ruff-format"]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    sys.path.insert(0, str(tmp_path))
    try:
        for schema in SCHEMAS.glob("*.json"):
            title = json.loads(schema.read_text())["title"]
            assert title.isidentifier() and title[0].isupper(), (schema.name, title)
        listing = importlib.import_module("idv_models.get_submission_response")
        page = listing.GetSubmissionResponse.model_validate(client.get("/v3/submission").json())
        assert len(page.Items) == 30 and page.Items[0].submission_id
        record = importlib.import_module("idv_models.rate_limited")
        assert record.RateLimited.__name__ == "RateLimited"
    finally:
        sys.path.remove(str(tmp_path))
        for module in [m for m in sys.modules if m.split(".")[0] == "idv_models"]:
            del sys.modules[module]
