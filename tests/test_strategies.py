"""Property tests of ``idv_mock.strategies`` against the in-process app.

Valid draws must succeed (and change what they say they change); invalid draws must get
exactly the drawn status and body, never an unplanned 5xx, and leave the state as it was.
The drawn error texts are compared with the spec's literal texts written below, never
with ``idv_mock.ground.errors``, so a typo in the catalogue fails here.

One service per test function, reset inside every example: Hypothesis runs many examples
in one call of the test function, and pytest fixtures are not reset between them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import HealthCheck, event, find, given, settings
from hypothesis.errors import InvalidArgument
from hypothesis.strategies import SearchStrategy
from starlette.testclient import TestClient

from conformance import check_response
from conftest import assert_refused
from idv_mock import Service, ServiceConfig, create_app
from idv_mock.ground import schemas
from idv_mock.strategies import (
    PATCH_CHECK_ORDER,
    Invalid,
    aml_requests,
    edit_requests,
    invalid_aml_requests,
    invalid_edit_requests,
    invalid_get_queries,
    invalid_monitor_requests,
    invalid_partial_delete_queries,
    invalid_projection_requests,
    monitor_requests,
    partial_delete_queries,
    projection_requests,
    send,
    submissions,
)

settings.register_profile(
    "ci", max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "dev", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

API_KEY = "mock-api-key"
ADMIN = "admin@example.com"
ADMINS = [ADMIN, "second@example.com"]
WORKLIST, INACTIVE = "wl-hypothesis", "wl-hypothesis-off"
Prepare = Callable[[Service], None]

# --- the spec's literal texts (api-v3.md 7, gaps.md, README); <x> is any text --------------

PATCH_TEXTS = {
    "missing_project": "projectId or x-api-key is required.",
    "invalid_project": "The project is not found.",
    "parse_error": "data parsing error. please check input data.",
    "missing_submissionId": "submissionId is required.",
    "missing_admin": "admin is required.",
    "nothing_to_modify": "At least one property to modify is required.",
    "invalid_idType": "Invalid idType. Please check the idType.",
    "invalid_kycStatus": "Invalid kyc status. Please check the kycStatus.",
    "invalid_gender": "Invalid gender. Please check the gender.",
    "invalid_issuingCountry": "Invalid issuingCountry. Please enter a valid ISO 3166-1 alpha-3.",
    "invalid_nationality": "Invalid nationality. Please enter a valid ISO 3166-1 alpha-3.",
    "invalid_birthDate": "Invalid birthDate. Please enter the date as YYYY-MM-DD",
    "invalid_issueDate": "Invalid issueDate. Please enter the date as YYYY-MM-DD",
    "invalid_expireDate": "Invalid expireDate. Please enter the date as YYYY-MM-DD",
    "invalid_admin": "Invalid admin",
    "invalid_submissionId": "Cannot find submission.",
}
PARTIAL_TEXTS = (
    "submission_id is required",
    "fields parameter is required and cannot be empty",
    "fields must be a string",
    "data_fields must be a string",
    "fields parameter is not in string format",
    "data_fields parameter is not in string format",
    "fields cannot be empty",
    "invalid fields found in fields: <list>",
    "invalid fields found in data_fields: <list>",
    "data_fields parameter is not allowed when fields does not include data",
    "invalid format for fields: <detail>",
    "invalid format for data_fields: <detail>",
    "invalid API key for this project",
    "not Exist Submission Data",
    "not Exist Project Data",
)
GET_TEXTS = {
    "invalid_payload": "Invalid payload",
    "missing_data": "Required input data is missing",
    "invalid_project": "Invalid project",
    "invalid_parameter": "invalid parameter: <parameter>",
    "invalid_format": "invalid format: <parameter>",
}
AML_TEXTS = {
    "invalid_project": "Invalid project",
    "invalid_payload": "Invalid payload",
    "missing_parameter": "submissionId is required",
    "invalid_submissionId": "Cannot find submission.",
    "invalid_aml_threshold": "Invalid AML Threshold.",
}
PROJECTION_TEXTS = {
    403: ("Forbidden",),
    400: (
        "Invalid request body: name, mode, fields",
        "Invalid request body: name",
        "Invalid mode: <mode>",
        "Invalid fields detected: <list>",
        "Invalid JSON body",
    ),
    404: ("Projection not found",),
    405: (
        "Method not allowed for /projections path",
        "Method not allowed for /projections/projectionId path",
    ),
}
MONITOR_TEXTS = {
    "invalid_path": ("Invalid request method",),
    "invalid_project": ("Invalid project",),
    "invalid_worklist": ("Worklist is inactive", "Invalid worklist ID"),
    "invalid_submissionIds": ("submissionIds must be an array of 1 to 25 strings",),
    "invalid_admin": ("Invalid admin",),
    "missing_required_parameters": ("Missing required parameters: <names>",),
    "all_submissions_failed": ("All submissions failed",),
    "invalid_record": ("Record not found", "Some records do not exist"),
    "invalide_worklist": ("Invalid worklist ID",),
    "invalid_payload": ("Invalid payload",),
}
MISSING_RECORD = {"statusCode": 404, "error": {"code": "MAPI-001", "message": "Resource not found"}}
SPEC_500 = {"all_submissions_failed"}
# gaps.md's PATCH table: property -> where it is stored
PATCH_TARGETS = {
    "idType": ("data", "idType"),
    "issuingCountry": ("data", "idcard_issuingCountry"),
    "fullName": ("data", "full_name"),
    "firstName": ("data", "first_name"),
    "lastName": ("data", "last_name"),
    "gender": ("data", "gender"),
    "birthDate": ("data", "date_of_birth"),
    "issueDate": ("data", "idcard_issueDate"),
    "expireDate": ("data", "idcard_expireDate"),
    "nationality": ("data", "nationality"),
    "kycStatus": ("kyc", "result"),
    "identityNumber": ("data", "identityNumber"),
    "documentNumber": ("data", "documentNumber"),
    "serialNumber": ("data", "serialNumber"),
    "memo": ("memo", "text"),
}


def _spec(template: str, text: str) -> bool:
    """Whether ``text`` is the spec's ``template`` with its <placeholders> filled."""
    pattern = re.sub(r"<[a-z]+>", ".*", re.escape(template).replace(r"\<", "<").replace(r"\>", ">"))
    return re.fullmatch(pattern, text, re.DOTALL) is not None


def _any_spec(templates: Sequence[str], text: str) -> bool:
    return any(_spec(t, text) for t in templates)


def assert_patch_text(invalid: Invalid) -> None:
    code = invalid.body["errorCode"]
    assert invalid.body == {"errorCode": code, "message": PATCH_TEXTS[code]}


def assert_partial_text(invalid: Invalid) -> None:
    assert set(invalid.body) == {"message", "statusCode"} and invalid.body["statusCode"] == 400
    assert _any_spec(PARTIAL_TEXTS, invalid.body["message"]), invalid.body


def assert_get_text(invalid: Invalid) -> None:
    assert set(invalid.body) == {"errorCode", "message"}
    assert _spec(GET_TEXTS[invalid.body["errorCode"]], invalid.body["message"])


def assert_aml_text(invalid: Invalid) -> None:
    code = invalid.body["errorCode"]
    assert invalid.body == {"errorCode": code, "message": AML_TEXTS[code]}


def assert_projection_text(invalid: Invalid) -> None:
    assert set(invalid.body) == {"message"}
    assert _any_spec(PROJECTION_TEXTS[invalid.status], invalid.body["message"]), invalid.body


def assert_monitor_text(invalid: Invalid) -> None:
    body = invalid.body
    assert _any_spec(MONITOR_TEXTS[body["errorCode"]], body["errorMessage"]), body
    if "details" in body:
        assert body["details"] and all(d == MISSING_RECORD for d in body["details"])
    assert invalid.status == (500 if body["errorCode"] in SPEC_500 else 400)


# --- the app, one per test function ---------------------------------------------------------


@contextmanager
def app(**options: Any) -> Iterator[tuple[Service, TestClient]]:
    """A seeded service with two admins, and a schema-checking client with the API key."""
    service = Service(ServiceConfig(seed_count=10, admins=tuple(ADMINS), options=options))
    with TestClient(create_app(service), headers={"x-api-key": API_KEY}) as client:
        client.event_hooks["response"] = [check_response]
        yield service, client
    service.close()


def submission_ids(service: Service, *, approved: bool = False) -> list[str]:
    subs = service.project("default").store
    return [
        s["submission_id"] for s in subs if not approved or s["kyc"].get("result") == "approved"
    ]


def stored(service: Service, sid: str) -> dict[str, Any]:
    sub: dict[str, Any] = service.stored_submission("default", sid)
    return sub


def with_worklists(service: Service) -> None:
    service.screening.create_worklist("default", {"id": WORKLIST, "name": "hypothesis"})
    service.screening.create_worklist("default", {"id": INACTIVE, "name": "off", "active": False})


def check_refused(
    service: Service,
    client: TestClient,
    invalid: Invalid,
    prepare: Prepare | None = None,
) -> None:
    """Exactly the drawn response, no unplanned 5xx, and nothing changed."""
    service.reset()
    if prepare is not None:
        prepare(service)
    response = assert_refused(
        lambda: send(client, invalid),
        invalid.status,
        invalid.body,
        service=service,
        note=invalid.request,
    )
    assert response.status_code < 500 or invalid.body.get("errorCode") in SPEC_500


def run_invalid(
    strategy: SearchStrategy[Invalid],
    service: Service,
    client: TestClient,
    assert_text: Callable[[Invalid], None],
    prepare: Prepare | None = None,
    *,
    kinds: Collection[str],
    examples: int | None = None,
) -> None:
    """Every draw: a listed kind, a spec text, exactly that response, nothing changed."""

    def check(invalid: Invalid) -> None:
        event(invalid.kind)
        assert invalid.kind in kinds
        assert_text(invalid)
        check_refused(service, client, invalid, prepare)

    test = given(strategy)(check)
    if examples is not None:
        test = settings(max_examples=examples, database=None)(test)
    test()


# --- valid draws succeed ---------------------------------------------------------------------


def test_submissions_are_accepted_and_kept() -> None:
    with app() as (service, client):

        @given(submissions())
        def check(overrides: dict[str, Any]) -> None:
            service.reset()
            assert schemas.errors("submission_fields.json", overrides) == []
            sub = service.create_submission("default", overrides)
            r = client.get("/v3/submission", params={"submission_id": sub["submission_id"]})
            assert r.status_code == 200
            (item,) = r.json()["Items"]
            for key, value in overrides.get("data", {}).items():
                assert item["data"][key] == value
            for key in ("userid", "email"):
                assert item[key] == overrides.get(key, item[key])
            assert item["kyc"]["result"] == overrides.get("kyc", item["kyc"])["result"]

        check()


def test_edit_requests_succeed_and_store_each_property() -> None:
    with app() as (service, client):
        ids = submission_ids(service)

        @given(edit_requests(ids, ADMINS))
        def check(body: dict[str, Any]) -> None:
            service.reset()
            r = client.patch("/v3/submission", json=body)
            assert (r.status_code, r.json()) == (
                200,
                {"message": "success to edit.", "statusCode": 200},
            )
            sub = stored(service, body["submissionId"])
            for prop, value in body["data"].items():
                top, key = PATCH_TARGETS[prop]
                assert sub[top][key] == value
            assert sub["updateHistory"]["updateAdmin"] == body["admin"]

        check()


def test_partial_delete_queries_succeed_and_remove_the_parts() -> None:
    with app() as (service, client):

        @given(partial_delete_queries(submission_ids(service)))
        def check(query: dict[str, str]) -> None:
            service.reset()
            sid = query.get("submission_id") or query["submissionId"]
            r = client.delete("/v3/submission/partial", params=query)
            content = f"Submission {sid} fields deleted: {query['fields']}"
            assert r.json() == {"message": "success", "content": content, "statusCode": 200}
            parts = {p.strip() for p in query["fields"].split(",")}
            sub = stored(service, sid)
            for plain in {"email", "userid", "ocr", "review", "OCR_raw"} & parts:
                assert plain not in sub
            if "data" in parts and "data_fields" not in query:
                assert sub["data"] == {}
            for name in (f.strip() for f in query.get("data_fields", "").split(",") if f):
                assert ("full_name" if name == "name" else name) not in sub["data"]

        check()


def test_projection_requests_succeed_and_read_back() -> None:
    with app() as (service, client):

        @given(projection_requests())
        def check(body: dict[str, Any]) -> None:
            service.reset()
            r = client.post("/v3/projection", json=body)
            assert r.status_code == 200 and r.json()["message"] == "Create projection success"
            item = client.get(f"/v3/projection/{r.json()['projection_id']}").json()["item"]
            assert (item["name"], item["mode"]) == (body["name"], "exclude")
            assert item["fields"] == list(dict.fromkeys(body["fields"]))

        check()


def test_monitor_requests_register_every_approved_submission() -> None:
    with app() as (service, client):

        @given(monitor_requests(submission_ids(service, approved=True), ADMINS))
        def check(body: dict[str, Any]) -> None:
            service.reset()
            with_worklists(service)
            r = client.post(f"/v3/submission/aml/monitor/{WORKLIST}", json=body)
            assert r.status_code == 200, r.text
            batch = r.json()
            assert batch["success"] is True
            assert (batch["successCount"], batch["failedCount"]) == (len(body["submissionIds"]), 0)

        check()


def test_aml_requests_screen_and_store_the_result() -> None:
    with app(aml_threshold=80) as (service, client):

        @given(aml_requests(submission_ids(service)))
        def check(body: dict[str, Any]) -> None:
            service.reset()
            r = client.post("/v3/submission/aml", json=body)
            assert r.status_code == 200, r.text
            result = r.json()
            assert result["message"] == "complete to search AML."
            assert result["raw_data"]["threshold"] == body.get("amlThreshold", 80)
            aml = stored(service, body["submissionId"])["aml"]
            assert aml["currentstatus"] == result["result"] in ("Red Flag", "Not Screened")

        check()


# --- invalid draws get exactly their error ---------------------------------------------------

KINDS = {
    "edit": (
        "wrong_api_key blank_api_key unparsable_body missing_submissionId missing_admin "
        "nothing_to_modify unknown_property wrong_type bad_value unregistered_admin "
        "unknown_submission"
    ),
    "partial": (
        "wrong_api_key blank_api_key missing_submission_id parameter_twice not_string_in_body "
        "missing_fields empty_fields fields_format invalid_fields data_fields_without_data "
        "data_fields_format invalid_data_fields unknown_submission bad_json_body"
    ),
    "get": (
        "wrong_api_key unknown_parameter repeated_parameter bad_count bad_nextpage_date "
        "half_nextpage bad_start_date bad_end_date bad_request_type"
    ),
    "projection": (
        "wrong_api_key not_json not_object missing_member bad_name bad_mode bad_fields "
        "method_not_allowed unknown_projection"
    ),
    "aml": (
        "wrong_api_key not_json not_object bad_threshold missing_submissionId wrong_type "
        "unknown_submission no_threshold"
    ),
    "monitor": (
        "wrong_api_key unknown_worklist inactive_worklist missing_parameters bad_submission_ids "
        "bad_admin all_failed wrong_method record_unknown_worklist unknown_record "
        "delete_bad_payload delete_unregistered_admin delete_missing_records"
    ),
}
Family = tuple[Callable[..., SearchStrategy[Invalid]], Callable[[Invalid], None]]


def families(ids: list[str]) -> dict[str, Family]:
    """Each invalid strategy with its arguments bound, and its literal-text check."""
    monitor = dict(worklist_id=WORKLIST, inactive_worklist_id=INACTIVE)
    return {
        "edit": (lambda **kw: invalid_edit_requests(ids, ADMINS, **kw), assert_patch_text),
        "partial": (lambda **kw: invalid_partial_delete_queries(ids, **kw), assert_partial_text),
        "get": (invalid_get_queries, assert_get_text),
        "projection": (invalid_projection_requests, assert_projection_text),
        "aml": (lambda **kw: invalid_aml_requests(ids, **kw), assert_aml_text),
        "monitor": (
            lambda **kw: invalid_monitor_requests(ids, ADMINS, **monitor, **kw),
            assert_monitor_text,
        ),
    }


@pytest.mark.parametrize("family", sorted(KINDS))
def test_invalid_draws_get_exactly_their_error(family: str) -> None:
    with app() as (service, client):
        strategy, assert_text = families(submission_ids(service))[family]
        prepare = with_worklists if family == "monitor" else None
        kinds = KINDS[family].split()
        run_invalid(strategy(), service, client, assert_text, prepare, kinds=kinds)


@pytest.mark.parametrize("family", sorted(KINDS))
def test_every_kind_is_drawn_and_answered_exactly(family: str) -> None:
    """A few draws of each kind alone, so that none depends on luck to be tried."""
    with app() as (service, client):
        strategy, assert_text = families(submission_ids(service))[family]
        prepare = with_worklists if family == "monitor" else None
        for kind in KINDS[family].split():
            only = strategy(kinds=[kind])
            run_invalid(only, service, client, assert_text, prepare, kinds=[kind], examples=4)


def test_kinds_are_checked_when_drawn() -> None:
    strategy = invalid_get_queries(kinds=["no_such_kind"])  # building is fine
    with pytest.raises(InvalidArgument, match="no_such_kind"):
        find(strategy, lambda _: True, settings=settings(database=None))


# --- the module's own promises ---------------------------------------------------------------


def test_patch_check_order_names_every_property_of_the_schema() -> None:
    data = schemas.load("patch_submission_request.json")["properties"]["data"]["properties"]
    assert sorted(PATCH_CHECK_ORDER) == sorted(data) == sorted(PATCH_TARGETS)


def test_bad_arguments_raise_when_drawn_not_when_built() -> None:
    strategy = invalid_edit_requests([], ADMINS)  # building is fine
    with pytest.raises(InvalidArgument):
        find(strategy, lambda _: True, settings=settings(database=None))
    with pytest.raises(InvalidArgument):
        find(edit_requests(["a"], "admin@example.com"), lambda _: True)


def test_send_strips_v3_when_the_base_url_ends_with_it() -> None:
    service = Service(ServiceConfig(seed_count=1))
    base = "http://testserver/v3"
    with TestClient(create_app(service), base_url=base, headers={"x-api-key": API_KEY}) as client:
        invalid = find(invalid_get_queries(kinds=["bad_count"]), lambda _: True)
        assert send(client, invalid).json() == invalid.body
    service.close()
