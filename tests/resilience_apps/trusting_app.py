"""An integrator's webhook handler written the quick way: it trusts each webhook.

The submission's state follows the last status webhook to arrive (``submit``: pending,
``approved``: approved, ``rejected``: rejected; ``updated`` only says that something
changed, so it is ignored), and every ``approved`` webhook sends a welcome e-mail. Correct
when each webhook arrives once and in order; wrong when one arrives twice (two e-mails),
out of order (``submit`` after ``approved`` leaves the user pending) or not at all (a lost
``approved`` leaves the user pending too).
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

STATE_OF = {"submit": "pending", "approved": "approved", "rejected": "rejected"}


class TrustingApp:
    def __init__(self) -> None:
        self.states: dict[str, str] = {}
        self.emails: list[str] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/webhook"

    def handle(self, payload: dict[str, Any]) -> None:
        sid, trigger = payload["submission_id"], payload["webhook_trigger"]
        if trigger in STATE_OF:
            self.states[sid] = STATE_OF[trigger]  # the last one wins
        if trigger == "approved":
            self.emails.append(sid)  # once per webhook, not once per submission

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        app = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                app.handle(json.loads(body))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        return Handler
