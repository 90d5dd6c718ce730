"""The hosted form in a real browser, as an integrator's end-to-end test would drive it.

Each test opens a link built by the plugin's ``liveform_url``, walks the pages through
their labels and ``data-testid``s, and checks what the applicant sees, where the browser
is sent back, and what the integrator's backend receives (webhooks, the submission).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
from pytest_idv_mock import liveform

EXPIRED_TEXT = "The verification link has expired. Please try again with a new link."
Shot = Callable[[str], None]


def root(server: Any) -> str:
    return str(server.root_url)


def set_options(server: Any, **options: Any) -> None:
    r = httpx.patch(f"{server.admin_url}/projects/{server.project_id}", json={"options": options})
    assert r.status_code == 200, r.text


def returning(server: Any) -> None:
    """Send the applicant back to the mock's own demo return page."""
    set_options(server, return_url=f"{root(server)}/liveform/returned")


def walk_to_tester(page: Any, shot: Shot | None = None, country: str = "KOR") -> None:
    """The plugin's helper, with a screenshot of each step when ``shot`` is given."""
    liveform.walk_to_tester(page, country=country, on_step=shot)


current_step = liveform.current_step


def finish(page: Any, outcome: str = "approved", reason: str | None = None) -> None:
    """From the tester panel to the last page (the plugin's helper from there)."""
    done = liveform.walk_liveform(page, outcome, reason=reason)
    assert done.kyc_status == outcome


def back_params(page: Any) -> dict[str, str]:
    page.get_by_test_id("ok").click()
    page.wait_for_url("**/liveform/returned?**")
    query = parse_qs(urlsplit(page.url).query, keep_blank_values=True)
    return {k: v[0] for k, v in query.items()}


def test_approved_flow_with_an_encrypted_projection_token(
    page: Any, shot: Shot, idv_server: Any, idv_webhook_receiver: Any
) -> None:
    policy = {"name": "no_birth", "mode": "exclude", "fields": ["date_of_birth", "age_group"]}
    r = httpx.post(
        f"{idv_server.base_url}/projection", json=policy, headers={"x-api-key": idv_server.api_key}
    )
    assert r.status_code == 200, r.text
    returning(idv_server)
    url = idv_server.liveform_url(
        userid="u-browser", email="ann@example.com", cf1="order-1",
        projectionName="no_birth", token="tok-browser",
    )  # fmt: skip
    page.goto(url)
    walk_to_tester(page, shot)
    shot("tester")
    finish(page)
    shot("done")
    sid = page.get_by_test_id("submission-id").inner_text()
    assert page.get_by_test_id("kyc-status").inner_text() == "approved"
    assert back_params(page) == {
        "userid": "u-browser", "cf1": "order-1", "cf2": "", "cf3": "", "email": "ann@example.com",
        "submissionId": sid, "kycStatus": "approved",
    }  # fmt: skip
    shot("returned")
    payload = idv_webhook_receiver.wait_for("approved")
    assert payload["submission_id"] == sid and payload["userid"] == "u-browser"
    assert payload["projection"]["projectionName"] == "no_birth"
    assert "date_of_birth" not in payload and "age_group" not in payload
    stored = idv_server.service.stored_submission("default", sid)
    assert (stored["tokenId"], stored["data"]["full_name"]) == ("tok-browser", "Ann Example")


def test_rejected_flow(page: Any, shot: Shot, idv_server: Any, idv_webhook_receiver: Any) -> None:
    returning(idv_server)
    page.goto(idv_server.liveform_url(userid="u-rejected"))
    walk_to_tester(page)
    finish(page, "rejected", "expired_id")
    assert page.get_by_test_id("kyc-status").inner_text() == "rejected"
    assert back_params(page)["kycStatus"] == "rejected"
    payload = idv_webhook_receiver.wait_for("rejected")
    assert payload["userid"] == "u-rejected"


def test_failed_recognition_is_retried(
    page: Any, shot: Shot, idv_server: Any, idv_webhook_receiver: Any
) -> None:
    page.goto(idv_server.liveform_url(userid="u-retry"))
    walk_to_tester(page)
    page.get_by_label("Fail recognition once").check()
    page.get_by_label("Retry reason").select_option("image_too_blurry")
    page.get_by_test_id("finish").click()
    assert current_step(page) == "document"
    assert "could not recognise" in page.get_by_test_id("retry-notice").inner_text()
    shot("retry")
    walk_to_tester(page)
    finish(page)
    retry = idv_webhook_receiver.wait_for("retry")
    assert (retry["retryCode"], retry["attempts"], retry["userid"]) == (
        "image_too_blurry", 1, "u-retry"
    )  # fmt: skip
    assert retry["kyc_result"] == {"status": "incomplete"}
    assert idv_webhook_receiver.wait_for("approved")["userid"] == "u-retry"


def test_data_injection_adds_an_address(
    page: Any, shot: Shot, idv_server: Any, idv_webhook_receiver: Any
) -> None:
    """``action=addveri&sid=...``: the address step of an existing submission; success sends
    ``injection``, a failCode from the tester panel ``injectionFail`` (webhooks.md 8)."""
    service = idv_server.service
    sub = service.create_submission("default", {"kyc": {"result": "approved"}})
    sid = sub["submission_id"]
    page.goto(idv_server.liveform_url(action="addveri", sid=sid, cf3="promo"))
    assert current_step(page) == "address"
    assert page.get_by_test_id("submission-id").inner_text() == sid
    fields = {"Street": "1 Main St", "City": "Busan", "Country (ISO alpha-3, e.g. KOR)": "KOR"}
    for label, value in fields.items():
        page.get_by_label(label, exact=True).fill(value)
    page.get_by_label("Country on the blacklist").check()
    shot("injection-address")
    page.get_by_test_id("next").click()
    assert "address information" in page.get_by_test_id("error-message").inner_text()
    failed = idv_webhook_receiver.wait_for("injectionFail")
    assert failed["action"]["failCode"] == "blackliskCountries"
    page.go_back()
    page.reload()
    assert current_step(page) == "address"
    for label, value in fields.items():
        page.get_by_label(label, exact=True).fill(value)
    page.get_by_label("Pass").check()
    page.get_by_test_id("next").click()
    assert current_step(page) == "injected"
    assert "Address verification completed." in page.get_by_test_id("done-text").inner_text()
    shot("injected")
    done = idv_webhook_receiver.wait_for("injection")
    assert (done["submission_id"], done["kyc_status"], done["cf3"]) == (sid, "approved", "promo")
    assert done["applicant_id"] == sub["applicant_id"]
    stored = service.stored_submission("default", sid)
    assert stored["data"]["address_city"] == "Busan"
    assert len(stored["Injection_action"]) == 1


def test_the_plugin_helper_walks_each_outcome(page: Any, idv_server: Any) -> None:
    """``walk_liveform`` as an integrator calls it: one call per outcome, a retry first."""
    for userid, outcome, reason, retry in [
        ("u-h-approved", "approved", None, False),
        ("u-h-rejected", "rejected", "blacklistCountry", False),
        ("u-h-pending", "pending", None, False),
        ("u-h-retry", "approved", None, True),
    ]:
        page.goto(idv_server.liveform_url(userid=userid))
        done = liveform.walk_liveform(page, outcome, reason=reason, retry=retry)
        assert (done.kyc_status, done.retried) == (outcome, retry)
        stored = idv_server.service.stored_submission("default", done.submission_id)
        assert (stored["userid"], stored["kyc"]["result"]) == (userid, outcome)
        assert stored["kyc"]["commentCode"] == ([reason] if reason else [])
        assert len(stored["kyc"]["retry"]) == int(retry)


def test_expired_token(page: Any, shot: Shot, idv_server: Any) -> None:
    url = idv_server.liveform_url(userid="u-token", token="tok-expiring")
    page.goto(url)
    assert current_step(page) == "consent"
    idv_server.clock.advance(minutes=4)  # the project's clock, not a wait
    page.goto(url)
    assert urlsplit(page.url).path == "/error-page/token-expired"
    assert page.get_by_test_id("error-code").inner_text() == "TK-10001"
    shot("error")


def test_expired_start_valid_until(page: Any, shot: Shot, idv_server: Any) -> None:
    returning(idv_server)
    past = (idv_server.clock.now - timedelta(minutes=5)).isoformat()  # the project's time
    page.goto(idv_server.liveform_url(userid="u-late", startValidUntil=past))
    assert urlsplit(page.url).path == "/error-page/expired-start-valid-until"
    assert page.get_by_test_id("error-message").inner_text() == EXPIRED_TEXT
    assert page.get_by_test_id("error-code").inner_text() == "PV-40018"
    shot("error")
    params = back_params(page)
    assert (params["userid"], params["errorCode"], params["kycStatus"]) == (
        "u-late",
        "PV-40018",
        "",
    )


def test_encryption_only_mode_ignores_a_plain_email(page: Any, shot: Shot, idv_server: Any) -> None:
    set_options(idv_server, liveform_encrypted_only=True)
    returning(idv_server)
    url = idv_server.liveform_url(userid="u-only", email="inner@example.com")
    assert "inner%40example.com" not in url  # everything went inside encrypted
    page.goto(url + "&email=plain%40example.com")
    assert page.get_by_test_id("debug-ignored").inner_text() == "email"
    shot("debug")
    walk_to_tester(page)
    finish(page)
    assert back_params(page)["email"] == "inner@example.com"


def test_gcm_link(page: Any, idv_server: Any) -> None:
    set_options(idv_server, liveform_cipher="gcm")
    returning(idv_server)
    page.goto(
        idv_server.liveform_url(
            userid="u-gcm", selectedIssuingCountry="USA", selectedIdType="passport"
        )
    )
    walk_to_tester(page)
    finish(page)
    assert back_params(page)["userid"] == "u-gcm"


def test_secret_key_link(page: Any, idv_server: Any) -> None:
    set_options(idv_server, liveform_key="secret")
    returning(idv_server)
    r = httpx.post(f"{idv_server.admin_url}/projects/default/liveform-secret")
    assert r.status_code == 201, r.text
    page.goto(idv_server.liveform_url(secret_key=r.json()["secret_key"], userid="u-secret"))
    walk_to_tester(page)
    finish(page)
    assert back_params(page)["userid"] == "u-secret"


def test_plain_projection_id_is_refused(page: Any, shot: Shot, idv_server: Any) -> None:
    page.goto(idv_server.liveform_url(userid="u-plain") + "&projectionId=abc")
    assert urlsplit(page.url).path == "/error-page/plain"
    assert page.get_by_test_id("error-code").inner_text() == "PV-40002"
    assert page.get_by_test_id("error-message").inner_text() == (
        "projectionId is only accepted inside the encrypted parameter."
    )


def test_korean(page: Any, shot: Shot, idv_server: Any) -> None:
    page.goto(idv_server.liveform_url(lang="ko", userid="u-ko") + "&customUserId=typo")
    assert page.locator("html").get_attribute("lang") == "ko"
    assert page.get_by_test_id("step-title").inner_text() == "동의"
    assert page.get_by_test_id("debug-unknown").inner_text() == "customUserId"
    shot("consent")
    page.get_by_label("개인정보 처리에 동의합니다").check()
    page.get_by_test_id("next").click()
    assert page.get_by_test_id("step-title").inner_text() == "발급 국가"
