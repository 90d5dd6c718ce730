"""An integrator's webhook handler written the quick way: it trusts each webhook.

The submission's state follows the last status webhook to arrive (``submit``: pending,
``approved``: approved, ``rejected``: rejected; ``updated`` only says that something
changed, so it is ignored), and every ``approved`` webhook sends a welcome e-mail. Correct
when each webhook arrives once and in order; wrong when one arrives twice (two e-mails),
out of order (``submit`` after ``approved`` leaves the user pending) or not at all (a lost
``approved`` leaves the user pending too).
"""

from __future__ import annotations

from typing import Any

from resilience_apps.webhook_server import WebhookServer

STATE_OF = {"submit": "pending", "approved": "approved", "rejected": "rejected"}


class TrustingApp(WebhookServer):
    def __init__(self) -> None:
        self.states: dict[str, str] = {}
        self.emails: list[str] = []
        super().__init__()

    def handle(self, payload: dict[str, Any]) -> None:
        sid, trigger = payload["submission_id"], payload["webhook_trigger"]
        if trigger in STATE_OF:
            self.states[sid] = STATE_OF[trigger]  # the last one wins
        if trigger == "approved":
            self.emails.append(sid)  # once per webhook, not once per submission
