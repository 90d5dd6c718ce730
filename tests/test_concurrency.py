"""8 threads x 200 mixed requests at a live server: no 5xx, no lost update, counts add up."""

from __future__ import annotations

import random
import threading
from collections import Counter
from typing import Any

import httpx
import pytest

from conftest import LiveServer
from idv_mock import Service, ServiceConfig
from idv_mock.ground import schemas

pytestmark = pytest.mark.live
THREADS, CALLS = 8, 200
ADMIN = "admin@example.com"


class Worker:
    def __init__(self, n: int, base: str, sids: list[str]) -> None:
        self.n, self.sids, self.rng = n, sids, random.Random(n)
        self.http = httpx.Client(base_url=base, headers={"x-api-key": "mock-api-key"}, timeout=30)
        self.statuses: Counter[int] = Counter()
        self.memos: dict[str, str] = {}  # last acknowledged memo per submission
        self.records: set[str] = set()
        self.policies: set[str] = set()

    def run(self) -> None:
        ops = [self.patch, self.read, self.partial, self.register, self.unregister,
               self.create_policy, self.delete_policy]  # fmt: skip
        for i in range(CALLS):
            self.rng.choice(ops)(i)
        for pid in list(self.policies):
            self.delete_policy(-1, pid)
        self.http.close()

    def call(self, method: str, url: str, **kw: Any) -> httpx.Response:
        r = self.http.request(method, url, **kw)
        self.statuses[r.status_code] += 1
        return r

    def patch(self, i: int) -> None:
        sid, memo = self.rng.choice(self.sids), f"w{self.n}-{i}"
        body = {"submissionId": sid, "admin": ADMIN, "data": {"memo": memo}}
        if self.call("PATCH", "/v3/submission", json=body).status_code == 200:
            self.memos[sid] = memo

    def read(self, i: int) -> None:
        self.call("GET", "/v3/submission", params={"submission_id": self.rng.choice(self.sids)})

    def partial(self, i: int) -> None:
        params = {"submission_id": self.rng.choice(self.sids), "fields": "applicant_id"}
        self.call("DELETE", "/v3/submission/partial", params=params)

    def register(self, i: int) -> None:
        body = {"submissionIds": [self.rng.choice(self.sids)], "admin": ADMIN}
        r = self.call("POST", f"/v3/submission/aml/monitor/wl-{self.n}", json=body)
        if r.status_code == 200:
            self.records.update(r.json()["successResults"][0]["recordIds"])

    def unregister(self, i: int) -> None:
        if self.records:
            rid = self.records.pop()
            body = {"admin": ADMIN, "recordIds": [rid]}
            r = self.call("DELETE", f"/v3/submission/aml/monitor/wl-{self.n}", json=body)
            assert r.status_code == 200, r.text

    def create_policy(self, i: int) -> None:
        if not self.policies:
            body = {"name": f"w{self.n}_{i}", "mode": "exclude", "fields": ["gender"]}
            r = self.call("POST", "/v3/projection", json=body)
            if r.status_code == 200:
                self.policies.add(r.json()["projection_id"])

    def delete_policy(self, i: int, pid: str | None = None) -> None:
        if pid or self.policies:
            pid = pid or self.policies.pop()
            self.policies.discard(pid)
            assert self.call("DELETE", f"/v3/projection/{pid}").status_code == 200


def test_mixed_load_keeps_state_consistent() -> None:
    service = Service(ServiceConfig(seed_count=0))
    sids = [
        service.create_submission("default", {"kyc": {"result": "approved"}})["submission_id"]
        for _ in range(THREADS * 4)
    ]
    for n in range(THREADS):
        service.screening.create_worklist("default", {"id": f"wl-{n}", "name": f"list {n}"})
    with LiveServer(service) as server:
        base = f"http://127.0.0.1:{server.port}"
        workers = [Worker(n, base, sids[n * 4 : n * 4 + 4]) for n in range(THREADS)]
        threads = [threading.Thread(target=w.run) for w in workers]
        for t in threads:
            t.start()
        for t in threads:
            t.join(300)
    statuses = sum((w.statuses for w in workers), Counter())
    assert sum(statuses.values()) >= THREADS * CALLS // 2  # a few choices send nothing
    assert not [s for s in statuses if s >= 500], statuses
    for w in workers:
        for sid, memo in w.memos.items():
            assert service.stored_submission("default", sid)["memo"]["text"] == memo
        kept = set(service.project("default").monitoring.get(f"wl-{w.n}").records)
        assert kept == w.records
    assert service.project("default").projections.policies == {}
    assert schemas.errors("state.json", service.export_state()) == []
