"""An integrator's webhook handler written the careful way: a webhook is only a nudge.

On each webhook it reads the submission back from the API (retrying 5xx, 429 as
``Retry-After`` says, and broken connections) and records what the API says; the welcome
e-mail goes out once per submission. Duplicates, reordering and lateness change nothing,
and a lost result is covered since any webhook of the submission reads its current state.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import httpx

from resilience_apps.webhook_server import WebhookServer


class IdempotentApp(WebhookServer):
    def __init__(self, base_url: str, api_key: str) -> None:
        self.states: dict[str, str] = {}
        self.emails: set[str] = set()
        self._lock = threading.Lock()
        self._api = httpx.Client(base_url=base_url, headers={"x-api-key": api_key}, timeout=10)
        super().__init__()

    def read_state(self, sid: str) -> str:
        for attempt in range(6):
            try:
                r = self._api.get("/submission", params={"submission_id": sid})
            except httpx.TransportError:
                time.sleep(0.1 * (attempt + 1))
                continue
            if r.status_code == 429 or r.status_code >= 500:
                time.sleep(float(r.headers.get("retry-after", 0.1 * (attempt + 1))))
                continue
            r.raise_for_status()
            return str(r.json()["Items"][0]["kyc"]["result"])
        raise RuntimeError(f"could not read submission {sid}")

    def handle(self, payload: dict[str, Any]) -> None:
        sid = payload["submission_id"]
        state = self.read_state(sid)
        with self._lock:
            self.states[sid] = state
            if state == "approved":
                self.emails.add(sid)

    def stop(self) -> None:
        super().stop()
        self._api.close()
