"""idv_client: an in-process client (no sockets), base URL ending in /v3, API key set."""


def test_errors_are_the_services_own(idv_client):
    r = idv_client.get("/submission", params={"count": "0"})
    assert r.status_code == 400
    assert r.json() == {"errorCode": "invalid_format", "message": "invalid format: count"}
