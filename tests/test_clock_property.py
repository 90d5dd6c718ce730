"""A property of one clock per project (issue 34): for random project clocks, frozen at a
random instant and moved by random amounts between calls, no time of a submission, as
``GET /v3/submission`` and every webhook show it, is later than the project's now or
earlier than the submission's ``created_at``.

Over HTTP against one live server, each example a fresh frozen project with a real
webhook receiver. The times of the applicant's journey before the submission came to be
(verification attempts' steps, camera steps, the pre-verification) and the project's own
settings the submission mirrors (``project_options``) are checked against the project's
now only: they precede ``created_at`` by design.
"""

from __future__ import annotations

import base64
import itertools
import re
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import ADMIN, LiveServer
from idv_mock import Service, ServiceConfig
from idv_mock.backend import images
from idv_mock.delivery.receiver import WebhookReceiver
from idv_mock.ground import crypto
from idv_mock.ground.clock import DEFAULT_START, parse_instant, parse_iso

STAMP = re.compile(r"\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2}-\d{3}")
ISO = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z")
# times from before the submission existed: the applicant's journey (fake/checks.py) and the
# project's settings it mirrors (``project_options.webhook.createTime``: the project's creation)
BEFORE = re.compile(
    r"^(kyc/attempts/\d+/step\d?Time|signals/|pre_verification/created_at|project_options/)"
)
NUMBERS = itertools.count(1)
YEARS = 5 * 365 * 86400

advances = st.floats(min_value=0, max_value=10 * 86400, allow_nan=False).map(lambda s: round(s, 3))
operations = st.one_of(
    st.tuples(st.just("create"), st.sampled_from(["approved", "rejected", "pending"])),
    st.tuples(st.just("hosted"), st.sampled_from(["approved", "rejected", "pending"])),
    st.tuples(st.just("patch"), st.sampled_from(["approved", "rejected", "pending", "memo"])),
    st.tuples(st.just("review"), st.sampled_from(["approved", "rejected"])),
    st.tuples(st.just("migrate"), st.sampled_from(["approved", "rejected"])),
    st.tuples(st.just("image"), st.just("")),
)


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[LiveServer, httpx.Client, WebhookReceiver]]:
    service = Service(ServiceConfig(seed_count=0))
    with LiveServer(service) as live, WebhookReceiver() as receiver:
        client = httpx.Client(base_url=f"http://127.0.0.1:{live.port}", timeout=10)
        with client:
            yield live, client, receiver
    service.close()


def moment(text: str) -> datetime:
    if ISO.fullmatch(text):
        found = parse_instant(text)
        assert found is not None, text
        return found
    return datetime.strptime(text, "%Y-%m-%d-%H-%M-%S-%f").replace(tzinfo=DEFAULT_START.tzinfo)


def times(doc: Any, path: str = "") -> Iterator[tuple[str, datetime]]:
    """Every timestamp in ``doc`` (either form), with its path."""
    if isinstance(doc, dict):
        for key, value in doc.items():
            yield from times(value, f"{path}{key}/")
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            yield from times(value, f"{path}{i}/")
    elif isinstance(doc, str) and (STAMP.fullmatch(doc) or ISO.fullmatch(doc)):
        yield path.rstrip("/"), moment(doc)


class Run:
    """One example's project, driven over HTTP."""

    def __init__(self, client: httpx.Client, live: LiveServer, receiver: WebhookReceiver):
        self.client, self.live, self.receiver = client, live, receiver
        self.pid = f"prop-{next(NUMBERS)}"
        self.key = f"{self.pid}-key"
        self.sids: list[str] = []
        options = {
            "clock_mode": "frozen",
            "webhook_url": f"{receiver.url}/{self.pid}",
            "reviewer": "client",
            "token_expiry_webhook": True,
        }
        spec = {"project_id": self.pid, "api_key": self.key, "admins": [ADMIN]}
        r = client.post("/__admin/projects", json={**spec, "options": options})
        assert r.status_code == 201, r.text

    def control(self, method: str, path: str, **kw: Any) -> httpx.Response:
        return self.client.request(method, f"/__admin/projects/{self.pid}{path}", **kw)

    def api(self, method: str, path: str, **kw: Any) -> httpx.Response:
        return self.client.request(method, f"/v3{path}", headers={"x-api-key": self.key}, **kw)

    def now(self) -> datetime:
        return parse_iso(self.control("GET", "/clock").json()["now"])

    def advance(self, seconds: float) -> None:
        r = self.control("POST", "/clock/advance", json={"seconds": seconds})
        assert r.status_code == 200, r.text

    def do(self, what: str, value: str, pick: int) -> None:
        sid = self.sids[pick % len(self.sids)] if self.sids else None
        if what == "create":
            r = self.control(
                "POST", "/submissions?fire_webhooks=true", json={"kyc": {"result": value}}
            )
            self.sids.append(r.json()["submission_id"])
        elif what == "hosted":
            sealed = crypto.encrypt({"userid": "u-prop", "token": f"tok-prop-{pick:04d}"}, self.key)
            r = self.control(
                "POST", "/hosted-submissions", json={"token": sealed, "outcome": value}
            )
            if r.status_code == 201:  # a token used before is refused (TK-10001)
                self.sids.append(r.json()["submission_id"])
        elif what == "patch" and sid:
            data = {"memo": "seen"} if value == "memo" else {"kycStatus": value}
            self.api(
                "PATCH", "/submission", json={"submissionId": sid, "admin": ADMIN, "data": data}
            )
        elif what == "review" and sid:
            body = {"admin": ADMIN, "submissionId": sid, "status": value, "rejectComment": "x"}
            self.api("POST", "/submission/review", json=body)  # pending ones only: else 400
        elif what == "migrate":
            body = {"admin": ADMIN, "email": "m@example.com", "fullName": "Jane Roe",
                    "birthDate": "1990-02-03", "kycStatus": value, "idType": "passport",
                    "issuingCountry": "KOR", "nationality": "USA"}  # fmt: skip
            r = self.api("POST", "/submission/migration", json=body)
            self.sids.append(r.json()["submissionId"])
        elif what == "image" and sid:
            png = base64.b64encode(images.sample("p", "selfieImage")).decode()
            parts = {"submissionId": (None, sid), "admin": (None, ADMIN)}
            parts["selfieImage"] = (None, png)
            self.api("PUT", "/submission/image", files=parts)

    def check(self) -> None:
        """Every time shown is within [created_at, now] (what came before: not after now)."""
        assert self.live.service.webhooks.wait_idle(10)
        now = self.now()
        created: dict[str, datetime] = {}
        for sid in self.sids:
            (item,) = self.api("GET", "/submission", params={"submission_id": sid}).json()["Items"]
            created[sid] = moment(item["created_at"])
            for path, at in times(item):
                assert at <= now, (sid, path, at, now)
                assert BEFORE.match(path) or at >= created[sid], (sid, path, at)
        for got in self.receiver.received:
            if got.path != f"/{self.pid}":
                continue
            body = got.body
            for path, at in times(body):
                assert at <= now, (body["webhook_trigger"], path, at, now)
                sid = body.get("submission_id")
                if sid in created:
                    assert at >= created[sid], (body["webhook_trigger"], path, at)


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    start=st.floats(min_value=0, max_value=YEARS, allow_nan=False),
    steps=st.lists(st.tuples(advances, operations, st.integers(0, 1000)), min_size=1, max_size=8),
)
def test_no_time_of_a_submission_is_past_now_or_before_its_creation(
    server: tuple[LiveServer, httpx.Client, WebhookReceiver],
    start: float,
    steps: list[tuple[float, tuple[str, str], int]],
) -> None:
    live, client, receiver = server
    run = Run(client, live, receiver)
    run.advance(round(start, 3))  # frozen at a random instant
    for seconds, (what, value), pick in steps:
        run.advance(seconds)
        run.do(what, value, pick)
        run.check()
