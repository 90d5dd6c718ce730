"""The hosted form's URL contract and flow over HTTP (gaps.md "Hosted form (Liveform)").

Fast: the in-process app, no browser. Each test walks the pages as a browser would (GET a
page, POST its form, follow the 303) and checks what the applicant and the integrator see:
the page, its error code, the stored submission, the webhooks, the return URL.
"""

from __future__ import annotations

import base64
import html
import io
import re
from datetime import datetime, timedelta, timezone
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from idv_mock import Service, cli
from idv_mock.ground import crypto
from idv_mock.ground.clock import iso

BASE = "http://idv-mock"
KEY = "mock-api-key"
EXPIRED_TEXT = "The verification link has expired. Please try again with a new link."


def link(params: dict[str, str], inner: dict[str, Any] | None = None, **how: Any) -> str:
    """A form URL: ``params`` plain, ``inner`` encrypted (ECB with the API key by default)."""
    query = {"pid": "default", **params}
    if inner is not None:
        seal = crypto.encrypt_gcm if how.get("gcm") else crypto.encrypt
        query["encrypted"] = seal(inner, how.get("key", KEY))
    return f"{BASE}/liveform/?{urlencode(query)}"


def shown(page: str, name: str) -> str:
    found = re.search(rf'data-testid="{name}"[^>]*>([^<]*)<', page)
    assert found, f"no {name} on the page"
    return html.unescape(found.group(1)).strip()


def open_link(client: httpx.Client, url: str) -> httpx.Response:
    """The link's answer after its redirect: the first step or the error page."""
    first = client.get(url)
    assert first.status_code == 303, first.text
    return client.get(BASE + first.headers["location"])


def step_of(response: httpx.Response) -> str:
    return response.url.path.rsplit("/", 1)[-1]


def post(client: httpx.Client, page: httpx.Response, form: dict[str, str]) -> httpx.Response:
    r = client.post(str(page.url), data=form)
    assert r.status_code == 303, r.text
    return client.get(BASE + r.headers["location"])


def walk(
    client: httpx.Client, url: str, outcome: str = "approved", **tester: str
) -> httpx.Response:
    """Through every step to the completion page (steps the link skips are skipped)."""
    page = open_link(client, url)
    forms = {
        "consent": {"agree": "on"},
        "country": {"country": "KOR"},
        "id_type": {"id_type": "passport"},
        "document": {},
        "selfie": {},
        "tester": {"outcome": outcome, **tester},
    }
    while step_of(page) in forms:
        page = post(client, page, forms[step_of(page)])
    return page


def error_of(client: httpx.Client, url: str) -> tuple[str, httpx.Response]:
    first = client.get(url)
    assert first.status_code == 303, first.text
    location = first.headers["location"]
    assert location.startswith("/error-page/"), location
    return location, client.get(BASE + location)


def sub_of(service: Service, page: httpx.Response) -> dict[str, Any]:
    return service.stored_submission("default", shown(page.text, "submission-id"))


@pytest.fixture
def client(idv_client: httpx.Client) -> httpx.Client:
    return idv_client


def test_root_without_pid_is_not_found(client: httpx.Client) -> None:
    r = client.get(f"{BASE}/")
    assert (r.status_code, r.json()) == (404, {"message": "Not Found"})


def test_favicon_is_an_icon(client: httpx.Client) -> None:
    r = client.get(f"{BASE}/favicon.ico")
    assert r.status_code == 200
    assert r.headers["content-type"] == "image/x-icon"
    assert r.content[:6] == b"\x00\x00\x01\x00\x01\x00"  # an ICO header, one image
    assert r.content[22:30] == b"\x89PNG\r\n\x1a\n"
    page = client.get(f"{BASE}/?pid=default", follow_redirects=True)
    assert '<link rel="icon" href="/favicon.ico"' in page.text


def test_root_with_pid_is_the_form(client: httpx.Client) -> None:
    r = client.get(f"{BASE}/?pid=default")
    assert r.status_code == 303
    assert re.fullmatch(r"/liveform/s/[0-9a-f]{32}/consent", r.headers["location"])


def test_unknown_project_is_an_error_page(client: httpx.Client) -> None:
    location, page = error_of(client, f"{BASE}/liveform/?pid=nope")
    assert location.startswith("/error-page/bad-path?")  # the vendor's: the link was edited
    assert page.status_code == 404
    assert shown(page.text, "error-code") == "bad-path"
    assert shown(page.text, "error-message") == "Invalid URL path"


def test_plain_flow_creates_the_submission_with_the_link_metadata(
    client: httpx.Client, idv_service: Service
) -> None:
    url = link({"userid": "u-plain", "email": "p@example.com", "cf1": "c1", "cf3": "c3"})
    done = walk(client, url)
    assert step_of(done) == "done"
    assert shown(done.text, "kyc-status") == "approved"
    sub = sub_of(idv_service, done)
    assert (sub["userid"], sub["email"], sub["kyc"]["result"]) == (
        "u-plain",
        "p@example.com",
        "approved",
    )
    assert (sub["data"]["cf1"], sub["data"]["cf3"]) == ("c1", "c3")
    assert "cf2" not in sub["data"]  # not on the link: nothing stands in for it
    assert sub["data"]["idcard_issuingCountry"] == "KOR" and sub["data"]["idType"] == "passport"


def test_document_fields_edited_by_the_applicant_are_stored(
    client: httpx.Client, idv_service: Service
) -> None:
    page = open_link(
        client,
        link(
            {"userid": "u-edit"},
            {"selectedIssuingCountry": "USA", "selectedIdType": "drivers_license"},
        ),
    )
    page = post(client, page, {"agree": "on"})
    assert step_of(page) == "document"  # country and ID type come with the link
    assert 'data-testid="sample-document"' in page.text
    form = {
        "full_name": "Ann Example",
        "date_of_birth": "1990-02-03",
        "documentNumber": "D1234567",
        "gender": "female",
    }
    page = post(client, page, form)
    page = post(client, post(client, page, {}), {"outcome": "approved"})
    data = sub_of(idv_service, page)["data"]
    assert (data["full_name"], data["date_of_birth"], data["documentNumber"]) == (
        "Ann Example",
        "1990-02-03",
        "D1234567",
    )
    assert (data["idcard_issuingCountry"], data["idType"]) == ("USA", "drivers_license")


def test_rejected_flow_records_the_reason(client: httpx.Client, idv_service: Service) -> None:
    done = walk(client, link({"userid": "u-rej"}), "rejected", reason="under_ageLimit")
    kyc = sub_of(idv_service, done)["kyc"]
    assert (kyc["result"], kyc["commentCode"], kyc["comment"]) == (
        "rejected",
        ["under_ageLimit"],  # the vendor's text, its 13 the project's age limit (19)
        ["KYC is not accepted for individuals under 19 years old."],
    )


def test_webhooks_created_retry_then_the_result_in_order(
    client: httpx.Client, idv_service: Service, idv_webhook_receiver: Any
) -> None:
    """created (incomplete), retry (retryCode, attempts), then approved alone: no submit
    before an immediate decision (webhooks.md 1-4)."""
    url = link({"userid": "u-hook", "email": "h@example.com", "cf2": "x"}, {"token": "tok-h"})
    page = open_link(client, url)
    for form in ({"agree": "on"}, {"country": "KOR"}, {"id_type": "passport"}, {}, {}):
        page = post(client, page, form)
    form = {"outcome": "approved", "fail_once": "on", "retry_code": "glare_detected"}
    page = post(client, page, form)
    assert step_of(page) == "document" and shown(page.text, "retry-notice")
    for form in ({}, {}, {"outcome": "approved"}):
        page = post(client, page, form)
    idv_webhook_receiver.wait_for(3)
    assert idv_service.webhooks.wait_idle()
    payloads = [item.body for item in idv_webhook_receiver.received]
    assert [p["webhook_trigger"] for p in payloads] == ["created", "retry", "approved"]
    sid = shown(page.text, "submission-id")
    assert payloads[0] == {
        "webhook_trigger": "created", "submission_id": sid,
        "kyc_result": {"status": "incomplete"}, "cf": {"cf2": "x"},
        "userid": "u-hook", "tokenId": "tok-h", "ipAddress": "127.0.0.1",
    }  # fmt: skip
    assert payloads[1] == {
        **payloads[0], "webhook_trigger": "retry", "retryCode": "glare_detected", "attempts": 1,
    }  # fmt: skip
    stored = idv_service.stored_submission("default", sid)
    assert stored["kyc"]["retry"][0]["retryCode"] == "glare_detected"
    assert stored["data"]["ip_address"] == "127.0.0.1"
    assert payloads[2]["submission_id"] == sid and payloads[2]["tokenId"] == "tok-h"
    assert payloads[2]["ipAddress"] == "127.0.0.1"
    assert payloads[2]["kyc_result"]["reviewer"] == "system"


def test_a_retry_code_not_on_the_vendors_list_is_asked_again(
    client: httpx.Client, idv_webhook_receiver: Any
) -> None:
    page = open_link(client, link({"userid": "u-bad"}))
    for form in ({"agree": "on"}, {"country": "KOR"}, {"id_type": "passport"}, {}, {}):
        page = post(client, page, form)
    r = client.post(str(page.url), data={"outcome": "approved", "fail_once": "on",
                                         "retry_code": "nope"})  # fmt: skip
    assert r.status_code == 400
    idv_webhook_receiver.wait_for(1)
    assert [i.body["webhook_trigger"] for i in idv_webhook_receiver.received] == ["created"]


def test_encrypted_projection_filters_the_submission(
    client: httpx.Client, idv_service: Service
) -> None:
    r = client.post(
        "/projection", json={"name": "no_birth", "mode": "exclude", "fields": ["date_of_birth"]}
    )
    pid = r.json()["projection_id"]
    done = walk(
        client, link({}, {"userid": "u-proj", "email": "e@example.com", "projectionId": pid})
    )
    sub = sub_of(idv_service, done)
    assert sub["projection"] == {"projectionId": pid, "projectionName": "no_birth"}
    assert (sub["userid"], sub["email"]) == ("u-proj", "e@example.com")
    [item] = client.get("/submission", params={"submission_id": sub["submission_id"]}).json()[
        "Items"
    ]
    assert "date_of_birth" not in item["data"]


@pytest.mark.parametrize("name", ["projectionId", "projectionName", "token", "allowedCountries"])
def test_encrypted_only_names_in_plain_are_refused(
    client: httpx.Client, idv_service: Service, name: str
) -> None:
    before = idv_service.export_state()
    location, page = error_of(client, link({name: "x", "userid": "u1"}))
    assert location.startswith("/error-page/plain?")
    assert page.status_code == 400
    assert shown(page.text, "error-code") == "PV-40002"
    assert (
        shown(page.text, "error-message")
        == f"{name} is only accepted inside the encrypted parameter."
    )
    assert idv_service.export_state()["projects"] == before["projects"]


def test_unknown_projection_and_both_projections_are_refused(client: httpx.Client) -> None:
    _, page = error_of(client, link({}, {"projectionName": "nope"}))
    assert shown(page.text, "error-code") == "PV-40004"
    _, page = error_of(client, link({}, {"projectionName": "a", "projectionId": "b"}))
    assert shown(page.text, "error-code") == "PV-40003"


def test_expired_start_valid_until_comes_first(client: httpx.Client, idv_service: Service) -> None:
    idv_service.update_project("default", {"options": {"liveform_private_mode": True}})
    # judged on the project's clock (tick mode here: the mock's own time, not the real one)
    now = datetime.fromisoformat(
        idv_service.clocks.describe("default")["now"].replace("Z", "+00:00")
    )
    past = (now - timedelta(minutes=1)).isoformat()
    # no token in private mode, a plain projection: startValidUntil is still what is reported
    location, page = error_of(client, link({"projectionId": "x"}, {"startValidUntil": past}))
    assert urlsplit(location).path == "/error-page/expired-start-valid-until"
    assert shown(page.text, "error-code") == "PV-40018"
    assert shown(page.text, "error-message") == EXPIRED_TEXT


def test_future_start_valid_until_opens_the_form(client: httpx.Client) -> None:
    future = (datetime.now(timezone.utc) + timedelta(hours=1)).isoformat()
    assert step_of(open_link(client, link({}, {"startValidUntil": future}))) == "consent"


def test_bad_start_valid_until_is_an_invalid_parameter(client: httpx.Client) -> None:
    _, page = error_of(client, link({}, {"startValidUntil": "soon"}))
    assert shown(page.text, "error-code") == "PV-40006"
    assert shown(page.text, "error-message") == "Invalid value for startValidUntil."


def test_undecryptable_encrypted_is_refused(client: httpx.Client) -> None:
    _, page = error_of(client, link({}, {"userid": "u"}, key="another-key"))
    assert shown(page.text, "error-code") == "PV-40001"
    _, page = error_of(client, f"{BASE}/liveform/?pid=default&encrypted=not-base64!")
    assert shown(page.text, "error-code") == "PV-40001"


def test_used_token_is_expired(client: httpx.Client, idv_service: Service) -> None:
    url = link({}, {"userid": "u-tok", "token": "tok-1"})
    sub = sub_of(idv_service, walk(client, url))
    assert sub["tokenId"] == "tok-1"
    _, page = error_of(client, url)
    assert shown(page.text, "error-code") == "TK-10001"


def test_token_expires_three_minutes_after_first_use(
    client: httpx.Client, idv_service: Service, idv_webhook_receiver: Any
) -> None:
    idv_service.update_project("default", {"options": {"token_expiry_webhook": True}})
    url = link({}, {"userid": "u-time", "token": "tok-time"})
    assert step_of(open_link(client, url)) == "consent"
    first = idv_service.clocks.handle("default").now
    idv_service.clocks.advance("default", {"seconds": 181})
    _, page = error_of(client, url)
    assert shown(page.text, "error-code") == "TK-10001"
    payload = idv_webhook_receiver.wait_for("token_expired")
    assert payload == {
        "webhook_trigger": "token_expired",
        "token_id": "tok-time",
        "expired_condition": "time",
        "service": "idCheck",
        "expected_expired_at": iso(first + timedelta(minutes=3)),
    }


def test_a_used_token_sends_token_expired_by_count(
    client: httpx.Client, idv_service: Service, idv_webhook_receiver: Any
) -> None:
    idv_service.update_project("default", {"options": {"token_expiry_webhook": True}})
    url = link({}, {"userid": "u-count", "token": "tok-count"})
    walk(client, url)
    error_of(client, url)
    payload = idv_webhook_receiver.wait_for("token_expired")
    assert payload == {
        "webhook_trigger": "token_expired",
        "token_id": "tok-count",
        "expired_condition": "count",
        "service": "idCheck",
        "expired_at": iso(idv_service.clocks.handle("default").now),
    }


def test_private_mode_needs_a_token(client: httpx.Client, idv_service: Service) -> None:
    idv_service.update_project("default", {"options": {"liveform_private_mode": True}})
    _, page = error_of(client, link({"userid": "u"}))
    assert shown(page.text, "error-code") == "TK-10002"
    assert step_of(open_link(client, link({}, {"token": "t-private"}))) == "consent"


def test_encryption_only_mode_ignores_plain_parameters(
    client: httpx.Client, idv_service: Service
) -> None:
    idv_service.update_project("default", {"options": {"liveform_encrypted_only": True}})
    url = link(
        {"email": "plain@example.com", "projectionId": "x"},
        {"userid": "u-enc", "email": "inner@example.com"},
    )
    page = open_link(client, url)
    assert shown(page.text, "debug-ignored") == "email, projectionId"
    done = walk(client, url)
    assert sub_of(idv_service, done)["email"] == "inner@example.com"
    plain_only = walk(client, link({"email": "plain@example.com", "userid": "u-plain-only"}))
    assert "email" not in sub_of(idv_service, plain_only)  # the plain one was ignored


def test_gcm_links(client: httpx.Client, idv_service: Service) -> None:
    idv_service.update_project("default", {"options": {"liveform_cipher": "gcm"}})
    done = walk(client, link({}, {"userid": "u-gcm"}, gcm=True))
    assert sub_of(idv_service, done)["userid"] == "u-gcm"
    _, page = error_of(client, link({}, {"userid": "u-gcm"}))  # ECB on a GCM project
    assert shown(page.text, "error-code") == "PV-40001"


def test_secret_key_links(client: httpx.Client, idv_service: Service) -> None:
    idv_service.update_project("default", {"options": {"liveform_key": "secret"}})
    _, page = error_of(client, link({}, {"userid": "u-sec"}))
    assert shown(page.text, "error-code") == "PV-40007"
    r = client.post(f"{BASE}/__admin/projects/default/liveform-secret")
    assert r.status_code == 201 and set(r.json()) == {"project_id", "secret_key"}
    secret = r.json()["secret_key"]
    done = walk(client, link({}, {"userid": "u-sec"}, key=secret))
    assert sub_of(idv_service, done)["userid"] == "u-sec"
    _, page = error_of(client, link({}, {"userid": "u-sec"}))  # the API key no longer fits
    assert shown(page.text, "error-code") == "PV-40001"


def test_unknown_parameters_are_shown_and_journaled(
    client: httpx.Client, idv_service: Service
) -> None:
    page = open_link(client, link({"customUserId": "u1", "userid": "u2"}, {"custom_user_id": "u3"}))
    assert shown(page.text, "debug-unknown") == "customUserId, encrypted.custom_user_id"
    [entry] = idv_service.calls.journal("default", "GET", "/liveform/")
    assert entry["response"]["unknown_parameters"] == ["customUserId", "encrypted.custom_user_id"]
    assert entry["response"]["parameters"] == {"userid": "u2"}


def test_return_url_after_ok_carries_the_documented_parameters(
    client: httpx.Client, idv_service: Service
) -> None:
    back = "https://app.example.com/kyc/back?from=idv"
    idv_service.update_project("default", {"options": {"return_url": back}})
    done = walk(client, link({"userid": "u-ret", "cf1": "a"}, {"email": "r@example.com"}))
    ok = re.search(r'href="([^"]+)" data-testid="ok"', done.text)
    assert ok
    target = urlsplit(html.unescape(ok.group(1)))
    assert (target.netloc, target.path) == ("app.example.com", "/kyc/back")
    assert parse_qs(target.query, keep_blank_values=True) == {
        "from": ["idv"], "userid": ["u-ret"], "cf1": ["a"], "cf2": [""], "cf3": [""],
        "email": ["r@example.com"], "submissionId": [shown(done.text, "submission-id")],
        "kycStatus": ["approved"],
    }  # fmt: skip
    assert 'http-equiv="refresh" content="5;url=https://app.example.com/kyc/back?' in done.text


def test_error_page_returns_with_the_error_code(client: httpx.Client, idv_service: Service) -> None:
    idv_service.update_project(
        "default", {"options": {"return_url": "https://app.example.com/back"}}
    )
    past = "2020-01-01T00:00:00Z"
    _, page = error_of(client, link({"userid": "u-err"}, {"startValidUntil": past}))
    ok = re.search(r'href="([^"]+)" data-testid="ok"', page.text)
    assert ok
    query = parse_qs(urlsplit(html.unescape(ok.group(1))).query)
    assert (query["userid"], query["errorCode"]) == (["u-err"], ["PV-40018"])


def test_korean_pages(client: httpx.Client) -> None:
    page = open_link(client, link({"lang": "ko"}))
    assert '<html lang="ko">' in page.text
    assert shown(page.text, "step-title") == "동의"
    _, error = error_of(client, f"{BASE}/liveform/?pid=nope&lang=ko")
    assert shown(error.text, "step-title") == "문제가 발생했습니다"


def test_step_input_errors_ask_again_and_change_nothing(client: httpx.Client) -> None:
    page = open_link(client, link({}))
    r = client.post(str(page.url), data={})
    assert r.status_code == 400 and shown(r.text, "form-error")
    page = post(client, page, {"agree": "on"})
    page = post(client, post(client, page, {"country": "KOR"}), {"id_type": "passport"})
    r = client.post(str(page.url), data={"date_of_birth": "1990-13-45"})
    assert r.status_code == 400 and 'aria-invalid="true"' in r.text
    assert step_of(client.get(str(page.url))) == "document"


def test_countries_filtered_and_single_country_skipped(client: httpx.Client) -> None:
    page = post(
        client, open_link(client, link({}, {"allowedCountries": "USA,KOR"})), {"agree": "on"}
    )
    assert re.findall(r'<option value="([A-Z]{3})"', page.text) == ["USA", "KOR"]
    r = client.post(str(page.url), data={"country": "JPN"})
    assert r.status_code == 400
    page = post(client, open_link(client, link({}, {"allowedCountries": ["JPN"]})), {"agree": "on"})
    assert step_of(page) == "id_type"


def test_unknown_session_and_error_slug(client: httpx.Client) -> None:
    r = client.get(f"{BASE}/liveform/s/nope/consent")
    assert r.headers["location"].startswith("/error-page/page-not-found?")  # an old bookmark
    nope = client.get(f"{BASE}/error-page/nope")
    assert nope.status_code == 404 and shown(nope.text, "error-code") == "page-not-found"
    r = client.get(f"{BASE}/liveform/nowhere")
    assert r.status_code == 303 and r.headers["location"].startswith("/error-page/page-not-found")


def test_control_call_uses_the_same_token_rules(client: httpx.Client) -> None:
    body = {
        "token": crypto.encrypt({"userid": "u-ctl", "token": "tok-ctl"}, KEY),
        "outcome": "pending",
    }
    r = client.post(f"{BASE}/__admin/projects/default/hosted-submissions", json=body)
    assert r.status_code == 201 and r.json()["tokenId"] == "tok-ctl"
    assert r.json()["kyc"]["result"] == "pending"
    r = client.post(f"{BASE}/__admin/projects/default/hosted-submissions", json=body)
    assert (r.status_code, r.json()) == (
        400,
        {"message": "The verification token has expired.", "errors": [], "errorCode": "TK-10001"},
    )


def test_gcm_layout() -> None:
    text = crypto.encrypt_gcm({"a": 1}, "k", nonce=bytes(12))
    raw = base64.b64decode(text)
    assert raw[:12] == bytes(12) and len(raw) == 12 + len(b'{"a":1}') + 16
    assert crypto.decrypt_gcm(text, "k") == {"a": 1}
    with pytest.raises(crypto.CryptoError):
        crypto.decrypt_gcm(text, "other")


def test_plugin_liveform_url_encrypts_what_must_be(idv_project: Any, idv_service: Service) -> None:
    url = idv_project.liveform_url(userid="u1", lang="ko", projectionName="p", token="t")
    query = parse_qs(urlsplit(url).query)
    assert (query["pid"], query["lang"], query["userid"]) == (
        [idv_project.project_id],
        ["ko"],
        ["u1"],
    )
    inner = crypto.decrypt(query["encrypted"][0], idv_project.api_key)
    assert inner == {"projectionName": "p", "token": "t"}


def test_readme_example(idv_server: Any) -> None:
    url = idv_server.liveform_url(userid="u1", email="a@b.c", token="t-1")
    page = httpx.get(url, follow_redirects=True)  # or page.goto(url) in Playwright
    assert page.status_code == 200 and 'data-testid="page-consent"' in page.text


def test_cli_gcm_round_trip(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO('{"userid": "u1"}\n'))
    assert cli.main(["crypto", "encrypt", "--gcm", "--api-key", "k"]) == 0
    sealed = capsys.readouterr().out.strip()
    assert crypto.decrypt_gcm(sealed, "k") == {"userid": "u1"}
    monkeypatch.setattr("sys.stdin", io.StringIO(sealed))
    assert cli.main(["crypto", "decrypt", "--gcm", "--api-key", "k"]) == 0
    assert capsys.readouterr().out == '{"userid": "u1"}\n'
    monkeypatch.setattr("sys.stdin", io.StringIO(sealed))
    assert cli.main(["crypto", "decrypt", "--gcm", "--api-key", "other"]) == 1


NAMES = ["pid", "lang", "encrypted", "userid", "token", "projectionId", "startValidUntil", "x"]


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    query=st.lists(st.tuples(st.sampled_from(NAMES), st.text(max_size=40)), max_size=6),
    body=st.binary(max_size=200),
    step=st.sampled_from(["consent", "country", "id_type", "document", "selfie", "tester", "zz"]),
)
def test_pages_never_answer_5xx(
    client: httpx.Client, query: list[tuple[str, str]], body: bytes, step: str
) -> None:
    first = client.get(f"{BASE}/liveform/", params=query)
    assert first.status_code == 303
    page = client.get(BASE + first.headers["location"])
    assert page.status_code < 500
    session = re.search(r"/liveform/s/([0-9a-f]+)/", first.headers["location"])
    sid = session.group(1) if session else "nope"
    headers = {"content-type": "application/x-www-form-urlencoded"}
    r = client.post(f"{BASE}/liveform/s/{sid}/{step}", content=body, headers=headers)
    assert r.status_code < 500


def test_a_refused_link_does_not_start_the_token_clock(
    client: httpx.Client, idv_service: Service
) -> None:
    _, page = error_of(client, link({}, {"token": "tok-late", "projectionName": "nope"}))
    assert shown(page.text, "error-code") == "PV-40004"
    idv_service.clocks.advance("default", {"seconds": 240})
    assert step_of(open_link(client, link({}, {"token": "tok-late"}))) == "consent"


def test_policy_switches_reach_the_submission(client: httpx.Client, idv_service: Service) -> None:
    url = link(
        {"userid": "u-sw", "ageLimit": "false", "approvePeriod": "false", "rejectPeriod": "yes"}
    )
    page = open_link(client, url)
    assert shown(page.text, "debug-ignored") == "rejectPeriod"
    options = sub_of(idv_service, walk(client, url))["project_options"]
    assert (options["policy_ageLimit"], options["policy_approvePeriod"]) == (0, 0)


def test_reject_duplicate_user(client: httpx.Client, idv_service: Service) -> None:
    first = sub_of(idv_service, walk(client, link({"userid": "u-dup"})))
    assert first["kyc"]["result"] == "approved"
    again = sub_of(
        idv_service, walk(client, link({"userid": "u-dup", "rejectDuplicateUser": "true"}))
    )
    assert (again["kyc"]["result"], again["kyc"]["commentCode"]) == ("rejected", ["duplicate_user"])
