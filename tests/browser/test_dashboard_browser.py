"""The dashboard in a real browser: a reviewer watching the mock while an applicant and an
integrator's client use it (same set-up and skip rule as the hosted form's tests)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from browser.conftest import Shot, new_page, shooter
from browser.test_liveform_browser import finish, walk_to_tester
from conftest import walk_pages

UI = "/__admin/ui"


@pytest.fixture
def dash(browser: Any) -> Iterator[Any]:
    """A reviewer's page, wide enough for the dashboard's tables."""
    with new_page(browser, 1280, 860) as opened:
        yield opened


@pytest.fixture
def dash_shot(dash: Any, request: pytest.FixtureRequest) -> Shot:
    return shooter(dash, request)


def ui(server: Any, path: str = "/") -> str:
    return f"http://{server.host}:{server.port}{UI}{path}"


def row_ids(dash: Any) -> list[str]:
    rows = dash.locator("[data-testid^='row-']")
    return [str(r.get_attribute("data-testid")).removeprefix("row-") for r in rows.all()]


def test_a_submission_appears_live_is_approved_and_its_calls_are_journaled(
    page: Any, dash: Any, dash_shot: Shot, idv_server: Any, idv_webhook_receiver: Any
) -> None:
    dash.goto(ui(idv_server, "/submissions"))
    dash.evaluate("window.notReloaded = true")
    before = set(row_ids(dash))

    page.goto(idv_server.liveform_url(userid="u-dashboard", email="dana@example.com"))
    walk_to_tester(page)
    finish(page, "pending")
    sid = page.get_by_test_id("submission-id").inner_text()
    assert sid not in before

    dash.get_by_test_id(f"row-{sid}").wait_for()  # no reload: the live region caught up
    assert dash.evaluate("window.notReloaded") is True
    assert dash.get_by_test_id(f"row-{sid}").get_by_test_id("kyc").inner_text() == "pending"
    dash_shot("submissions")

    dash.get_by_test_id(f"row-{sid}").get_by_test_id("submission-link").click()
    assert dash.get_by_test_id("submission-id").inner_text() == sid
    dash.get_by_test_id("review-reason").fill("documents checked by hand")
    dash.get_by_test_id("approve").click()
    assert "kycStatus set to approved" in dash.get_by_test_id("note").inner_text()
    assert dash.get_by_test_id("kyc-result").inner_text() == "approved"
    dash_shot("detail")

    updated = idv_webhook_receiver.wait_for("updated")
    assert updated["submission_id"] == sid

    dash.get_by_test_id("nav-webhooks").click()
    dash.locator("[data-testid=delivery][data-event=updated]").first.locator("summary").click()
    payload = dash.locator(
        "[data-testid=delivery][data-event=updated] [data-testid=delivery-payload]"
    )
    assert sid in payload.first.inner_text()
    dash_shot("webhooks")

    client = httpx.Client(base_url=idv_server.base_url, headers={"x-api-key": idv_server.api_key})
    dash.get_by_test_id("nav-journal").click()
    dash.evaluate("window.notReloaded = true")
    with client:
        found = client.get("/submission", params={"submission_id": sid}).json()["Items"]
    assert found[0]["kyc"]["result"] == "approved"
    lines = dash.get_by_test_id("call-line")
    lines.filter(has_text=f"GET /v3/submission?submission_id={sid}").wait_for()
    assert dash.evaluate("window.notReloaded") is True
    assert lines.filter(has_text="GET /liveform/").count() >= 1  # the applicant's link
    lines.filter(has_text=f"submission_id={sid}").click()
    assert '"approved"' in dash.get_by_test_id("call-response").first.inner_text()
    dash_shot("journal")


def test_deliveries_appear_live_and_are_sent_again(
    dash: Any, dash_shot: Shot, idv_server: Any, idv_webhook_receiver: Any
) -> None:
    dash.goto(ui(idv_server, "/webhooks"))
    dash.evaluate("window.notReloaded = true")
    created = httpx.post(
        f"{idv_server.admin_url}/projects/default/submissions?fire_webhooks=true",
        json={"kyc": {"result": "pending"}},  # pending: the one result that sends submit
    )
    assert created.status_code == 201
    sid = created.json()["submission_id"]
    first = dash.locator("[data-testid=delivery][data-event=submit]")
    first.wait_for()
    assert dash.evaluate("window.notReloaded") is True
    first.locator("summary").click()
    assert sid in first.get_by_test_id("delivery-payload").inner_text()
    first.get_by_test_id("resend").click()
    assert "queued again" in dash.get_by_test_id("note").inner_text()
    again = arrivals(idv_webhook_receiver, "submission.submit", sid, 2)
    assert again[0].body == again[1].body


def arrivals(receiver: Any, event: str, sid: str, count: int) -> list[Any]:
    """The receiver's ``event`` webhooks of ``sid`` once ``count`` of them have arrived."""
    deadline = time.monotonic() + 10
    while True:
        found = [
            r for r in list(receiver.received)
            if r.event == event and isinstance(r.body, dict) and r.body.get("submission_id") == sid
        ]  # fmt: skip
        if len(found) >= count or time.monotonic() > deadline:
            return found
        time.sleep(0.02)


def test_a_fault_rule_added_in_the_ui_fails_the_next_api_call(
    dash: Any, dash_shot: Shot, idv_server: Any
) -> None:
    dash.goto(ui(idv_server, "/faults"))
    dash.get_by_test_id("fault-method").select_option("GET")
    dash.get_by_test_id("fault-path").fill("/v3/submission")
    dash.get_by_test_id("fault-kind").select_option("respond")
    dash.get_by_test_id("fault-value").fill("503")
    dash.get_by_test_id("fault-times").fill("1")
    dash.get_by_test_id("fault-add").click()
    assert "added" in dash.get_by_test_id("note").inner_text()
    assert dash.get_by_test_id("fault-row").count() == 1
    dash_shot("faults")

    headers = {"x-api-key": idv_server.api_key}
    first = httpx.get(f"{idv_server.base_url}/submission", headers=headers)
    assert first.status_code == 503
    assert httpx.get(f"{idv_server.base_url}/submission", headers=headers).status_code == 200
    dash.get_by_test_id("fault-remove").click()
    assert dash.get_by_test_id("fault-row").count() == 0


def test_pages_over_120_submissions_are_the_apis_pages(
    dash: Any, dash_shot: Shot, idv_server: Any, idv_project: Any
) -> None:
    pid = idv_project.project_id
    for _ in range(120):
        idv_server.service.create_submission(pid)
    dash.goto(ui(idv_server, "/"))
    dash.get_by_test_id("project-switch").select_option(pid)
    dash.get_by_test_id("project-switch-go").click()
    assert dash.get_by_test_id("note").inner_text() == f"showing project {pid}"
    dash.get_by_test_id("nav-submissions").click()
    dash.get_by_test_id("filter-count").fill("25")
    dash.get_by_test_id("filter-go").click()

    seen = [row_ids(dash)]
    while dash.get_by_test_id("next-page").count():
        dash.get_by_test_id("next-page").click()
        seen.append(row_ids(dash))
    dash_shot("last-page")

    assert seen == api_pages(idv_project, count="25")
    assert [len(p) for p in seen] == [25, 25, 25, 25, 20]


def api_pages(server: Any, **query: str) -> list[list[str]]:
    with httpx.Client(base_url=server.base_url, headers={"x-api-key": server.api_key}) as client:
        return [
            [item["submission_id"] for item in answer.json()["Items"]]
            for answer in walk_pages(client, query, url="/submission")
        ]


def test_the_clock_form_advances_the_project_clock_from_a_browser(
    dash: Any, idv_server: Any
) -> None:
    """A form posted by a real browser carries the page's anti-forgery token (a test client
    that adds the token itself cannot show that)."""
    before = idv_server.service.clocks.handle("default").now
    dash.goto(ui(idv_server, "/clock?project=default"))
    dash.get_by_label("Advance by").fill("2")
    dash.get_by_label("Unit").select_option("hours")
    dash.get_by_role("button", name="Advance the clock").click()
    dash.wait_for_load_state()
    after = idv_server.service.clocks.handle("default").now
    assert (after - before).total_seconds() >= 7200
