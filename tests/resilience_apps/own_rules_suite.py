"""A suite whose tests set their own faults and levers (tests/test_resilience_explains.py
runs it under profiles): its own 503 rule must answer, not the profile's catch-all delay
(the false alarm of issue 35 under ``slow-api``), and its own levers must replace the
profile's (one delivery under ``duplicates``)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest


def test_own_503_rule_answers(idv_server: Any) -> None:
    rule = {"match": {"method": "GET", "path": "/v3/submission"}, "respond": {"status": 503}}
    with idv_server.fault(rule) as added:
        r = httpx.get(f"{idv_server.base_url}/submission", headers={"x-api-key": "mock-api-key"})
        assert r.status_code == 503
    rules = idv_server.service.calls.faults(idv_server.project_id)
    assert all(r["id"] != added["id"] for r in rules)  # removed again; the profile's remain
    assert all(r["hits"] == 0 for r in rules)  # the profile's rules never answered


@pytest.mark.idv_webhook_delivery(duplicate=1)
def test_own_levers_replace_the_profiles(idv_service: Any, idv_webhook_receiver: Any) -> None:
    idv_service.create_submission("default", {"kyc": {"result": "approved"}}, fire_webhooks=True)
    assert idv_service.webhooks.wait_idle()
    assert [item.event for item in idv_webhook_receiver.received] == ["submission.approved"]
