"""Webhook delivery on one bounded pool: threads do not grow with projects, a reset drops
what is queued, records are capped, and each project's events still arrive in order."""

from __future__ import annotations

import threading
import time

from idv_mock import Service, ServiceConfig
from idv_mock.delivery.receiver import Received, WebhookReceiver
from idv_mock.delivery.webhooks import MAX_WORKERS, WebhookDispatcher


def test_three_hundred_projects_share_a_few_delivery_threads() -> None:
    service = Service(ServiceConfig(seed_count=0))
    with WebhookReceiver() as receiver:
        before = threading.active_count()
        for n in range(300):
            options = {"webhook_url": receiver.url}
            service.create_project({"project_id": f"p{n}", "api_key": f"k{n}", "options": options})
            for result in ("pending", "approved"):
                service.create_submission(f"p{n}", {"kyc": {"result": result}}, fire_webhooks=True)
        peak = threading.active_count() - before
        assert service.webhooks.wait_idle(30)
        assert len(receiver.received) == 600  # submit, approved
    # the pool: WORKERS, plus a thread for each attempt slower than SLOW_SECONDS (a loaded
    # machine makes some), never more than MAX_WORKERS in all; and the receiver's threads
    assert service.webhooks.threads() <= MAX_WORKERS
    assert peak <= MAX_WORKERS + 4
    service.close()


def test_a_reset_drops_the_events_still_queued() -> None:
    """The probe: 110 events queued behind a slow receiver kept arriving after a reset."""
    service = Service(ServiceConfig(seed_count=0, webhook_backoff=()))
    with WebhookReceiver() as receiver:
        receiver.on_receive = lambda item: time.sleep(0.05)
        service.update_project("default", {"options": {"webhook_url": receiver.url}})
        for _ in range(55):
            service.create_submission(
                "default", {"kyc": {"result": "approved"}}, fire_webhooks=True
            )
        receiver.wait_for(2)
        at_reset = len(receiver.received)
        service.reset()
        assert service.webhooks.wait_idle(5)
        arrived = len(receiver.received)
        time.sleep(0.5)
        # only what was already on the wire (one delivery in flight) arrives after the reset
        assert len(receiver.received) == arrived <= at_reset + 1 < 110
    assert service.delivery.recorded("default") == []
    service.close()


def test_delivery_records_are_capped_per_project() -> None:
    dispatcher = WebhookDispatcher(backoff=(), timeout=0.5, max_records=5)
    for n in range(8):
        dispatcher.send("p", "http://127.0.0.1:9/none", "submission.submit", {"n": n}, {"n": n})
    assert dispatcher.wait_idle(10)
    kept = dispatcher.deliveries("p")
    assert [d["payload"]["n"] for d in kept] == [3, 4, 5, 6, 7]
    assert {d["status"] for d in kept} == {"failed"}
    dispatcher.close()


def test_each_project_receives_its_events_in_order_while_others_run() -> None:
    dispatcher = WebhookDispatcher(backoff=())
    got: dict[str, list[int]] = {"a": [], "b": [], "c": []}

    def note(item: Received) -> None:
        got[item.body["project"]].append(item.body["n"])

    with WebhookReceiver() as receiver:
        receiver.on_receive = note
        for n in range(30):
            for project in got:
                body = {"project": project, "n": n}
                dispatcher.send(project, receiver.url, "submission.submit", body, body)
        assert dispatcher.wait_idle(20)
    assert got == {p: list(range(30)) for p in got}
    dispatcher.close()


def test_a_closed_dispatcher_sends_nothing_more() -> None:
    dispatcher = WebhookDispatcher(backoff=())
    dispatcher.close()
    delivery = dispatcher.send("p", "http://127.0.0.1:9/x", "submission.submit", {}, {})
    assert delivery.status == "cancelled"
    assert dispatcher.wait_idle(1)
