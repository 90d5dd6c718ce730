"""Webhook delivery over real HTTP, off the request path, with retries and a record.

Deliveries of one project run in order on that project's own worker thread (a receiver
sees ``submit`` before ``approved``): a POST of the JSON payload with an
``X-Idv-Event`` header, retried on a non-2xx answer or a connection error (gaps.md: up to
3 attempts, 0.5 s then 1 s apart; both configurable). Every attempt is recorded, so a
test or a demo can see what was sent, when, and what the receiver answered. The API call
that caused an event never waits for it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import httpx
import orjson

from idv_mock.clock import iso

EVENT_HEADER = "X-Idv-Event"


@dataclass(slots=True)
class Delivery:
    id: str
    project_id: str
    event: str
    url: str
    payload: dict[str, Any]
    body: dict[str, Any]
    created_at: str
    attempts: list[dict[str, Any]] = field(default_factory=list)
    status: str = "pending"

    def describe(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "event": self.event,
            "webhook_trigger": self.payload.get("webhook_trigger", ""),
            "url": self.url,
            "payload": self.payload,
            "encrypted": self.body is not self.payload,
            "status": self.status,
            "created_at": self.created_at,
            "attempts": list(self.attempts),
        }


def _now() -> str:
    return iso(datetime.now(timezone.utc))


class WebhookDispatcher:
    def __init__(self, backoff: Sequence[float] = (0.5, 1.0), timeout: float = 5.0) -> None:
        self.backoff = tuple(backoff)  # pauses between attempts: len(backoff) + 1 attempts
        self.timeout = timeout
        self._queues: dict[str, ThreadPoolExecutor] = {}  # project id -> its ordered worker
        self._lock = threading.Lock()
        self._records: list[Delivery] = []
        self._pending = 0
        self._idle = threading.Condition(self._lock)
        self._counter = 0

    def send(
        self, project_id: str, url: str, event: str, payload: dict[str, Any], body: dict[str, Any]
    ) -> Delivery:
        """Record a delivery and start it in the background; ``body`` is what goes on the wire."""
        with self._lock:
            self._counter += 1
            delivery = Delivery(
                f"wh-{self._counter}", project_id, event, url, payload, body, _now()
            )
            self._records.append(delivery)
            self._pending += 1
            queue = self._queues.get(project_id)
            if queue is None:
                queue = ThreadPoolExecutor(1, thread_name_prefix=f"idv-webhook-{project_id}")
                self._queues[project_id] = queue
        queue.submit(self._deliver, delivery)
        return delivery

    def _deliver(self, delivery: Delivery) -> None:
        try:
            content = orjson.dumps(delivery.body)
            headers = {"content-type": "application/json", EVENT_HEADER: delivery.event}
            with httpx.Client(timeout=self.timeout) as client:
                for n in range(len(self.backoff) + 1):
                    if n:
                        time.sleep(self.backoff[n - 1])
                    if self._attempt(client, delivery, n + 1, content, headers):
                        delivery.status = "delivered"
                        return
            delivery.status = "failed"
        finally:
            with self._lock:
                self._pending -= 1
                self._idle.notify_all()

    def _attempt(
        self,
        client: httpx.Client,
        delivery: Delivery,
        n: int,
        content: bytes,
        headers: dict[str, str],
    ) -> bool:
        record: dict[str, Any] = {"attempt": n, "at": _now()}
        started = time.perf_counter()
        try:
            response = client.post(delivery.url, content=content, headers=headers)
            record["status_code"] = response.status_code
            ok = 200 <= response.status_code < 300
        except Exception as exc:  # any failure is an attempt's outcome, never a lost delivery
            record["error"] = f"{type(exc).__name__}: {exc}"[:300]
            ok = False
        record["duration_ms"] = round((time.perf_counter() - started) * 1000, 1)
        delivery.attempts.append(record)
        return ok

    def deliveries(self, project_id: str | None = None) -> list[dict[str, Any]]:
        with self._lock:
            found = [d for d in self._records if project_id in (None, d.project_id)]
        return [d.describe() for d in found]

    def clear(self, project_id: str | None = None) -> None:
        """Forget the delivery records (of one project, or all)."""
        with self._lock:
            self._records = [r for r in self._records if project_id not in (None, r.project_id)]

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Block until no delivery is in flight (for tests and demos); False on timeout."""
        deadline = time.monotonic() + timeout
        with self._idle:
            while self._pending:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._idle.wait(left)
        return True

    def close(self) -> None:
        with self._lock:
            queues, self._queues = list(self._queues.values()), {}
        for queue in queues:
            queue.shutdown(wait=False, cancel_futures=True)
