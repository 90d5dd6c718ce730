"""Data injection on the hosted form (``?pid=...&action=addveri&sid=...``, webhooks.md 8).

An existing submission gets an address through the form's address step; success sends
``injection``, a failCode chosen in the tester panel sends ``injectionFail``. Over HTTP
with the in-process app, walking the pages as a browser would.
"""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from idv_mock import Service
from idv_mock.ground import crypto, schemas
from test_liveform import BASE, KEY, error_of, link, open_link, post, shown, step_of

ADDRESS = {
    "address_street": "12 Sejong-daero",
    "address_street2": "Apt 3",
    "address_city": "Seoul",
    "address_state": "Jung-gu",
    "address_zipcode": "04524",
    "address_country": "kor",
}
STAMP = r"^\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2}-\d{3}$"


@pytest.fixture
def client(idv_client: httpx.Client) -> httpx.Client:
    return idv_client


def existing(service: Service, result: str = "approved") -> dict[str, Any]:
    overrides = {"userid": "u-inj", "email": "inj@example.com", "kyc": {"result": result}}
    overrides["data"] = {"cf1": "old-cf1"}
    return service.create_submission("default", overrides)


def submit(client: httpx.Client, page: httpx.Response, form: dict[str, str]) -> httpx.Response:
    return client.post(str(page.url), data=form)


def test_success_stores_the_address_and_sends_injection(
    client: httpx.Client, idv_service: Service, idv_webhook_receiver: Any
) -> None:
    sub = existing(idv_service)
    sid = sub["submission_id"]
    page = open_link(client, link({"action": "addveri", "sid": sid, "cf2": "campaign-7"}))
    assert step_of(page) == "address"
    assert shown(page.text, "submission-id") == sid
    r = submit(client, page, {**ADDRESS, "result": "success"})
    assert r.status_code == 303
    done = client.get(BASE + r.headers["location"])
    assert step_of(done) == "injected"
    assert shown(done.text, "done-text") == "✓ Address verification completed."
    stored = idv_service.stored_submission("default", sid)
    assert stored["data"]["address_city"] == "Seoul"
    assert stored["data"]["address_country"] == "KOR"
    assert stored["data"]["address_formatted"] == "12 Sejong-daero, Apt 3, Seoul, Jung-gu 04524"
    assert stored["data"]["cf2"] == "campaign-7"
    assert stored["data"]["cf1"] == "old-cf1"
    (action,) = stored["Injection_action"]
    assert action["type"] == "address" and re.fullmatch(STAMP, action["created_at"])
    assert stored["updated_at"] == action["created_at"]
    payload = idv_webhook_receiver.wait_for("injection")
    assert payload == {
        "webhook_trigger": "injection",
        "action": {"type": "address", "created_at": action["created_at"]},
        "submission_id": sid,
        "email": "inj@example.com",
        "kyc_status": "approved",
        "applicant_id": stored["applicant_id"],
        "userid": "u-inj",
        "cf2": "campaign-7",  # only what the injection carried, flat (webhooks.md 8)
        "tokenId": stored["tokenId"],
        **(
            {"duplicated_information": stored["duplicated_information"]}
            if stored["duplicated_information"]
            else {}
        ),
    }
    assert idv_webhook_receiver.received[-1].event == "submission.injection"


@pytest.mark.parametrize("fail_code", ["distanceChecks_ipGeo", "blackliskCountries"])
def test_a_fail_code_sends_injection_fail_and_changes_nothing(
    client: httpx.Client, idv_service: Service, idv_webhook_receiver: Any, fail_code: str
) -> None:
    sub = existing(idv_service, "rejected")
    sid = sub["submission_id"]
    page = open_link(client, link({"action": "addveri", "sid": sid, "cf1": "x"}))
    r = submit(client, page, {**ADDRESS, "result": fail_code})
    assert r.status_code == 303
    assert r.headers["location"].startswith("/error-page/injection-failed?")
    error = client.get(BASE + r.headers["location"])
    assert shown(error.text, "error-code") == "SE-50011"
    assert idv_service.stored_submission("default", sid) == sub
    payload = idv_webhook_receiver.wait_for("injectionFail")
    assert set(payload["action"]) == {"type", "created_at", "failCode"}
    assert re.fullmatch(STAMP, payload["action"]["created_at"])
    expected = {
        "webhook_trigger": "injectionFail",
        "action": {"type": "address", "created_at": payload["action"]["created_at"],
                   "failCode": fail_code},
        "submission_id": sid,
        "email": "inj@example.com",
        "kyc_status": "rejected",  # applicant_id only for approved submissions
        "userid": "u-inj",
    }  # fmt: skip
    if sub["duplicated_information"]:
        expected["duplicated_information"] = sub["duplicated_information"]
    assert payload == expected
    assert idv_webhook_receiver.received[-1].event == "submission.injection_failed"
    # the applicant can try again: the session is still at the address step
    again = client.get(str(page.url))
    assert step_of(again) == "address"


def test_missing_or_unknown_sid_is_refused(client: httpx.Client, idv_service: Service) -> None:
    location, page = error_of(client, link({"action": "addveri"}))
    assert location.startswith("/error-page/injection-missing?")
    assert shown(page.text, "error-code") == "PV-40010"
    location, page = error_of(client, link({"action": "addveri", "sid": "nope"}))
    assert location.startswith("/error-page/invalid-submission?")
    assert shown(page.text, "error-code") == "PV-40009"
    sid = existing(idv_service)["submission_id"]
    assert client.delete("/submission", params={"submission_id": sid}).status_code == 200
    location, _ = error_of(client, link({"action": "addveri", "sid": sid}))
    assert location.startswith("/error-page/invalid-submission?")


def test_a_missing_address_field_is_asked_again(
    client: httpx.Client, idv_service: Service, idv_webhook_receiver: Any
) -> None:
    sid = existing(idv_service)["submission_id"]
    page = open_link(client, link({"action": "addveri", "sid": sid}))
    for bad in ({"address_city": ""}, {"address_country": "XX"}, {"result": "other"}):
        r = submit(client, page, {**ADDRESS, **bad})
        assert r.status_code == 400
        assert shown(r.text, "form-error")
    assert idv_service.stored_submission("default", sid)["Injection_action"] == []
    assert idv_service.webhooks.wait_idle()
    assert idv_webhook_receiver.received == []


def test_an_encrypted_injection_link_works_alike(
    client: httpx.Client, idv_service: Service, idv_webhook_receiver: Any
) -> None:
    sid = existing(idv_service)["submission_id"]
    page = open_link(client, link({}, {"action": "addveri", "sid": sid, "userid": "u-inj"}))
    assert step_of(page) == "address"
    r = submit(client, page, ADDRESS)
    assert r.status_code == 303
    assert idv_webhook_receiver.wait_for("injection")["submission_id"] == sid


def walk_with_a_retry(client: httpx.Client, url: str, outcome: str) -> httpx.Response:
    page = open_link(client, url)
    for form in ({"agree": "on"}, {"country": "KOR"}, {"id_type": "passport"}, {}, {}):
        page = post(client, page, form)
    page = post(client, page, {"outcome": outcome, "fail_once": "on"})
    for form in ({}, {}, {"outcome": outcome}):
        page = post(client, page, form)
    return page


def test_a_secure_project_encrypts_every_trigger_of_the_form(
    client: httpx.Client, idv_service: Service, idv_webhook_receiver: Any
) -> None:
    """created, retry, rejected, token_expired, injection, injectionFail on a project with
    secure_transfer: every body is the envelope, each decrypts to its trigger's shape."""
    options = {"secure_transfer": True, "token_expiry_webhook": True}
    idv_service.update_project("default", {"options": options})
    url = link({}, {"userid": "u-sec", "token": "tok-sec", "cf1": "c"})
    done = walk_with_a_retry(client, url, "rejected")
    error_of(client, url)  # the used token: token_expired (count)
    sid = shown(done.text, "submission-id")
    approved = existing(idv_service)["submission_id"]
    for result, target in (("distanceChecks_ipGeo", approved), ("success", approved)):
        page = open_link(client, link({"action": "addveri", "sid": target}))
        submit(client, page, {**ADDRESS, "result": result})
    got = idv_webhook_receiver.wait_for(6)
    assert idv_service.webhooks.wait_idle()
    triggers = []
    for item in got:
        assert set(item.body) == {"data", "isEncrypted"} and item.body["isEncrypted"] is True
        plain = crypto.decrypt(item.body["data"], KEY)
        assert schemas.errors(f"webhooks/{plain['webhook_trigger']}.json", plain) == []
        triggers.append(plain["webhook_trigger"])
    assert triggers == ["created", "retry", "rejected", "token_expired", "injectionFail",
                        "injection"]  # fmt: skip
    assert crypto.decrypt(got[2].body["data"], KEY)["submission_id"] == sid


def test_the_projection_a_link_names_filters_created_and_retry(
    client: httpx.Client, idv_service: Service, idv_webhook_receiver: Any
) -> None:
    r = client.post("/projection", json={"name": "p", "mode": "exclude",
                                         "fields": ["cf1", "ip_address"]})  # fmt: skip
    projection_id = r.json()["projection_id"]
    inner = {"userid": "u-p", "cf1": "secret", "cf2": "shown", "projectionId": projection_id}
    walk_with_a_retry(client, link({}, inner), "approved")
    created, retry, approved = (i.body for i in idv_webhook_receiver.wait_for(3))
    projection = {"projectionId": projection_id, "projectionName": "p"}
    for payload in (created, retry, approved):
        assert payload["cf"] == {"cf2": "shown"}
        assert "ipAddress" not in payload
        assert payload["projection"] == projection
    assert created == {
        "webhook_trigger": "created", "submission_id": approved["submission_id"],
        "kyc_result": {"status": "incomplete"}, "cf": {"cf2": "shown"}, "userid": "u-p",
        "projection": projection,
    }  # fmt: skip
