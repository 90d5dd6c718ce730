"""The hosted form's error pages: the vendor's routes and codes (liveform-and-values.md 1),
the mock's own in the vendor's format, and the docs' table that lists them all."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from idv_mock import Service
from idv_mock.ground.errors import LIVEFORM
from test_liveform import BASE, error_of, link, open_link, post, shown, step_of

DOC = Path(__file__).parent.parent / "docs" / "hosted-form.md"
# the vendor's general pages: their code is their developer code ("Legacy" category)
LEGACY = {"page-not-found", "bad-path", "project-closed", "service-blocked"}
FORMAT = re.compile(r"[A-Z]{2}-\d{5}")


@pytest.fixture
def client(idv_client: httpx.Client) -> httpx.Client:
    return idv_client


def doc_rows() -> list[list[str]]:
    text = DOC.read_text()
    table = text[text.index("| Code | Page | Status |") :].split("\n\n", 1)[0]
    rows = [line.strip("|").split(" | ") for line in table.splitlines()[2:]]
    return [[cell.strip() for cell in row] for row in rows]


def test_the_docs_table_and_the_code_agree() -> None:
    documented = {
        row[0].strip("`"): (row[1].strip("`"), int(row[2]), row[3].replace("`<name>`", "{}"))
        for row in doc_rows()
    }
    in_code = {e.code: (f"/error-page/{e.key}", e.status, e.message) for e in LIVEFORM.entries}
    assert documented == in_code


def test_every_code_keeps_the_vendors_format() -> None:
    rows = doc_rows()
    for row in rows:
        code, whose = row[0].strip("`"), row[5]
        assert FORMAT.fullmatch(code) or (code in LEGACY and whose == "vendor"), code
    mine = [r[0].strip("`") for r in rows if r[5] == "mock"]
    assert mine and all(FORMAT.fullmatch(c) for c in mine)
    vendors = {r[0].strip("`") for r in rows if r[5].startswith("vendor")}
    assert {"PV-40018", "TK-10001", "LO-30001", "LO-30005", "SE-50022", *LEGACY} == vendors


@pytest.mark.parametrize(
    ("option", "slug", "status", "message"),
    [
        ({"project_status": "CLOSE"}, "project-closed", 403,
         "This project is closed and access is restricted"),
        ({"submission_control": "emergency_stop"}, "service-blocked", 503,
         "Submissions are temporarily paused"),
    ],
)  # fmt: skip
def test_a_closed_or_stopped_project_takes_no_applicant(
    client: httpx.Client,
    idv_service: Service,
    option: dict[str, str],
    slug: str,
    status: int,
    message: str,
) -> None:
    idv_service.update_project("default", {"options": option})
    before = idv_service.export_state()
    location, page = error_of(client, link({"userid": "u-closed"}))
    assert urlsplit(location).path == f"/error-page/{slug}"
    assert page.status_code == status
    assert (shown(page.text, "error-code"), shown(page.text, "error-message")) == (slug, message)
    assert idv_service.export_state()["projects"] == before["projects"]


def test_expired_start_valid_until_comes_before_a_closed_project(
    client: httpx.Client, idv_service: Service
) -> None:
    idv_service.update_project("default", {"options": {"project_status": "CLOSE"}})
    _, page = error_of(client, link({}, {"startValidUntil": "2020-01-01T00:00:00Z"}))
    assert shown(page.text, "error-code") == "PV-40018"


def test_the_third_same_capture_error_is_a_loop_page(
    client: httpx.Client, idv_service: Service, idv_webhook_receiver: Any
) -> None:
    """The third failed capture rejects the submission (``too_many_retry``, three tries in
    all); when it was the same error all three times the applicant is sent to the loop
    page instead of the result, and the flow does not go on."""
    page = open_link(client, link({"userid": "u-loop"}))
    for form in ({"agree": "on"}, {"country": "KOR"}, {"id_type": "passport"}, {}, {}):
        page = post(client, page, form)
    fail = {"outcome": "approved", "fail_once": "on", "retry_code": "glare_detected"}
    for _ in range(2):
        page = post(client, page, fail)
        assert step_of(page) == "document"
        page = post(client, post(client, page, {}), {})
    r = client.post(str(page.url), data=fail)
    assert r.status_code == 303
    assert urlsplit(r.headers["location"]).path == "/error-page/loop-image-quality"
    loop = client.get(BASE + r.headers["location"])
    assert (shown(loop.text, "error-code"), shown(loop.text, "error-message")) == (
        "LO-30005",
        "ID image quality too low",
    )
    again = client.get(str(page.url))  # the flow does not go on
    assert urlsplit(again.headers["location"]).path == "/error-page/loop-image-quality"
    idv_webhook_receiver.wait_for(4)
    assert idv_service.webhooks.wait_idle()
    bodies = [i.body for i in idv_webhook_receiver.received]
    assert [b["webhook_trigger"] for b in bodies] == ["created", "retry", "retry", "rejected"]
    assert bodies[-1]["kyc_result"]["commentCode"] == "too_many_retry"


def test_different_errors_do_not_add_up_to_a_loop(
    client: httpx.Client, idv_service: Service, idv_webhook_receiver: Any
) -> None:
    """Three different failures reject with ``too_many_retry`` as well, but show the
    form's own end, not a loop page."""
    page = open_link(client, link({"userid": "u-mixed"}))
    for form in ({"agree": "on"}, {"country": "KOR"}, {"id_type": "passport"}, {}, {}):
        page = post(client, page, form)
    for code in ("glare_detected", "missing_name"):
        page = post(client, page, {"outcome": "approved", "fail_once": "on", "retry_code": code})
        assert step_of(page) == "document"
        page = post(client, post(client, page, {}), {})
    r = client.post(
        str(page.url), data={"outcome": "approved", "fail_once": "on", "retry_code": "expired_id"}
    )
    assert not urlsplit(r.headers.get("location", "")).path.startswith("/error-page/")
    idv_webhook_receiver.wait_for(4)
    assert idv_service.webhooks.wait_idle()
    last = idv_webhook_receiver.received[-1].body
    assert (last["webhook_trigger"], last["kyc_result"]["commentCode"]) == (
        "rejected",
        "too_many_retry",
    )
