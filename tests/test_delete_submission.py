"""DELETE /submission (api-v3.md 4.3, 7.2a; gaps.md "DELETE /submission and /partial")."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from starlette.testclient import TestClient

from conftest import assert_refused, some_submission
from idv_mock import Service

URL = "/v3/submission"


def copy(sub: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = orjson.loads(orjson.dumps(sub))
    return result


def read_ids(client: TestClient, **params: str) -> list[str]:
    r = client.get(URL, params=params)
    assert r.status_code == 200, r.text
    return [item["submission_id"] for item in r.json()["Items"]]


def refused(
    client: TestClient, service: Service, message: str, params: dict[str, str], **kw: Any
) -> None:
    """DELETE /submission answers 400 with exactly ``message`` and changes nothing."""
    expected = {"message": message, "statusCode": 400}
    assert_refused(lambda: client.delete(URL, params=params, **kw), 400, expected, service=service)


# --- success ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["submission_id", "submissionId"])
def test_delete_succeeds_with_either_id_name(
    client: TestClient, service: Service, name: str
) -> None:
    sid = some_submission(service)["submission_id"]
    r = client.delete(URL, params={name: sid})
    assert r.status_code == 200
    assert r.json() == {
        "message": "success",
        "content": f"Submission {sid} deleted successfully.",
        "statusCode": 200,
    }
    assert service.stored_submission("default", sid)["status"] == "Deleted Submission"


def test_delete_with_admin_name_succeeds(client: TestClient, service: Service) -> None:
    sid = some_submission(service, 2)["submission_id"]
    r = client.delete(URL, params={"submission_id": sid, "admin_name": "admin@example.com"})
    assert r.status_code == 200
    assert r.json() == {
        "message": "success",
        "content": f"Submission {sid} deleted successfully.",
        "statusCode": 200,
    }


def test_read_of_deleted_submission_shows_only_retained_fields(
    client: TestClient, service: Service
) -> None:
    sub = copy(some_submission(service))
    sid = sub["submission_id"]
    assert client.delete(URL, params={"submission_id": sid}).status_code == 200
    r = client.get(URL, params={"submission_id": sid})
    assert r.status_code == 200
    assert r.json() == {
        "Items": [
            {
                "submission_id": sid,
                "created_at": sub["created_at"],
                "data": {"idType": sub["data"]["idType"]},
                "kyc": {"result": sub["kyc"]["result"]},
                "status": "Deleted Submission",
            }
        ]
    }


def test_stored_deleted_submission_holds_no_personal_data(
    client: TestClient, service: Service
) -> None:
    sub = copy(some_submission(service, 1))
    sid = sub["submission_id"]
    assert sub["aml"]
    assert client.delete(URL, params={"submission_id": sid}).status_code == 200
    stored = service.stored_submission("default", sid)
    assert set(stored) <= {"submission_id", "created_at", "data", "kyc", "status"}
    assert set(stored["data"]) <= {"idType"}
    assert set(stored["kyc"]) <= {"result"}
    text = orjson.dumps(stored).decode()
    personal = [
        sub["data"][k]
        for k in ("full_name", "date_of_birth", "documentNumber", "identityNumber")
        if sub["data"].get(k)
    ]
    personal += [sub["email"], sub["userid"], sub["image"]["idImage"]]
    personal += [sub["image"]["selfieImage"], sub["applicant_id"]]
    for value in personal:
        assert value not in text


def test_deleted_submission_is_not_found_by_userid_or_email(
    client: TestClient, service: Service
) -> None:
    sub = copy(some_submission(service))
    sid = sub["submission_id"]
    assert sid in read_ids(client, userid=sub["userid"])
    assert sid in read_ids(client, email=sub["email"])
    assert client.delete(URL, params={"submission_id": sid}).status_code == 200
    assert sid not in read_ids(client, userid=sub["userid"])
    assert sid not in read_ids(client, email=sub["email"])


def test_deleted_submission_is_no_duplicate_target(client: TestClient, service: Service) -> None:
    identity = {"full_name": "Quill Zephyrine", "date_of_birth": "1991-04-05", "nationality": "GBR"}
    sid = service.create_submission("default", {"data": identity})["submission_id"]
    control = service.create_submission("default", {"data": identity})
    assert sid in control["duplicated_users"]
    assert client.delete(URL, params={"submission_id": sid}).status_code == 200
    newcomer = service.create_submission("default", {"data": identity})
    assert sid not in newcomer["duplicated_users"]


def test_deleting_again_is_refused(client: TestClient, service: Service) -> None:
    sid = some_submission(service)["submission_id"]
    assert client.delete(URL, params={"submission_id": sid}).status_code == 200
    refused(client, service, "not Exist Submission Data", {"submission_id": sid})


# --- errors of 7.2a ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "params",
    [{}, {"submission_id": ""}, {"admin_name": "admin@example.com"}],
    ids=["none", "empty", "only-admin"],
)
def test_missing_id_is_refused(
    client: TestClient, service: Service, params: dict[str, str]
) -> None:
    refused(client, service, "not Exist Submission ID", params)


def test_unknown_id_is_refused(client: TestClient, service: Service) -> None:
    refused(client, service, "not Exist Submission Data", {"submission_id": "no-such-id"})


def test_missing_key_is_refused(raw_client: TestClient, service: Service) -> None:
    sid = some_submission(service)["submission_id"]
    refused(raw_client, service, "not Exist Project Data", {"submission_id": sid})


@pytest.mark.parametrize("key", ["wrong-key", ""])
def test_wrong_key_is_refused(raw_client: TestClient, service: Service, key: str) -> None:
    sid = some_submission(service)["submission_id"]
    params = {"submission_id": sid}
    headers = {"x-api-key": key}
    refused(raw_client, service, "not Exist Project Data", params, headers=headers)


def test_key_of_another_project_cannot_delete(raw_client: TestClient, service: Service) -> None:
    service.create_project({"project_id": "other", "api_key": "other-key", "admins": ["a@b.co"]})
    sid = some_submission(service)["submission_id"]
    params = {"submission_id": sid}
    headers = {"x-api-key": "other-key"}
    refused(raw_client, service, "not Exist Submission Data", params, headers=headers)
    assert "status" not in service.stored_submission("default", sid)
