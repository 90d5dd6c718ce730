"""The dashboard's submission-id search in a real browser: a reviewer pastes an id from a
support ticket, finds that submission, then a typo finds nothing and the page says so
(same set-up and skip rule as the other browser tests: Debian's Chromium,
``apt-get install -y chromium``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from browser.conftest import Shot, new_page, shooter
from browser.test_dashboard_browser import row_ids, ui


@pytest.fixture
def dash(browser: Any) -> Iterator[Any]:
    with new_page(browser, 1280, 860) as opened:
        yield opened


@pytest.fixture
def dash_shot(dash: Any, request: pytest.FixtureRequest) -> Shot:
    return shooter(dash, request)


def test_searching_by_submission_id(dash: Any, dash_shot: Shot, idv_server: Any) -> None:
    made = httpx.post(
        f"{idv_server.admin_url}/projects/default/submissions",
        json={"userid": "u-ticket-4711", "kyc": {"result": "rejected"}},
    )
    assert made.status_code == 201
    sid = made.json()["submission_id"]

    dash.goto(ui(idv_server, "/submissions"))
    assert len(row_ids(dash)) > 1
    field = dash.get_by_label("Submission id")  # found by its label, as a screen reader does
    field.fill(f" {sid} ")  # pasted with spaces around it
    dash.get_by_test_id("filter-go").click()
    assert row_ids(dash) == [sid]
    assert f"submission_id={sid}" in dash.url.replace("+", "")
    assert dash.get_by_test_id("filter-submission-id").input_value() == sid
    dash_shot("found")

    dash.get_by_test_id("filter-submission-id").fill(sid[:-1] + "x")  # a typo
    dash.get_by_test_id("filter-go").click()
    assert row_ids(dash) == []
    shown = dash.get_by_test_id("no-match")
    assert shown.inner_text().startswith(f"No submission matches submission id {sid[:-1]}x.")
    dash_shot("no-match")
    dash.get_by_test_id("clear-filters").click()
    assert len(row_ids(dash)) > 1
    assert dash.get_by_test_id("filter-submission-id").input_value() == ""
