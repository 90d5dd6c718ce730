"""Where a hosted-form submission's values come from (gaps.md "Values an integrator
branches on"): the link, the token and what the applicant entered, nothing invented.

The form is walked as a browser would (GET a page, POST its form, follow the 303); the
webhooks arrive at a real HTTP receiver; the submission is read with ``GET /submission``.
"""

from __future__ import annotations

import itertools
import logging
import re
import string
from datetime import datetime, timedelta, timezone
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from idv_mock import Service
from test_liveform import BASE, error_of, link, open_link, post, shown, step_of, walk

# what only the link, the token or the applicant gives: never filled in for them
GIVEN_ONLY = ("userid", "email", "cf", "tokenId", "phoneNumber", "ssnNumber", "additional_list")
DATA_GIVEN_ONLY = ("cf1", "cf2", "cf3", "phoneNumber", "ssnNumber")


@pytest.fixture
def client(idv_client: httpx.Client) -> httpx.Client:
    return idv_client


def received(receiver: Any, service: Service, count: int) -> list[dict[str, Any]]:
    receiver.wait_for(count)
    assert service.webhooks.wait_idle()
    return [item.body for item in receiver.received]


def read(client: httpx.Client, sid: str) -> dict[str, Any]:
    r = client.get("/submission", params={"submission_id": sid})
    assert r.status_code == 200, r.text
    [item] = r.json()["Items"]
    return item  # type: ignore[no-any-return]


def to_document(client: httpx.Client, url: str) -> httpx.Response:
    page = open_link(client, url)
    for form in ({"agree": "on"}, {"country": "KOR"}, {"id_type": "passport"}):
        page = post(client, page, form)
    assert step_of(page) == "document"
    return page


def test_a_bare_link_gives_no_userid_email_cf_token_or_answers(
    client: httpx.Client, idv_service: Service, idv_webhook_receiver: Any
) -> None:
    """The issue's case: no userid, cf or token on the link. ``created`` and ``approved``
    carry none of them, nor a phone number, SSN or additional answers; GET has none."""
    done = walk(client, link({}))
    sid = shown(done.text, "submission-id")
    created, approved = received(idv_webhook_receiver, idv_service, 2)
    assert (created["webhook_trigger"], approved["webhook_trigger"]) == ("created", "approved")
    assert created == {
        "webhook_trigger": "created", "submission_id": sid,
        "kyc_result": {"status": "incomplete"}, "ipAddress": "127.0.0.1",
    }  # fmt: skip
    assert [k for k in GIVEN_ONLY if k in approved] == []
    item = read(client, sid)
    assert [k for k in ("userid", "email", "tokenId") if k in item] == []
    assert [k for k in DATA_GIVEN_ONLY if k in item["data"]] == []
    assert item["additional_list"] == []
    assert item["data"]["ip_address"] == approved["ipAddress"] == "127.0.0.1"


def test_the_links_values_and_the_applicants_answers_everywhere_the_same(
    client: httpx.Client, idv_service: Service, idv_webhook_receiver: Any
) -> None:
    url = link({"userid": "u-77", "cf2": "team-b"}, {"email": "ann@example.com", "token": "t-77"})
    answers = {
        "phoneNumber": "+82 10-5555-0101",
        "additional_answer": "Occupation",
        "additional_inputValue": "Nurse",
    }
    done = walk(client, url, **answers)
    sid = shown(done.text, "submission-id")
    created, approved = received(idv_webhook_receiver, idv_service, 2)
    assert created["cf"] == approved["cf"] == {"cf2": "team-b"}
    assert created["userid"] == approved["userid"] == "u-77"
    assert created["tokenId"] == approved["tokenId"] == "t-77"
    assert "email" not in created and approved["email"] == "ann@example.com"
    assert approved["phoneNumber"] == "+82 10-5555-0101" and "ssnNumber" not in approved
    assert approved["additional_list"] == [
        {"answer": "Occupation", "inputValue": "Nurse", "blockType": "text"}
    ]
    item = read(client, sid)
    assert (item["userid"], item["email"], item["tokenId"]) == ("u-77", "ann@example.com", "t-77")
    assert item["data"]["cf2"] == "team-b" and "cf1" not in item["data"]
    assert item["data"]["phoneNumber"] == "+82 10-5555-0101"
    assert item["additional_list"] == approved["additional_list"]


def test_the_incomplete_submission_is_readable_from_created_on(
    client: httpx.Client, idv_service: Service, idv_webhook_receiver: Any
) -> None:
    """Between ``created`` and the result, GET by id answers it without ``kyc.result``;
    the result keeps its id and ``created_at``."""
    page = to_document(client, link({"userid": "u-inc", "cf1": "o-1"}, {"token": "t-inc"}))
    [created] = received(idv_webhook_receiver, idv_service, 1)
    sid = created["submission_id"]
    item = read(client, sid)
    assert item["submission_id"] == sid
    assert "result" not in item["kyc"] and item["kyc"]["commentCode"] == []
    assert (item["userid"], item["tokenId"], item["data"]["cf1"]) == ("u-inc", "t-inc", "o-1")
    assert "email" not in item
    assert item["data"]["idcard_issuingCountry"] == "KOR" and item["data"]["idType"] == "passport"
    assert client.get("/submission", params={"submission_id": sid, "userid": "x"}).json() == {
        "Items": []
    }
    for form in ({}, {}, {"outcome": "rejected"}):
        page = post(client, page, form)
    assert shown(page.text, "submission-id") == sid
    done = read(client, sid)
    assert done["kyc"]["result"] == "rejected"
    assert done["created_at"] == item["created_at"]
    assert (done["userid"], done["tokenId"], done["data"]["cf1"]) == ("u-inc", "t-inc", "o-1")


def test_a_timeout_at_the_document_step_made_no_attempt_and_no_selfie(
    client: httpx.Client, idv_service: Service, idv_webhook_receiver: Any
) -> None:
    to_document(client, link({"userid": "u-gone"}))
    [created] = received(idv_webhook_receiver, idv_service, 1)
    sid = created["submission_id"]
    before = read(client, sid)
    seconds = idv_service.project("default").seconds("incomplete_timeout_seconds")
    idv_service.clocks.advance("default", {"seconds": seconds + 1})
    _, rejected = received(idv_webhook_receiver, idv_service, 2)
    assert rejected["webhook_trigger"] == "rejected" and rejected["submission_id"] == sid
    assert rejected["userid"] == "u-gone"
    assert [k for k in ("email", "cf", "tokenId") if k in rejected] == []
    item = read(client, sid)
    assert (item["kyc"]["result"], item["kyc"]["commentCode"]) == ("rejected", ["timeout"])
    assert item["kyc"]["attempts"] == [] and item["image"]["selfieImage"] == ""
    assert item["created_at"] == before["created_at"]
    assert [k for k in DATA_GIVEN_ONLY if k in item["data"]] == []


def test_a_timeout_after_the_selfie_keeps_that_one_attempt(
    client: httpx.Client, idv_service: Service, idv_webhook_receiver: Any
) -> None:
    page = to_document(client, link({}))
    page = post(client, post(client, page, {}), {})
    assert step_of(page) == "tester"
    [created] = received(idv_webhook_receiver, idv_service, 1)
    seconds = idv_service.project("default").seconds("incomplete_timeout_seconds")
    idv_service.clocks.advance("default", {"seconds": seconds + 1})
    received(idv_webhook_receiver, idv_service, 2)
    item = read(client, created["submission_id"])
    assert [a["attemptCnt"] for a in item["kyc"]["attempts"]] == [1]
    assert item["image"]["selfieImage"].endswith("/selfie.jpg")


def test_a_completed_form_has_one_attempt_per_try(
    client: httpx.Client, idv_service: Service
) -> None:
    page = to_document(client, link({}))
    page = post(client, post(client, page, {}), {})
    retry = {"outcome": "approved", "fail_once": "on", "retry_code": "glare_detected"}
    page = post(client, page, retry)
    for form in ({}, {}, {"outcome": "approved"}):
        page = post(client, page, form)
    item = read(client, shown(page.text, "submission-id"))
    assert [a["attemptCnt"] for a in item["kyc"]["attempts"]] == [1, 2]


def test_seeded_submissions_keep_every_field(client: httpx.Client) -> None:
    """Seeded ones stand for past applicants whose links gave everything (gaps.md)."""
    items = client.get(f"{BASE}/v3/submission", params={"count": "5"}).json()["Items"]
    assert items and all({"userid", "email", "tokenId"} <= set(i) for i in items)


def _start_link(until: datetime) -> str:
    return link({"userid": "u-svu"}, {"startValidUntil": until.isoformat()})


def test_start_valid_until_in_the_real_past_is_expired_under_the_default_clock(
    client: httpx.Client, idv_service: Service
) -> None:
    """The default ticking clock starts at 2026-01-01; the client computed the link from
    real time, and the vendor judges it against real time (PV-40018)."""
    assert idv_service.clocks.describe("default")["mode"] == "tick"
    project_now = datetime.fromisoformat(
        idv_service.clocks.describe("default")["now"].replace("Z", "+00:00")
    )
    real_now = datetime.now(timezone.utc)
    assert project_now < real_now - timedelta(minutes=10)  # the case the issue names
    _, page = error_of(client, _start_link(real_now - timedelta(minutes=5)))
    assert shown(page.text, "error-code") == "PV-40018"
    assert step_of(open_link(client, _start_link(real_now + timedelta(minutes=5)))) == "consent"


def test_a_moved_project_clock_judges_start_valid_until(
    client: httpx.Client, idv_service: Service
) -> None:
    idv_service.clocks.advance("default", {"seconds": 60})
    now = datetime.fromisoformat(
        idv_service.clocks.describe("default")["now"].replace("Z", "+00:00")
    )
    url = _start_link(now + timedelta(hours=1))  # long past in real time
    assert step_of(open_link(client, url)) == "consent"
    idv_service.clocks.advance("default", {"seconds": 3601})
    _, page = error_of(client, url)
    assert shown(page.text, "error-code") == "PV-40018"


def test_a_frozen_project_clock_judges_start_valid_until(
    client: httpx.Client, idv_service: Service
) -> None:
    idv_service.update_project("default", {"options": {"clock_mode": "frozen"}})
    now = datetime.fromisoformat(
        idv_service.clocks.describe("default")["now"].replace("Z", "+00:00")
    )
    assert step_of(open_link(client, _start_link(now + timedelta(seconds=1)))) == "consent"
    _, page = error_of(client, _start_link(now - timedelta(seconds=1)))
    assert shown(page.text, "error-code") == "PV-40018"


@pytest.mark.parametrize("encrypted", [False, True])
def test_allowed_id_types_limit_the_id_type_step(
    client: httpx.Client, idv_service: Service, encrypted: bool
) -> None:
    given = {"allowedIdTypes": "drivers_license,passport"}
    url = link({}, given) if encrypted else link(given)
    page = post(client, post(client, open_link(client, url), {"agree": "on"}), {"country": "KOR"})
    assert step_of(page) == "id_type"
    assert re.findall(r'name="id_type" value="([a-z_]+)"', page.text) == [
        "drivers_license",
        "passport",
    ]
    r = client.post(str(page.url), data={"id_type": "government_id"})
    assert r.status_code == 400  # not offered: asked again
    page = post(client, page, {"id_type": "passport"})
    for form in ({}, {}, {"outcome": "approved"}):
        page = post(client, page, form)
    assert read(client, shown(page.text, "submission-id"))["data"]["idType"] == "passport"


def test_one_allowed_id_type_skips_the_step_and_others_are_refused(
    client: httpx.Client,
) -> None:
    page = post(client, open_link(client, link({}, {"allowedIdTypes": ["government_id"]})),
                {"agree": "on"})  # fmt: skip
    assert step_of(post(client, page, {"country": "KOR"})) == "document"
    for bad in ({"allowedIdTypes": "passport,visa"}, {"allowedIdTypes": ""}):
        _, error = error_of(client, link({}, bad))
        assert shown(error.text, "error-code") == "PV-40006"
        assert shown(error.text, "error-message") == "Invalid value for allowedIdTypes."
    _, error = error_of(
        client, link({}, {"allowedIdTypes": "passport", "selectedIdType": "drivers_license"})
    )
    assert shown(error.text, "error-message") == "Invalid value for selectedIdType."


def test_allowed_document_fields_are_the_only_ones_confirmed(
    client: httpx.Client, idv_service: Service
) -> None:
    url = link({"allowedDocumentFields": "full_name,date_of_birth"})
    page = to_document(client, url)
    assert re.findall(r'data-testid="ocr-([A-Za-z_]+)"', page.text) == [
        "full_name",
        "date_of_birth",
    ]
    shown_number = re.search(r'name="documentNumber"', page.text)
    assert shown_number is None
    form = {"full_name": "Mina Park", "date_of_birth": "1991-04-05", "documentNumber": "X9"}
    page = post(client, page, form)  # documentNumber is not confirmed: not read
    for step_form in ({}, {"outcome": "approved"}):
        page = post(client, page, step_form)
    data = read(client, shown(page.text, "submission-id"))["data"]
    assert (data["full_name"], data["date_of_birth"]) == ("Mina Park", "1991-04-05")
    assert data["documentNumber"] != "X9" and data["documentNumber"]
    _, error = error_of(client, link({"allowedDocumentFields": "full_name,shoe_size"}))
    assert shown(error.text, "error-message") == "Invalid value for allowedDocumentFields."


@pytest.mark.parametrize("name", ["customUserId", "userId", "custom_user_id", "user_id", "uid"])
def test_a_near_miss_of_userid_works_and_says_the_vendors_name(
    client: httpx.Client,
    idv_service: Service,
    caplog: pytest.LogCaptureFixture,
    name: str,
) -> None:
    hint = (
        f"{name} is not a parameter of the vendor's form (it ignores it): "
        "the vendor's name for the user id is userid"
    )
    with caplog.at_level(logging.WARNING, logger="idv_mock.hints"):
        first = client.get(link({name: "u-near"}))
    assert first.status_code == 303 and first.headers["x-idv-mock-hint"] == hint
    assert f"GET /liveform/: {hint}" in caplog.messages
    page = client.get(BASE + first.headers["location"])
    assert step_of(page) == "consent"  # the page works: the name is ignored
    assert shown(page.text, "debug-hint") == hint
    [entry] = idv_service.calls.journal("default", "GET", "/liveform/")
    assert entry["hint"] == hint and entry["response"]["hints"] == [hint]
    assert "userid" not in entry["response"]["parameters"]


def test_a_near_miss_inside_encrypted_is_named_so(client: httpx.Client) -> None:
    first = client.get(link({}, {"userId": "u-enc"}))
    assert first.headers["x-idv-mock-hint"].startswith("encrypted.userId is not a parameter")


def test_no_hint_for_userid_itself(client: httpx.Client, idv_service: Service) -> None:
    first = client.get(link({"userid": "u-ok", "other": "x"}))
    assert "x-idv-mock-hint" not in first.headers
    page = client.get(BASE + first.headers["location"])
    assert 'data-testid="debug-hint"' not in page.text


_SAFE = st.text(alphabet=string.ascii_letters + string.digits + "-_.@+", min_size=1, max_size=16)
_COUNTER = itertools.count()


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    given_values=st.fixed_dictionaries(
        {},
        optional={k: _SAFE for k in ("userid", "email", "cf1", "cf2", "cf3", "token")},
    ),
    sealed=st.sets(st.sampled_from(["userid", "email", "cf1", "cf2", "cf3"])),
    outcome=st.sampled_from(["approved", "rejected", "pending"]),
)
def test_every_webhook_and_the_read_show_exactly_what_the_link_gave(
    client: httpx.Client,
    idv_service: Service,
    idv_webhook_receiver: Any,
    given_values: dict[str, str],
    sealed: set[str],
    outcome: str,
) -> None:
    """For random links (each value plain or inside ``encrypted``; a token only inside it),
    ``created``, the result's webhook and GET carry exactly the link's ``userid``,
    ``email``, ``cf1``-``cf3`` and token, and none of the values only an applicant enters."""
    values = dict(given_values)
    if "token" in values:  # a used token expires: one per example
        values["token"] = f"t{next(_COUNTER)}-{values['token']}"
    plain = {k: v for k, v in values.items() if k not in sealed and k != "token"}
    inner = {k: v for k, v in values.items() if k in sealed or k == "token"}
    before = len(idv_webhook_receiver.received)
    done = walk(client, link(plain, inner or None), outcome)
    sid = shown(done.text, "submission-id")
    idv_webhook_receiver.wait_for(before + 2)
    assert idv_service.webhooks.wait_idle()
    bodies = [
        i.body for i in idv_webhook_receiver.received[before:] if i.body["submission_id"] == sid
    ]
    result = {"approved": "approved", "rejected": "rejected", "pending": "submit"}[outcome]
    assert [b["webhook_trigger"] for b in bodies] == ["created", result]
    cf = {k: values[k] for k in ("cf1", "cf2", "cf3") if k in values}
    for body in bodies:
        assert body.get("userid") == values.get("userid")
        assert body.get("tokenId") == values.get("token")
        assert body.get("cf", {}) == cf
        if body["webhook_trigger"] != "created":  # the vendor's created carries no email
            assert body.get("email") == values.get("email")
        assert "email" not in body or body["email"] == values.get("email")
        assert [k for k in ("phoneNumber", "ssnNumber", "additional_list") if k in body] == []
    item = read(client, sid)
    assert item.get("userid") == values.get("userid")
    assert item.get("email") == values.get("email")
    assert item.get("tokenId") == values.get("token")
    assert {k: v for k, v in item["data"].items() if k in DATA_GIVEN_ONLY} == cf
    assert item["additional_list"] == []
