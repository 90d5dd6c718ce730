"""Browser tests of the hosted form: Playwright for Python driving Debian's Chromium.

The form is served by the plugin's ``idv_server`` (a real uvicorn server on a free port).
Without Playwright or the browser the tests skip, saying how to install them; Playwright's
own browser download is never used (``executable_path`` points at the system Chromium).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = os.environ.get("IDV_MOCK_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    *("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"),
    *("--disable-component-update", "--disable-sync", "--no-first-run"),
]
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"


def _missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright is missing: pip install -e '.[test]'"
    if not Path(CHROMIUM).exists():
        return f"no Chromium at {CHROMIUM}: apt-get install -y chromium (or set IDV_MOCK_CHROMIUM)"
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One Chromium per test module: Playwright's sync API keeps an event loop running in
    the thread while it is started, so it must stop before other modules' async tests."""
    reason = _missing()
    if reason is not None:
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield launched
        launched.close()


Shot = Callable[[str], None]


@contextlib.contextmanager
def new_page(browser: Any, width: int, height: int) -> Iterator[Any]:
    """A fresh page in its own context (no cookies or history from another test)."""
    context = browser.new_context(viewport={"width": width, "height": height}, locale="en-US")
    context.set_default_timeout(15_000)
    yield context.new_page()
    context.close()


def shooter(page: Any, request: pytest.FixtureRequest) -> Shot:
    """``shot(name)`` writes the page to tests/artifacts/<test>-<name>.png."""
    ARTIFACTS.mkdir(exist_ok=True)
    test_name = request.node.name.removeprefix("test_")

    def take(name: str) -> None:
        page.screenshot(path=ARTIFACTS / f"{test_name}-{name}.png", full_page=True)

    return take


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """An applicant's page, phone-sized like the hosted form's users."""
    with new_page(browser, 560, 720) as opened:
        yield opened


@pytest.fixture
def shot(page: Any, request: pytest.FixtureRequest) -> Shot:
    return shooter(page, request)
