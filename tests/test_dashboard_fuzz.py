"""No dashboard page answers 5xx, whatever the path parameters, query string or form."""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import quote, urlencode

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import form_token
from idv_mock import Service, ServiceConfig
from idv_mock.api.app import create_app
from idv_mock.transport import ASGITransport, InProcessClient
from idv_mock.web import forgery
from idv_mock.web.dashboard import TABLE
from idv_mock.web.dashboard.common import UI

NAMES = (
    "project", "kyc", "deleted", "count", "nextpage_id", "nextpage_date", "start_date",
    "end_date", "userid", "email", "method", "path", "status", "run", "note", "submission_id",
    "request_type", "action", "admin", "reason", "spec", "kind", "value", "times", "delay_ms",
    "name", "entry_id", "list", "nationality", "id", "active", "token", "back", "reset",
)  # fmt: skip
SAMPLES = [
    "default", "approved", "pending", "only", "hide", "0", "99999", "-1", "4xx", "GET",
    "2025-10-20", "2025-13-45", "2025-10-20-23-46-26-544", "/v3/submission", "respond",
    "error", "fault", "delay", "503", "approve", "reject", "{}", '{"match": 1}', "[",
    "sanctions", "KOR", "//evil.example", "%00", "\x00",
]  # fmt: skip
VALUES = st.one_of(st.text(max_size=30), st.sampled_from(SAMPLES))
PAIRS = st.lists(st.tuples(st.sampled_from(NAMES) | st.text(max_size=8), VALUES), max_size=6)
CONFIG = ServiceConfig(seed_count=20, webhook_backoff=(0.01, 0.01))
SEEDED = [i["submission_id"] for i in Service(CONFIG).export_state()["projects"][0]["submissions"]]
KNOWN = ["default", "wh-1", "fault-1", "x", *SEEDED[:5]]  # ids that exist, so pages render
SEGMENT = st.one_of(st.text(min_size=1, max_size=20), st.sampled_from(KNOWN))


@pytest.fixture(scope="module")
def ui() -> Iterator[httpx.Client]:
    service = Service(CONFIG)
    app = create_app(service)  # without the scenario runner: a run is refused, not played
    with InProcessClient(transport=ASGITransport(app), base_url="http://testserver") as client:
        yield client
    service.close()


def _path(template: str, segments: list[str]) -> str:
    """The route's template with each ``{name}`` replaced by a drawn segment."""
    parts = iter(segments)
    return re.sub(r"\{[^}]+\}", lambda _: quote(next(parts), safe=""), UI + template)


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    route=st.sampled_from(TABLE),
    segments=st.lists(SEGMENT, min_size=3, max_size=3),
    query=PAIRS,
    form=PAIRS,
    raw_query=st.text(max_size=40),
)
def test_no_dashboard_request_answers_5xx(
    ui: httpx.Client,
    route: tuple[str, list[str], object],
    segments: list[str],
    query: list[tuple[str, str]],
    form: list[tuple[str, str]],
    raw_query: str,
) -> None:
    template, methods, _ = route
    if template == "/scenarios" and methods == ["POST"]:
        form = [p for p in form if p[0] != "reset"]
    url = _path(template, segments)
    url += "?" + (urlencode(query) if query else quote(raw_query, safe="=&"))
    method = methods[0]
    body = urlencode([(forgery.FIELD, form_token(ui)), *form]).encode()  # as a page's form
    headers = {"content-type": "application/x-www-form-urlencoded"}
    response = ui.request(method, url, content=body if method == "POST" else None, headers=headers)
    assert response.status_code < 500, (method, url, body, response.text[:500])
