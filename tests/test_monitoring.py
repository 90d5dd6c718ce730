"""Ongoing monitoring (api-v3.md 2.5, 3, 4.7, 5, 7.5, 8; gaps.md "Ongoing monitoring"; issue 5)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest
from httpx import Response
from starlette.testclient import TestClient

from conftest import assert_refused, snapshot
from idv_mock import Service
from idv_mock.backend.monitoring import DEFAULT_WORKLIST
from idv_mock.ground import crypto
from idv_mock.ground.clock import parse_iso

URL = "/v3/submission/aml/monitor"
ADMIN = "admin@example.com"
STRANGER = "stranger@example.com"
CONTROL = "/__admin/projects/default"
KEY = {"x-api-key": "mock-api-key"}
WID = "wl-main"
OTHER_WID = "wl-other"
MISSING_RECORD = {"statusCode": 404, "error": {"code": "MAPI-001", "message": "Resource not found"}}


# --- helpers ---


def err(code: str, message: str) -> dict[str, str]:
    return {"errorCode": code, "errorMessage": message}


INVALID_PROJECT = err("invalid_project", "Invalid project")
INVALID_PATH = err("invalid_path", "Invalid request method")
INVALID_WORKLIST_ID = err("invalid_worklist", "Invalid worklist ID")
INACTIVE = err("invalid_worklist", "Worklist is inactive")
INVALIDE_WORKLIST = err("invalide_worklist", "Invalid worklist ID")
INVALID_IDS = err("invalid_submissionIds", "submissionIds must be an array of 1 to 25 strings")
INVALID_ADMIN = err("invalid_admin", "Invalid admin")
INVALID_PAYLOAD = err("invalid_payload", "Invalid payload")
RECORD_NOT_FOUND = err("invalid_record", "Record not found")
BAD_KEYS = [None, {"x-api-key": "wrong-key"}, {"x-api-key": ""}]


def missing_params(names: str) -> dict[str, str]:
    return err("missing_required_parameters", f"Missing required parameters: {names}")


def some_records_missing(count: int) -> dict[str, Any]:
    body: dict[str, Any] = err("invalid_record", "Some records do not exist")
    return {**body, "details": [MISSING_RECORD] * count}


def new_worklist(client: TestClient, wid: str, project: str = "default") -> None:
    r = client.post(f"/__admin/projects/{project}/worklists", json={"id": wid, "name": wid})
    assert r.status_code == 201, r.text


def approved(service: Service, project: str = "default") -> str:
    sub = service.create_submission(project, {"kyc": {"result": "approved"}})
    return str(sub["submission_id"])


def rejected(service: Service) -> str:
    return str(
        service.create_submission("default", {"kyc": {"result": "rejected"}})["submission_id"]
    )


def watchlist_person(client: TestClient) -> str:
    body = {"entry_id": "WL-0001", "overrides": {"kyc": {"result": "approved"}}}
    r = client.post(f"{CONTROL}/watchlist-submissions", json=body)
    assert r.status_code == 201, r.text
    return str(r.json()["submission_id"])


def register(
    client: TestClient, sids: Any, wid: str = WID, admin: str = ADMIN, **kw: Any
) -> Response:
    return client.post(f"{URL}/{wid}", json={"submissionIds": sids, "admin": admin}, **kw)


def registered(client: TestClient, sid: str, wid: str = WID, **kw: Any) -> str:
    r = register(client, [sid], wid, **kw)
    assert r.status_code == 200, r.text
    return str(r.json()["successResults"][0]["recordIds"][0])


def delete(client: TestClient, body: Any, wid: str = WID, **kw: Any) -> Response:
    return client.request("DELETE", f"{URL}/{wid}", json=body, **kw)


def ok_entry(sid: str, rid: str) -> dict[str, Any]:
    return {"submissionId": sid, "recordIds": [rid], "status": "success"}


def failed_entry(sid: str, error: str) -> dict[str, Any]:
    return {"submissionId": sid, "recordIds": [], "status": "failed", "error": error}


def refused(
    client: TestClient,
    service: Service,
    method: str,
    url: str,
    status: int,
    body: dict[str, Any],
    **kw: Any,
) -> None:
    """The call gets exactly ``status`` and ``body`` and changes nothing."""
    assert_refused(lambda: client.request(method, url, **kw), status, body, service=service)


@pytest.fixture
def wid(client: TestClient) -> str:
    new_worklist(client, WID)
    return WID


@pytest.fixture
def other_wid(client: TestClient) -> str:
    new_worklist(client, OTHER_WID)
    return OTHER_WID


@pytest.fixture
def rid(client: TestClient, service: Service, wid: str) -> str:
    return registered(client, approved(service), wid)


# --- POST /submission/aml/monitor/{worklistId} ---


def test_mixed_batch(client: TestClient, service: Service, wid: str) -> None:
    good, bad = approved(service), rejected(service)
    nameless, dobless = approved(service), approved(service)
    for sid, field in ((nameless, "full_name"), (dobless, "date_of_birth")):
        params = {"submission_id": sid, "fields": "data", "data_fields": field}
        assert client.delete("/v3/submission/partial", params=params).status_code == 200
    r = register(client, [good, bad, "no-such-id", nameless, dobless])
    assert r.status_code == 200, r.text
    body = r.json()
    rid = body["successResults"][0]["recordIds"][0]
    assert isinstance(rid, str) and rid
    assert body == {
        "success": True,
        "successCount": 1,
        "failedCount": 4,
        "successResults": [ok_entry(good, rid)],
        "failedResults": [
            failed_entry(bad, f"This submission is not approved: {bad}"),
            failed_entry("no-such-id", "Cannot find submission: no-such-id"),
            failed_entry(nameless, f"Invalid fullName or birthDate: {nameless}"),
            failed_entry(dobless, f"Invalid fullName or birthDate: {dobless}"),
        ],
    }
    assert client.get(f"{URL}/{wid}/{rid}").status_code == 200


def test_whole_data_deleted_fails(client: TestClient, service: Service, wid: str) -> None:
    sid = approved(service)
    params = {"submission_id": sid, "fields": "data"}
    assert client.delete("/v3/submission/partial", params=params).status_code == 200
    body = {
        **err("all_submissions_failed", "All submissions failed"),
        "success": False,
        "successCount": 0,
        "failedCount": 1,
        "successResults": [],
        "failedResults": [failed_entry(sid, f"Invalid fullName or birthDate: {sid}")],
    }
    refused(client, service, "POST", f"{URL}/{wid}", 500, body,
            json={"submissionIds": [sid], "admin": ADMIN})  # fmt: skip


def expected_record(
    service: Service, sid: str, rid: str, project: str = "default"
) -> dict[str, Any]:
    sub = service.stored_submission(project, sid)
    data = sub["data"]
    return {
        "id": rid,
        "name": data["full_name"],
        "submissionId": sid,
        "nationality": data["nationality"],
        "dob": data["date_of_birth"],
        "email": sub["email"],
        "admin": ADMIN,
        "falsePositiveCount": 0,
        "truePositiveCount": 0,
        "discardedCount": 0,
    }


def check_record(record: dict[str, Any], expected: dict[str, Any], start: datetime) -> None:
    assert {k: record[k] for k in expected} == expected
    assert set(record) <= set(expected) | {"status", "updateTime", "openCount", "memo", "tags"}
    assert isinstance(record.get("memo", ""), str)
    assert isinstance(record.get("tags", []), list)
    assert start < parse_iso(record["updateTime"])


def test_record_fields(client: TestClient, service: Service, wid: str) -> None:
    sid = approved(service)
    start = service.project("default").clock.peek()
    rid = registered(client, sid)
    r = client.get(f"{URL}/{wid}/{rid}")
    assert r.status_code == 200, r.text
    record = r.json()
    check_record(record, expected_record(service, sid, rid), start)
    assert parse_iso(record["updateTime"]) <= service.project("default").clock.peek()
    assert (record["status"], record["openCount"]) == ("screenedNoMatches", 0)


def test_watchlist_record(client: TestClient, service: Service, wid: str) -> None:
    sid = watchlist_person(client)
    start = service.project("default").clock.peek()
    rid = registered(client, sid)
    record = client.get(f"{URL}/{wid}/{rid}").json()
    expected = expected_record(service, sid, rid)
    assert (expected["name"], expected["dob"], expected["nationality"]) == (
        "Dravomir Kestrelov",
        "1968-03-14",
        "RUS",
    )
    check_record(record, expected, start)
    assert record["status"] == "screenedWithMatches"
    assert record["openCount"] >= 1


def test_register_25(client: TestClient, service: Service, wid: str) -> None:
    sids = [approved(service) for _ in range(25)]
    r = register(client, sids)
    assert r.status_code == 200, r.text
    body = r.json()
    assert (body["success"], body["successCount"], body["failedCount"]) == (True, 25, 0)
    assert [e["submissionId"] for e in body["successResults"]] == sids
    rids = [e["recordIds"][0] for e in body["successResults"]]
    assert len(set(rids)) == 25
    assert body["failedResults"] == []
    assert all(client.get(f"{URL}/{wid}/{rid}").status_code == 200 for rid in rids)


@pytest.mark.parametrize("count", [0, 26])
def test_register_count_limits(client: TestClient, service: Service, wid: str, count: int) -> None:
    sids = [approved(service) for _ in range(count)]
    refused(client, service, "POST", f"{URL}/{wid}", 400, INVALID_IDS,
            json={"submissionIds": sids, "admin": ADMIN})  # fmt: skip


@pytest.mark.parametrize("sids", ["abc", [1], {"id": "x"}, 5])
def test_bad_submission_ids(client: TestClient, service: Service, wid: str, sids: Any) -> None:
    refused(client, service, "POST", f"{URL}/{wid}", 400, INVALID_IDS,
            json={"submissionIds": sids, "admin": ADMIN})  # fmt: skip


def test_all_failed(client: TestClient, service: Service, wid: str) -> None:
    bad = rejected(service)
    body = {
        **err("all_submissions_failed", "All submissions failed"),
        "success": False,
        "successCount": 0,
        "failedCount": 2,
        "successResults": [],
        "failedResults": [
            failed_entry(bad, f"This submission is not approved: {bad}"),
            failed_entry("nope", "Cannot find submission: nope"),
        ],
    }
    refused(client, service, "POST", f"{URL}/{wid}", 500, body,
            json={"submissionIds": [bad, "nope"], "admin": ADMIN})  # fmt: skip


@pytest.mark.parametrize(
    ("kw", "names"),
    [
        ({"json": {}}, "submissionIds, admin"),
        ({}, "submissionIds, admin"),
        ({"json": {"submissionIds": ["x"]}}, "admin"),
        ({"json": {"submissionIds": ["x"], "admin": ""}}, "admin"),
        ({"json": {"admin": ADMIN}}, "submissionIds"),
        ({"content": b"not json", "headers": {"content-type": "application/json"}},
         "submissionIds, admin"),
    ],
)  # fmt: skip
def test_missing_parameters(
    client: TestClient, service: Service, wid: str, kw: dict[str, Any], names: str
) -> None:
    refused(client, service, "POST", f"{URL}/{wid}", 400, missing_params(names), **kw)


def test_unregistered_admin(client: TestClient, service: Service, wid: str) -> None:
    refused(client, service, "POST", f"{URL}/{wid}", 400, INVALID_ADMIN,
            json={"submissionIds": [approved(service)], "admin": STRANGER})  # fmt: skip


def test_unknown_worklist(client: TestClient, service: Service, wid: str) -> None:
    refused(client, service, "POST", f"{URL}/nope", 400, INVALID_WORKLIST_ID,
            json={"submissionIds": [approved(service)], "admin": ADMIN})  # fmt: skip


def test_inactive_worklist(client: TestClient, service: Service, wid: str) -> None:
    sid = approved(service)
    r = client.post(f"{CONTROL}/worklists/{wid}/deactivate")
    assert (r.status_code, r.json()["active"]) == (200, False)
    refused(client, service, "POST", f"{URL}/{wid}", 400, INACTIVE,
            json={"submissionIds": [sid], "admin": ADMIN})  # fmt: skip
    r = client.post(f"{CONTROL}/worklists/{wid}/activate")
    assert (r.status_code, r.json()["active"]) == (200, True)
    assert register(client, [sid]).json()["successCount"] == 1


def test_created_inactive(client: TestClient, service: Service) -> None:
    r = client.post(f"{CONTROL}/worklists", json={"id": "off", "name": "Off", "active": False})
    assert (r.status_code, r.json()["active"]) == (201, False)
    refused(client, service, "POST", f"{URL}/off", 400, INACTIVE,
            json={"submissionIds": [approved(service)], "admin": ADMIN})  # fmt: skip


def test_inactive_still_readable(client: TestClient, service: Service, rid: str) -> None:
    assert client.post(f"{CONTROL}/worklists/{WID}/deactivate").status_code == 200
    assert client.get(f"{URL}/{WID}/{rid}").json()["id"] == rid
    r = delete(client, {"recordIds": [rid], "admin": ADMIN})
    assert (r.status_code, r.json()) == (200, {"message": "records deleted successfully"})


def test_monitoring_disabled(client: TestClient, service: Service, wid: str) -> None:
    r = client.patch(CONTROL, json={"options": {"monitoring_enabled": False}})
    assert r.status_code == 200, r.text
    refused(client, service, "POST", f"{URL}/{wid}", 400, INVALID_PROJECT,
            json={"submissionIds": [approved(service)], "admin": ADMIN})  # fmt: skip


@pytest.mark.parametrize("headers", BAD_KEYS)
def test_register_bad_key(
    raw_client: TestClient, service: Service, wid: str, headers: dict[str, str] | None
) -> None:
    refused(raw_client, service, "POST", f"{URL}/{wid}", 400, INVALID_PROJECT, headers=headers,
            json={"submissionIds": [approved(service)], "admin": ADMIN})  # fmt: skip


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("PUT", f"/{WID}"),
        ("PATCH", f"/{WID}"),
        ("GET", f"/{WID}"),
        ("GET", ""),
        ("POST", ""),
        ("PUT", ""),
        ("PATCH", ""),
        ("DELETE", ""),
        ("POST", f"/{WID}/r1"),
        ("PUT", f"/{WID}/r1"),
        ("PATCH", f"/{WID}/r1"),
        ("DELETE", f"/{WID}/r1"),
    ],
)
def test_invalid_method(
    client: TestClient, service: Service, wid: str, method: str, path: str
) -> None:
    refused(client, service, method, f"{URL}{path}", 400, INVALID_PATH,
            json={"submissionIds": [approved(service)], "admin": ADMIN})  # fmt: skip


@pytest.mark.parametrize(
    ("error", "body"),
    [
        ("processing_failed", err("processing_failed", "Processing failed")),
        ("Processing failed", err("processing_failed", "Processing failed")),
        ("internal_server_error", err("internal_server_error", "Internal server error")),
    ],
)
def test_fault_only_errors(
    client: TestClient, service: Service, wid: str, error: str, body: dict[str, str]
) -> None:
    rule = {"match": {"method": "POST", "path": f"{URL}/*"}, "error": error, "times": 1}
    assert client.post(f"{CONTROL}/faults", json=rule).status_code == 201
    sid = approved(service)
    refused(client, service, "POST", f"{URL}/{wid}", 500, body,
            json={"submissionIds": [sid], "admin": ADMIN})  # fmt: skip
    assert register(client, [sid]).status_code == 200


# --- GET /submission/aml/monitor/{worklistId}/{recordId} ---


def test_get_unknown_record(client: TestClient, service: Service, rid: str) -> None:
    refused(client, service, "GET", f"{URL}/{WID}/no-such-record", 400, RECORD_NOT_FOUND)


def test_get_other_worklists_record(
    client: TestClient, service: Service, rid: str, other_wid: str
) -> None:
    refused(client, service, "GET", f"{URL}/{other_wid}/{rid}", 400, RECORD_NOT_FOUND)


def test_get_unknown_worklist(client: TestClient, service: Service, rid: str) -> None:
    refused(client, service, "GET", f"{URL}/nope/{rid}", 400, INVALIDE_WORKLIST)


@pytest.mark.parametrize("headers", BAD_KEYS)
def test_get_bad_key(
    raw_client: TestClient, service: Service, rid: str, headers: dict[str, str] | None
) -> None:
    refused(raw_client, service, "GET", f"{URL}/{WID}/{rid}", 400, INVALID_PROJECT,
            headers=headers)  # fmt: skip


def secure_project(client: TestClient, service: Service) -> tuple[str, str]:
    service.create_project(
        {"project_id": "sec", "api_key": "sec-key", "admins": [ADMIN],
         "options": {"secure_transfer": True}}
    )  # fmt: skip
    new_worklist(client, "wl-sec", "sec")
    sid = approved(service, "sec")
    return sid, registered(client, sid, "wl-sec", headers={"x-api-key": "sec-key"})


def test_get_encrypted(client: TestClient, service: Service) -> None:
    start = service.project("default").clock.peek()
    sid, rid = secure_project(client, service)
    r = client.get(f"{URL}/wl-sec/{rid}", headers={"x-api-key": "sec-key"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert set(body) == {"data", "isEncrypted"} and body["isEncrypted"] is True
    record = crypto.decrypt(body["data"], "sec-key")
    check_record(record, expected_record(service, sid, rid, "sec"), start)
    assert (record["status"], record["openCount"]) == ("screenedNoMatches", 0)


def test_secure_delete_is_plain(client: TestClient, service: Service) -> None:
    _, rid = secure_project(client, service)
    key = {"x-api-key": "sec-key"}
    r = delete(client, {"recordIds": [rid], "admin": ADMIN}, "wl-sec", headers=key)
    assert (r.status_code, r.json()) == (200, {"message": "records deleted successfully"})
    assert client.get(f"{URL}/wl-sec/{rid}", headers=key).json() == RECORD_NOT_FOUND


def test_encrypted_errors_are_plain(client: TestClient, service: Service) -> None:
    secure_project(client, service)
    refused(client, service, "GET", f"{URL}/wl-sec/nope", 400, RECORD_NOT_FOUND,
            headers={"x-api-key": "sec-key"})  # fmt: skip


# --- DELETE /submission/aml/monitor/{worklistId} ---


def test_delete(client: TestClient, service: Service, rid: str) -> None:
    r = delete(client, {"recordIds": [rid], "admin": ADMIN})
    assert (r.status_code, r.json()) == (200, {"message": "records deleted successfully"})
    assert client.get(f"{URL}/{WID}/{rid}").json() == RECORD_NOT_FOUND


def test_delete_25(client: TestClient, service: Service, wid: str) -> None:
    r = register(client, [approved(service) for _ in range(25)])
    rids = [e["recordIds"][0] for e in r.json()["successResults"]]
    r = delete(client, {"recordIds": rids, "admin": ADMIN})
    assert (r.status_code, r.json()) == (200, {"message": "records deleted successfully"})
    assert all(client.get(f"{URL}/{wid}/{x}").status_code == 400 for x in rids)


def test_delete_26(client: TestClient, service: Service, wid: str) -> None:
    r = register(client, [approved(service) for _ in range(25)])
    rids = [e["recordIds"][0] for e in r.json()["successResults"]]
    refused(client, service, "DELETE", f"{URL}/{wid}", 400, INVALID_PAYLOAD,
            json={"recordIds": [*rids, "extra"], "admin": ADMIN})  # fmt: skip


@pytest.mark.parametrize(
    "kw",
    [
        {"json": {"recordIds": [], "admin": ADMIN}},
        {"json": {"recordIds": "RID", "admin": ADMIN}},
        {"json": {"recordIds": [1], "admin": ADMIN}},
        {"json": {"admin": ADMIN}},
        {"json": {"recordIds": ["RID"]}},
        {"json": ["RID"]},
        {},
        {"content": b"{not json", "headers": {"content-type": "application/json"}},
    ],
)
def test_delete_bad_payload(
    client: TestClient, service: Service, rid: str, kw: dict[str, Any]
) -> None:
    refused(client, service, "DELETE", f"{URL}/{WID}", 400, INVALID_PAYLOAD, **kw)
    assert client.get(f"{URL}/{WID}/{rid}").status_code == 200


def test_delete_unregistered_admin(client: TestClient, service: Service, rid: str) -> None:
    refused(client, service, "DELETE", f"{URL}/{WID}", 400, INVALID_ADMIN,
            json={"recordIds": [rid], "admin": STRANGER})  # fmt: skip


def test_delete_some_missing(client: TestClient, service: Service, wid: str) -> None:
    r = register(client, [approved(service), approved(service)])
    first, second = (e["recordIds"][0] for e in r.json()["successResults"])
    r = delete(client, {"recordIds": [first, "gone-1", second, "gone-2"], "admin": ADMIN})
    assert (r.status_code, r.json()) == (400, some_records_missing(2))
    for x in (first, second):
        assert client.get(f"{URL}/{wid}/{x}").json() == RECORD_NOT_FOUND


def test_delete_all_missing(client: TestClient, service: Service, rid: str) -> None:
    refused(client, service, "DELETE", f"{URL}/{WID}", 400, some_records_missing(3),
            json={"recordIds": ["a", "b", "c"], "admin": ADMIN})  # fmt: skip


def test_delete_other_worklists_record(
    client: TestClient, service: Service, rid: str, other_wid: str
) -> None:
    refused(client, service, "DELETE", f"{URL}/{other_wid}", 400, some_records_missing(1),
            json={"recordIds": [rid], "admin": ADMIN})  # fmt: skip
    assert client.get(f"{URL}/{WID}/{rid}").json()["id"] == rid


def test_delete_mixed_worklists(
    client: TestClient, service: Service, rid: str, other_wid: str
) -> None:
    mine = registered(client, approved(service), other_wid)
    r = delete(client, {"recordIds": [rid, mine], "admin": ADMIN}, other_wid)
    assert (r.status_code, r.json()) == (400, some_records_missing(1))
    assert client.get(f"{URL}/{other_wid}/{mine}").json() == RECORD_NOT_FOUND
    assert client.get(f"{URL}/{WID}/{rid}").json()["id"] == rid


def test_delete_unknown_worklist(client: TestClient, service: Service, rid: str) -> None:
    refused(client, service, "DELETE", f"{URL}/nope", 400, INVALIDE_WORKLIST,
            json={"recordIds": [rid], "admin": ADMIN})  # fmt: skip


@pytest.mark.parametrize("headers", BAD_KEYS)
def test_delete_bad_key(
    raw_client: TestClient, service: Service, rid: str, headers: dict[str, str] | None
) -> None:
    refused(raw_client, service, "DELETE", f"{URL}/{WID}", 400, INVALID_PROJECT, headers=headers,
            json={"recordIds": [rid], "admin": ADMIN})  # fmt: skip


# --- control API: worklists ---


def test_create_worklist(client: TestClient) -> None:
    r = client.post(f"{CONTROL}/worklists", json={"id": "wl-1", "name": "Retail"})
    assert r.status_code == 201, r.text
    body = r.json()
    assert isinstance(body.pop("created_at"), str)
    assert body == {"id": "wl-1", "name": "Retail", "active": True, "record_count": 0}


def test_create_worklist_generated_id(client: TestClient) -> None:
    r = client.post(f"{CONTROL}/worklists", json={"name": "Anon"})
    assert r.status_code == 201, r.text
    assert isinstance(r.json()["id"], str) and r.json()["id"]


def test_list_worklists(client: TestClient, service: Service, rid: str, other_wid: str) -> None:
    r = client.get(f"{CONTROL}/worklists")
    assert r.status_code == 200
    counts = {w["id"]: (w["active"], w["record_count"]) for w in r.json()["worklists"]}
    assert counts == {DEFAULT_WORKLIST: (True, 0), WID: (True, 1), OTHER_WID: (True, 0)}


def test_the_default_project_starts_with_an_active_worklist(client: TestClient) -> None:
    """The seeded worklist takes records with no set-up (the OpenAPI example id)."""
    listed = client.get(f"{CONTROL}/worklists").json()["worklists"]
    assert [(w["id"], w["name"], w["active"]) for w in listed] == [
        (DEFAULT_WORKLIST, "Default worklist", True)
    ]
    approved = next(
        s["submission_id"]
        for s in client.get("/v3/submission", headers=KEY).json()["Items"]
        if s["kyc"]["result"] == "approved"
    )
    body = {"submissionIds": [approved], "admin": ADMIN}
    r = client.post(f"/v3/submission/aml/monitor/{DEFAULT_WORKLIST}", json=body, headers=KEY)
    assert r.status_code == 200, r.text
    assert r.json()["successCount"] == 1


def test_duplicate_worklist(client: TestClient, service: Service, wid: str) -> None:
    before = snapshot(service)
    r = client.post(f"{CONTROL}/worklists", json={"id": wid, "name": "again"})
    assert r.status_code == 409, r.text
    assert snapshot(service) == before


@pytest.mark.parametrize("action", ["activate", "deactivate"])
def test_toggle_unknown_worklist(client: TestClient, service: Service, action: str) -> None:
    before = snapshot(service)
    assert client.post(f"{CONTROL}/worklists/nope/{action}").status_code == 404
    assert snapshot(service) == before


# --- isolation between projects ---


@pytest.fixture
def other_key(service: Service) -> dict[str, str]:
    service.create_project({"project_id": "p2", "api_key": "k2", "admins": [ADMIN]})
    return {"x-api-key": "k2"}


def test_other_project_cannot_read(
    client: TestClient, service: Service, rid: str, other_key: dict[str, str]
) -> None:
    refused(client, service, "GET", f"{URL}/{WID}/{rid}", 400, INVALIDE_WORKLIST,
            headers=other_key)  # fmt: skip


def test_other_project_cannot_delete(
    client: TestClient, service: Service, rid: str, other_key: dict[str, str]
) -> None:
    refused(client, service, "DELETE", f"{URL}/{WID}", 400, INVALIDE_WORKLIST, headers=other_key,
            json={"recordIds": [rid], "admin": ADMIN})  # fmt: skip
    assert client.get(f"{URL}/{WID}/{rid}").json()["id"] == rid


def test_other_project_same_worklist_id(
    client: TestClient, service: Service, rid: str, other_key: dict[str, str]
) -> None:
    new_worklist(client, WID, "p2")
    refused(client, service, "GET", f"{URL}/{WID}/{rid}", 400, RECORD_NOT_FOUND,
            headers=other_key)  # fmt: skip
    refused(client, service, "DELETE", f"{URL}/{WID}", 400, some_records_missing(1),
            headers=other_key, json={"recordIds": [rid], "admin": ADMIN})  # fmt: skip


def test_other_project_cannot_register(
    client: TestClient, service: Service, wid: str, other_key: dict[str, str]
) -> None:
    sid = approved(service)
    refused(client, service, "POST", f"{URL}/{wid}", 400, INVALID_WORKLIST_ID,
            headers=other_key, json={"submissionIds": [sid], "admin": ADMIN})  # fmt: skip
