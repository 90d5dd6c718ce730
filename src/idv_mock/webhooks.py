"""Webhook delivery over real HTTP, off the request path, with retries and a record.

Deliveries of one project go out in order (a receiver sees ``submit`` before
``approved``), one at a time, on a small pool of worker threads shared by every project:
a project with queued events waits its turn in a ready queue, and a worker takes its
next event, so a thousand projects with a webhook cost no more threads than one. Each is a
POST of the JSON payload with an ``X-Idv-Event`` header, retried on a non-2xx answer or a
connection error (gaps.md: up to 3 attempts, 0.5 s then 1 s apart; both configurable).
Every attempt is recorded (the newest ``max_records`` deliveries per project are kept), so
a test or a demo can see what was sent, when, and what the receiver answered. The API
call that caused an event never waits for it. ``clear`` (a reset, a project replaced)
drops what is still queued and stops the retries of what is in flight.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

import orjson

from idv_mock import addresses
from idv_mock.clock import iso

if TYPE_CHECKING:  # imported where used: httpx costs about 40 ms at start-up
    import httpx

EVENT_HEADER = "X-Idv-Event"
WORKERS = 4  # delivery threads shared by every project of a service
IDLE_SECONDS = 10.0  # a worker with nothing to do for this long ends
MAX_RECORDS = 10_000  # deliveries kept per project (oldest dropped), as the journal's size


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
            # an encrypted project's record shows what went on the wire, never the plaintext
            "payload": self.body,
            "encrypted": self.body is not self.payload,
            "status": self.status,
            "created_at": self.created_at,
            "attempts": list(self.attempts),
        }


class Refused(Exception):
    """A webhook destination the host rule refuses (the message says why)."""


@dataclass(frozen=True, slots=True)
class Target:
    """Where a delivery connects: ``url`` names the checked address itself, ``host`` is the
    ``Host`` header of the URL as configured, ``sni`` the name TLS is checked against."""

    url: str
    host: str
    sni: str | None = None

    def extensions(self) -> dict[str, Any]:
        return {"sni_hostname": self.sni} if self.sni else {}

    def headers(self) -> dict[str, str]:
        """``Host``; and for TLS to a name, ``Connection: close``: the client's pool knows
        the connection by its address only, so another name at the same address must not
        reuse a connection whose certificate was checked for this one."""
        return {"host": self.host, "connection": "close"} if self.sni else {"host": self.host}


@dataclass(frozen=True, slots=True)
class HostRule:
    """Where webhooks may not go: the server itself (a webhook at its own ``/__admin/reset``
    wiped it in the probes of issues 14 and 27), link-local addresses (169.254.0.0/16,
    fe80::/10: cloud metadata services) and unspecified ones (0.0.0.0, ::), unless
    ``allowed`` names the host (``host`` or ``host:port``, as written or as resolved).
    The host is resolved first and every address it resolves to is checked, whatever its
    spelling (``addresses.py``); the delivery then connects to the checked address.
    Other local and private hosts stay allowed: that is where integrators' receivers run
    (loopback on another port, a LAN, a container network)."""

    own_port: int | None = None  # the server's port; this machine's address with it is it
    own_host: str = "127.0.0.1"  # the bound address (any of the machine's is checked: is_own)
    allowed: frozenset[str] = frozenset()

    def refusal(self, url: str) -> str | None:
        """Why ``url`` is refused, or None (a host that does not resolve is not refused:
        its delivery fails as a connection error would)."""
        try:
            self.target(url)
        except Refused as exc:
            return str(exc)
        except OSError:
            return None
        return None

    def target(self, url: str) -> Target:
        """Where a delivery to ``url`` connects; raises Refused, or OSError when the host
        does not resolve."""
        import httpx

        try:
            parsed = httpx.URL(url)
            host, port = parsed.host, parsed.port or (443 if parsed.scheme == "https" else 80)
        except Exception:
            raise Refused("not a URL") from None
        if not host or parsed.scheme not in ("http", "https"):
            raise Refused("not an http(s) URL")
        found = addresses.resolve(host, port)
        named = {host, f"{host}:{port}"} | {f"{a}" for a in found} | {f"{a}:{port}" for a in found}
        if not named & self.allowed:
            for address in found:
                self._check(host, port, address)
        checked = found[0]
        sni = host if parsed.scheme == "https" and addresses.literal(host) is None else None
        netloc = parsed.netloc.decode("ascii")
        return Target(str(parsed.copy_with(host=str(checked))), netloc, sni)

    def _check(self, host: str, port: int, address: addresses.Address) -> None:
        hint = "(allow it with --allow-webhook-host)"
        shown = host if host == str(address) else f"{host} ({address})"
        if address.is_link_local:
            raise Refused(f"{shown} is a link-local address {hint}")
        if address.is_unspecified:
            raise Refused(f"{shown} is an unspecified address {hint}")
        if self.own_port is not None and port == self.own_port and addresses.is_own(address):
            raise Refused(f"{shown}:{port} is this server {hint}")


def _now() -> str:
    return iso(datetime.now(timezone.utc))


class WebhookDispatcher:
    def __init__(
        self,
        backoff: Sequence[float] = (0.5, 1.0),
        timeout: float = 5.0,
        workers: int = WORKERS,
        max_records: int = MAX_RECORDS,
        host_rule: HostRule | None = None,
    ) -> None:
        self.host_rule = host_rule or HostRule()
        self.backoff = tuple(backoff)  # pauses between attempts: len(backoff) + 1 attempts
        self.timeout = timeout
        self.workers = max(1, workers)
        self.max_records = max_records
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)  # a project became ready, or closing
        self._idle = threading.Condition(self._lock)  # a delivery ended
        self._queued: dict[str, deque[Delivery]] = {}  # project id -> its events, in order
        self._ready: deque[str] = deque()  # projects with events and no worker on them
        self._busy: set[str] = set()  # projects a worker is delivering for
        self._records: dict[str, deque[Delivery]] = {}
        self._threads: list[threading.Thread] = []
        self._counter = 0
        self._closed = False
        # the wait before a retry; the service makes a frozen project's wait on its clock
        self.pause: Callable[[Delivery, float], None] = lambda _delivery, seconds: time.sleep(
            seconds
        )

    def send(
        self, project_id: str, url: str, event: str, payload: dict[str, Any], body: dict[str, Any]
    ) -> Delivery:
        """Record a delivery and queue it; ``body`` is what goes on the wire."""
        with self._lock:
            self._counter += 1
            delivery = Delivery(
                f"wh-{self._counter}", project_id, event, url, payload, body, _now()
            )
            records = self._records.setdefault(project_id, deque(maxlen=self.max_records))
            records.append(delivery)
            if self._closed:
                delivery.status = "cancelled"
                return delivery
            self._queued.setdefault(project_id, deque()).append(delivery)
            if project_id not in self._busy and project_id not in self._ready:
                self._ready.append(project_id)
            self._start_worker()
            self._wake.notify()
        return delivery

    def resend(self, project_id: str, delivery_id: str) -> Delivery | None:
        """Queue a recorded delivery's event again, as a new delivery to the same URL with the
        same body (the dashboard's "send again"); None when no such delivery is recorded."""
        with self._lock:
            records = self._records.get(project_id, ())
            found = next((d for d in records if d.id == delivery_id), None)
        if found is None:
            return None
        return self.send(project_id, found.url, found.event, found.payload, found.body)

    def _start_worker(self) -> None:
        """One more worker if all are taken and the pool has room (under the lock)."""
        self._threads = [t for t in self._threads if t.is_alive()]
        if len(self._threads) >= min(self.workers, len(self._busy) + len(self._ready)):
            return
        thread = threading.Thread(target=self._work, daemon=True, name="idv-webhook")
        self._threads.append(thread)
        thread.start()

    def _work(self) -> None:
        import httpx

        # one client per worker: making an httpx.Client costs ~20 ms (its TLS context)
        with httpx.Client(timeout=self.timeout) as client:
            while True:
                with self._lock:
                    while not self._ready and not self._closed:
                        if not self._wake.wait(IDLE_SECONDS) and not self._ready:
                            self._threads.remove(threading.current_thread())
                            return  # idle for a while: the pool shrinks to what is used
                    if self._closed:
                        return
                    project_id = self._ready.popleft()
                    delivery = self._queued[project_id].popleft()
                    self._busy.add(project_id)
                try:
                    self._deliver(client, delivery)
                finally:
                    self._done(project_id)

    def _done(self, project_id: str) -> None:
        with self._lock:
            self._busy.discard(project_id)
            if self._queued.get(project_id):
                self._ready.append(project_id)
                self._wake.notify()
            else:
                self._queued.pop(project_id, None)
            self._idle.notify_all()

    def _deliver(self, client: httpx.Client, delivery: Delivery) -> None:
        content = orjson.dumps(delivery.body)
        headers = {"content-type": "application/json", EVENT_HEADER: delivery.event}
        for n in range(len(self.backoff) + 1):
            if n:
                self.pause(delivery, self.backoff[n - 1])
            if delivery.status == "cancelled":
                return
            target: Target | OSError
            try:  # resolved and checked at each attempt, then sent to the checked address
                target = self.host_rule.target(delivery.url)
            except Refused as exc:  # recorded as an attempt, never sent, not retried
                error = f"refused: {exc}"
                delivery.attempts.append(
                    {"attempt": n + 1, "at": _now(), "error": error, "duration_ms": 0.0}
                )
                delivery.status = "failed"
                return
            except OSError as exc:  # no address: an attempt that failed, retried
                target = exc
            if self._attempt(client, delivery, n + 1, content, headers, target):
                delivery.status = "delivered"
                return
        delivery.status = "failed"

    def _attempt(
        self,
        client: httpx.Client,
        delivery: Delivery,
        n: int,
        content: bytes,
        headers: dict[str, str],
        target: Target | OSError,
    ) -> bool:
        record: dict[str, Any] = {"attempt": n, "at": _now()}
        started = time.perf_counter()
        try:
            if isinstance(target, OSError):
                raise target
            response = client.post(
                target.url,
                content=content,
                headers={**headers, **target.headers()},
                extensions=target.extensions(),
            )
            record["status_code"] = response.status_code
            ok = 200 <= response.status_code < 300
        except Exception as exc:  # any failure is an attempt's outcome, never a lost delivery
            record["error"] = f"{type(exc).__name__}: {exc}"[:300]
            ok = False
        record["duration_ms"] = round((time.perf_counter() - started) * 1000, 1)
        delivery.attempts.append(record)
        return ok

    def deliveries(
        self, project_id: str | None = None, newest: int | None = None
    ) -> list[dict[str, Any]]:
        """Deliveries in send order, each with its attempts; ``newest``: only the last so
        many (a page showing a few need not describe all 10,000)."""
        with self._lock:
            if project_id is not None:  # one project's records are in send order already
                found = list(self._records.get(project_id, ()))
            else:
                found = sorted((d for r in self._records.values() for d in r), key=_sequence)
        if newest is not None:
            found = found[-newest:] if newest > 0 else []
        return [d.describe() for d in found]

    def tally(self, project_id: str) -> tuple[int, int, int]:
        """A project's deliveries, their attempts, and how many are no longer pending: the
        counts a page polls for, without describing every record."""
        with self._lock:
            found = list(self._records.get(project_id, ()))
        attempts = sum(len(d.attempts) for d in found)
        return len(found), attempts, sum(d.status != "pending" for d in found)

    def clear(self, project_id: str | None = None) -> None:
        """Forget the delivery records (of one project, or all), drop what is queued and
        stop the retries of a delivery in flight."""
        with self._lock:
            for pid in [p for p in self._records if project_id in (None, p)]:
                for delivery in self._records.pop(pid):
                    if delivery.status == "pending":
                        delivery.status = "cancelled"
            for pid in [p for p in self._queued if project_id in (None, p)]:
                self._queued.pop(pid)
                if pid in self._ready:
                    self._ready.remove(pid)
            self._idle.notify_all()

    def threads(self) -> int:
        """Worker threads alive now (at most ``workers``)."""
        with self._lock:
            return sum(t.is_alive() for t in self._threads)

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Block until no delivery is queued or in flight (for tests and demos); False on
        timeout."""
        deadline = time.monotonic() + timeout
        with self._idle:
            while self._busy or any(self._queued.values()):  # in flight (one a project), queued
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._idle.wait(left)
        return True

    def close(self) -> None:
        """Stop the workers; queued deliveries are dropped, one in flight is abandoned."""
        self.clear()
        with self._lock:
            self._closed = True
            self._wake.notify_all()


def _sequence(delivery: Delivery) -> int:
    return int(delivery.id.removeprefix("wh-"))
