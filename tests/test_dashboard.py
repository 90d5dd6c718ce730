"""The dashboard (``/__admin/ui/``) in-process: what a person sees on each page and what a
form changes, checked through the API and the control API a client would use."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from conftest import FormClient, walk_pages
from idv_mock import Service, ServiceConfig
from idv_mock.api.app import create_app
from idv_mock.transport import ASGITransport

UI = "/__admin/ui"
KEY = "mock-api-key"
ADMIN = "admin@example.com"
ROW = re.compile(r'data-testid="row-([^"]+)"')
NEXT = re.compile(r'href="([^"]+)" data-testid="next-page"')


def client_of(service: Service, **app_options: Any) -> httpx.Client:
    app = create_app(service, **app_options)
    return FormClient(transport=ASGITransport(app), base_url="http://testserver")


@pytest.fixture
def service() -> Iterator[Service]:
    found = Service(ServiceConfig(seed_count=50, webhook_backoff=(0.01, 0.01)))
    yield found
    found.close()


@pytest.fixture
def ui(service: Service) -> Iterator[httpx.Client]:
    with client_of(service) as client:
        yield client


def ui_pages(ui: httpx.Client, url: str) -> list[list[str]]:
    """Every page of the submissions list from ``url``, following "Next page"."""
    pages = []
    while url:
        response = ui.get(url)
        assert response.status_code == 200, response.text
        pages.append(ROW.findall(response.text))
        found = NEXT.search(response.text)
        url = found.group(1).replace("&amp;", "&") if found else ""
    return pages


def api_pages(ui: httpx.Client, **query: str) -> list[list[str]]:
    return [
        [item["submission_id"] for item in answer.json()["Items"]]
        for answer in walk_pages(ui, query, headers={"x-api-key": KEY})
    ]


def test_every_seeded_submission_has_a_page_that_shows_it(ui: httpx.Client) -> None:
    ids = [sid for page in ui_pages(ui, f"{UI}/submissions") for sid in page]
    assert len(ids) == len(set(ids)) == 50
    for sid in ids:
        response = ui.get(f"{UI}/submissions/{sid}")
        assert response.status_code == 200, sid
        assert f'data-testid="submission-id">{sid}<' in response.text
        assert 'data-testid="raw-stored"' in response.text


def test_pages_are_the_apis_pages(ui: httpx.Client) -> None:
    assert ui_pages(ui, f"{UI}/submissions?count=7") == api_pages(ui, count="7")
    email = ui.get("/v3/submission", headers={"x-api-key": KEY}).json()["Items"][0]["email"]
    assert ui_pages(ui, f"{UI}/submissions?email={email}") == api_pages(ui, email=email)


def test_kyc_and_deleted_filters_narrow_the_page(ui: httpx.Client, service: Service) -> None:
    first = ui.get("/v3/submission", headers={"x-api-key": KEY}).json()["Items"][0]
    project = service.project("default")
    service.delete(project, first["submission_id"], None)
    only = ROW.findall(ui.get(f"{UI}/submissions?deleted=only").text)
    assert only == [first["submission_id"]]
    approved = ROW.findall(ui.get(f"{UI}/submissions?kyc=approved").text)
    for sid in approved:
        assert service.stored_submission("default", sid)["kyc"]["result"] == "approved"
    assert ui.get(f"{UI}/submissions/{first['submission_id']}").status_code == 200
    assert ui.get(f"{UI}/submissions?kyc=maybe").status_code == 400
    bad_date = ui.get(f"{UI}/submissions?start_date=2025-13-40")
    assert bad_date.status_code == 400 and "the API refuses this query" in bad_date.text


def test_review_is_an_administrators_patch(ui: httpx.Client, service: Service) -> None:
    service.update_project("default", {"options": {"webhook_url": "http://127.0.0.1:9/hook"}})
    items = ui.get("/v3/submission", headers={"x-api-key": KEY}).json()["Items"]
    sid = next(i["submission_id"] for i in items if i["kyc"]["result"] != "rejected")
    form = {"action": "reject", "admin": ADMIN, "reason": "document expired"}
    response = ui.post(f"{UI}/submissions/{sid}/review", data=form)
    assert response.status_code == 303
    page = ui.get(response.headers["location"])
    assert "kycStatus set to rejected" in page.text
    stored = service.stored_submission("default", sid)
    assert stored["kyc"]["result"] == "rejected"
    assert stored["memo"]["text"] == "rejected: document expired"
    assert stored["updateHistory"]["updateAdmin"] == ADMIN
    updated = [
        d for d in service.delivery.recorded("default") if d["event"] == "submission.updated"
    ]
    assert updated and updated[-1]["payload"]["submission_id"] == sid
    # and the result webhook, after the update (issue 17: "the updated (and result) webhooks")
    events = [d["event"] for d in service.delivery.recorded("default")]
    assert events[-2:] == ["submission.updated", "submission.rejected"]
    result = service.delivery.recorded("default")[-1]["payload"]
    assert result["kyc_result"]["status"] == "rejected"
    assert "full_name" not in result  # rejected carries no personal data (webhooks.md 5)
    stranger = ui.post(f"{UI}/submissions/{sid}/review", data={**form, "admin": "x@y.z"})
    assert stranger.status_code == 400
    assert ui.post(f"{UI}/submissions/{sid}/review", data={"action": "x"}).status_code == 400
    assert ui.post(f"{UI}/submissions/nope/review", data=form).status_code == 404


def test_monitor_form_registers_a_record_and_sends_aml_monitor(
    ui: httpx.Client, service: Service
) -> None:
    service.update_project("default", {"options": {"webhook_url": "http://127.0.0.1:9/hook"}})
    wid = service.screening.create_worklist("default", {"name": "daily"})["id"]
    sub = service.create_submission("default", {"kyc": {"result": "approved"}})
    sid = sub["submission_id"]
    page = ui.get(f"{UI}/submissions/{sid}")
    assert 'data-testid="monitor"' in page.text and f'value="{wid}"' in page.text
    r = ui.post(f"{UI}/submissions/{sid}/monitor", data={"worklist_id": wid, "admin": ADMIN})
    assert r.status_code == 303
    (record,) = service.screening.records_of("default", sid)
    assert "record " + record["id"] in ui.get(r.headers["location"]).text
    (delivery,) = [
        d for d in service.delivery.recorded("default") if d["event"] == "submission.aml_monitor"
    ]
    assert delivery["payload"]["records"] == [
        {"recordId": record["id"], "worklistId": wid, "created_at": record["updateTime"]}
    ]
    refused = ui.post(f"{UI}/submissions/{sid}/monitor", data={"worklist_id": "nope"})
    assert refused.status_code == 404
    pending = service.create_submission("default", {"kyc": {"result": "pending"}})
    assert (
        'data-testid="monitor"' not in ui.get(f"{UI}/submissions/{pending['submission_id']}").text
    )
    bad = ui.post(f"{UI}/submissions/{pending['submission_id']}/monitor", data={"worklist_id": wid})
    assert bad.status_code == 400 and "is not approved" in bad.text


def test_detail_shows_aml_matches_with_reports_and_monitoring(
    ui: httpx.Client, service: Service
) -> None:
    entry = {"entry_id": "dash-1", "list": "sanctions", "name": "Dana Dashboard"}
    added = ui.post(f"{UI}/watchlist", data={**entry, "nationality": "KOR"})
    assert added.status_code == 303
    sub = service.screening.watchlist_submission("default", "dash-1")
    sid = sub["submission_id"]
    service.screening.screen(service.project("default"), sid, 80)
    page = ui.get(f"{UI}/submissions/{sid}").text
    reports = re.findall(r'href="(/__admin/ui/reports/[^"]+)" data-testid="report-link"', page)
    assert reports
    pdf = ui.get(reports[0])
    assert pdf.status_code == 200 and pdf.content.startswith(b"%PDF")
    service.edit(service.project("default"), sid, ADMIN, {"kycStatus": "approved"})
    ui.post(f"{UI}/worklists", data={"name": "watch", "id": "wl-1", "active": "on"})
    service.screening.monitor(service.project("default"), "wl-1", [sid], ADMIN)
    assert "<strong>watch</strong>" in ui.get(f"{UI}/submissions/{sid}").text
    assert ui.get(f"{UI}/reports/nope").status_code == 404


def test_a_fault_rule_added_in_the_form_fails_the_next_call(ui: httpx.Client) -> None:
    form = {"method": "GET", "path": "/v3/submission", "kind": "respond", "value": "503"}
    assert ui.post(f"{UI}/faults", data=form).status_code == 303
    assert ui.get("/v3/submission", headers={"x-api-key": KEY}).status_code == 503
    page = ui.get(f"{UI}/faults").text
    fault_id = re.findall(r'data-testid="fault-row" data-id="([^"]+)"', page)
    assert len(fault_id) == 1
    gone = ui.post(f"{UI}/faults/{fault_id[0]}/delete")
    assert gone.status_code == 303
    assert ui.get("/v3/submission", headers={"x-api-key": KEY}).status_code == 200


def test_a_fault_rule_is_checked_as_the_control_api_checks_it(ui: httpx.Client) -> None:
    unknown = {"spec": '{"match": {"path": "/v3/projection"}, "error": "no such error"}'}
    refused = ui.post(f"{UI}/faults", data=unknown)
    assert refused.status_code == 400 and "has no error" in refused.text
    assert ui.post(f"{UI}/faults", data={"spec": "[1"}).status_code == 400
    assert ui.post(f"{UI}/faults", data={"spec": '{"match": {}}'}).status_code == 400
    assert ui.post(f"{UI}/faults", data={"kind": "respond", "value": "x"}).status_code == 400
    assert ui.post(f"{UI}/faults/nope/delete").status_code == 404


def test_projections_watchlist_and_worklists_are_created_and_deleted(
    ui: httpx.Client, service: Service
) -> None:
    made = ui.post(f"{UI}/projections", data={"name": "no_dob", "field-date_of_birth": "on"})
    assert made.status_code == 303
    policy = service.projections(service.project("default"))[0]
    assert policy["fields"] == ["date_of_birth"]
    assert ui.post(f"{UI}/projections", data={"name": "Bad Name"}).status_code == 400
    taken = {"name": "no_dob", "field-gender": "on"}
    assert ui.post(f"{UI}/projections", data=taken).status_code == 409
    assert ui.post(f"{UI}/projections", data={"name": "nothing"}).status_code == 400  # no field
    assert ui.post(f"{UI}/projections/{policy['projection_id']}/delete").status_code == 303
    assert service.projections(service.project("default")) == []

    entry = {"entry_id": "w-1", "list": "pep", "name": "Wanda List", "nationality": "USA"}
    assert ui.post(f"{UI}/watchlist", data=entry).status_code == 303
    assert "Wanda List" in ui.get(f"{UI}/watchlist").text
    assert ui.post(f"{UI}/watchlist", data=entry).status_code == 409
    assert ui.post(f"{UI}/watchlist/w-1/delete").status_code == 303
    assert service.screening.own_watchlist("default") == []
    assert ui.post(f"{UI}/watchlist/w-1/delete").status_code == 404

    def daily() -> dict[str, Any]:
        return next(w for w in service.screening.worklists("default") if w["id"] == "d-1")

    seeded = service.screening.worklists("default")  # the default worklist
    assert ui.post(f"{UI}/worklists", data={"name": "daily", "id": "d-1"}).status_code == 303
    assert daily()["active"] is False  # the box was not ticked
    assert ui.post(f"{UI}/worklists/d-1/activate").status_code == 303
    assert daily()["active"] is True
    assert ui.post(f"{UI}/worklists/d-1/delete").status_code == 303
    assert service.screening.worklists("default") == seeded
    assert ui.post(f"{UI}/worklists/d-1/delete").status_code == 404
    assert ui.post(f"{UI}/worklists/d-1/explode").status_code == 404


def test_journal_shows_calls_filters_and_hints(ui: httpx.Client, service: Service) -> None:
    ui.get("/v3/submission", params={"count": "2"}, headers={"x-api-key": KEY})
    ui.patch("/v3/submission", json={"bogus": 1}, headers={"x-api-key": KEY})
    ui.get("/v3/submission/abc", headers={"x-api-key": KEY})  # a near miss: hinted
    page = ui.get(f"{UI}/journal").text
    assert "GET /v3/submission?count=2" in page and "PATCH /v3/submission" in page
    hints = re.findall(r'data-testid="call-hint">([^<]*)<', page)
    assert len(hints) == 1 and "submission_id=abc" in hints[0]
    only_4xx = ui.get(f"{UI}/journal", params={"status": "4xx"}).text
    assert "GET /v3/submission?count=2" not in only_4xx and "PATCH /v3/submission" in only_4xx
    patches = ui.get(f"{UI}/journal", params={"method": "PATCH"}).text
    assert "count=2" not in patches
    assert "/v3/submission/abc" in ui.get(f"{UI}/journal", params={"path": "/v3/sub"}).text
    assert ui.get(f"{UI}/journal", params={"status": "abc"}).status_code == 400
    assert ui.get(f"{UI}/journal", params={"method": "BREW"}).status_code == 400


def test_a_delivery_is_sent_again(ui: httpx.Client, service: Service) -> None:
    service.update_project("default", {"options": {"webhook_url": "http://127.0.0.1:9/hook"}})
    service.create_submission("default", {}, fire_webhooks=True)
    first = service.delivery.recorded("default")[0]
    response = ui.post(f"{UI}/webhooks/{first['id']}/resend")
    assert response.status_code == 303
    again = service.delivery.recorded("default")[-1]
    assert again["id"] != first["id"] and again["payload"] == first["payload"]
    assert first["id"] in ui.get(f"{UI}/webhooks").text
    assert ui.post(f"{UI}/webhooks/wh-999/resend").status_code == 404


def test_delivery_levers_are_set_held_webhooks_released_and_listed_by_state(
    ui: httpx.Client, service: Service
) -> None:
    service.update_project("default", {"options": {"webhook_url": "http://127.0.0.1:9/hook"}})
    form = {"duplicate": "2", "hold": "1", "delay_seconds": "", "drop_first": "", "fail_first": ""}
    assert ui.post(f"{UI}/webhooks/delivery", data=form).status_code == 303
    assert service.delivery.levers("default") == {"duplicate": 2, "hold": True}
    page = ui.get(f"{UI}/webhooks").text
    assert 'data-testid="levers-now">{"duplicate": 2, "hold": true}<' in page
    service.create_submission("default", {"kyc": {"result": "pending"}}, fire_webhooks=True)
    held = ui.get(f"{UI}/webhooks", params={"state": "held"}).text
    assert held.count('data-testid="delivery"') == 2
    assert (
        ui.get(f"{UI}/webhooks", params={"state": "delivered"}).text.count('data-testid="delivery"')
        == 0
    )
    response = ui.post(f"{UI}/webhooks/release", data={"order": "reversed", "seed": "0"})
    assert response.status_code == 303
    assert service.delivery.in_state("default", "held") == []
    assert ui.post(f"{UI}/webhooks/delivery", data={"duplicate": "x"}).status_code == 400
    assert ui.post(f"{UI}/webhooks/delivery", data={"duplicate": "0"}).status_code == 400
    assert ui.post(f"{UI}/webhooks/release", data={"order": "sideways"}).status_code == 400
    assert ui.get(f"{UI}/webhooks", params={"state": "lost"}).status_code == 400
    assert ui.post(f"{UI}/webhooks/delivery", data={}).status_code == 303
    assert service.delivery.levers("default") == {}


def test_projects_page_masks_keys_switches_and_resets(ui: httpx.Client, service: Service) -> None:
    service.create_project({"project_id": "other", "api_key": "other-secret-key"})
    page = ui.get(f"{UI}/").text
    assert "other-secret-key" not in page and "othe****" in page
    switched = ui.post(f"{UI}/project", data={"project": "other", "back": "/submissions"})
    assert switched.status_code == 303
    assert switched.headers["location"].startswith(f"{UI}/submissions")
    assert "0 shown of 0" in ui.get(f"{UI}/submissions").text  # the cookie keeps "other"
    assert ui.post(f"{UI}/project", data={"project": "nope"}).status_code == 404
    service.create_submission("default", {})
    assert ui.post(f"{UI}/projects/default/reset").status_code == 303
    assert service.submission_counts()["default"] == 50
    assert ui.get(f"{UI}/submissions", params={"project": "nope"}).status_code == 404


def test_scenarios_run_against_the_current_state(service: Service) -> None:
    from idv_mock import scenarios

    with client_of(service) as ui:
        assert 'data-testid="no-runner"' in ui.get(f"{UI}/scenarios").text
        assert ui.post(f"{UI}/scenarios", data={"name": "admin-edit"}).status_code == 409
        ui._transport.app.state.scenarios = scenarios  # type: ignore[attr-defined]
        response = ui.post(f"{UI}/scenarios", data={"name": "admin-edit", "reset": "on"})
        assert response.status_code == 303
        page = ui.get(response.headers["location"]).text
        assert "admin-edit: <span" in page and "PASS" in page and "FAIL" not in page
        assert ui.post(f"{UI}/scenarios", data={"name": "nope"}).status_code == 404


def test_the_ui_is_behind_the_admin_token_when_exposed(service: Service) -> None:
    with client_of(service, admin_token="T", exposed=True) as ui:
        assert ui.get(f"{UI}/").status_code == 403
        assert ui.get(f"{UI}/submissions").status_code == 403
        assert ui.get(f"{UI}/pulse").status_code == 403
        assert ui.post(f"{UI}/projects/default/reset").status_code == 403
        assert ui.get(f"{UI}/login").status_code == 200
        wrong = ui.post(f"{UI}/login", data={"token": "nope"})
        assert wrong.headers["location"].endswith("wrong=1")
        assert ui.get(f"{UI}/").status_code == 403
        login = ui.post(f"{UI}/login", data={"token": "T"})
        assert login.status_code == 303
        cookie = login.headers["set-cookie"]
        assert "idv_mock_admin_token=T" in cookie and "HttpOnly" in cookie
        assert "SameSite=strict" in cookie and "Path=/__admin" in cookie
        assert ui.get(f"{UI}/").status_code == 200
        assert ui.get(f"{UI}/submissions").status_code == 200
    with client_of(service, admin_token="T", exposed=True) as fresh:
        header = {"x-idv-mock-admin-token": "T"}
        assert fresh.get(f"{UI}/journal", headers=header).status_code == 200


def test_detail_shows_the_projection_and_what_the_api_leaves_out(
    ui: httpx.Client, service: Service
) -> None:
    from idv_mock.ground import crypto

    project = service.project("default")
    policy = service.create_projection(project, "hide", "exclude", ["full_name", "gender"])
    claims = {"userid": "u-proj", "email": "p@example.com", "projectionId": policy.projection_id}
    sub = service.liveform.hosted_submission("default", crypto.encrypt(claims, KEY), "approved")
    page = ui.get(f"{UI}/submissions/{sub['submission_id']}").text
    assert 'data-testid="hidden-fields">full_name, gender<' in page
    raw = re.search(r'data-testid="raw-returned">(.*?)</pre>', page, re.S)
    assert raw is not None and "&#34;gender&#34;" not in raw.group(1)
    stored = re.search(r'data-testid="raw-stored">(.*?)</pre>', page, re.S)
    assert stored is not None and "&#34;gender&#34;" in stored.group(1)


def test_a_secure_projects_pages_show_plaintext(ui: httpx.Client, service: Service) -> None:
    spec = {"project_id": "sec", "api_key": "secure-key", "options": {"secure_transfer": True}}
    service.create_project(spec)
    sid = service.create_submission("sec", {"userid": "u-sec"})["submission_id"]
    listing = ui.get(f"{UI}/submissions", params={"project": "sec", "userid": "u-sec"})
    assert ROW.findall(listing.text) == [sid]
    detail = ui.get(f"{UI}/submissions/{sid}", params={"project": "sec"})
    assert detail.status_code == 200 and "u-sec" in detail.text
    assert ROW.findall(ui.get(f"{UI}/submissions").text) == [sid]  # links stay in "sec"


def test_the_clock_page_shows_what_is_due_and_advances(ui: httpx.Client, service: Service) -> None:
    service.update_project("default", {"options": {"clock_mode": "frozen"}})
    service.screening.create_worklist("default", {"id": "wl-d", "name": "daily"})
    now = service.clocks.describe("default")["now"]
    due = service.clocks.describe("default")["due"][0]["at"]
    page = ui.get(f"{UI}/clock").text
    assert f"Now: <code>{now}</code> (frozen)" in page
    assert f"<td><code>{due}</code></td><td>monitoring_cycle</td>" in page
    done = ui.post(f"{UI}/clock", data={"amount": "36", "unit": "hours"})
    assert done.status_code == 303
    after = service.clocks.describe("default")
    assert after["due"][0]["at"] > due  # the cycle ran and the next one is due
    assert "1 due item(s) ran" in ui.get(done.headers["location"]).text
    back = ui.post(f"{UI}/clock", data={"to": "2020-01-01T00:00:00Z"})
    assert back.status_code == 400
    assert "the clock only moves forward" in back.text
    assert ui.post(f"{UI}/clock", data={"amount": "-1", "unit": "hours"}).status_code == 400
    assert ui.post(f"{UI}/clock", data={"amount": "1", "unit": "years"}).status_code == 400
    assert service.clocks.describe("default") == after  # refusals change nothing


def test_every_post_form_of_the_dashboard_carries_the_anti_forgery_token() -> None:
    """The token is checked on every dashboard POST, so a form without it is refused in a
    real browser (FormClient adds the token itself, so the form tests cannot see that)."""
    import re
    from pathlib import Path

    import idv_mock.web

    templates = Path(idv_mock.web.__file__).parent / "templates" / "dashboard"
    missing = []
    for path in sorted(templates.glob("*.html")):
        for form in re.findall(r"<form[^>]*>.*?</form>", path.read_text(), re.S | re.I):
            if 'method="post"' in form.lower() and "form_token_field()" not in form:
                missing.append(f"{path.name}: {form[:80]}")
    assert missing == []
