"""The values an integrator branches on are the vendor's (gaps.md "Values an integrator
branches on"): reject codes with their comment texts, retry codes and the three-attempt
rule, AML values. Over HTTP: a live server, the form walked as a browser would (GET a
page, POST its form, follow the 303), a real webhook receiver; the literals below are the
fact sheet's (``liveform-and-values.md`` 2.1, 2.2, 5), not read from the code."""

# ruff: noqa: E501  (the vendor's texts, one a line)
from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from idv_mock import Service, ServiceConfig

# liveform-and-values.md 2.1, verbatim (the vendor's typographic apostrophes included)
VENDOR_REJECT = {
    "id_image_invalidImage": "ID document not detected. Please take a clear picture of your ID document.",
    "id_image_invalidId": "Invalid ID document. Please resubmit with a valid ID document.",
    "id_image_error": "Failed to upload the ID image. Please retry the KYC process.",
    "id_image_badImage": "Unable to read the ID image. Please ensure the image is clear and resubmit.",
    "id_info_dataMismatch": "Entered information does not match the ID document.",
    "id_info_blacklist": "KYC is not accepted from country as per policy.",
    "id_info_notOfAge": "KYC is not accepted for individuals under 13 years old.",
    "duplicate_user": "A user has been duplicated as a result of identification.",
    "duplicated_user_PII_exact": "A user\u2019s personal identity information has been duplicated as a result of identification.",
    "duplicated_face": "A duplicate user has been identified through face matching.",
    "too_many_retry": "Multiple invalid KYC attempts detected.",
    "blacklistCountry": "KYC is not accepted from country as per policy.",
    "under_ageLimit": "KYC is not accepted for individuals under 13 years old.",
    "invalid_acceptedID": "Invalid ID type. Please resubmit with a valid ID document. Refer to the submission page for accepted IDs.",
    "no-date-of-birth": "There is no date of birth information on the ID.",
    "expired_id": "ID cards have already expired.",
    "automatic_verification_fail": "Verification failed - submitted data didn\u2019t meet quality requirements. Try again with clear, well\u2011lit shots, and contact support if issues continue.",
    "address_image_invalidImage": "Invalid proof of address. It must include your full name and address. Examples: utility bill, bank statement, residency certificate.",
    "address_image_error": "Failed to upload the proof of address image. Please retry.",
    "address_image_badImage": "Unable to read the proof of address image. Please ensure the image is clear and resubmit.",
    "address_info_expiredDocument": "Proof of address is expired. It must be issued within the last 6 months.",
    "address_info_dataMismatch": "Entered information does not match the proof of address.",
    "timeout": "KYC rejected due to timeout.",
    "other": "Comments added manually by the reviewer during manual review.",
}  # fmt: skip
GLARE = "Please retake ID image without light smudging"  # 2.2, glare_detected's retryMsg
FACE = "The face doesn\u2019t match. Please retry with another face image."  # 2.2, Step 2


@pytest.fixture
def http(idv_server: Any) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=idv_server.root_url, timeout=10) as client:
        yield client


def shown(page: str, name: str) -> str:
    found = re.search(rf'data-testid="{name}"[^>]*>([^<]*)<', page)
    assert found, f"no {name} on the page"
    return html.unescape(found.group(1)).strip()


def post(client: httpx.Client, page: httpx.Response, form: dict[str, str]) -> httpx.Response:
    r = client.post(page.url.path, data=form)
    assert r.status_code == 303, r.text
    return client.get(r.headers["location"])


def to_tester(client: httpx.Client, url: str) -> httpx.Response:
    first = client.get(url)
    assert first.status_code == 303, first.text
    page = client.get(first.headers["location"])
    for form in ({"agree": "on"}, {"country": "KOR"}, {"id_type": "passport"}, {}, {}):
        page = post(client, page, form)
    assert page.url.path.endswith("/tester"), page.url
    return page


def fail(client: httpx.Client, page: httpx.Response, code: str) -> httpx.Response:
    """One failed attempt at the tester panel; back at the document step, on to the panel."""
    page = post(client, page, {"outcome": "approved", "fail_once": "on", "retry_code": code})
    if page.url.path.endswith("/document"):
        assert shown(page.text, "retry-notice")
        page = post(client, post(client, page, {}), {})
    return page


def triggers(receiver: Any) -> list[str]:
    return [item.body["webhook_trigger"] for item in receiver.received]


def test_the_third_failed_attempt_rejects_with_too_many_retry(
    http: httpx.Client, idv_server: Any, idv_webhook_receiver: Any
) -> None:
    page = to_tester(http, idv_server.liveform_url(userid="u-three"))
    page = fail(http, page, "glare_detected")
    page = fail(http, page, "face_compare_underscore")
    assert page.url.path.endswith("/tester")  # two failures: still in the flow
    page = fail(http, page, "glare_detected")  # the third: no retry, the result
    assert page.url.path.endswith("/done")
    assert shown(page.text, "kyc-status") == "rejected"
    sid = shown(page.text, "submission-id")
    idv_webhook_receiver.wait_for(4)
    assert idv_server.service.webhooks.wait_idle()
    assert triggers(idv_webhook_receiver) == ["created", "retry", "retry", "rejected"]
    retries = [i.body for i in idv_webhook_receiver.received[1:3]]
    assert [(r["retryCode"], r["attempts"]) for r in retries] == [
        ("glare_detected", 1),
        ("face_compare_underscore", 2),
    ]
    rejected = idv_webhook_receiver.received[3].body
    assert rejected["submission_id"] == sid
    assert (rejected["kyc_result"]["commentCode"], rejected["kyc_result"]["comment"]) == (
        "too_many_retry",
        "Multiple invalid KYC attempts detected.",
    )
    r = http.get("/v3/submission", params={"submission_id": sid},
                 headers={"x-api-key": idv_server.api_key})  # fmt: skip
    kyc = r.json()["Items"][0]["kyc"]
    assert (kyc["result"], kyc["commentCode"], kyc["comment"]) == (
        "rejected",
        ["too_many_retry"],
        ["Multiple invalid KYC attempts detected."],
    )
    assert kyc["retry"] == [
        {"type": "step1", "retryCnt": 1, "retryCode": "glare_detected", "retryMessage": GLARE},
        {"type": "step2", "retryCnt": 2, "retryCode": "face_compare_underscore",
         "retryMessage": FACE},
    ]  # fmt: skip


def test_a_retry_code_without_a_published_message_has_none(
    http: httpx.Client, idv_server: Any
) -> None:
    page = to_tester(http, idv_server.liveform_url(userid="u-once"))
    page = post(http, fail(http, page, "recognition_fail"), {"outcome": "approved"})
    stored = idv_server.service.stored_submission("default", shown(page.text, "submission-id"))
    assert stored["kyc"]["retry"] == [
        {"type": "step1", "retryCnt": 1, "retryCode": "recognition_fail"}
    ]


def test_the_tester_panel_offers_exactly_the_vendors_codes(
    http: httpx.Client, idv_server: Any
) -> None:
    page = to_tester(http, idv_server.liveform_url(userid="u-panel"))
    reasons = re.search(r'data-testid="reject-reason">(.*?)</select>', page.text, re.S)
    assert reasons is not None
    assert re.findall(r'value="([^"]+)"', reasons.group(1)) == list(VENDOR_REJECT)
    for invented in ("underage", "face_mismatch"):
        r = http.post(page.url.path, data={"outcome": "rejected", "reason": invented})
        assert r.status_code == 400  # asked again; nothing made


@pytest.mark.parametrize("code", ["blacklistCountry", "invalid_acceptedID", "duplicated_face",
                                  "expired_id", "other"])  # fmt: skip
def test_a_chosen_reject_code_travels_with_the_vendors_text(
    http: httpx.Client, idv_server: Any, idv_webhook_receiver: Any, code: str
) -> None:
    page = to_tester(http, idv_server.liveform_url(userid=f"u-{code}"))
    page = post(http, page, {"outcome": "rejected", "reason": code})
    sid = shown(page.text, "submission-id")
    body = idv_webhook_receiver.wait_for("rejected")
    assert (body["submission_id"], body["kyc_result"]["commentCode"]) == (sid, code)
    assert body["kyc_result"]["comment"] == VENDOR_REJECT[code]


def test_the_age_texts_carry_the_projects_age_limit(
    http: httpx.Client, idv_server: Any, idv_service: Service, idv_webhook_receiver: Any
) -> None:
    """The vendor's table says 13, its FAQ template ``{13}``: the project's age limit."""
    idv_service.update_project("default", {"options": {"policy_ageLimit": 21}})
    page = to_tester(http, idv_server.liveform_url(userid="u-age"))
    post(http, page, {"outcome": "rejected", "reason": "under_ageLimit"})
    body = idv_webhook_receiver.wait_for("rejected")
    assert body["kyc_result"] == {
        "status": "rejected",
        "comment": "KYC is not accepted for individuals under 21 years old.",
        "updated_at": body["kyc_result"]["updated_at"],
        "commentCode": "under_ageLimit",
    }


def test_duplicate_user_and_timeout_carry_the_vendors_texts(
    http: httpx.Client, idv_server: Any, idv_webhook_receiver: Any
) -> None:
    first = to_tester(http, idv_server.liveform_url(userid="u-dup"))
    post(http, first, {"outcome": "approved"})
    again = to_tester(http, idv_server.liveform_url(userid="u-dup", rejectDuplicateUser="true"))
    post(http, again, {"outcome": "approved"})
    body = idv_webhook_receiver.wait_for("rejected")
    assert (body["kyc_result"]["commentCode"], body["kyc_result"]["comment"]) == (
        "duplicate_user",
        "A user has been duplicated as a result of identification.",
    )
    to_tester(http, idv_server.liveform_url(userid="u-late"))  # left at the panel
    idv_server.clock.advance(hours=7)  # the project's clock past the 6 h timeout
    http.get("/liveform/", params={"pid": "default"})  # a touch runs what fell due
    idv_webhook_receiver.wait_for(6)
    late = [i.body for i in idv_webhook_receiver.received if i.body.get("userid") == "u-late"]
    assert late[-1]["webhook_trigger"] == "rejected"
    assert (late[-1]["kyc_result"]["commentCode"], late[-1]["kyc_result"]["comment"]) == (
        "timeout",
        "KYC rejected due to timeout.",
    )


def test_reject_codes_of_seeded_submissions_are_the_vendors() -> None:
    found: dict[str, set[str]] = {}
    for sub in Service(ServiceConfig(seed_count=200)).project("default").store:
        for code, text in zip(sub["kyc"]["commentCode"], sub["kyc"]["comment"], strict=True):
            found.setdefault(code, set()).add(text)
    assert found == {code: {VENDOR_REJECT[code]} for code in found}
    assert set(found) == {"too_many_retry", "other"}  # api-v3.md 2.1: the values seen


def test_aml_values_are_not_screened_or_red_flag(
    http: httpx.Client, idv_server: Any, idv_service: Service, idv_webhook_receiver: Any
) -> None:
    key = {"x-api-key": idv_server.api_key}
    made = http.post(f"{idv_server.admin_url}/projects/default/submissions",
                     json={"kyc": {"result": "approved"}, "userid": "u-clean"})  # fmt: skip
    sid = made.json()["submission_id"]
    r = http.post("/v3/submission/aml", json={"submissionId": sid, "amlThreshold": 99}, headers=key)
    assert (r.status_code, r.json()["result"]) == (200, "Not Screened")
    body = idv_webhook_receiver.wait_for("aml")
    assert body["aml_result"] == {
        "currentstatus": "Not Screened",
        "risk_level_summary": "Not Screened",
    }
    listed = {"entry_id": "WL-0001", "overrides": {"kyc": {"result": "approved"}}}
    flagged = http.post(
        f"{idv_server.admin_url}/projects/default/watchlist-submissions", json=listed
    )
    fid = flagged.json()["submission_id"]
    r = http.post("/v3/submission/aml", json={"submissionId": fid, "amlThreshold": 80}, headers=key)
    assert r.json()["result"] == "Red Flag"
    statuses = {s["aml"]["currentstatus"] for s in idv_service.project("default").store}
    assert statuses == {"Not Screened", "Red Flag"}


DOCS = Path(__file__).resolve().parent.parent / "docs"


def doc_table(page: str, header: str) -> dict[str, str]:
    """The two-column table of ``docs/<page>`` whose header row starts with ``header``:
    first cell (its code, unquoted) -> second cell."""
    lines = (DOCS / page).read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {header} |"))
    rows: dict[str, str] = {}
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        first, second = (cell.strip() for cell in line.strip("|").split("|")[:2])
        rows[first.strip("`")] = second
    return rows


def test_the_docs_tables_match_the_code() -> None:
    from idv_mock.fake import codes
    from idv_mock.ground import schemas

    assert doc_table("webhooks.md", "`commentCode`") == codes.REJECT_COMMENTS == VENDOR_REJECT
    retry = doc_table("webhooks.md", "`retryCode`")
    assert list(retry) == list(codes.RETRY_CODES)
    assert {c: m for c, m in retry.items() if m != "—"} == codes.RETRY_MESSAGES
    assert (
        codes.RETRY_MESSAGES["glare_detected"],
        codes.RETRY_MESSAGES["face_compare_underscore"],
    ) == (GLARE, FACE)
    aml = doc_table("aml.md", "Value")
    assert list(aml) == list(schemas.enum("aml_status")) == ["Not Screened", "Red Flag"]


def test_a_validator_from_the_openapi_document_accepts_a_vendor_webhook(idv_server: Any) -> None:
    """The vendor sends no ``X-Idv-Event``: the document marks the mock's header optional,
    so a request validator generated from it (headers, then body) takes the vendor's
    ``rejected`` webhook as the vendor sends it (webhooks.md 5's fields)."""
    from openapi_schema_validator import OAS31Validator

    doc = httpx.get(f"{idv_server.root_url}/openapi.json").json()
    vendor = {
        "webhook_trigger": "rejected",
        "kyc_result": {"status": "rejected", "comment": VENDOR_REJECT["timeout"],
                       "updated_at": "2026-01-02T03:04:05.678Z", "commentCode": "timeout"},
        "submission_id": "3f2a5c1e-0000-4000-8000-000000000001",
        "email": "ann@example.com",
        "userid": "user-1",
    }  # fmt: skip
    headers = {"content-type": "application/json"}  # and no X-Idv-Event
    for trigger, item in doc["webhooks"].items():
        params = item["post"]["parameters"]
        assert [(p["name"], p["required"]) for p in params] == [("X-Idv-Event", False)]
        missing = [p["name"] for p in params if p["required"] and p["name"] not in headers]
        assert missing == [], trigger
    body = doc["webhooks"]["rejected"]["post"]["requestBody"]["content"]["application/json"]
    validator = OAS31Validator({**body["schema"], "components": doc["components"]})
    assert list(validator.iter_errors(vendor)) == []
    assert list(validator.iter_errors({**vendor, "kyc_result": {**vendor["kyc_result"],
                                                                "commentCode": "underage"}}))  # fmt: skip
