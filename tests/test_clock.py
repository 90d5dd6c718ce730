"""Simulated time over HTTP (docs/time.md): each project's clock, what falls due on it, and
every time-driven rule, through the control API of a live server with a real webhook
receiver. Each rule's webhook carries the instant the rule fell due, and the state after
is what an integrator would read. No test sleeps: they move the clock.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest

from conftest import ADMIN, LiveServer, ServeProcess
from idv_mock import Service, ServiceConfig, cli
from idv_mock.backend import NotFound, events
from idv_mock.delivery.receiver import WebhookReceiver
from idv_mock.ground import crypto
from idv_mock.ground.clock import DEFAULT_START, iso, parse_iso, stamp
from idv_mock.tools import persistence

KEY = "clock-key"
PID = "clocked"
CONTROL = f"/__admin/projects/{PID}"
BACKWARDS = "the clock only moves forward: {} is before the project's now, {}"


@pytest.fixture
def service() -> Iterator[Service]:
    svc = Service(ServiceConfig(seed_count=2, webhook_backoff=(30.0,)))
    yield svc
    svc.close()


def make_project(
    admin: httpx.Client, receiver: WebhookReceiver | None = None, **options: Any
) -> dict[str, Any]:
    spec = {"project_id": PID, "api_key": KEY, "admins": [ADMIN]}
    opts = {"clock_mode": "frozen", **options}
    if receiver is not None:
        opts["webhook_url"] = receiver.url
    r = admin.post("/__admin/projects", json={**spec, "options": opts})
    assert r.status_code == 201, r.text
    return dict(r.json())


def clock(admin: httpx.Client, pid: str = PID) -> dict[str, Any]:
    r = admin.get(f"/__admin/projects/{pid}/clock")
    assert r.status_code == 200, r.text
    return dict(r.json())


def advance(admin: httpx.Client, body: dict[str, Any], pid: str = PID) -> dict[str, Any]:
    r = admin.post(f"/__admin/projects/{pid}/clock/advance", json=body)
    assert r.status_code == 200, r.text
    return dict(r.json())


def now_of(admin: httpx.Client) -> datetime:
    return parse_iso(clock(admin)["now"])


def form_link(inner: dict[str, Any]) -> str:
    return "/liveform/?" + urlencode({"pid": PID, "encrypted": crypto.encrypt(inner, KEY)})


def opened(admin: httpx.Client, inner: dict[str, Any]) -> str:
    """Open a link; the location it sends the applicant to (a step, or an error page)."""
    r = admin.get(form_link(inner))
    assert r.status_code == 303, r.text
    return str(r.headers["location"])


def payloads(receiver: WebhookReceiver, trigger: str) -> list[dict[str, Any]]:
    return [i.body for i in receiver.received if i.body.get("webhook_trigger") == trigger]


def settle(live: LiveServer) -> None:
    assert live.service.webhooks.wait_idle(10)


# --- the clock itself ---
def test_clock_reads_advances_and_refuses_to_go_back(admin: httpx.Client) -> None:
    created = make_project(admin)
    assert created["options"]["clock_mode"] == "frozen"
    assert created["options"]["token_expiry_seconds"] == 180
    assert created["options"]["incomplete_timeout_seconds"] == 21600
    assert created["options"]["monitoring_cycle_seconds"] == 86400
    start = now_of(admin)
    assert clock(admin) == {"now": iso(start), "mode": "frozen", "due": []}
    assert now_of(admin) == start  # frozen: reading it does not move it
    moved = advance(admin, {"seconds": 90.5})
    assert moved == {
        "now": iso(start + timedelta(seconds=90.5)),
        "mode": "frozen",
        "fired": [],
        "fired_count": 0,
    }
    target = "2026-03-01T12:00:00+02:00"
    assert advance(admin, {"to": target})["now"] == "2026-03-01T10:00:00.000Z"
    before = admin.get("/__admin/state").content
    r = admin.post(f"{CONTROL}/clock/advance", json={"to": "2026-02-01T00:00:00Z"})
    assert r.status_code == 400
    message = BACKWARDS.format("2026-02-01T00:00:00.000Z", "2026-03-01T10:00:00.000Z")
    assert r.json() == {"message": message, "errors": []}
    r = admin.post(f"{CONTROL}/clock/advance", json={"seconds": -1})
    assert r.json()["message"] == BACKWARDS.format("-1 seconds", "2026-03-01T10:00:00.000Z")
    assert admin.get("/__admin/state").content == before  # a refusal changes nothing


@pytest.mark.parametrize(
    "body",
    [{}, {"seconds": "1"}, {"seconds": True}, {"seconds": 1, "to": "x"}, {"days": 1}, [1]],
)
def test_bad_advances_are_400_with_the_control_shape(admin: httpx.Client, body: Any) -> None:
    make_project(admin)
    r = admin.post(f"{CONTROL}/clock/advance", json=body)
    assert r.status_code == 400
    assert set(r.json()) == {"message", "errors"}
    r = admin.post(f"{CONTROL}/clock/advance", json={"to": "next tuesday"})
    assert r.json() == {
        "message": "to must be an ISO 8601 instant, such as 2026-01-02T09:00:00Z",
        "errors": [],
    }
    r = admin.post("/__admin/projects/nope/clock/advance", json={"seconds": 1})
    assert (r.status_code, r.json()) == (404, {"message": "project nope not found", "errors": []})


def test_two_projects_on_one_server_keep_separate_time(admin: httpx.Client) -> None:
    make_project(admin)
    other = {"project_id": "other", "api_key": "other-key", "options": {"clock_mode": "frozen"}}
    assert admin.post("/__admin/projects", json=other).status_code == 201
    a, b = now_of(admin), parse_iso(clock(admin, "other")["now"])
    advance(admin, {"seconds": 86400})
    assert now_of(admin) == a + timedelta(days=1)
    assert clock(admin, "other")["now"] == iso(b)
    # and the API's timestamps follow each project's own clock
    r = admin.post(f"{CONTROL}/submissions", json={})
    assert r.json()["created_at"] == stamp(a + timedelta(days=1))


def test_tick_and_wall_modes_advance_too(admin: httpx.Client) -> None:
    make_project(admin, clock_mode="tick")
    start = now_of(admin)
    assert now_of(admin) == start  # the control API reads without ticking
    assert advance(admin, {"seconds": 3600})["now"] == iso(start + timedelta(hours=1))
    r = admin.patch(CONTROL, json={"options": {"clock_mode": "wall"}})
    assert r.json()["options"]["clock_mode"] == "wall"
    real = datetime.now(DEFAULT_START.tzinfo)
    ahead = advance(admin, {"seconds": 7 * 86400})
    assert ahead["mode"] == "wall"
    lead = parse_iso(ahead["now"]) - real  # real time plus the offset (iso: milliseconds)
    assert timedelta(days=7, milliseconds=-1) <= lead < timedelta(days=7, seconds=5)


# --- rules ---
def test_token_expires_by_time_with_its_webhook_at_the_instant(
    admin: httpx.Client, receiver: WebhookReceiver, live: LiveServer
) -> None:
    make_project(admin, receiver, token_expiry_webhook=True, token_expiry_seconds=600)
    first = now_of(admin)
    link = {"token": "tok-1", "userid": "u-1"}
    assert opened(admin, link).endswith("/consent")
    expiry = first + timedelta(seconds=600)
    due = {"at": iso(expiry), "what": "token_expiry", "token": "tok-1"}
    assert clock(admin)["due"] == [due]
    assert opened(admin, link).endswith("/consent")  # still within its 10 minutes
    fired = advance(admin, {"seconds": 3600})["fired"]
    assert fired == [{**due, "webhooks": ["token_expired"]}]
    settle(live)
    (payload,) = payloads(receiver, "token_expired")
    assert payload == events.token_expired_event("tok-1", "time", iso(expiry)).payload
    assert payload["expected_expired_at"] == iso(expiry)  # the instant it fell due
    assert opened(admin, link).startswith("/error-page/token-expired")
    assert advance(admin, {"seconds": 86400})["fired"] == []
    settle(live)
    assert len(payloads(receiver, "token_expired")) == 1  # nothing fires twice


def test_nothing_fires_twice_however_the_time_is_cut(
    admin: httpx.Client, receiver: WebhookReceiver, live: LiveServer
) -> None:
    make_project(admin, receiver, token_expiry_webhook=True)
    first = now_of(admin)
    opened(admin, {"token": "tok-c"})
    steps = [advance(admin, {"seconds": s})["fired"] for s in (179, 1, 0, 1)]
    expiry = {"at": iso(first + timedelta(seconds=180)), "what": "token_expiry"}
    assert steps == [[], [{**expiry, "token": "tok-c", "webhooks": ["token_expired"]}], [], []]
    assert advance(admin, {"to": clock(admin)["now"]})["fired"] == []  # to now: a no-op
    settle(live)
    assert len(payloads(receiver, "token_expired")) == 1


def test_start_valid_until_is_judged_on_the_project_clock(admin: httpx.Client) -> None:
    """Once a test moved the project's clock (here by one second), that clock judges."""
    make_project(admin)
    advance(admin, {"seconds": 1})
    until = now_of(admin) + timedelta(hours=1)
    link = {"startValidUntil": iso(until)}
    assert opened(admin, link).endswith("/consent")
    advance(admin, {"seconds": 3601})
    assert opened(admin, link).startswith("/error-page/expired-start-valid-until")


def test_start_valid_until_in_wall_mode_is_real_time_plus_the_offset(
    admin: httpx.Client,
) -> None:
    make_project(admin, clock_mode="wall")
    link = {"startValidUntil": (datetime.now(DEFAULT_START.tzinfo) + timedelta(days=1)).isoformat()}
    assert opened(admin, link).endswith("/consent")  # a link made from real time works
    advance(admin, {"seconds": 2 * 86400})
    assert opened(admin, link).startswith("/error-page/expired-start-valid-until")


def to_document_step(admin: httpx.Client) -> str:
    """Open a link and reach the document step (the submission is ``created``)."""
    inner = {"userid": "u-late", "selectedIssuingCountry": "KOR", "selectedIdType": "passport"}
    step = opened(admin, inner)
    r = admin.post(step, data={"agree": "on"})
    assert r.status_code == 303 and r.headers["location"].endswith("/document"), r.text
    return str(r.headers["location"])


def test_an_unfinished_form_turns_rejected_with_timeout(
    admin: httpx.Client, receiver: WebhookReceiver, live: LiveServer
) -> None:
    make_project(admin, receiver, incomplete_timeout_seconds=7200)
    document = to_document_step(admin)
    started = now_of(admin)
    settle(live)
    (created,) = payloads(receiver, "created")
    sid = created["submission_id"]
    due = clock(admin)["due"]
    assert [(d["at"], d["what"], d["submission_id"], d["created_at"]) for d in due] == [
        (iso(started + timedelta(hours=2)), "incomplete_timeout", sid, iso(started))
    ]
    assert admin.get(f"{CONTROL}/submissions/{sid}").status_code == 404  # not before
    fired = advance(admin, {"seconds": 86400})["fired"]
    assert [(f["what"], f["at"], f["webhooks"]) for f in fired] == [
        ("incomplete_timeout", iso(started + timedelta(hours=2)), ["rejected"])
    ]
    stored = admin.get(f"{CONTROL}/submissions/{sid}").json()
    at = stamp(started + timedelta(hours=2))
    assert stored["kyc"]["result"] == "rejected"
    assert stored["kyc"]["commentCode"] == ["timeout"]
    assert stored["kyc"]["comment"] == ["KYC rejected due to timeout."]  # the vendor's text
    assert (stored["created_at"], stored["kyc_result_at"]) == (stamp(started), at)
    assert stored["userid"] == "u-late"
    settle(live)
    (payload,) = payloads(receiver, "rejected")
    batch = events.creation_events(stored, None, "omit")
    assert payload == next(e.payload for e in batch if e.trigger == "rejected")
    assert [i.body["webhook_trigger"] for i in receiver.received] == ["created", "rejected"]
    # the applicant who comes back finds the form closed, and nothing more is sent
    r = admin.post(document, data={})
    assert r.status_code == 303
    assert advance(admin, {"seconds": 86400})["fired"] == []
    settle(live)
    assert len(receiver.received) == 2


def test_a_finished_form_does_not_time_out(
    admin: httpx.Client, receiver: WebhookReceiver, live: LiveServer
) -> None:
    make_project(admin, receiver)
    document = to_document_step(admin)
    selfie = admin.post(document, data={}).headers["location"]
    tester = admin.post(selfie, data={}).headers["location"]
    r = admin.post(tester, data={"outcome": "approved"})
    assert r.status_code == 303
    assert clock(admin)["due"] == []
    assert advance(admin, {"seconds": 30 * 86400})["fired"] == []


def monitored(admin: httpx.Client, live: LiveServer) -> tuple[str, str, str]:
    """An approved submission registered in an active worklist: (sid, worklist, record)."""
    person = {"full_name": "Ada Quill", "date_of_birth": "1980-04-02", "nationality": "KOR"}
    body = {"kyc": {"result": "approved"}, "data": person}
    sid = admin.post(f"{CONTROL}/submissions", json=body).json()["submission_id"]
    r = admin.post(f"{CONTROL}/worklists", json={"id": "wl-1", "name": "watch"})
    assert r.status_code == 201, r.text
    r = admin.post(
        "/v3/submission/aml/monitor/wl-1",
        json={"submissionIds": [sid], "admin": ADMIN},
        headers={"x-api-key": KEY},
    )
    assert r.status_code == 200, r.text
    return sid, "wl-1", r.json()["successResults"][0]["recordIds"][0]


def test_monitoring_cycle_alerts_only_on_something_new(
    admin: httpx.Client, receiver: WebhookReceiver, live: LiveServer
) -> None:
    make_project(admin, receiver)
    sid, wid, rid = monitored(admin, live)
    start = now_of(admin)
    record = admin.get(f"/v3/submission/aml/monitor/{wid}/{rid}", headers={"x-api-key": KEY})
    registered_at = record.json()["updateTime"]
    day = timedelta(days=1)
    assert clock(admin)["due"] == [
        {"at": iso(start + day), "what": "monitoring_cycle", "worklist_id": wid}
    ]
    fired = advance(admin, {"seconds": 86400})["fired"]  # nothing changed: no webhook
    assert fired == [
        {"at": iso(start + day), "what": "monitoring_cycle", "worklist_id": wid, "webhooks": []}
    ]
    entry = {"entry_id": "NEW-1", "list": "sanctions", "name": "Ada Quill"}
    entry |= {"nationality": "KOR", "birth_date": "1980-04-02"}
    assert admin.post(f"{CONTROL}/watchlist", json=entry).status_code == 201
    advance(admin, {"seconds": 3600})  # the cycle runs on its own schedule, not at once
    settle(live)
    (registered,) = payloads(receiver, "aml_monitor")  # the registration's own
    brief = {"recordId": rid, "worklistId": wid, "created_at": registered_at}
    assert registered["records"] == [brief]
    fired = advance(admin, {"seconds": 86400})["fired"]
    cycle_at = start + 2 * day
    assert [(f["at"], f["webhooks"]) for f in fired] == [(iso(cycle_at), ["aml_monitor"])]
    settle(live)
    _, payload = payloads(receiver, "aml_monitor")
    stored = admin.get(f"{CONTROL}/submissions/{sid}").json()
    assert payload == events.aml_monitor_event(stored, [brief]).payload
    assert payload["records"] == [brief]
    after = admin.get(f"/v3/submission/aml/monitor/{wid}/{rid}", headers={"x-api-key": KEY})
    assert after.json()["status"] == "screenedWithMatches"
    assert after.json()["openCount"] == 1
    assert after.json()["updateTime"] == iso(cycle_at)  # the cycle's instant
    fired = advance(admin, {"seconds": 5 * 86400})["fired"]  # the same match is not new
    assert [f["webhooks"] for f in fired] == [[]] * 5
    settle(live)
    assert len(payloads(receiver, "aml_monitor")) == 2


def test_an_inactive_worklist_has_no_cycle(admin: httpx.Client, live: LiveServer) -> None:
    make_project(admin)
    monitored(admin, live)
    assert admin.post(f"{CONTROL}/worklists/wl-1/deactivate").status_code == 200
    assert clock(admin)["due"] == []
    admin.post(f"{CONTROL}/worklists/wl-1/activate")
    assert [d["what"] for d in clock(admin)["due"]] == ["monitoring_cycle"]


def test_a_retry_waits_on_a_frozen_clock(
    admin: httpx.Client, receiver: WebhookReceiver, live: LiveServer
) -> None:
    make_project(admin, receiver)
    receiver.statuses = [500]  # the first delivery fails; the back-off here is 30 s
    body = {"kyc": {"result": "pending"}}  # one event: submit
    r = admin.post(f"{CONTROL}/submissions", params={"fire_webhooks": "true"}, json=body)
    assert r.status_code == 201
    receiver.wait_for(1)
    deadline = time.monotonic() + 10
    while not [d for d in clock(admin)["due"] if d["what"] == "webhook_retry"]:
        assert time.monotonic() < deadline, "no retry fell due"
        time.sleep(0.01)
    (retry,) = clock(admin)["due"]
    assert retry["at"] == iso(now_of(admin) + timedelta(seconds=30))
    assert retry["event"] == "submission.submit"
    assert len(receiver.received) == 1  # the retry waits: no real 30 s, no attempt yet
    fired = advance(admin, {"seconds": 30})["fired"]
    assert [f["what"] for f in fired] == ["webhook_retry"]
    settle(live)
    (delivery,) = admin.get(f"{CONTROL}/webhooks").json()["deliveries"]
    assert delivery["status"] == "delivered"
    assert [a.get("status_code") for a in delivery["attempts"]] == [500, 200]


# --- the state: export, import, restart ---
def test_the_clock_and_what_is_due_travel_with_the_state(
    admin: httpx.Client, receiver: WebhookReceiver, live: LiveServer
) -> None:
    make_project(admin, receiver, token_expiry_webhook=True)
    opened(admin, {"token": "tok-s"})
    advance(admin, {"seconds": 60})
    before = clock(admin)
    state = admin.get("/__admin/state").json()
    other = Service(ServiceConfig(seed_count=0))
    try:
        other.import_state(state)
        assert other.clocks.describe(PID) == before
        fired = other.clocks.advance(PID, {"seconds": 120})["fired"]
        assert [(f["what"], f["at"]) for f in fired] == [("token_expiry", before["due"][0]["at"])]
    finally:
        other.close()


def test_a_restarted_server_keeps_its_clock_and_what_is_due(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    first = Service(ServiceConfig(seed_count=1))
    saver = persistence.StateFile(first, path)
    saver.open()
    spec = {"project_id": PID, "api_key": KEY, "options": {"clock_mode": "frozen"}}
    first.create_project(spec)
    first.screening.create_worklist(PID, {"id": "wl-r", "name": "r"})
    first.clocks.advance(PID, {"seconds": 3600})
    before = first.clocks.describe(PID)
    saver.save()
    first.close()
    again = Service(ServiceConfig(seed_count=1))
    try:
        persistence.StateFile(again, path).open()
        assert again.clocks.describe(PID) == before
        assert before["due"][0]["what"] == "monitoring_cycle"
        fired = again.clocks.advance(PID, {"seconds": 86400})["fired"]
        assert [f["at"] for f in fired] == [before["due"][0]["at"]]
    finally:
        again.close()


# --- the command line ---
def test_cli_shows_and_advances_a_running_servers_clock(
    admin: httpx.Client, live: LiveServer, capsys: pytest.CaptureFixture[str]
) -> None:
    make_project(admin)
    r = admin.post(f"{CONTROL}/worklists", json={"id": "wl-c", "name": "c"})
    assert r.status_code == 201
    start = now_of(admin)
    url = ["--url", f"http://127.0.0.1:{live.port}", "--project", PID]
    assert cli.main(["clock", *url]) == 0
    cycle = iso(start + timedelta(days=1))
    assert capsys.readouterr().out.splitlines() == [
        f"now:  {iso(start)} (frozen)",
        "due: 1",
        f"  {cycle}  monitoring_cycle  worklist_id=wl-c",
    ]
    assert cli.main(["clock", "advance", "36h", *url]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"now:  {iso(start + timedelta(hours=36))} (frozen)",
        "fired: 1",
        f"  {cycle}  monitoring_cycle  worklist_id=wl-c webhooks=[]",
    ]
    assert cli.main(["clock", "advance", "--to", "2020-01-01T00:00:00Z", *url]) == 1
    assert "400 the clock only moves forward" in capsys.readouterr().err
    assert cli.main(["clock", "advance", "soon", *url]) == 2
    assert cli.main(["clock", "--url", "http://127.0.0.1:9", "--project", PID]) == 1


# --- in-process faces ---
def test_mock_takes_a_clock_mode_and_its_service_advances_it() -> None:
    import idv_mock

    with idv_mock.mock(seed_count=0, clock="frozen") as svc:
        clock = svc.clocks.handle("default")
        start = clock.now
        first = svc.create_submission("default", {"userid": "u-mock"})["submission_id"]
        assert clock.advance(days=1)["now"] == iso(start + timedelta(days=1))
        svc.create_submission("default", {"userid": "u-mock"})
        r = httpx.get(
            "https://rest-api.argosidentity.com/v3/submission",
            params={"userid": "u-mock"},
            headers={"x-api-key": "mock-api-key"},
        )
        stamps = sorted(i["created_at"] for i in r.json()["Items"])
        assert stamps == [stamp(start), stamp(start + timedelta(days=1))]
        assert svc.stored_submission("default", first)["created_at"] == stamp(start)
    with pytest.raises(NotFound, match="project nope not found"):
        svc.clocks.handle("nope")


@pytest.mark.live
def test_a_restarted_serve_process_keeps_clock_and_due(tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    spec = {"project_id": PID, "api_key": KEY, "options": {"clock_mode": "frozen"}}
    with ServeProcess("--seed-count", "1", "--state-file", str(state)) as server:
        httpx.post(f"{server.base}/__admin/projects", json=spec).raise_for_status()
        wl = {"id": "wl-p", "name": "p"}
        httpx.post(f"{server.base}{CONTROL}/worklists", json=wl).raise_for_status()
        httpx.post(f"{server.base}{CONTROL}/clock/advance", json={"seconds": 7200})
        before = httpx.get(f"{server.base}{CONTROL}/clock").json()
    with ServeProcess("--seed-count", "1", "--state-file", str(state)) as server:
        assert httpx.get(f"{server.base}{CONTROL}/clock").json() == before
        r = httpx.post(f"{server.base}{CONTROL}/clock/advance", json={"seconds": 86400})
        assert [f["at"] for f in r.json()["fired"]] == [before["due"][0]["at"]]


def test_a_rule_that_cannot_run_says_why_and_the_advance_goes_on(admin: httpx.Client) -> None:
    make_project(admin, incomplete_timeout_seconds=60)
    policy = {"name": "short", "mode": "exclude", "fields": ["date_of_birth"]}
    made = admin.post("/v3/projection", json=policy, headers={"x-api-key": KEY}).json()
    inner = {"projectionName": "short", "selectedIssuingCountry": "KOR"}
    step = opened(admin, {**inner, "selectedIdType": "passport"})
    assert admin.post(step, data={"agree": "on"}).headers["location"].endswith("/document")
    gone = admin.delete(f"/v3/projection/{made['projection_id']}", headers={"x-api-key": KEY})
    assert gone.status_code == 200
    start = now_of(admin)
    done = advance(admin, {"seconds": 3600})
    assert [(f["what"], f["error"]) for f in done["fired"]] == [
        ("incomplete_timeout", "The projection could not be found.")
    ]
    assert done["now"] == iso(start + timedelta(hours=1))  # the advance went on to its end
    assert advance(admin, {"seconds": 3600})["fired"] == []  # not run again


def test_the_watcher_runs_what_fell_due_on_a_ticking_clock_without_a_touch() -> None:
    svc = Service(ServiceConfig(seed_count=0))
    try:
        spec = {"project_id": PID, "api_key": KEY, "options": {"monitoring_cycle_seconds": 2}}
        svc.create_project(spec)
        svc.screening.create_worklist(PID, {"id": "wl-t", "name": "t"})
        project = svc.project(PID)
        (first,) = project.schedule.items
        for _ in range(3):  # each creation stamps, so the tick clock moves past the cycle
            svc.create_submission(PID)
        assert project.schedule.items == [first]  # nobody looked: nothing ran yet
        svc.clocks.watch(0.01)
        deadline = time.monotonic() + 10
        while project.schedule.items[0] is first:
            assert time.monotonic() < deadline, "the watcher did not run the cycle"
            time.sleep(0.01)
        assert project.schedule.items[0].at == first.at + timedelta(seconds=2)
    finally:
        svc.close()
