"""The operation table (``schemas/api.json`` read by ``idv_mock.ground.operations``) is the one
list of the ``/v3`` operations: the routes, the OpenAPI document, the verify probes and
the hints' paths are built from it, and no module of ``src/`` lists a path again."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import httpx
import pytest

from idv_mock.api import app as app_module
from idv_mock.api import hints, openapi
from idv_mock.backend import Service, ServiceConfig
from idv_mock.ground import errors, operations, schemas
from idv_mock.tools import verify
from idv_mock.transport import ASGITransport

SRC = Path(__file__).resolve().parents[1] / "src" / "idv_mock"
INDEX = schemas.load("api.json")
# from the schema document itself, not from the module under test
TABLE = {(op["method"], op["path"]) for op in INDEX["operations"] if op["method"] != "*"}
OTHER_METHODS = {
    op["path"]: op["x-idv-handler"] for op in INDEX["operations"] if op["method"] == "*"
}
PATHS = {path for _, path in TABLE} | set(OTHER_METHODS)
SHORT_PATHS = {p.removeprefix("/v3") for p in PATHS}


def test_the_app_serves_the_table_and_nothing_else() -> None:
    served = {(m, p) for p, (calls, _) in app_module.API_ROUTES.items() for m in calls}
    assert served == TABLE
    assert set(app_module.API_ROUTES) == PATHS


def test_each_route_runs_its_rows_handler_with_its_rows_family() -> None:
    for op in INDEX["operations"]:
        calls, refusal = app_module.API_ROUTES[op["path"]]
        module, _, name = op["x-idv-handler"].partition(":")
        handler = refusal if op["method"] == "*" else calls[op["method"]][0]
        assert (handler.__module__, handler.__name__) == (f"idv_mock.api.{module}", name), op
        row_function = getattr(importlib.import_module(f"idv_mock.api.{module}"), name)
        assert handler.target() is row_function, op  # imported on its first call
        if op["method"] != "*":
            assert calls[op["method"]][1] is getattr(errors, op["x-idv-errors"]), op


def test_a_path_without_a_star_row_answers_the_generic_405() -> None:
    for path, (_, refusal) in app_module.API_ROUTES.items():
        if path not in OTHER_METHODS:
            assert refusal().body == errors.GENERIC.error("method_not_allowed").body, path


def test_the_allow_header_lists_a_paths_methods_in_the_usual_order() -> None:
    for path, (calls, _) in app_module.API_ROUTES.items():
        listed = [m for m in operations.METHOD_ORDER if m in calls]
        assert list(calls) == listed, path


@pytest.mark.parametrize("control", [False, True])
def test_the_openapi_document_has_the_tables_operations(control: bool) -> None:
    doc = openapi.document(control=control)
    prefix = "" if control else "/v3"
    documented = {
        (method.upper(), prefix + path)
        for path, methods in doc["paths"].items()
        for method in methods
        if not (path.startswith("/__admin") or path == "/openapi.json")
    }
    assert documented == TABLE


def test_the_openapi_examples_and_tags_come_from_the_rows() -> None:
    doc = openapi.document()
    for op in INDEX["operations"]:
        if op["method"] == "*":
            continue
        entry = doc["paths"][op["path"].removeprefix("/v3")][op["method"].lower()]
        assert entry["tags"] == [op["x-idv-tag"]]
        family: errors.Family = getattr(errors, op["x-idv-errors"])
        for status, response in entry["responses"].items():
            example = response["content"].get("application/json", {}).get("example")
            if int(status) >= 400:
                first = next(e for e in family.entries if e.status == int(status))
                assert example == family.render(first, first.message.replace("{}", "example")).body
            elif "x-idv-example" in op:
                assert example == op["x-idv-example"]
        if "x-idv-request-example" in op:
            body = entry["requestBody"]["content"]
            assert next(iter(body.values()))["example"] == op["x-idv-request-example"]


def test_the_hints_know_the_tables_paths_and_methods() -> None:
    known = {(m, p) for p, methods in hints.operations().items() for m in methods}
    assert known == TABLE
    assert set(hints.operations()) == PATHS
    for path in PATHS:
        concrete = operations.fill(path, worklistId="w", recordId="r", projectionId="p")
        assert hints.route_of(concrete) == path


def test_served_and_refused_methods_split_the_common_ones_as_the_rows_say() -> None:
    for path in PATHS:
        served = {m for m, p in TABLE if p == path}
        assert set(operations.served(path)) == served
        assert set(operations.refused(path)) == set(operations.COMMON_METHODS) - served
        concrete = operations.fill(path, worklistId="w", recordId="r", projectionId="p")
        assert hints.methods_of(concrete) == operations.served(path)


def test_every_get_row_says_whether_verify_probes_it() -> None:
    for op in INDEX["operations"]:
        mark = op.get("x-idv-verify")
        if op["method"] == "GET":
            assert mark is True or (isinstance(mark, str) and mark.startswith("not probed: "))
        else:
            assert mark is None, op  # verify sends GET only


def test_verify_probes_exactly_the_rows_marked_probed() -> None:
    service = Service(ServiceConfig(seed_count=5))
    service.create_projection(service.project("default"), "no_birth", "exclude", ["age_group"])
    sent: list[tuple[str, str]] = []

    def seen(request: httpx.Request) -> None:
        sent.append((request.method, request.url.path))

    client = httpx.Client(
        transport=ASGITransport(app_module.create_app(service)),
        base_url="http://idv-mock/v3/",
        event_hooks={"request": [seen]},
    )
    checks: list[verify.Check] = []
    with client:
        prober = verify.Prober(client, verify.Secret(service.project("default").api_key), "/v3")
        verify.run_all(prober, checks)
    assert all(c.ok and not c.skipped for c in checks)
    probed = {(method, hints.route_of(path)) for method, path in sent}
    marked = {
        (op["method"], op["path"]) for op in INDEX["operations"] if op.get("x-idv-verify") is True
    }
    assert probed == marked


def test_a_bad_row_fails_loudly() -> None:
    with pytest.raises(operations.TableError, match="x-idv-handler"):
        operations._row({"method": "GET", "path": "/v3/x", "x-idv-handler": "get_x"})
    with pytest.raises(operations.TableError, match="x-idv-errors"):
        operations._row(
            {"method": "GET", "path": "/v3/x", "x-idv-handler": "x:y", "x-idv-errors": "NOPE"}
        )
    with pytest.raises(KeyError, match="getNothing"):
        operations.path("getNothing")


def test_operation_ids_are_unique() -> None:
    ids = [op.operation_id for op in operations.operations() if op.method != "*"]
    assert len(ids) == len(set(ids)) == len(TABLE)


# --- nothing listed twice by hand --------------------------------------------------------


class _Literals(ast.NodeVisitor):
    """The string constants of a module that name an operation's path, outside the error
    families' labels (``Family("/projection", ...)``: shown in messages, not routed) and
    openapi's ``LINKS`` (Schemathesis' links, written where their expressions are)."""

    LABELLED = ("Family", "_subset")

    def __init__(self) -> None:
        self.found: list[tuple[int, str]] = []

    def visit_Call(self, node: ast.Call) -> None:
        name = getattr(node.func, "id", getattr(node.func, "attr", ""))
        if name in self.LABELLED:
            for arg in node.args:
                if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
                    self.visit(arg)
            for keyword in node.keywords:
                self.visit(keyword)
            return
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if getattr(node.target, "id", "") != "LINKS":
            self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and _names_an_operation(node.value):
            self.found.append((node.lineno, node.value))


def _names_an_operation(text: str) -> bool:
    return text in PATHS or text in SHORT_PATHS


def _literals(path: Path) -> list[tuple[int, str]]:
    visitor = _Literals()
    visitor.visit(ast.parse(path.read_text(encoding="utf-8")))
    return visitor.found


@pytest.mark.parametrize("path", sorted(SRC.rglob("*.py")), ids=lambda p: str(p.relative_to(SRC)))
def test_no_module_writes_an_operations_path(path: Path) -> None:
    """A path is written once, in ``schemas/api.json``; code asks the table
    (``operations.path("getSubmission")``) so a renamed or removed path fails at import."""
    assert _literals(path) == []


def test_the_literal_check_sees_a_path(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        'A = "/v3/submission/tokens"\nB = ("GET", "/projection")\n'
        'F = Family("/projection", 1)\nLINKS: dict = {("GET", "/submission"): {}}\n'
    )
    assert _literals(module) == [(1, "/v3/submission/tokens"), (2, "/projection")]


def test_the_mapi_record_body_is_written_only_in_errors() -> None:
    holders = [
        p.relative_to(SRC).as_posix() for p in SRC.rglob("*.py") if "MAPI-001" in p.read_text()
    ]
    assert holders == ["ground/errors.py"]
