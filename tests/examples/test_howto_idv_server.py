"""idv_server: a real server on a free port; point any HTTP client at its base_url."""

import httpx


def test_read_two_submissions(idv_server):
    r = httpx.get(
        f"{idv_server.base_url}/submission",
        params={"count": "2"},
        headers={"x-api-key": idv_server.api_key},
    )
    assert r.status_code == 200
    assert len(r.json()["Items"]) == 2
