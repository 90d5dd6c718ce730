"""idv_project.clock: move a project's own time; what falls due on the way happens."""

import httpx
import pytest


@pytest.mark.idv_mock(clock="frozen")  # time moves only when the test says so
def test_a_token_link_expires_after_three_minutes(idv_project):
    link = idv_project.liveform_url(token="tok-42", userid="u-42")
    assert httpx.get(link, follow_redirects=True).url.path.endswith("/consent")
    fired = idv_project.clock.advance(minutes=3)["fired"]
    assert [f["what"] for f in fired] == ["token_expiry"]
    page = httpx.get(link, follow_redirects=True)
    assert page.url.path == "/error-page/token-expired"
    assert "TK-10001" in page.text
