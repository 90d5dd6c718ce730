"""POST /submission/aml and GET /report/aml over the API (api-v3.md 2.7, 3, 4.5, 4.6, 7.4).

Also gaps.md "Authentication", "Error bodies", "AML", "Webhooks" (the aml event) and "Loose
ends", and issue 5 (AML screening, report, control API). Expected strings are the spec's
literal texts, written out here on purpose.
"""

from __future__ import annotations

import io
from typing import Any

import httpx
import pytest
from pypdf import PdfReader
from starlette.testclient import TestClient

from conftest import ADMIN, LiveServer, assert_refused, snapshot, some_submission
from idv_mock import Service
from idv_mock.delivery.receiver import WebhookReceiver

AML = "/v3/submission/aml"
REPORT = "/v3/report/aml"
PROJECT = "/__admin/projects/default"
WATCHLIST = f"{PROJECT}/watchlist"
WATCHLIST_SUBMISSIONS = f"{PROJECT}/watchlist-submissions"
SUCCESS = "complete to search AML."
RED_FLAG = "Red Flag"
NO_MATCH = "Not Screened"  # the vendor has no "No Match" (FAQ: "No Matches (Not Screened)")
NOT_SCREENED = "Not Screened"
OTHER_KEY = "other-key"

# builtin entry WL-0001 of aml/watchlist.json
KESTRELOV = {"name": "Dravomir Kestrelov", "birth_date": "1968-03-14", "nationality": "RUS"}
# a made-up person for a project's own watchlist; no builtin entry resembles it
MARROWBY = {"name": "Quillon Marrowby", "birth_date": "1990-02-03", "nationality": "GBR"}


# --- helpers ---
def coded(code: str, message: str) -> dict[str, str]:
    return {"errorCode": code, "message": message}


def screen(
    client: TestClient | httpx.Client,
    sid: str,
    threshold: int | None = None,
    headers: dict[str, str] | None = None,
) -> httpx.Response:
    body: dict[str, Any] = {"submissionId": sid}
    if threshold is not None:
        body["amlThreshold"] = threshold
    return client.post(AML, json=body, headers=headers)


def screen_ok(
    client: TestClient | httpx.Client,
    sid: str,
    threshold: int | None = None,
    headers: dict[str, str] | None = None,
) -> dict[str, Any]:
    r = screen(client, sid, threshold, headers)
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    assert set(body) == {"message", "result", "raw_data"}
    assert body["message"] == SUCCESS
    return body


def aml_of(
    client: TestClient | httpx.Client, sid: str, headers: dict[str, str] | None = None
) -> dict[str, Any]:
    """The submission's aml object as GET /submission?request_type=aml shows it."""
    params = {"submission_id": sid, "request_type": "aml"}
    r = client.get("/v3/submission", params=params, headers=headers)
    assert r.status_code == 200, r.text
    items = r.json()["Items"]
    assert len(items) == 1
    assert items[0]["submission_id"] == sid
    aml: dict[str, Any] = items[0]["aml"]
    return aml


def refused(client: TestClient, service: Service, expected: dict[str, str], **kwargs: Any) -> None:
    """POST /submission/aml is refused with 400 and ``expected``; nothing changes."""
    assert_refused(lambda: client.post(AML, **kwargs), 400, expected, service=service)


def report_refused(
    client: TestClient, service: Service, expected: dict[str, str], **kwargs: Any
) -> None:
    """GET of the AML report is refused with 400 and ``expected``; nothing changes."""
    assert_refused(lambda: client.get(REPORT, **kwargs), 400, expected, service=service)


def person(
    service: Service, name: str, birth_date: str, nationality: str, project_id: str = "default"
) -> str:
    """A submission of ``name`` (every name field), born ``birth_date``, of ``nationality``."""
    first, _, last = name.partition(" ")
    data = {
        "full_name": name,
        "full_name_en": name,
        "first_name": first,
        "last_name": last,
        "date_of_birth": birth_date,
        "nationality": nationality,
    }
    sid: str = service.create_submission(project_id, {"data": data})["submission_id"]
    return sid


def watchlisted(
    client: TestClient | httpx.Client, entry_id: str, project_id: str = "default"
) -> str:
    """A submission whose person is watchlist entry ``entry_id`` (control API)."""
    url = f"/__admin/projects/{project_id}/watchlist-submissions"
    r = client.post(url, json={"entry_id": entry_id})
    assert r.status_code == 201, r.text
    sid: str = r.json()["submission_id"]
    return sid


def add_entry(client: TestClient, entry_id: str, who: dict[str, str]) -> None:
    r = client.post(WATCHLIST, json={"entry_id": entry_id, "list": "pep", **who})
    assert r.status_code == 201, r.text


def unscreened(service: Service) -> dict[str, Any]:
    """A seeded live submission whose AML was never screened."""
    for index in range(len(service.project("default").store)):
        sub = some_submission(service, index)
        if sub.get("status") is None and sub["aml"]["currentstatus"] == NOT_SCREENED:
            return sub
    raise AssertionError("no unscreened seeded submission")


def resource_ids(aml: dict[str, Any]) -> list[str]:
    return [m["resourceId"] for m in aml["matches"]]


def without(doc: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in doc.items() if k != key}


def pdf_text(data: bytes) -> str:
    reader = PdfReader(io.BytesIO(data))
    return "\n".join(page.extract_text() for page in reader.pages)


@pytest.fixture
def other(service: Service) -> str:
    """A second project; returns its id. Its key is ``OTHER_KEY``."""
    service.create_project({"project_id": "other", "api_key": OTHER_KEY})
    return "other"


# --- 7.4 errors ---
@pytest.mark.parametrize(
    "content", [b"not json", b'{"submissionId": ', b"[]", b'["submissionId"]', b"null", b'"x"']
)
def test_body_not_a_json_object_is_invalid_payload(
    client: TestClient, service: Service, content: bytes
) -> None:
    headers = {"content-type": "application/json"}
    expected = coded("invalid_payload", "Invalid payload")
    refused(client, service, expected, content=content, headers=headers)


@pytest.mark.parametrize("threshold", ["80", 101, -1, 1.5, True, False, [80], {"value": 80}])
def test_bad_threshold_is_invalid_payload(
    client: TestClient, service: Service, threshold: Any
) -> None:
    sid = some_submission(service)["submission_id"]
    body = {"submissionId": sid, "amlThreshold": threshold}
    refused(client, service, coded("invalid_payload", "Invalid payload"), json=body)


def test_bad_threshold_is_refused_even_with_the_option_set(
    client: TestClient, service: Service
) -> None:
    service.update_project("default", {"options": {"aml_threshold": 80}})
    sid = some_submission(service)["submission_id"]
    body = {"submissionId": sid, "amlThreshold": 101}
    refused(client, service, coded("invalid_payload", "Invalid payload"), json=body)


@pytest.mark.parametrize("sid", [5, ["x"], {"id": "x"}, True])
def test_non_string_submission_id_is_invalid_payload(
    client: TestClient, service: Service, sid: Any
) -> None:
    body = {"submissionId": sid, "amlThreshold": 80}
    refused(client, service, coded("invalid_payload", "Invalid payload"), json=body)


@pytest.mark.parametrize(
    "body", [{}, {"amlThreshold": 80}, {"submissionId": "", "amlThreshold": 80}]
)
def test_missing_submission_id(client: TestClient, service: Service, body: dict[str, Any]) -> None:
    expected = coded("missing_parameter", "submissionId is required")
    refused(client, service, expected, json=body)


def test_unknown_submission_id(client: TestClient, service: Service) -> None:
    body = {"submissionId": "no-such-submission", "amlThreshold": 80}
    refused(client, service, coded("invalid_submissionId", "Cannot find submission."), json=body)


def test_deleted_submission_cannot_be_screened(client: TestClient, service: Service) -> None:
    sid = some_submission(service)["submission_id"]
    r = client.delete("/v3/submission", params={"submission_id": sid})
    assert r.status_code == 200, r.text
    body = {"submissionId": sid, "amlThreshold": 80}
    refused(client, service, coded("invalid_submissionId", "Cannot find submission."), json=body)
    assert service.stored_submission("default", sid)["status"] == "Deleted Submission"


def test_another_projects_submission_is_not_found(
    client: TestClient, service: Service, other: str
) -> None:
    foreign = service.create_submission(other)["submission_id"]
    expected = coded("invalid_submissionId", "Cannot find submission.")
    refused(client, service, expected, json={"submissionId": foreign, "amlThreshold": 80})
    own = some_submission(service)["submission_id"]
    body = {"submissionId": own, "amlThreshold": 80}
    refused(client, service, expected, json=body, headers={"x-api-key": OTHER_KEY})
    assert service.stored_submission(other, foreign)["aml"]["currentstatus"] == NOT_SCREENED


def test_invalid_nationality_is_invalid_country(client: TestClient, service: Service) -> None:
    # idcard_issuingCountry and pre_verification.country_code would copy the nationality,
    # and those must be real codes for the control API to accept the submission
    overrides = {
        "data": {"nationality": "XXX", "idcard_issuingCountry": "USA"},
        "pre_verification": {"country_code": "USA"},
    }
    sid = service.create_submission("default", overrides)["submission_id"]
    expected = coded("invalid_country", "The nationality is invalid: XXX")
    refused(client, service, expected, json={"submissionId": sid, "amlThreshold": 80})
    assert aml_of(client, sid)["currentstatus"] == NOT_SCREENED


def test_deleted_nationality_is_invalid_country(client: TestClient, service: Service) -> None:
    sid = some_submission(service)["submission_id"]
    params = {"submission_id": sid, "fields": "data", "data_fields": "nationality"}
    assert client.delete("/v3/submission/partial", params=params).status_code == 200
    before = aml_of(client, sid)
    expected = coded("invalid_country", "The nationality is invalid: ")
    refused(client, service, expected, json={"submissionId": sid, "amlThreshold": 80})
    assert aml_of(client, sid) == before


def test_no_threshold_anywhere_is_invalid_aml_threshold(
    client: TestClient, service: Service
) -> None:
    assert service.project("default").options["aml_threshold"] is None  # the default
    sid = unscreened(service)["submission_id"]
    expected = coded("invalid_aml_threshold", "Invalid AML Threshold.")
    refused(client, service, expected, json={"submissionId": sid})
    refused(client, service, expected, json={"submissionId": sid, "amlThreshold": None})
    assert aml_of(client, sid)["currentstatus"] == NOT_SCREENED


def test_request_failed_through_a_fault_rule(client: TestClient, service: Service) -> None:
    rule = {"match": {"method": "POST", "path": AML}, "error": "request_failed", "times": 1}
    assert client.post(f"{PROJECT}/faults", json=rule).status_code == 201
    sid = unscreened(service)["submission_id"]
    body = {"submissionId": sid, "amlThreshold": 80}
    refused(client, service, coded("request_failed", "Fail to search AML."), json=body)
    assert aml_of(client, sid)["currentstatus"] == NOT_SCREENED
    assert screen_ok(client, sid, 80)["result"] == NO_MATCH  # times: 1, now it goes through


@pytest.mark.parametrize("headers", [{}, {"x-api-key": "wrong-key"}, {"x-api-key": ""}])
def test_missing_or_wrong_key_is_invalid_project(
    raw_client: TestClient, service: Service, headers: dict[str, str]
) -> None:
    sid = unscreened(service)["submission_id"]
    body = {"submissionId": sid, "amlThreshold": 80}
    expected = coded("invalid_project", "Invalid project")
    refused(raw_client, service, expected, json=body, headers=headers)


def test_key_is_checked_before_the_body(raw_client: TestClient, service: Service) -> None:
    headers = {"x-api-key": "wrong-key", "content-type": "application/json"}
    expected = coded("invalid_project", "Invalid project")
    refused(raw_client, service, expected, content=b"not json", headers=headers)


# --- screening ---
def test_seeded_person_is_no_match(client: TestClient, service: Service) -> None:
    sub = unscreened(service)
    sid = sub["submission_id"]
    assert aml_of(client, sid)["risk_level_summary"] == NOT_SCREENED
    body = screen_ok(client, sid, 80)
    assert body["result"] == NO_MATCH
    assert body["raw_data"]["threshold"] == 80
    assert body["raw_data"]["searchedName"] == sub["data"]["full_name"]
    aml = aml_of(client, sid)
    assert aml == {
        "raw_data": body["raw_data"],
        "matches": [],
        "risk_level_summary": NO_MATCH,
        "currentstatus": NO_MATCH,
    }


def test_get_with_request_type_aml_shows_only_aml(client: TestClient, service: Service) -> None:
    sid = watchlisted(client, "WL-0001")
    screen_ok(client, sid, 80)
    r = client.get("/v3/submission", params={"submission_id": sid, "request_type": "aml"})
    assert r.status_code == 200
    (item,) = r.json()["Items"]
    assert set(item) == {"submission_id", "aml"}
    assert item["aml"] == service.stored_submission("default", sid)["aml"]


def test_watchlist_person_is_red_flag(client: TestClient, service: Service) -> None:
    sid = watchlisted(client, "WL-0001")
    stored = service.stored_submission("default", sid)["data"]
    assert (stored["full_name"], stored["date_of_birth"], stored["nationality"]) == (
        KESTRELOV["name"],
        KESTRELOV["birth_date"],
        KESTRELOV["nationality"],
    )
    body = screen_ok(client, sid, 80)
    assert body["result"] == RED_FLAG
    aml = aml_of(client, sid)
    assert aml["currentstatus"] == aml["risk_level_summary"] == RED_FLAG
    assert aml["raw_data"] == body["raw_data"]
    assert [m["entryId"] for m in aml["matches"]] == ["WL-0001"]
    match = aml["matches"][0]
    assert match["score"] == 100
    assert match["name"] == KESTRELOV["name"]
    assert isinstance(match["resourceId"], str) and match["resourceId"]


def test_every_match_has_its_own_resource_id_at_or_above_threshold(
    client: TestClient, service: Service
) -> None:
    add_entry(client, "P-1", MARROWBY)
    add_entry(client, "P-2", {**MARROWBY, "name": "Quillon Marowby"})  # a spelling variant
    sid = person(service, **MARROWBY)
    assert screen_ok(client, sid, 70)["result"] == RED_FLAG
    aml = aml_of(client, sid)
    assert sorted(m["entryId"] for m in aml["matches"]) == ["P-1", "P-2"]
    assert all(m["score"] >= 70 for m in aml["matches"])
    assert len(set(resource_ids(aml))) == 2


def test_request_threshold_wins_over_the_option(client: TestClient, service: Service) -> None:
    r = client.patch(PROJECT, json={"options": {"aml_threshold": 90}})
    assert r.status_code == 200, r.text
    assert service.project("default").options["aml_threshold"] == 90
    # an alias of WL-0001 with another birth year and nationality: the name alone, below 90
    sid = person(service, "Dravomir Kestrelow", "1990-01-01", "USA")
    body = screen_ok(client, sid, 80)
    assert (body["result"], body["raw_data"]["threshold"]) == (RED_FLAG, 80)
    assert aml_of(client, sid)["currentstatus"] == RED_FLAG


def test_option_is_used_when_the_request_has_no_threshold(
    client: TestClient, service: Service
) -> None:
    sid = person(service, "Dravomir Kestrelow", "1990-01-01", "USA")
    assert client.patch(PROJECT, json={"options": {"aml_threshold": 90}}).status_code == 200
    body = screen_ok(client, sid)
    assert (body["result"], body["raw_data"]["threshold"]) == (NO_MATCH, 90)
    assert aml_of(client, sid)["currentstatus"] == NO_MATCH
    assert client.patch(PROJECT, json={"options": {"aml_threshold": 80}}).status_code == 200
    body = screen_ok(client, sid)
    assert (body["result"], body["raw_data"]["threshold"]) == (RED_FLAG, 80)
    assert aml_of(client, sid)["currentstatus"] == RED_FLAG


def test_project_watchlist_entry_matches(client: TestClient, service: Service) -> None:
    sid = person(service, **MARROWBY)
    assert screen_ok(client, sid, 80)["result"] == NO_MATCH
    add_entry(client, "P-1", MARROWBY)
    assert screen_ok(client, sid, 80)["result"] == RED_FLAG
    aml = aml_of(client, sid)
    assert [(m["entryId"], m["score"]) for m in aml["matches"]] == [("P-1", 100)]


def test_project_entry_is_not_seen_by_another_project(
    client: TestClient, service: Service, other: str
) -> None:
    add_entry(client, "P-1", MARROWBY)
    sid = person(service, **MARROWBY, project_id=other)
    headers = {"x-api-key": OTHER_KEY}
    assert screen_ok(client, sid, 80, headers)["result"] == NO_MATCH
    assert aml_of(client, sid, headers)["matches"] == []


def test_two_entries_of_one_person_give_two_resource_ids(
    client: TestClient, service: Service
) -> None:
    add_entry(client, "P-1", MARROWBY)
    add_entry(client, "P-2", {**MARROWBY, "list": "sanctions"})
    sid = watchlisted(client, "P-1")
    assert screen_ok(client, sid, 90)["result"] == RED_FLAG
    aml = aml_of(client, sid)
    assert sorted((m["entryId"], m["score"]) for m in aml["matches"]) == [
        ("P-1", 100),
        ("P-2", 100),
    ]
    ids = resource_ids(aml)
    assert len(ids) == len(set(ids)) == 2
    for resource_id in ids:
        assert client.get(REPORT, params={"resourceId": resource_id}).status_code == 200


@pytest.mark.parametrize(
    ("name", "birth_date", "nationality", "threshold"),
    [
        ("Dravomir Kestrelow", "1990-01-01", "USA", 80),  # a listed alias
        ("Kestrelov Dravomir", "1968-03-14", "RUS", 95),  # name order swapped
        ("DRAVOMIR KESTRELOV", "1968-03-14", "RUS", 95),  # case
        ("Dravomir Kestrelof", "1968-03-14", "RUS", 90),  # a spelling not on the list
    ],
)
def test_alias_and_spelling_variants_match(
    client: TestClient,
    service: Service,
    name: str,
    birth_date: str,
    nationality: str,
    threshold: int,
) -> None:
    sid = person(service, name, birth_date, nationality)
    assert screen_ok(client, sid, threshold)["result"] == RED_FLAG
    aml = aml_of(client, sid)
    assert [m["entryId"] for m in aml["matches"]] == ["WL-0001"]
    assert aml["matches"][0]["score"] >= threshold


def test_screening_is_deterministic(client: TestClient, service: Service) -> None:
    add_entry(client, "P-1", {**MARROWBY, "name": "Quillon Marowby"})
    for sid in (watchlisted(client, "WL-0003"), person(service, **MARROWBY)):
        first = screen_ok(client, sid, 60)
        first_aml = aml_of(client, sid)
        second = screen_ok(client, sid, 60)
        second_aml = aml_of(client, sid)
        assert second["result"] == first["result"] == RED_FLAG
        assert without(second["raw_data"], "screenedAt") == without(first["raw_data"], "screenedAt")
        assert [without(m, "resourceId") for m in second_aml["matches"]] == [
            without(m, "resourceId") for m in first_aml["matches"]
        ]


def test_same_person_in_two_submissions_scores_the_same(
    client: TestClient, service: Service
) -> None:
    one, two = (person(service, "Tarek Zuhrawan", "1971-07-19", "JOR") for _ in range(2))
    screen_ok(client, one, 50)
    screen_ok(client, two, 50)
    scores = [
        [(m["entryId"], m["score"], m["nameScore"]) for m in aml_of(client, sid)["matches"]]
        for sid in (one, two)
    ]
    assert scores[0] == scores[1]
    assert [entry for entry, _, _ in scores[0]] == ["WL-0003"]


def test_threshold_100_on_an_exact_entry_still_flags(client: TestClient, service: Service) -> None:
    add_entry(client, "P-1", MARROWBY)
    sid = person(service, **MARROWBY)
    assert screen_ok(client, sid, 100)["result"] == RED_FLAG
    aml = aml_of(client, sid)
    assert [(m["entryId"], m["score"]) for m in aml["matches"]] == [("P-1", 100)]


def test_every_builtin_entry_flags_itself_at_100(client: TestClient) -> None:
    r = client.get(WATCHLIST)
    assert r.status_code == 200
    entries = r.json()["entries"]
    assert len(entries) >= 20
    for entry in entries:
        sid = watchlisted(client, entry["entry_id"])
        assert screen_ok(client, sid, 100)["result"] == RED_FLAG, entry["entry_id"]
        matches = aml_of(client, sid)["matches"]
        assert (entry["entry_id"], 100) in [(m["entryId"], m["score"]) for m in matches]


def test_rescreening_replaces_aml(client: TestClient, service: Service) -> None:
    sid = person(service, "Dravomir Kestrelow", "1990-01-01", "USA")  # scores 80 on WL-0001
    screen_ok(client, sid, 80)
    first = aml_of(client, sid)
    screen_ok(client, sid, 80)
    second = aml_of(client, sid)
    assert len(second["matches"]) == 1
    assert resource_ids(second) != resource_ids(first)
    assert screen_ok(client, sid, 81)["result"] == NO_MATCH
    third = aml_of(client, sid)
    assert third["matches"] == []
    assert third["currentstatus"] == third["risk_level_summary"] == NO_MATCH
    assert third["raw_data"]["threshold"] == 81


# --- report ---
def test_red_flag_report_round_trip_over_http(
    live: LiveServer, http: httpx.Client, service: Service
) -> None:
    sid = watchlisted(http, "WL-0001")
    body = http.post(AML, json={"submissionId": sid, "amlThreshold": 80})
    assert body.status_code == 200
    assert body.json()["result"] == RED_FLAG
    (resource_id,) = resource_ids(aml_of(http, sid))
    r = http.get(REPORT, params={"resourceId": resource_id})
    assert r.status_code == 200
    assert r.headers["content-type"].split(";")[0] == "application/pdf"
    assert 'filename="report.pdf"' in r.headers["content-disposition"]
    assert r.content.startswith(b"%PDF-")
    text = pdf_text(r.content)
    for fact in (KESTRELOV["name"], resource_id, sid, "WL-0001"):
        assert fact in text, fact


def test_report_without_resource_id(client: TestClient, service: Service) -> None:
    expected = coded("missing_parameter", "resourceId is required")
    report_refused(client, service, expected)
    report_refused(client, service, expected, params={"resourceId": ""})


def test_unknown_resource_id(client: TestClient, service: Service) -> None:
    expected = coded("invalid_resourceId", "Cannot find report.")
    report_refused(client, service, expected, params={"resourceId": "no-such-report"})


def test_no_match_gives_no_resource_id(client: TestClient, service: Service) -> None:
    sid = unscreened(service)["submission_id"]
    assert screen_ok(client, sid, 80)["result"] == NO_MATCH
    assert resource_ids(aml_of(client, sid)) == []
    assert service.project("default").aml.reports == {}


def test_another_projects_resource_id_is_not_found(
    client: TestClient, service: Service, other: str
) -> None:
    headers = {"x-api-key": OTHER_KEY}
    sid = watchlisted(client, "WL-0001", other)
    assert screen_ok(client, sid, 80, headers)["result"] == RED_FLAG
    (resource_id,) = resource_ids(aml_of(client, sid, headers))
    assert (
        client.get(REPORT, params={"resourceId": resource_id}, headers=headers).status_code == 200
    )
    expected = coded("invalid_resourceId", "Cannot find report.")
    report_refused(client, service, expected, params={"resourceId": resource_id})


def test_report_is_gone_after_the_submission_is_deleted(
    client: TestClient, service: Service
) -> None:
    sid = watchlisted(client, "WL-0001")
    screen_ok(client, sid, 80)
    (resource_id,) = resource_ids(aml_of(client, sid))
    assert client.get(REPORT, params={"resourceId": resource_id}).status_code == 200
    assert client.delete("/v3/submission", params={"submission_id": sid}).status_code == 200
    expected = coded("invalid_resourceId", "Cannot find report.")
    report_refused(client, service, expected, params={"resourceId": resource_id})
    r = client.get("/v3/submission", params={"submission_id": sid, "request_type": "aml"})
    assert r.json() == {"Items": [{"submission_id": sid, "status": "Deleted Submission"}]}


@pytest.mark.parametrize("headers", [{}, {"x-api-key": "wrong-key"}, {"x-api-key": ""}])
def test_report_with_missing_or_wrong_key(
    client: TestClient, raw_client: TestClient, service: Service, headers: dict[str, str]
) -> None:
    sid = watchlisted(client, "WL-0001")
    screen_ok(client, sid, 80)
    (resource_id,) = resource_ids(aml_of(client, sid))
    expected = coded("invalid_project", "Invalid project")
    params = {"resourceId": resource_id}
    report_refused(raw_client, service, expected, params=params, headers=headers)


# --- aml webhook ---
@pytest.mark.parametrize(("entry", "result"), [("WL-0001", RED_FLAG), (None, NO_MATCH)])
def test_screening_sends_the_aml_webhook(
    client: TestClient,
    service: Service,
    hook: WebhookReceiver,
    entry: str | None,
    result: str,
) -> None:
    sid = watchlisted(client, entry) if entry else unscreened(service)["submission_id"]
    decide = {"submissionId": sid, "admin": ADMIN, "data": {"kycStatus": "approved"}}
    assert client.patch("/v3/submission", json=decide).status_code == 200
    service.webhooks.wait_idle(5)
    hook.received.clear()
    sub = service.stored_submission("default", sid)
    screen_ok(client, sid, 80)
    (item,) = hook.wait_for(1)
    assert item.event == "submission.aml"
    cf = {k: sub["data"][k] for k in ("cf1", "cf2", "cf3") if sub["data"].get(k)}
    expected = {
        "webhook_trigger": "aml",
        "submission_id": sid,
        "duplicated_information": sub["duplicated_information"],
        "email": sub["email"],
        "userid": sub["userid"],
        "cf": cf,
        "aml_result": {"currentstatus": result, "risk_level_summary": result},
        "tokenId": sub["tokenId"],
    }
    assert item.body == {k: v for k, v in expected.items() if v not in ("", {})}


def test_screening_a_submission_not_approved_sends_no_webhook(
    client: TestClient, service: Service, hook: WebhookReceiver
) -> None:
    """The vendor screens approved KYC only: the call answers as before, nothing is sent."""
    sid = watchlisted(client, "WL-0001")
    decide = {"submissionId": sid, "admin": ADMIN, "data": {"kycStatus": "rejected"}}
    assert client.patch("/v3/submission", json=decide).status_code == 200
    service.webhooks.wait_idle(5)
    hook.received.clear()
    screen_ok(client, sid, 80)
    assert service.webhooks.wait_idle(5)
    assert hook.received == []


def test_refused_screening_sends_no_webhook(
    client: TestClient, service: Service, hook: WebhookReceiver
) -> None:
    sid = unscreened(service)["submission_id"]
    assert screen(client, sid).status_code == 400  # no threshold anywhere
    assert service.webhooks.wait_idle(5)
    assert hook.received == []


# --- control API ---
def test_watchlist_entry_with_bad_nationality_is_refused(client: TestClient) -> None:
    before = client.get(WATCHLIST).json()
    r = client.post(
        WATCHLIST, json={"entry_id": "P-1", "list": "pep", **MARROWBY, "nationality": "XXX"}
    )
    assert r.status_code == 400
    assert client.get(WATCHLIST).json() == before


@pytest.mark.parametrize("entry_id", ["P-1", "WL-0001"])
def test_duplicate_watchlist_entry_id_is_refused(client: TestClient, entry_id: str) -> None:
    add_entry(client, "P-1", MARROWBY)
    before = client.get(WATCHLIST).json()
    r = client.post(WATCHLIST, json={"entry_id": entry_id, "list": "pep", **MARROWBY})
    assert r.status_code == 409
    assert client.get(WATCHLIST).json() == before


def test_added_entry_is_listed(client: TestClient) -> None:
    add_entry(client, "P-1", MARROWBY)
    entries = client.get(WATCHLIST).json()["entries"]
    assert entries[-1]["entry_id"] == "P-1"
    assert (entries[-1]["name"], entries[-1]["nationality"]) == ("Quillon Marrowby", "GBR")


def test_watchlist_submission_of_unknown_entry_is_404(
    client: TestClient, service: Service, other: str
) -> None:
    add_entry(client, "P-1", MARROWBY)
    before = snapshot(service)
    r = client.post(WATCHLIST_SUBMISSIONS, json={"entry_id": "NO-SUCH-ENTRY"})
    assert r.status_code == 404
    r = client.post(f"/__admin/projects/{other}/watchlist-submissions", json={"entry_id": "P-1"})
    assert r.status_code == 404
    assert snapshot(service) == before
