"""An integrator's webhook handler written the careful way: a webhook is only a nudge.

On each webhook it reads the submission back from the API (retrying 5xx, 429 as
``Retry-After`` says, and broken connections) and records what the API says; the welcome
e-mail goes out once per submission. Duplicates, reordering and lateness change nothing,
and a lost result is covered since any webhook of the submission reads its current state.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx


class IdempotentApp:
    def __init__(self, base_url: str, api_key: str) -> None:
        self.states: dict[str, str] = {}
        self.emails: set[str] = set()
        self._lock = threading.Lock()
        self._api = httpx.Client(base_url=base_url, headers={"x-api-key": api_key}, timeout=10)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/webhook"

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
        self._server.shutdown()
        self._server.server_close()
        self._api.close()

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
