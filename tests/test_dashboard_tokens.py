"""The dashboard's Tokens page: each pool token's life as the API and the form see it."""

from __future__ import annotations

import re

from starlette.testclient import TestClient

from idv_mock import Service, ServiceConfig, create_app
from idv_mock.ground import crypto

UI = "/__admin/ui"


def life(page: str, token: str) -> str:
    row = re.search(rf'data-testid="token-{re.escape(token)}">(.*?)</tr>', page, re.S)
    assert row is not None, token
    found = re.search(r'class="status-(\w+)"', row.group(1))
    assert found is not None
    return found.group(1)


def test_the_tokens_page_shows_each_life() -> None:
    service = Service(ServiceConfig(seed_count=2))
    options = {"liveform_private_mode": True, "token_preregistration": True}
    service.update_project("default", {"options": options})
    project = service.project("default")
    service.tokens.register(project, ["fresh-token", "used-token1", "spent-token", "gone-token"])
    for token in ("used-token1", "spent-token"):
        encrypted = crypto.encrypt({"token": token}, project.api_key)
        service.liveform.open("default", [("encrypted", encrypted)])
    spent = crypto.encrypt({"token": "spent-token"}, project.api_key)
    service.liveform.hosted_submission("default", spent, "approved")
    service.tokens.delete(project, ["gone-token"])
    with TestClient(create_app(service)) as ui:
        page = ui.get(f"{UI}/tokens").text
    assert 'data-testid="token-count">3 in the pool' in page
    assert 'data-testid="preregistration">on' in page
    lives = {t: life(page, t) for t in ("fresh-token", "used-token1", "spent-token", "gone-token")}
    assert lives == {
        "fresh-token": "registered",
        "used-token1": "used",
        "spent-token": "expired",
        "gone-token": "deleted",
    }
    assert 'data-testid="nav-tokens"' in page
