"""The hosted form with Token ID Pre-registration, in a real browser (issue 30).

In private mode with ``token_preregistration`` on, a link whose token is not in the
project's pool is refused (``TK-10003``); a token the integrator registered through
``POST /v3/submission/tokens`` opens the form once, and after its submission the same link
is refused as expired (``TK-10001``).
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

import httpx

from browser.test_liveform_browser import current_step, finish, set_options, walk_to_tester

UNREGISTERED = "The verification token is not registered for this project."


def register(server: Any, *ids: str) -> None:
    r = httpx.post(
        f"{server.base_url}/submission/tokens",
        content=json.dumps({"tokenId": list(ids)}),
        headers={"x-api-key": server.api_key, "content-type": "text/plain"},
    )
    assert r.status_code == 200, r.text


def test_unregistered_token_is_refused_and_a_registered_one_works_once(
    page: Any, shot: Any, idv_server: Any
) -> None:
    set_options(idv_server, liveform_private_mode=True, token_preregistration=True)
    page.goto(idv_server.liveform_url(userid="u-pool", token="not-in-pool-1"))
    assert urlsplit(page.url).path == "/error-page/token-unregistered"
    assert page.get_by_test_id("error-code").inner_text() == "TK-10003"
    assert page.get_by_test_id("error-message").inner_text() == UNREGISTERED
    shot("unregistered")

    register(idv_server, "pooled-token-1")
    url = idv_server.liveform_url(userid="u-pool", token="pooled-token-1")
    page.goto(url)
    assert current_step(page) == "consent"
    walk_to_tester(page)
    finish(page)
    stored = [
        s
        for s in idv_server.service.project("default").store
        if s.get("tokenId") == "pooled-token-1"
    ]
    assert len(stored) == 1

    page.goto(url)
    assert urlsplit(page.url).path == "/error-page/token-expired"
    assert page.get_by_test_id("error-code").inner_text() == "TK-10001"
    shot("used")
