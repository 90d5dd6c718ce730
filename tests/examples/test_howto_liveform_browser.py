"""The hosted form in an end-to-end browser test: walk_liveform clicks through it.

Playwright for Python with a Chromium (here Debian's, /usr/bin/chromium; pytest-playwright's
``page`` fixture works the same). Skipped when either is missing.
"""

import os
from pathlib import Path

import pytest
from pytest_idv_mock.liveform import walk_liveform

CHROMIUM = os.environ.get("IDV_MOCK_CHROMIUM", "/usr/bin/chromium")
sync_api = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"no Chromium at {CHROMIUM}")


def test_an_applicant_is_rejected(idv_server):
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page()
        page.goto(idv_server.liveform_url(userid="user-42"))  # or your app's redirect
        done = walk_liveform(page, "rejected", reason="expired_id")
        browser.close()
    assert done.kyc_status == "rejected"
    stored = idv_server.service.stored_submission("default", done.submission_id)
    assert stored["userid"] == "user-42"
    assert stored["kyc"]["commentCode"] == ["expired_id"]
