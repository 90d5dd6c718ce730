"""The dashboard's submission-id search (``?submission_id=``) and its "no submission
matches" message, in-process (in a browser: tests/browser/test_dashboard_search_browser.py)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest

from idv_mock import Service, ServiceConfig
from test_dashboard import ROW, UI, client_of

NO_MATCH = re.compile(r'data-testid="no-match"[^>]*>(.*?)</td>', re.S)


@pytest.fixture
def service() -> Iterator[Service]:
    found = Service(ServiceConfig(seed_count=12))
    yield found
    found.close()


@pytest.fixture
def ui(service: Service) -> Iterator[httpx.Client]:
    with client_of(service) as client:
        yield client


def message(html: str) -> str:
    found = NO_MATCH.search(html)
    assert found, "no 'no-match' message on the page"
    return " ".join(re.sub(r"<[^>]+>", "", found.group(1)).split())


def test_a_submission_id_finds_that_submission(ui: httpx.Client, service: Service) -> None:
    sid = [s["submission_id"] for s in service.project("default").store][5]
    page = ui.get(f"{UI}/submissions", params={"submission_id": f"  {sid} "})  # pasted
    assert page.status_code == 200
    assert ROW.findall(page.text) == [sid]
    assert f'value="{sid}"' in page.text  # the field keeps what was searched
    assert 'data-testid="no-match"' not in page.text


def test_an_unknown_id_says_no_submission_matches(ui: httpx.Client) -> None:
    page = ui.get(f"{UI}/submissions", params={"submission_id": "no-such-id"})
    assert page.status_code == 200
    assert ROW.findall(page.text) == []
    assert message(page.text) == "No submission matches submission id no-such-id. Clear the filters"


def test_every_filter_that_matched_nothing_is_named(ui: httpx.Client) -> None:
    query = {"userid": "nobody", "kyc": "pending", "deleted": "hide"}
    page = ui.get(f"{UI}/submissions", params=query)
    assert message(page.text) == (
        "No submission matches user id nobody, KYC result pending, deleted hide. Clear the filters"
    )


def test_no_filter_on_an_empty_project_is_not_a_no_match(service: Service) -> None:
    service.create_project({"project_id": "empty", "api_key": "empty-key"})
    with client_of(service) as ui:
        page = ui.get(f"{UI}/submissions", params={"project": "empty"})
    assert 'data-testid="no-match"' not in page.text
    assert "No submission in this project yet." in page.text
