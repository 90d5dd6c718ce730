"""A small webhook receiver: records what the mock POSTs, and prints it for ``idv-mock receive``.

The test suite and demos use :class:`WebhookReceiver` (a threaded HTTP server on a free
port) to watch deliveries arrive over real HTTP; it can also be told to fail the first
requests, to exercise the mock's retries.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import orjson

from idv_mock.ground import crypto


@dataclass(frozen=True, slots=True)
class Received:
    path: str
    event: str
    headers: dict[str, str]
    body: Any


class WebhookReceiver:
    """A real HTTP server on ``host:port`` (0: a free port) that records each POST."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.received: list[Received] = []
        self.statuses: list[int] = []  # answers for the next requests, then 200
        self.on_receive: Callable[[Received], None] | None = None
        self._cond = threading.Condition()
        self._server = ThreadingHTTPServer((host, port), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/webhook"

    def start(self) -> WebhookReceiver:
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Serve in this thread until interrupted (the ``idv-mock receive`` command)."""
        try:
            self._server.serve_forever()
        finally:
            self._server.server_close()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> WebhookReceiver:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def wait_for(self, count: int, timeout: float = 10.0) -> list[Received]:
        """The first ``count`` requests received, waiting for them up to ``timeout``."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while len(self.received) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"{len(self.received)} of {count} webhooks arrived")
                self._cond.wait(left)
            return self.received[:count]

    def _record(self, item: Received) -> int:
        with self._cond:
            self.received.append(item)
            status = self.statuses.pop(0) if self.statuses else 200
            self._cond.notify_all()
        if self.on_receive is not None:
            self.on_receive(item)
        return status

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length", 0)))
                try:
                    body: Any = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    body = raw.decode("utf-8", "replace")
                headers = {k.lower(): v for k, v in self.headers.items()}
                item = Received(self.path, headers.get("x-idv-event", ""), headers, body)
                status = receiver._record(item)
                self.send_response(status)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler


def shape_problems(payload: Any) -> list[str]:
    """Where ``payload`` leaves the vendor's shape of its trigger (``webhook_trigger``),
    each as ``path: message``; empty when it matches. An encrypted envelope is not checked
    (decrypt it first)."""
    from idv_mock.ground import schemas

    if isinstance(payload, dict) and payload.get("isEncrypted") is True:
        return []
    index: dict[str, dict[str, str]] = schemas.load("api.json")["webhooks"]
    trigger = payload.get("webhook_trigger") if isinstance(payload, dict) else None
    if not isinstance(trigger, str) or trigger not in index:
        known = ", ".join(index)
        return [f"webhook_trigger: {trigger!r} is not one of the vendor's triggers ({known})"]
    return schemas.errors(index[trigger]["schema"], payload)


def run(host: str, port: int, api_key: str | None) -> int:
    """``idv-mock receive``: print every webhook until interrupted, and say when one does
    not match the vendor's shape of its trigger (``schemas/webhooks/``)."""

    def show(item: Received) -> None:
        body = item.body
        if api_key and isinstance(body, dict) and body.get("isEncrypted"):
            try:
                body = crypto.decrypt(str(body["data"]), api_key)
            except crypto.CryptoError as exc:
                print(f"(could not decrypt with the given --api-key: {exc})", flush=True)
        text = orjson.dumps(body, option=orjson.OPT_INDENT_2).decode()
        print(f"--- {item.event} {item.path}\n{text}", flush=True)
        if isinstance(body, dict) and body.get("isEncrypted") is True:
            print("(encrypted: give --api-key to check its shape)", flush=True)
            return
        problems = shape_problems(body)
        trigger = body.get("webhook_trigger") if isinstance(body, dict) else None
        if problems:
            print(f"!!! does not match the vendor's {trigger} webhook:", flush=True)
            for problem in problems:
                print(f"!!!   {problem}", flush=True)
        else:
            print(f"(matches the vendor's {trigger} webhook)", flush=True)

    receiver = WebhookReceiver(host, port)
    receiver.on_receive = show
    print(f"idv-mock receiving webhooks at {receiver.url}", flush=True)
    try:
        receiver.serve_forever()
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr)
    return 0
