from __future__ import annotations

from starlette.testclient import TestClient


def test_first_page_has_two_items_and_a_next_key(client: TestClient) -> None:
    r = client.get("/v3/submission", params={"count": "2"})
    assert r.status_code == 200
    assert len(r.json()["Items"]) == 2
    assert set(r.json()["nextpageKey"]) == {"id", "created_at"}
