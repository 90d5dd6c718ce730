"""An integrator's own tests of the two apps, as they would write them with the plugin:
a submission pending, then approved by a reviewer, its webhooks (``submit``, ``updated``,
``approved``) delivered, the app's state checked. The resilience
report runs this file once per profile (tests/test_resilience.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from resilience_apps.idempotent_app import IdempotentApp
from resilience_apps.trusting_app import TrustingApp

SETUP_TIMEOUT = 30.0  # the suite's own set-up calls; the apps keep their own timeouts


def approve_one(server: Any, url: str) -> str:
    """Point the project at the app, let an applicant submit and wait for review (pending:
    ``submit``), have a reviewer approve them on the vendor's side (``updated``, then
    ``approved``), and wait until the mock has nothing left to deliver."""
    admin = f"{server.admin_url}/projects/{server.project_id}"
    options = {"options": {"webhook_url": url}}
    assert httpx.patch(admin, json=options, timeout=SETUP_TIMEOUT).status_code == 200
    r = httpx.post(
        f"{admin}/submissions",
        params={"fire_webhooks": "true"},
        json={"kyc": {"result": "pending"}},
        timeout=SETUP_TIMEOUT,  # the first creation loads Faker: seconds on a loaded machine
    )
    assert r.status_code == 201
    sid = str(r.json()["submission_id"])
    # the reviewer's decision is the vendor's, not the app's: made in-process, so the
    # profile's API faults are met by the apps' own calls only
    project = server.service.project(server.project_id)
    server.service.edit(project, sid, server.admin, {"kycStatus": "approved"})
    assert server.service.webhooks.wait_idle(20)
    return sid


@pytest.fixture
def trusting() -> Iterator[TrustingApp]:
    app = TrustingApp()
    yield app
    app.stop()


@pytest.fixture
def idempotent(idv_server: Any) -> Iterator[IdempotentApp]:
    app = IdempotentApp(idv_server.base_url, idv_server.api_key)
    yield app
    app.stop()


def test_trusting_app_records_the_approval(idv_server: Any, trusting: TrustingApp) -> None:
    sid = approve_one(idv_server, trusting.url)
    assert trusting.states[sid] == "approved"
    assert len(trusting.emails) == 1  # one welcome e-mail


def test_idempotent_app_records_the_approval(idv_server: Any, idempotent: IdempotentApp) -> None:
    sid = approve_one(idv_server, idempotent.url)
    assert idempotent.states[sid] == "approved"
    assert len(idempotent.emails) == 1  # one welcome e-mail
