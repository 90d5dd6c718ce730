"""How to: webhooks as production delivers them, from a pytest test (docs/delivery.md)."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.mark.idv_webhook_delivery(duplicate=2)
def test_each_webhook_arrives_twice(idv_service: Any, idv_webhook_receiver: Any) -> None:
    idv_service.create_submission("default", {"kyc": {"result": "pending"}}, fire_webhooks=True)
    first, second = idv_webhook_receiver.wait_for(2)
    assert first.body == second.body


def test_approved_before_submit(
    idv_service: Any, idv_client: Any, idv_webhook_receiver: Any, idv_webhook_delivery: Any
) -> None:
    idv_webhook_delivery.set(hold=True)
    pending = {"kyc": {"result": "pending"}}
    sid = idv_service.create_submission("default", pending, fire_webhooks=True)["submission_id"]
    decision = {"admin": "admin@example.com", "data": {"kycStatus": "approved"}}
    assert idv_client.patch("/submission", json={"submissionId": sid, **decision}).is_success
    assert [d["event"] for d in idv_webhook_delivery.deliveries("held")] == [
        "submission.submit",  # pending at submission
        "submission.updated",  # the reviewer's decision: updated, then the result
        "submission.approved",
    ]
    idv_webhook_delivery.release("reversed")
    received = idv_webhook_receiver.wait_for(3)
    assert [r.event for r in received] == [
        "submission.approved",
        "submission.updated",
        "submission.submit",
    ]


def test_a_lost_result_and_its_resend(
    idv_service: Any, idv_webhook_receiver: Any, idv_webhook_delivery: Any
) -> None:
    idv_webhook_delivery.set(events=["submission.approved"], drop={"first": 1})
    idv_service.create_submission("default", {"kyc": {"result": "approved"}}, fire_webhooks=True)
    assert idv_webhook_delivery.wait_idle()
    (lost,) = idv_webhook_delivery.deliveries("dropped")
    idv_webhook_delivery.resend(lost["delivery_id"])
    assert idv_webhook_receiver.wait_for("approved")["webhook_trigger"] == "approved"
