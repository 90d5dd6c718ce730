"""``token_expired`` as the vendor sends it (gaps.md "Values an integrator branches on",
issue 34): a token expiring by count is announced when its one allowed use completes,
right after that submission's result webhooks, not when the used link is opened again;
its fields in the vendor's sample order. Over HTTP: the hosted form walked as a browser
would, the control API's hosted submission, the form's timeout; a real receiver.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest

from conftest import ADMIN, LiveServer
from idv_mock import Service, ServiceConfig
from idv_mock.delivery.receiver import WebhookReceiver
from idv_mock.ground import crypto
from idv_mock.ground.clock import iso, parse_iso

PID = "tokened"
KEY = "tokened-key"
CONTROL = f"/__admin/projects/{PID}"
# the vendor's count sample, verbatim order (liveform-and-values.md 6)
COUNT_ORDER = ["webhook_trigger", "token_id", "expired_condition", "expired_at", "service"]
TIME_ORDER = ["webhook_trigger", "token_id", "expired_condition", "expected_expired_at", "service"]
FORMS = {
    "consent": {"agree": "on"},
    "country": {"country": "KOR"},
    "id_type": {"id_type": "passport"},
    "document": {},
    "selfie": {},
}


@pytest.fixture
def service() -> Iterator[Service]:
    svc = Service(ServiceConfig(seed_count=2))
    yield svc
    svc.close()


def make_project(admin: httpx.Client, receiver: WebhookReceiver, **options: Any) -> None:
    opts = {
        "clock_mode": "frozen",
        "liveform_private_mode": True,
        "token_expiry_webhook": True,
        "webhook_url": receiver.url,
        **options,
    }
    spec = {"project_id": PID, "api_key": KEY, "admins": [ADMIN], "options": opts}
    assert admin.post("/__admin/projects", json=spec).status_code == 201


def link(token: str) -> str:
    inner = {"userid": "u-tok", "token": token}
    return "/liveform/?" + urlencode({"pid": PID, "encrypted": crypto.encrypt(inner, KEY)})


def walk(admin: httpx.Client, url: str, outcome: str) -> str:
    """Open the link and go through every step the form shows; the last location."""
    r = admin.get(url)
    assert r.status_code == 303, r.text
    location = str(r.headers["location"])
    while (step := location.rsplit("/", 1)[-1]) in FORMS:
        r = admin.post(location, data=FORMS[step])
        assert r.status_code == 303, r.text
        location = str(r.headers["location"])
    assert location.endswith("/tester"), location
    r = admin.post(location, data={"outcome": outcome})
    assert r.status_code == 303, r.text
    return str(r.headers["location"])


def now_of(admin: httpx.Client) -> str:
    return str(admin.get(f"{CONTROL}/clock").json()["now"])


def settled(live: LiveServer, receiver: WebhookReceiver) -> list[dict[str, Any]]:
    assert live.service.webhooks.wait_idle(10)
    return [item.body for item in receiver.received]


@pytest.mark.parametrize(
    ("outcome", "results"), [("approved", ["approved"]), ("pending", ["submit"])]
)
def test_the_last_allowed_use_sends_token_expired_right_after_the_result(
    admin: httpx.Client,
    live: LiveServer,
    receiver: WebhookReceiver,
    outcome: str,
    results: list[str],
) -> None:
    make_project(admin, receiver)
    admin.post(f"{CONTROL}/clock/advance", json={"seconds": 3600})
    walk(admin, link("tok-count-1"), outcome)
    at = now_of(admin)
    receiver.wait_for(2 + len(results))
    bodies = settled(live, receiver)
    assert [b["webhook_trigger"] for b in bodies] == ["created", *results, "token_expired"]
    expired = bodies[-1]
    assert list(expired) == COUNT_ORDER  # the keys as they came over the wire
    assert expired == {
        "webhook_trigger": "token_expired",
        "token_id": "tok-count-1",
        "expired_condition": "count",
        "expired_at": at,  # the instant the use completed, on the project's clock
        "service": "idCheck",
    }
    # the used link is refused, and nothing more is sent
    r = admin.get(link("tok-count-1"))
    assert r.status_code == 303 and r.headers["location"].startswith("/error-page/")
    assert len(settled(live, receiver)) == len(bodies)
    assert admin.get(f"{CONTROL}/clock").json()["due"] == []  # no time expiry left to fire


def test_a_control_api_hosted_submission_expires_its_token_by_count(
    admin: httpx.Client, live: LiveServer, receiver: WebhookReceiver
) -> None:
    make_project(admin, receiver)
    sealed = crypto.encrypt({"token": "tok-count-2", "userid": "u-api"}, KEY)
    r = admin.post(f"{CONTROL}/hosted-submissions", json={"token": sealed, "outcome": "rejected"})
    assert r.status_code == 201, r.text
    receiver.wait_for(2)
    bodies = settled(live, receiver)
    assert [b["webhook_trigger"] for b in bodies] == ["rejected", "token_expired"]
    assert list(bodies[1]) == COUNT_ORDER
    assert bodies[1]["expired_at"] == now_of(admin)


def test_without_the_option_no_token_expired_is_sent(
    admin: httpx.Client, live: LiveServer, receiver: WebhookReceiver
) -> None:
    make_project(admin, receiver, token_expiry_webhook=False)
    walk(admin, link("tok-quiet-1"), "approved")
    receiver.wait_for(2)
    assert [b["webhook_trigger"] for b in settled(live, receiver)] == ["created", "approved"]


def test_expiry_by_time_has_its_fields_in_the_same_order(
    admin: httpx.Client, live: LiveServer, receiver: WebhookReceiver
) -> None:
    make_project(admin, receiver)
    r = admin.get(link("tok-time-1"))
    assert r.status_code == 303 and not r.headers["location"].startswith("/error-page/")
    first = parse_iso(now_of(admin))
    fired = admin.post(f"{CONTROL}/clock/advance", json={"seconds": 600}).json()["fired"]
    assert [(f["what"], f["webhooks"]) for f in fired] == [("token_expiry", ["token_expired"])]
    receiver.wait_for(1)
    (expired,) = settled(live, receiver)
    assert list(expired) == TIME_ORDER
    assert expired["expected_expired_at"] == iso(first + timedelta(seconds=180))


def test_a_form_that_times_out_uses_up_its_token_too(
    admin: httpx.Client, live: LiveServer, receiver: WebhookReceiver
) -> None:
    """The timeout decides the submission (``rejected``), which is the token's one use."""
    make_project(admin, receiver, token_expiry_seconds=86400, incomplete_timeout_seconds=7200)
    r = admin.get(link("tok-late-1"))
    location = str(r.headers["location"])
    while not location.endswith("/document"):
        step = location.rsplit("/", 1)[-1]
        r = admin.post(location, data=FORMS[step])
        location = str(r.headers["location"])
    started = parse_iso(now_of(admin))
    fired = admin.post(f"{CONTROL}/clock/advance", json={"seconds": 7200}).json()["fired"]
    assert [(f["what"], f["webhooks"]) for f in fired] == [
        ("incomplete_timeout", ["rejected", "token_expired"])
    ]
    receiver.wait_for(3)
    bodies = settled(live, receiver)
    assert [b["webhook_trigger"] for b in bodies] == ["created", "rejected", "token_expired"]
    assert bodies[-1]["expired_at"] == iso(started + timedelta(seconds=7200))
    assert admin.get(f"{CONTROL}/clock").json()["due"] == []  # the day's expiry is gone
