"""idv_server.fault(...): make the service fail for the length of a ``with`` block."""

import httpx


def test_client_sees_a_503_once(idv_server):
    rule = {"match": {"path": "/v3/submission"}, "respond": {"status": 503, "body": {}}}
    headers = {"x-api-key": idv_server.api_key}
    with idv_server.fault(rule):
        assert httpx.get(f"{idv_server.base_url}/submission", headers=headers).status_code == 503
    assert httpx.get(f"{idv_server.base_url}/submission", headers=headers).status_code == 200
