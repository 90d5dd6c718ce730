"""Every time of a project's data comes from that project's clock (gaps.md "Values an
integrator branches on": issue 34), over HTTP with a real webhook receiver.

Each path that stamps a time (creation, PATCH, client review, the dashboard's decision,
injection, the token pool, PUT image, migration, the delivery records) is run on a frozen
project, once where it was created and once moved 31 hours on (the issue's review came 31
hours before its own ``created_at``), and once on a ``wall`` clock moved as far: every
stamp is the project's now (frozen: exactly; wall: between a reading before the call and
one after), never the server's clock.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest

from conftest import ADMIN, LiveServer, form_token
from idv_mock import Service, ServiceConfig
from idv_mock.backend import images
from idv_mock.backend.parts import clocks
from idv_mock.delivery.receiver import WebhookReceiver
from idv_mock.ground.clock import DEFAULT_START, iso, parse_iso

PID = "timed"
KEY = "timed-key"
CONTROL = f"/__admin/projects/{PID}"
MOVE = timedelta(hours=31, milliseconds=250)
CLOCKS = [("frozen", timedelta(0)), ("frozen", MOVE), ("wall", MOVE)]
IDS = ["frozen-here", "frozen-moved", "wall-moved"]


@pytest.fixture
def service() -> Iterator[Service]:
    svc = Service(ServiceConfig(seed_count=2, webhook_backoff=(30.0,)))
    yield svc
    svc.close()


class Project:
    """The project under test over HTTP: its API, its control calls, its clock's bounds."""

    def __init__(self, admin: httpx.Client, live: LiveServer, mode: str) -> None:
        self.admin, self.live, self.mode = admin, live, mode

    def api(self, method: str, path: str, **kw: Any) -> httpx.Response:
        return self.admin.request(method, f"/v3{path}", headers={"x-api-key": KEY}, **kw)

    def now(self) -> datetime:
        r = self.admin.get(f"{CONTROL}/clock")
        assert r.status_code == 200, r.text
        return parse_iso(r.json()["now"])

    def create(self, **overrides: Any) -> dict[str, Any]:
        r = self.admin.post(f"{CONTROL}/submissions", json=overrides)
        assert r.status_code == 201, r.text
        return dict(r.json())

    def stored(self, sid: str) -> dict[str, Any]:
        r = self.admin.get(f"{CONTROL}/submissions/{sid}")
        assert r.status_code == 200, r.text
        return dict(r.json())

    def within(self, call: Callable[[], Any]) -> tuple[Any, datetime, datetime]:
        """The call's result and the project's now before and after it."""
        lo = self.now()
        found = call()
        return found, lo, self.now()


@pytest.fixture(params=CLOCKS, ids=IDS)
def project(
    request: pytest.FixtureRequest, admin: httpx.Client, live: LiveServer, receiver: WebhookReceiver
) -> Project:
    mode, moved = request.param
    options = {"clock_mode": mode, "webhook_url": receiver.url, "reviewer": "client"}
    spec = {"project_id": PID, "api_key": KEY, "admins": [ADMIN], "options": options}
    assert admin.post("/__admin/projects", json=spec).status_code == 201
    if moved:
        r = admin.post(f"{CONTROL}/clock/advance", json={"seconds": moved.total_seconds()})
        assert r.status_code == 200, r.text
    return Project(admin, live, mode)


def between(text: str, lo: datetime, hi: datetime) -> None:
    """``text`` (either timestamp form) lies in [lo, hi] (frozen: lo == hi, exactly)."""
    moment = parse_iso(text) if "T" in text else _parsed(text)
    assert lo <= moment <= hi, (text, iso(lo), iso(hi))


def hooks(project: Project, receiver: WebhookReceiver, count: int) -> list[dict[str, Any]]:
    receiver.wait_for(count)
    assert project.live.service.webhooks.wait_idle(10)
    return [item.body for item in receiver.received]


def test_a_created_submission_is_stamped_and_decided_at_the_project_now(
    project: Project, receiver: WebhookReceiver
) -> None:
    sub, lo, hi = project.within(lambda: project.create(kyc={"result": "pending"}))
    for key in ("created_at", "kyc_result_at", "updated_at", "pending_at"):
        between(sub[key], lo, hi)
    assert sub["kyc_result_at"] == sub["created_at"]  # never a moment past the project's now


def test_patch_stamps_the_project_now_in_the_record_and_its_webhooks(
    project: Project, receiver: WebhookReceiver
) -> None:
    sid = project.create(kyc={"result": "pending"})["submission_id"]
    change = {"submissionId": sid, "admin": ADMIN, "data": {"kycStatus": "approved"}}
    r, lo, hi = project.within(lambda: project.api("PATCH", "/submission", json=change))
    assert r.status_code == 200, r.text
    stored = project.stored(sid)
    for text in (stored["updated_at"], stored["kyc_result_at"]):
        between(text, lo, hi)
    between(stored["updateHistory"]["updateTime"], lo, hi)
    updated, approved = hooks(project, receiver, 2)
    between(updated["update_time"], lo, hi)
    assert approved["kyc_result"]["kyc_result_at"] == iso(_parsed(stored["kyc_result_at"]))
    assert approved["kyc_result"]["created_at"] <= approved["kyc_result"]["kyc_result_at"]


def test_a_client_review_is_decided_at_the_project_now(
    project: Project, receiver: WebhookReceiver
) -> None:
    """The issue's case: the review's ``kyc_result_at`` came 31 hours before ``created_at``."""
    sid = project.create(kyc={"result": "pending"})["submission_id"]
    body = {"admin": ADMIN, "submissionId": sid, "status": "rejected", "rejectComment": "Blurry"}
    r, lo, hi = project.within(lambda: project.api("POST", "/submission/review", json=body))
    assert r.json()["finalStatus"] == "rejected"
    stored = project.stored(sid)
    between(stored["kyc_result_at"], lo, hi)
    assert stored["updated_at"] == stored["kyc_result_at"] >= stored["created_at"]
    (rejected,) = hooks(project, receiver, 1)
    assert rejected["kyc_result"]["updated_at"] == iso(_parsed(stored["updated_at"]))


def test_the_dashboards_decision_is_stamped_on_the_project_clock(
    project: Project, receiver: WebhookReceiver
) -> None:
    sid = project.create(kyc={"result": "pending"})["submission_id"]
    ui = project.admin
    token = form_token(ui)
    form = {"action": "approve", "admin": ADMIN, "form_token": token}
    url = f"/__admin/ui/submissions/{sid}/review?project={PID}"
    r, lo, hi = project.within(lambda: ui.post(url, data=form))
    assert r.status_code == 303, r.text
    stored = project.stored(sid)
    assert stored["kyc"]["result"] == "approved"
    between(stored["kyc_result_at"], lo, hi)
    between(stored["updateHistory"]["updateTime"], lo, hi)


def test_an_injection_is_stamped_on_the_project_clock(
    project: Project, receiver: WebhookReceiver
) -> None:
    sid = project.create(kyc={"result": "approved"})["submission_id"]
    query = urlencode({"pid": PID, "action": "addveri", "sid": sid})
    step = project.admin.get(f"/liveform/?{query}")
    assert step.status_code == 303 and step.headers["location"].endswith("/address")
    address = {
        "address_street": "12 Sejong-daero",
        "address_city": "Seoul",
        "address_zipcode": "04524",
        "address_country": "kor",
        "result": "success",
    }
    r, lo, hi = project.within(lambda: project.admin.post(step.headers["location"], data=address))
    assert r.status_code == 303, r.text
    stored = project.stored(sid)
    (action,) = stored["Injection_action"]
    between(action["created_at"], lo, hi)
    assert stored["updated_at"] == action["created_at"]
    (injection,) = hooks(project, receiver, 1)
    assert injection["action"]["created_at"] == action["created_at"]


def test_token_pool_times_are_the_project_now(project: Project) -> None:
    body = json.dumps({"tokenId": ["tokenA-001", "tokenB-002"]})
    r, lo, hi = project.within(lambda: project.api("POST", "/submission/tokens", content=body))
    assert r.status_code == 200, r.text
    listed = project.api("GET", "/submission/tokens").json()["data"]
    assert [t["tokenId"] for t in listed] == ["tokenA-001", "tokenB-002"]
    for token in listed:
        between(token["updateTime"], lo, hi)


def test_a_put_image_is_stamped_on_the_project_clock(project: Project) -> None:
    sub = project.create(kyc={"result": "approved"})
    png = base64.b64encode(images.sample("x", "idImage")).decode()
    parts = {"submissionId": (None, sub["submission_id"]), "admin": (None, ADMIN)}
    parts["idImage"], parts["idType"] = (None, png), (None, "passport")
    r, lo, hi = project.within(lambda: project.api("PUT", "/submission/image", files=parts))
    assert r.status_code == 200, r.text
    stored = project.stored(sub["submission_id"])
    between(stored["updated_at"], lo, hi)
    assert stored["created_at"] == sub["created_at"] <= stored["updated_at"]


def test_a_migration_is_created_and_decided_at_the_project_now(
    project: Project, receiver: WebhookReceiver
) -> None:
    body = {
        "admin": ADMIN,
        "email": "jane@example.com",
        "fullName": "Jane Roe",
        "birthDate": "1990-02-03",
        "kycStatus": "approved",
        "idType": "passport",
        "issuingCountry": "KOR",
        "nationality": "USA",
    }
    r, lo, hi = project.within(lambda: project.api("POST", "/submission/migration", json=body))
    assert r.status_code == 200, r.text
    stored = project.stored(r.json()["submissionId"])
    for key in ("created_at", "kyc_result_at", "updated_at"):
        between(stored[key], lo, hi)
    (approved,) = hooks(project, receiver, 1)
    for key in ("created_at", "kyc_result_at", "updated_at"):
        between(approved["kyc_result"][key], lo, hi)


def test_delivery_records_carry_the_project_time(
    project: Project, receiver: WebhookReceiver
) -> None:
    fire = {"kyc": {"result": "approved"}}
    url = f"{CONTROL}/submissions?fire_webhooks=true"
    r, lo, hi = project.within(lambda: project.admin.post(url, json=fire))
    assert r.status_code == 201
    hooks(project, receiver, 1)
    (record,) = project.admin.get(f"{CONTROL}/webhooks").json()["deliveries"]
    assert record["status"] == "delivered"
    between(record["created_at"], lo, hi)
    (attempt,) = record["attempts"]
    between(attempt["at"], lo, project.now())


def _parsed(text: str) -> datetime:
    """A submission's ``YYYY-MM-DD-HH-MM-SS-ZZZ`` stamp as an instant."""
    return datetime.strptime(text, "%Y-%m-%d-%H-%M-%S-%f").replace(tzinfo=DEFAULT_START.tzinfo)


# --- a failed webhook on a frozen project waits for the project's clock ---
def poll(read: Callable[[], Any], settled: Callable[[Any], bool]) -> Any:
    """Read until the state has settled (bounded): no sleep stands in for a state."""
    for _ in range(2000):
        found = read()
        if settled(found):
            return found
    raise AssertionError(f"never settled: {found}")


def test_a_failed_webhook_is_retried_when_the_frozen_clock_passes_its_back_off(
    admin: httpx.Client,
    live: LiveServer,
    receiver: WebhookReceiver,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The issue's case: in flight a delivery is ``sending``, and the retry loop waited only
    while it was ``pending``, so a frozen project's retry went out in real time. The
    back-off here is 30 s; the receiver fails the first POST. The waiting retry looks for
    a cancellation every millisecond here (0.25 s by default), so one that stopped waiting
    would go out at once, before the clock is advanced."""
    monkeypatch.setattr(clocks, "RETRY_POLL", 0.001)
    options = {"clock_mode": "frozen", "webhook_url": receiver.url}
    spec = {"project_id": PID, "api_key": KEY, "admins": [ADMIN], "options": options}
    assert admin.post("/__admin/projects", json=spec).status_code == 201
    project = Project(admin, live, "frozen")
    receiver.statuses = [500]
    url = f"{CONTROL}/submissions?fire_webhooks=true"
    sid = admin.post(url, json={"kyc": {"result": "pending"}}).json()["submission_id"]
    start = project.now()

    def records() -> list[dict[str, Any]]:
        return list(admin.get(f"{CONTROL}/webhooks").json()["deliveries"])

    def retry_due(_: Any) -> bool:
        due = admin.get(f"{CONTROL}/clock").json()["due"]
        return [d["what"] for d in due] == ["webhook_retry"]

    poll(records, lambda found: len(found[0]["attempts"]) == 1 and retry_due(found))
    # the project's later webhooks queue behind the one waiting (order is kept)
    change = {"submissionId": sid, "admin": ADMIN, "data": {"kycStatus": "approved"}}
    assert project.api("PATCH", "/submission", json=change).status_code == 200
    poll(records, lambda found: len(found) == 3)
    assert advance_by(admin, 29) == []  # not due yet: nothing is attempted
    first, *later = records()
    assert (first["status"], len(first["attempts"])) == ("sending", 1)
    assert [r["status"] for r in later] == ["pending", "pending"]
    assert len(receiver.received) == 1
    fired = advance_by(admin, 1)
    assert [(f["what"], f["at"], f["event"]) for f in fired] == [
        ("webhook_retry", iso(start + timedelta(seconds=30)), "submission.submit")
    ]
    receiver.wait_for(4)
    assert live.service.webhooks.wait_idle(10)
    first, *later = records()
    assert first["status"] == "delivered"
    # each attempt stamped on the project's clock: the retry at the instant it fell due
    assert [(a["at"], a["status_code"]) for a in first["attempts"]] == [
        (iso(start), 500),
        (iso(start + timedelta(seconds=30)), 200),
    ]
    assert [item.body["webhook_trigger"] for item in receiver.received] == [
        "submit", "submit", "updated", "approved"
    ]  # fmt: skip


def advance_by(admin: httpx.Client, seconds: float) -> list[dict[str, Any]]:
    r = admin.post(f"{CONTROL}/clock/advance", json={"seconds": seconds})
    assert r.status_code == 200, r.text
    return list(r.json()["fired"])
