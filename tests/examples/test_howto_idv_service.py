"""idv_service: the state itself; seed what a test needs, in Python, before calling the API."""


def test_seed_a_user_then_read_it(idv_service, idv_client):
    idv_service.create_submission("default", {"userid": "alice", "kyc": {"result": "approved"}})
    items = idv_client.get("/submission", params={"userid": "alice"}).json()["Items"]
    assert [i["kyc"]["result"] for i in items] == ["approved"]
