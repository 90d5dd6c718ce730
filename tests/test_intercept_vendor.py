"""The calls of issue 30 through ``idv_mock.mock()``: integrator code on the vendor's real
base URL, with httpx and requests, answered in-process (multipart bodies and image files
included)."""

from __future__ import annotations

import base64

import httpx
import requests

import idv_mock
from idv_mock.backend.images import sample

REAL = "https://rest-api.argosidentity.com/v3"
HEADERS = {"x-api-key": "mock-api-key"}
ADMIN = "admin@example.com"
PNG = sample("intercept", "selfieImage")


def test_requests_drives_the_token_review_image_and_migration_calls() -> None:
    with idv_mock.mock() as service:
        r = requests.post(f"{REAL}/submission/tokens", data='{"tokenId": ["reqtoken-01"]}',
                          headers={**HEADERS, "content-type": "text/plain"})  # fmt: skip
        assert r.status_code == 200 and r.json()["summary"]["currentCount"] == 1
        r = requests.post(f"{REAL}/submission/migration", headers=HEADERS, json={
            "admin": ADMIN, "email": "m@example.com", "fullName": "M One",
            "birthDate": "1980-01-01", "kycStatus": "approved"})  # fmt: skip
        sid = r.json()["submissionId"]
        files = {"submissionId": (None, sid), "admin": (None, ADMIN),
                 "selfieImage": (None, base64.b64encode(PNG).decode())}  # fmt: skip
        r = requests.put(f"{REAL}/submission/image", headers=HEADERS, files=files)
        assert r.json() == {"message": "complete to update image."}
        r = requests.get(f"{REAL}/image", headers=HEADERS,
                         params={"submissionId": sid, "type": "selfieImage"})  # fmt: skip
        assert r.headers["content-type"] == "image/png" and r.content == PNG
        pending = service.create_submission("default", {"kyc": {"result": "pending"}})
        decision = {"admin": ADMIN, "submissionId": pending["submission_id"], "status": "approved"}
        r = requests.post(f"{REAL}/submission/review", headers=HEADERS, json=decision)
        assert r.json()["finalStatus"] == "approved"


def test_httpx_drives_them_too() -> None:
    with idv_mock.mock(), httpx.Client(base_url=REAL, headers=HEADERS) as client:
        r = client.request("DELETE", "/submission/tokens", json={"tokenId": ["absent-token"]})
        assert r.json() == {"errorCode": "token_id_not_found",
                                "errorMessage": "None of the tokenIds is in the pool"}  # fmt: skip
        r = client.put("/submission/image", files={"admin": (None, ADMIN)})
        assert r.json() == {"errorCode": "missing_data",
                                "message": "Required input data is missing."}  # fmt: skip
