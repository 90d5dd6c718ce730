"""POST /v3/submission/review: the client's decision on a pending submission (endpoints.md 5).

Every documented message over HTTP, the decision and what it writes, the webhooks it
sends (``updated`` with ``updateFields``, then ``approved`` / ``rejected``), the query
form, and the project option ``reviewer``.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from conftest import ADMIN, assert_refused
from idv_mock import Service
from idv_mock.delivery.receiver import WebhookReceiver

URL = "/v3/submission/review"


@pytest.fixture
def pending(service: Service) -> str:
    sub = service.create_submission("default", {"kyc": {"result": "pending"}})
    return str(sub["submission_id"])


def msg(text: str) -> dict[str, str]:
    return {"message": text}


def body(sid: str, **changes: Any) -> dict[str, Any]:
    return {"admin": ADMIN, "submissionId": sid, "status": "approved", **changes}


def test_approve_a_pending_submission(
    http: httpx.Client, service: Service, pending: str, hook: WebhookReceiver
) -> None:
    r = http.post(URL, json=body(pending))
    assert r.status_code == 200
    assert r.json() == {
        "submissionId": pending,
        "message": "Success to review submission.",
        "finalStatus": "approved",
    }
    stored = service.stored_submission("default", pending)
    assert stored["kyc"]["result"] == "approved" and stored["reviewer"] == "agent"
    assert stored["kyc_result_at"] == stored["updated_at"]
    (delivered,) = hook.wait_for(1)
    assert delivered.body["webhook_trigger"] == "approved"
    assert delivered.body["kyc_result"]["status"] == "approved"
    assert delivered.body["kyc_result"]["reviewer"] == "agent"


def test_reject_with_a_comment_and_update_fields(
    http: httpx.Client, service: Service, pending: str, hook: WebhookReceiver
) -> None:
    fields = {"fullName": "Jane Roe", "birthDate": "1990-02-03", "idType": "passport"}
    r = http.post(
        URL, json=body(pending, status="rejected", rejectComment="Blurry", updateFields=fields)
    )
    assert r.json()["finalStatus"] == "rejected"
    stored = service.stored_submission("default", pending)
    assert (stored["kyc"]["result"], stored["kyc"]["comment"]) == ("rejected", ["Blurry"])
    assert stored["kyc"]["commentCode"] == ["other"]
    data = stored["data"]
    assert (data["full_name"], data["date_of_birth"], data["idType"]) == (
        "Jane Roe",
        "1990-02-03",
        "passport",
    )
    updated, rejected = hook.wait_for(2)
    assert updated.body["webhook_trigger"] == "updated"
    y, mo, d, h, mi, s, ms = stored["pending_at"].split("-")  # since it was made pending
    assert updated.body["data"] == {
        "update": ["fullName", "birthDate", "idType"],
        "kyc_result": "rejected",
        "pending_at": f"{y}-{mo}-{d}T{h}:{mi}:{s}.{ms}Z",
        "reviewer": "agent",
    }
    assert rejected.body["webhook_trigger"] == "rejected"
    assert rejected.body["kyc_result"]["comment"] == "Blurry"
    assert rejected.body["kyc_result"]["commentCode"] == "other"


def test_the_query_form_is_read_too(http: httpx.Client, service: Service, pending: str) -> None:
    params = {**body(pending), "updateFields": json.dumps({"gender": "female"})}
    r = http.post(URL, params=params)
    assert r.status_code == 200, r.text
    stored = service.stored_submission("default", pending)
    assert (stored["kyc"]["result"], stored["data"]["gender"]) == ("approved", "female")


def test_only_pending_submissions(http: httpx.Client, service: Service, pending: str) -> None:
    assert http.post(URL, json=body(pending)).status_code == 200
    error = msg("Only submissions in pending status can be reviewed")
    assert_refused(lambda: http.post(URL, json=body(pending)), 400, error, service=service)


def test_reviewer_agent_refuses_the_client(
    http: httpx.Client, service: Service, pending: str
) -> None:
    service.update_project("default", {"options": {"reviewer": "agent"}})
    error = msg("This submission cannot be reviewed by client")
    assert_refused(lambda: http.post(URL, json=body(pending)), 400, error, service=service)


@pytest.mark.parametrize(
    ("change", "text"),
    [
        ({"admin": None}, "admin is required."),
        ({"admin": ""}, "admin is required."),
        ({"admin": "nobody@example.com"},
         "Access denied. The admin is not registered in the project."),
        ({"submissionId": None}, "Submission Id is required."),
        ({"submissionId": "no-such-id"}, "Invalid Submission Id."),
        ({"status": "pending"}, "Invalid status"),
        ({"status": None}, "Invalid status"),
        ({"status": "rejected"}, "Reject comment is required"),
        ({"status": "rejected", "rejectComment": " "}, "Reject comment is required"),
        ({"updateFields": "fullName=x"}, "Invalid data format."),
        ({"updateFields": {"kycStatus": "approved"}}, "Invalid data format."),
        ({"updateFields": {"birthDate": "03/02/1990"}}, "Invalid data format."),
        ({"updateFields": {"fullName": 5}}, "Invalid data format."),
    ],
)  # fmt: skip
def test_each_documented_error(
    http: httpx.Client, service: Service, pending: str, change: dict[str, Any], text: str
) -> None:
    sent = {k: v for k, v in {**body(pending), **change}.items() if v is not None}
    assert_refused(lambda: http.post(URL, json=sent), 400, msg(text), service=service)


def test_key_and_body_errors(http: httpx.Client, service: Service, pending: str) -> None:
    wrong = {"x-api-key": "wrong"}
    error = msg("Project not found.")
    assert_refused(lambda: http.post(URL, json=body(pending), headers=wrong), 400, error)
    bad = msg("Invalid data format.")
    assert_refused(lambda: http.post(URL, content=b"{not json"), 400, bad, service=service)
    assert_refused(lambda: http.post(URL, content=b"[1]"), 400, bad, service=service)


def test_a_deleted_submission_is_invalid(
    http: httpx.Client, service: Service, pending: str
) -> None:
    service.delete(service.project("default"), pending, None)
    assert_refused(http.post(URL, json=body(pending)), 400, msg("Invalid Submission Id."))


def test_update_fields_are_masked_and_reindexed_as_patch_does(
    http: httpx.Client, service: Service, pending: str
) -> None:
    service.update_project("default", {"options": {"option_mask_idNumber": True}})
    fields = {"identityNumber": "900101-1234567"}
    assert http.post(URL, json=body(pending, updateFields=fields)).status_code == 200
    stored = service.stored_submission("default", pending)["data"]["identityNumber"]
    patched = service.create_submission("default", {"kyc": {"result": "pending"}})
    service.patch(service.project("default"), patched["submission_id"], ADMIN, fields)
    expected = service.stored_submission("default", patched["submission_id"])["data"]
    assert stored == expected["identityNumber"] != "900101-1234567"
