"""``duplicated_information``, ``applicant_id`` and ``GET /v3/submission/applicant`` as the
vendor describes them (``liveform-and-values.md`` 4; gaps.md "Values an integrator branches
on"): over HTTP, the hosted form walked as a browser would, a real webhook receiver."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from idv_mock import Service

HEX24 = re.compile(r"[0-9a-f]{24}")
PERSON = {"full_name": "Ann Example", "date_of_birth": "1990-02-03", "gender": "female"}
MISSING = {"errorCode": "missing_data", "message": "Required input data is missing"}


@pytest.fixture
def http(idv_server: Any) -> Iterator[httpx.Client]:
    headers = {"x-api-key": idv_server.api_key}
    with httpx.Client(base_url=idv_server.root_url, headers=headers, timeout=10) as client:
        yield client


def post(client: httpx.Client, page: httpx.Response, form: dict[str, str]) -> httpx.Response:
    r = client.post(page.url.path, data=form)
    assert r.status_code == 303, r.text
    return client.get(r.headers["location"])


def submit(
    client: httpx.Client, url: str, outcome: str, document: dict[str, str], **tester: str
) -> str:
    """Walk the form with ``document`` typed at the document step; the submission id."""
    first = client.get(url)
    page = client.get(first.headers["location"])
    for form in ({"agree": "on"}, {"country": "KOR"}, {"id_type": "passport"}, document, {}):
        page = post(client, page, form)
    page = post(client, page, {"outcome": outcome, **tester})
    found = re.search(r'data-testid="submission-id"[^>]*>([^<]*)<', page.text)
    assert found is not None, page.text
    return found.group(1).strip()


def item(client: httpx.Client, sid: str) -> dict[str, Any]:
    r = client.get("/v3/submission", params={"submission_id": sid})
    assert r.status_code == 200
    found: dict[str, Any] = r.json()["Items"][0]
    return found


def applicants(client: httpx.Client, applicant_id: str) -> Any:
    r = client.get("/v3/submission/applicant", params={"applicant_id": applicant_id})
    assert r.status_code == 200, r.text
    return r.json()


def test_the_same_person_shares_both_ids_and_the_lookup_lists_them(
    http: httpx.Client, idv_server: Any, idv_webhook_receiver: Any
) -> None:
    first = submit(http, idv_server.liveform_url(email="a1@example.com"), "approved", PERSON)
    # the same four values, written differently: case and spacing of the name
    again = {**PERSON, "full_name": "  ann   EXAMPLE "}
    second = submit(http, idv_server.liveform_url(email="a2@example.com"), "approved", again)
    other = submit(http, idv_server.liveform_url(email="b@example.com"), "approved",
                   {**PERSON, "full_name": "Bea Example"})  # fmt: skip
    a, b, c = item(http, first), item(http, second), item(http, other)
    assert HEX24.fullmatch(a["duplicated_information"]) and HEX24.fullmatch(a["applicant_id"])
    assert b["duplicated_information"] == a["duplicated_information"]
    assert b["applicant_id"] == a["applicant_id"]
    assert c["duplicated_information"] != a["duplicated_information"]
    assert c["applicant_id"] != a["applicant_id"]
    assert a["applicant_id"] != a["duplicated_information"]
    idv_webhook_receiver.wait_for(6)
    approved = {
        i.body["submission_id"]: i.body
        for i in idv_webhook_receiver.received
        if i.body["webhook_trigger"] == "approved"
    }
    for sub in (a, b, c):
        body = approved[sub["submission_id"]]
        assert body["applicant_id"] == sub["applicant_id"]
        assert body["duplicated_information"] == sub["duplicated_information"]
    listed = applicants(http, a["applicant_id"])
    assert listed == [
        {"submission_id": second, "duplicated_information": a["duplicated_information"],
         "email": "a2@example.com"},
        {"submission_id": first, "duplicated_information": a["duplicated_information"],
         "email": "a1@example.com"},
    ]  # fmt: skip
    assert [list(entry) for entry in listed] == [["submission_id", "duplicated_information",
                                                  "email"]] * 2  # fmt: skip
    assert applicants(http, c["applicant_id"]) == [
        {"submission_id": other, "duplicated_information": c["duplicated_information"],
         "email": "b@example.com"}
    ]  # fmt: skip


def test_a_rejected_submission_has_the_information_id_and_no_applicant_id(
    http: httpx.Client, idv_server: Any, idv_webhook_receiver: Any
) -> None:
    approved = submit(http, idv_server.liveform_url(), "approved", PERSON)
    rejected = submit(http, idv_server.liveform_url(userid="u-no"), "rejected", PERSON,
                      reason="expired_id")  # fmt: skip
    a, r = item(http, approved), item(http, rejected)
    assert r["duplicated_information"] == a["duplicated_information"]
    assert r["applicant_id"] == ""
    body = idv_webhook_receiver.wait_for("rejected")
    assert body["duplicated_information"] == a["duplicated_information"]
    assert "applicant_id" not in body
    assert [e["submission_id"] for e in applicants(http, a["applicant_id"])] == [approved]


def test_ids_follow_a_patch_and_a_later_rejection_carries_the_applicant_id(
    http: httpx.Client, idv_server: Any, idv_webhook_receiver: Any
) -> None:
    sid = submit(http, idv_server.liveform_url(email="p@example.com"), "approved", PERSON)
    before = item(http, sid)
    patch = {"submissionId": sid, "admin": idv_server.admin, "data": {"fullName": "Ann Other"}}
    assert http.patch("/v3/submission", json=patch).status_code == 200
    after = item(http, sid)
    assert after["duplicated_information"] != before["duplicated_information"]
    assert after["applicant_id"] != before["applicant_id"]
    updated = idv_webhook_receiver.wait_for("updated")
    assert updated["duplicated_information"] == after["duplicated_information"]
    assert applicants(http, before["applicant_id"]) == []
    assert [e["submission_id"] for e in applicants(http, after["applicant_id"])] == [sid]
    status = {"submissionId": sid, "admin": idv_server.admin, "data": {"kycStatus": "rejected"}}
    assert http.patch("/v3/submission", json=status).status_code == 200
    body = idv_webhook_receiver.wait_for("rejected")
    assert (body["duplicated_information"], body["applicant_id"]) == (
        after["duplicated_information"],
        after["applicant_id"],
    )
    assert list(body)[:6] == [
        *("webhook_trigger", "kyc_result", "submission_id", "duplicated_information"),
        *("applicant_id", "email"),
    ]  # the vendor's sample order
    assert applicants(http, after["applicant_id"]) == []  # approved ones only


def test_ids_are_per_project(idv_service: Service) -> None:
    data = {**PERSON, "nationality": "KOR"}
    here = idv_service.create_submission("default", {"data": data, "kyc": {"result": "approved"}})
    idv_service.create_project({"project_id": "elsewhere", "api_key": "elsewhere-key"})
    there = idv_service.create_submission(
        "elsewhere", {"data": data, "kyc": {"result": "approved"}}
    )
    assert here["duplicated_information"] != there["duplicated_information"]
    assert here["applicant_id"] != there["applicant_id"]


def test_an_unknown_person_gets_a_stable_id_of_its_own(idv_service: Service) -> None:
    """No selfie to compare: the vendor's "random" applicant_id, kept by later reads."""
    sub = idv_service.create_submission(
        "default", {"kyc": {"result": "approved"}, "image": {"selfieImage": ""}}
    )
    twin = idv_service.create_submission(
        "default",
        {"kyc": {"result": "approved"}, "image": {"selfieImage": ""}, "data": sub["data"]},
    )
    assert HEX24.fullmatch(sub["applicant_id"]) and sub["applicant_id"] != twin["applicant_id"]
    assert sub["duplicated_information"] == twin["duplicated_information"]
    stored = idv_service.stored_submission("default", sub["submission_id"])
    assert stored["applicant_id"] == sub["applicant_id"]


def test_lookup_errors(http: httpx.Client) -> None:
    r = http.get("/v3/submission/applicant")
    assert (r.status_code, r.json()) == (400, MISSING)
    r = http.get("/v3/submission/applicant", params={"applicant_id": ""})
    assert (r.status_code, r.json()) == (400, MISSING)
    assert applicants(http, "no-such-applicant") == []
    r = http.get("/v3/submission/applicant", params={"applicant_id": "x"},
                 headers={"x-api-key": "wrong"})  # fmt: skip
    assert (r.status_code, r.json()) == (
        400,
        {"errorCode": "invalid_project", "message": "Invalid project"},
    )
