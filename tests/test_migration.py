"""POST /v3/submission/migration (endpoints.md 8, 10.3) with api-v3.md 7.2's table.

Every row of the table over HTTP (``processing_error`` through a fault rule), the
submission as the sheet maps it (no OCR, no images), the webhook, and Secure Data Transfer.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from conftest import ADMIN, API_KEY, assert_refused
from idv_mock import Service
from idv_mock.delivery.receiver import WebhookReceiver
from idv_mock.ground import crypto

URL = "/v3/submission/migration"
BODY = {
    "admin": ADMIN,
    "email": "jane@example.com",
    "fullName": "Jane Roe",
    "birthDate": "1990-02-03",
    "kycStatus": "approved",
    "idType": "passport",
    "issuingCountry": "KOR",
    "nationality": "USA",
    "gender": "female",
    "issueDate": "2020-01-01",
    "expireDate": "2030-01-01",
    "ipAddress": "203.0.113.9",
    "address_full": "1 Main St, Springfield",
    "cf1": "crm-77",
    "userid": "legacy-user-1",
}


def coded(code: str, message: str) -> dict[str, str]:
    return {"errorCode": code, "message": message}


def test_the_submission_is_created_as_mapped(
    http: httpx.Client, service: Service, hook: WebhookReceiver
) -> None:
    r = http.post(URL, json=BODY)
    assert r.status_code == 200
    sid = r.json()["submissionId"]
    assert r.json() == {"message": "success", "submissionId": sid}
    sub = service.stored_submission("default", sid)
    data = sub["data"]
    assert (sub["email"], sub["userid"], sub["kyc"]["result"]) == (
        "jane@example.com",
        "legacy-user-1",
        "approved",
    )
    assert (data["full_name"], data["date_of_birth"], data["idType"]) == (
        "Jane Roe",
        "1990-02-03",
        "passport",
    )
    assert (data["idcard_issuingCountry"], data["nationality"], data["gender"]) == (
        "KOR",
        "USA",
        "female",
    )
    assert (data["idcard_issueDate"], data["idcard_expireDate"]) == ("2020-01-01", "2030-01-01")
    assert (data["ip_address"], data["address_formatted"], data["cf1"]) == (
        "203.0.113.9",
        "1 Main St, Springfield",
        "crm-77",
    )
    assert "OCR_raw" not in sub and "ocr" not in sub
    assert set(sub["image"].values()) == {""}
    none = {"errorCode": "image_not_found", "message": "Image not found."}
    r = http.get("/v3/image", params={"submissionId": sid, "type": "idImage"})
    assert (r.status_code, r.json()) == (404, none)
    (delivered,) = hook.wait_for(1)
    assert (delivered.body["webhook_trigger"], delivered.body["submission_id"]) == ("approved", sid)
    found = http.get("/v3/submission", params={"submission_id": sid}).json()
    assert found["Items"][0]["kyc"]["result"] == "approved"


def without(*names: str) -> dict[str, Any]:
    return {k: v for k, v in BODY.items() if k not in names}


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (without("admin"), coded("missing_data", "Required input data is missing")),
        (without("email"), coded("missing_data", "Required input data is missing")),
        (without("fullName"), coded("missing_data", "Required input data is missing")),
        (without("birthDate"), coded("missing_data", "Required input data is missing")),
        ({**BODY, "kycStatus": ""}, coded("missing_data", "Required input data is missing")),
        ({**BODY, "nickname": "J"}, coded("invalid_parameter", "invalid parameter: nickname")),
        ({**BODY, "birthDate": "03/02/1990"}, coded("invalid_format", "invalid format: birthDate")),
        ({**BODY, "kycStatus": "pending"}, coded("invalid_format", "invalid format: kycStatus")),
        ({**BODY, "email": "not-an-email"}, coded("invalid_format", "invalid format: email")),
        ({**BODY, "issuingCountry": "KR"},
         coded("invalid_format", "invalid format: issuingCountry")),
        ({**BODY, "idType": "drvlic"}, coded("invalid_format", "invalid format: idType")),
        ({**BODY, "cf1": 7}, coded("invalid_format", "invalid format: cf1")),
        ({**BODY, "ipAddress": "not-an-ip"}, coded("invalid_format", "invalid format: ipAddress")),
        ({**BODY, "admin": "nobody@example.com"}, coded("invalid_admin", "Invalid admin")),
    ],
)  # fmt: skip
def test_the_7_2_table(http: httpx.Client, service: Service, body: Any, error: Any) -> None:
    assert_refused(lambda: http.post(URL, json=body), 400, error, service=service)


def test_key_body_and_processing_errors(http: httpx.Client, service: Service) -> None:
    project = coded("invalid_project", "Invalid project")
    wrong = {"x-api-key": "wrong"}
    assert_refused(lambda: http.post(URL, json=BODY, headers=wrong), 400, project, service=service)
    payload = coded("invalid_payload", "Invalid payload")
    assert_refused(lambda: http.post(URL, content=b"{"), 400, payload, service=service)
    assert_refused(lambda: http.post(URL, json=["x"]), 400, payload, service=service)
    rule = {"match": {"method": "POST", "path": URL}, "error": "processing_error"}
    assert http.post("/__admin/projects/default/faults", json=rule).status_code == 201
    failed = coded("processing_error", "Failed to complete migration")
    assert_refused(http.post(URL, json=BODY), 400, failed)


def test_secure_transfer(http: httpx.Client, service: Service) -> None:
    service.update_project("default", {"options": {"secure_transfer": True}})
    r = http.post(URL, json={"data": crypto.encrypt(BODY, API_KEY)})
    assert r.status_code == 200 and r.json()["isEncrypted"] is True
    sid = crypto.decrypt(r.json()["data"], API_KEY)["submissionId"]
    assert service.stored_submission("default", sid)["data"]["full_name"] == "Jane Roe"
    payload = coded("invalid_payload", "Invalid payload")
    assert_refused(lambda: http.post(URL, json=BODY), 400, payload, service=service)
