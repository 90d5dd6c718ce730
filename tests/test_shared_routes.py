"""Apps share their API and control routes (built once a process, so a mock per test is
cheap), and each still answers from its own service: a call to one app never reads or
changes another's state."""

from __future__ import annotations

from conftest import ADMIN, API_KEY, some_submission
from idv_mock import Service, ServiceConfig, create_app
from idv_mock.transport import ASGITransport, InProcessClient

BASE = "http://idv-mock"


def client(service: Service) -> InProcessClient:
    return InProcessClient(transport=ASGITransport(create_app(service)), base_url=BASE)


def test_two_apps_answer_each_from_its_own_service() -> None:
    one, two = (
        Service(ServiceConfig(seed_count=3)),
        Service(ServiceConfig(seed_count=5)),
    )
    first, second = client(one), client(two)
    headers = {"x-api-key": API_KEY}
    sid = some_submission(one, 0)["submission_id"]
    try:
        patch = {"submissionId": sid, "admin": ADMIN, "data": {"lastName": "Shared"}}
        assert first.patch("/v3/submission", json=patch, headers=headers).status_code == 200
        mine = first.get("/v3/submission", params={"submission_id": sid}, headers=headers)
        assert mine.status_code == 200
        assert mine.json()["Items"][0]["data"]["last_name"] == "Shared"
        unchanged = second.get("/v3/submission", params={"count": 100}, headers=headers)
        assert "Shared" not in [i["data"]["last_name"] for i in unchanged.json()["Items"]]
        assert len(unchanged.json()["Items"]) == 5
        assert len(one.calls.journal("default", "PATCH", None)) == 1
        assert two.calls.journal("default", "PATCH", None) == []
    finally:
        first.close()
        second.close()
        one.close()
        two.close()
