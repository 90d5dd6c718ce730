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

A project's delivery levers (``idv_mock.delivery.levers``) make delivery misbehave as production
does: a webhook dropped (recorded, never sent), sent several times, held until released
in an order a test chooses, delayed (a timer thread hands it to the pool when due, so a
waiting delivery holds no worker), or its first attempts answered as a failing receiver.
Each record has a state: ``pending`` (queued), ``held``, ``delayed``, ``sending``,
``delivered``, ``failed``, ``dropped`` or ``cancelled``.

A receiver cannot hold the server (issue 39): its reply is read up to ``REPLY_LIMIT``
bytes (the rest is never read: the connection is closed), each attempt has a total
deadline (``timeout``: connect, send and reply, however slowly the bytes trickle; the
socket is shut down when it passes, or when a reset cancels the delivery), and a worker
whose attempt (or retry pause) has run ``SLOW_SECONDS`` no longer counts against the pool,
so another project's first attempt is not kept waiting behind slow receivers (up to
``MAX_WORKERS`` threads in all).
"""

from __future__ import annotations

import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

import orjson

from idv_mock.delivery.levers import PROMPT, DeliveryLevers, LeverCounters, release_order
from idv_mock.ground import addresses
from idv_mock.ground.clock import iso

if TYPE_CHECKING:  # imported where used: httpx costs about 40 ms at start-up
    import httpx

EVENT_HEADER = "X-Idv-Event"
WORKERS = 4  # delivery threads shared by every project of a service
IDLE_SECONDS = 10.0  # a worker with nothing to do for this long ends
MAX_RECORDS = 10_000  # deliveries kept per project (oldest dropped), as the journal's size
SETTLED = frozenset({"delivered", "failed", "dropped", "cancelled"})  # no more attempts
FAILING_RECEIVER = 503  # what an attempt failed on purpose (``fail_first``) is answered
REPLY_LIMIT = 64 * 1024  # bytes of a receiver's reply read; the rest is never read
SLOW_SECONDS = 0.5  # an attempt or pause this long frees its place in the pool
MAX_WORKERS = 32  # delivery threads in all, slow ones included


def _real_time(project_id: str) -> float:
    return time.monotonic()


class NotHeld(ValueError):
    """A release named deliveries that are not held (``ids``); nothing was released."""

    def __init__(self, ids: list[str]) -> None:
        super().__init__(", ".join(ids))
        self.ids = ids


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
    due: float = 0.0  # when a delayed delivery goes out, on its project's clock
    copy: int = 1  # which of a duplicated webhook's deliveries (1 when not duplicated)
    resend_of: str | None = None

    def describe(self) -> dict[str, Any]:
        found = {
            "id": self.id,
            "delivery_id": self.id,
            "event": self.event,
            "webhook_trigger": self.payload.get("webhook_trigger", ""),
            "url": self.url,
            # an encrypted project's record shows what went on the wire, never the plaintext
            "payload": self.body,
            "encrypted": self.body is not self.payload,
            "status": self.status,
            "state": self.status,
            "created_at": self.created_at,
            "attempts": list(self.attempts),
        }
        if self.copy > 1:
            found["copy"] = self.copy
        if self.resend_of is not None:
            found["resend_of"] = self.resend_of
        return found


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
        except (httpx.InvalidURL, ValueError):  # httpx's, or idna's for a bad xn-- label
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


def _now(project_id: str) -> str:
    return iso(datetime.now(timezone.utc))


class Cut:
    """One attempt's connection, so its deadline or a reset can end it at once: the
    socket (known from httpx's ``trace`` extension when it connects) is shut down, which
    ends a blocked read or write whatever the per-read timeouts say."""

    __slots__ = ("done", "lock", "sock")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.sock: socket.socket | None = None
        self.done = False

    def trace(self, event: str, info: dict[str, Any]) -> None:
        if event == "connection.connect_tcp.complete":
            stream = info.get("return_value")
            with self.lock:
                self.sock = None if stream is None else stream.get_extra_info("socket")
                if self.done:
                    self._shut()

    def now(self) -> None:
        with self.lock:
            self.done = True
            self._shut()

    def _shut(self) -> None:
        if self.sock is not None:
            with suppress(OSError):
                self.sock.shutdown(socket.SHUT_RDWR)


class WebhookDispatcher:
    def __init__(
        self,
        backoff: Sequence[float] = (0.5, 1.0),
        timeout: float = 5.0,
        workers: int = WORKERS,
        max_records: int = MAX_RECORDS,
        host_rule: HostRule | None = None,
        now: Callable[[str], float] = _real_time,
    ) -> None:
        self.host_rule = host_rule or HostRule()
        # a project's time in seconds, for delays: real time unless its clock is frozen
        # (then ``wake`` is called when that clock moves, and due deliveries go out). It is
        # called under the dispatcher's lock: it must not take the service's lock (the
        # service calls ``send`` holding its own), only read a value.
        self.now = now
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
        self._held: dict[str, list[Delivery]] = {}  # project id -> held deliveries, as queued
        self._delayed: list[Delivery] = []  # in send order; the timer thread hands them over
        self._releases: dict[str, tuple[float, str, int]] = {}  # auto_release: due, order, seed
        self._counters: dict[str, LeverCounters] = {}
        self._timer: threading.Thread | None = None
        self._tick = threading.Condition(self._lock)  # a delay was added, or a clock moved
        self._threads: list[threading.Thread] = []
        self._slow: set[threading.Thread] = set()  # workers on a slow attempt or a pause
        self._cuts: dict[str, tuple[str, Cut]] = {}  # delivery id -> project, attempt in flight
        self._counter = 0
        self._closed = False
        # a delivery record's times (``created_at``, each attempt's ``at``): real time here;
        # the service reads the project's clock (called under the dispatcher's lock too)
        self.stamp: Callable[[str], str] = _now
        # the wait before a retry; the service makes a frozen project's wait on its clock
        self.pause: Callable[[Delivery, float], None] = lambda _delivery, seconds: time.sleep(
            seconds
        )
        # what a project's webhooks showed (the service counts it: contract coverage):
        # (project id, event, the receiver's class, first attempt) for each attempt sent,
        # (project id, "lever <name>", None, True) for each lever applied
        self.observe: Callable[[str, str, str | None, bool], None] = _ignore

    def send(
        self,
        project_id: str,
        url: str,
        event: str,
        payload: dict[str, Any],
        body: dict[str, Any],
        levers: DeliveryLevers = PROMPT,
    ) -> Delivery:
        """Record a webhook's deliveries and queue, hold, delay or drop them as the project's
        ``levers`` say; ``body`` is what goes on the wire. Answers the first delivery."""
        with self._lock:
            counters = self._counters_for(project_id, levers)
            if not levers.applies_to(event):
                levers = PROMPT
            elif counters.drops_next():
                self.observe(project_id, "lever drop", None, True)
                return self._record(project_id, event, url, payload, body, "dropped")
            if levers.duplicate > 1:
                self.observe(project_id, "lever duplicate", None, True)
            first: Delivery | None = None
            for copy in range(1, levers.duplicate + 1):
                delivery = self._record(project_id, event, url, payload, body, "pending")
                delivery.copy = copy
                self._route(delivery, levers)
                first = first or delivery
            assert first is not None  # duplicate is at least 1 (the schema's minimum)
            return first

    def _counters_for(self, project_id: str, levers: DeliveryLevers) -> LeverCounters:
        """The project's counters, started again when its levers were set anew."""
        counters = self._counters.get(project_id)
        if counters is None or counters.levers is not levers:
            counters = self._counters[project_id] = LeverCounters(levers)
        return counters

    def _record(
        self,
        project_id: str,
        event: str,
        url: str,
        payload: dict[str, Any],
        body: dict[str, Any],
        status: str,
    ) -> Delivery:
        """A new delivery record (under the lock)."""
        self._counter += 1
        delivery = Delivery(
            f"wh-{self._counter}", project_id, event, url, payload, body, self.stamp(project_id)
        )
        delivery.status = status
        records = self._records.setdefault(project_id, deque(maxlen=self.max_records))
        records.append(delivery)
        return delivery

    def _route(self, delivery: Delivery, levers: DeliveryLevers) -> None:
        """Where a new delivery waits: held, delayed, or the project's queue (under the lock)."""
        if self._closed:
            delivery.status = "cancelled"
        elif levers.hold:
            self.observe(delivery.project_id, "lever hold", None, True)
            if levers.release_after:
                self.observe(delivery.project_id, "lever auto_release", None, True)
            delivery.status = "held"
            self._held.setdefault(delivery.project_id, []).append(delivery)
            if levers.release_after and delivery.project_id not in self._releases:
                due = self.now(delivery.project_id) + levers.release_after
                self._releases[delivery.project_id] = (
                    due,
                    levers.release_order,
                    levers.release_seed,
                )
                self._start_timer()
                self._tick.notify_all()
        elif levers.delay_seconds > 0:
            self.observe(delivery.project_id, "lever delay_seconds", None, True)
            delivery.status = "delayed"
            delivery.due = self.now(delivery.project_id) + levers.delay_seconds
            self._delayed.append(delivery)
            self._start_timer()
            self._tick.notify_all()
        else:
            self._enqueue(delivery)

    def _enqueue(self, delivery: Delivery) -> None:
        """Queue a delivery behind its project's others (under the lock)."""
        delivery.status = "pending"
        project_id = delivery.project_id
        self._queued.setdefault(project_id, deque()).append(delivery)
        if project_id not in self._busy and project_id not in self._ready:
            self._ready.append(project_id)
        self._start_worker()
        self._wake.notify()

    def resend(self, project_id: str, delivery_id: str) -> Delivery | None:
        """Send a recorded delivery's webhook again, now, as a new delivery to the same URL
        with the same body (the control API's and the dashboard's "send again"; no drop,
        hold, delay or duplicate applies, failing attempts still do); None when no such
        delivery is recorded."""
        with self._lock:
            found = self._find(project_id, delivery_id)
            if found is None:
                return None
            again = self._record(
                project_id, found.event, found.url, found.payload, found.body, "pending"
            )
            again.resend_of = found.id
            if self._closed:
                again.status = "cancelled"
            else:
                self._enqueue(again)
            return again

    def _find(self, project_id: str, delivery_id: str) -> Delivery | None:
        records = self._records.get(project_id, ())
        return next((d for d in records if d.id == delivery_id), None)

    def held(self, project_id: str) -> list[str]:
        """The ids of the project's held deliveries, in the order they were queued."""
        with self._lock:
            return [d.id for d in self._held.get(project_id, ())]

    def release(self, project_id: str, order: Any = "queued", seed: int = 0) -> list[str]:
        """Send held deliveries in the order asked (``queued``, ``reversed``, ``shuffle``
        seeded by ``seed``, or a list of held ids: only those, in that order); answers the
        ids released. Raises ``NotHeld`` (releasing nothing) for a listed id not held."""
        with self._lock:
            return self._release(project_id, order, seed)

    def _release(self, project_id: str, order: Any, seed: int) -> list[str]:
        """``release`` under the lock."""
        held = self._held.get(project_id, [])
        by_id = {d.id: d for d in held}
        chosen = release_order(list(by_id), order, seed)
        missing = [i for i in chosen if i not in by_id]
        if missing:
            raise NotHeld(missing)
        for delivery_id in chosen:
            self._enqueue(by_id.pop(delivery_id))
        left = [d for d in held if d.id in by_id]
        if left:
            self._held[project_id] = left
        else:
            self._held.pop(project_id, None)
        return chosen

    def wake(self) -> None:
        """A project's clock moved: delayed deliveries now due go out."""
        with self._lock:
            self._tick.notify_all()

    def _start_timer(self) -> None:
        """The timer thread, if it is not running (under the lock)."""
        if self._timer is None or not self._timer.is_alive():
            self._timer = threading.Thread(target=self._time, daemon=True, name="idv-webhook-timer")
            self._timer.start()

    def _time(self) -> None:
        """Hand delayed deliveries to the pool when due, in send order, and release held
        batches whose ``auto_release`` is due; ends when nothing waits."""
        with self._lock:
            while (self._delayed or self._releases) and not self._closed:
                waits = self._auto_releases()
                for delivery in list(self._delayed):
                    left = delivery.due - self.now(delivery.project_id)
                    if left <= 0:
                        self._delayed.remove(delivery)
                        self._enqueue(delivery)
                    else:
                        waits.append(left)
                if waits:
                    self._tick.wait(min(min(waits), IDLE_SECONDS))
            self._timer = None

    def _auto_releases(self) -> list[float]:
        """Release the held batches now due (under the lock); the seconds left of the others."""
        waits = []
        for project_id, (due, order, seed) in list(self._releases.items()):
            left = due - self.now(project_id)
            if left <= 0:
                del self._releases[project_id]
                self._release(project_id, order, seed)
            else:
                waits.append(left)
        return waits

    def _start_worker(self) -> None:
        """One more worker if all are taken and the pool has room (under the lock); slow
        workers do not count, up to ``MAX_WORKERS`` threads in all."""
        self._threads = [t for t in self._threads if t.is_alive()]
        self._slow &= set(self._threads)
        counted = len(self._threads) - len(self._slow)
        wanted = len(self._busy) + len(self._ready) - len(self._slow)
        if counted >= min(self.workers, wanted) or len(self._threads) >= MAX_WORKERS:
            return
        thread = threading.Thread(target=self._work, daemon=True, name="idv-webhook")
        self._threads.append(thread)
        thread.start()

    def _work(self) -> None:
        import httpx

        # one client per worker: making an httpx.Client costs ~20 ms (its TLS context)
        # no connection kept alive: each attempt connects, so its deadline knows its socket
        limits = httpx.Limits(max_keepalive_connections=0)
        with httpx.Client(timeout=self.timeout, limits=limits) as client:
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
                    delivery.status = "sending"
                    self._busy.add(project_id)
                try:
                    self._deliver(client, delivery)
                finally:
                    self._done(project_id)

    def _mark_slow(self, worker: threading.Thread) -> None:
        """A worker's attempt or pause has run ``SLOW_SECONDS``: it frees its place in the
        pool, and a ready project gets another worker."""
        with self._lock:
            if worker in self._threads:
                self._slow.add(worker)
                if self._ready:
                    self._start_worker()

    def _watched(self, seconds: float, then: Callable[[], None]) -> threading.Timer:
        timer = threading.Timer(seconds, then)
        timer.daemon = True
        timer.start()
        return timer

    def _done(self, project_id: str) -> None:
        with self._lock:
            self._slow.discard(threading.current_thread())
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
        worker = threading.current_thread()
        for n in range(len(self.backoff) + 1):
            if n:
                slow = self._watched(SLOW_SECONDS, lambda: self._mark_slow(worker))
                try:
                    self.pause(delivery, self.backoff[n - 1])
                finally:
                    slow.cancel()
            if delivery.status == "cancelled":
                return
            target: Target | OSError
            try:  # resolved and checked at each attempt, then sent to the checked address
                target = self.host_rule.target(delivery.url)
            except Refused as exc:  # recorded as an attempt, never sent, not retried
                first = _first_sent(delivery)
                self.observe(delivery.project_id, delivery.event, "unreachable", first)
                error = f"refused: {exc}"
                delivery.attempts.append(
                    {
                        "attempt": n + 1,
                        "at": self.stamp(delivery.project_id),
                        "error": error,
                        "duration_ms": 0.0,
                    }
                )
                delivery.status = "failed"
                return
            except OSError as exc:  # no address: an attempt that failed, retried
                target = exc
            if self._attempt(client, delivery, n + 1, content, headers, target):
                if delivery.status != "cancelled":
                    delivery.status = "delivered"
                return
        if delivery.status != "cancelled":
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
        record: dict[str, Any] = {"attempt": n, "at": self.stamp(delivery.project_id)}
        if self._fails_on_purpose(delivery.project_id):  # never sent: a failing receiver
            record.update(status_code=FAILING_RECEIVER, duration_ms=0.0, simulated=True)
            self.observe(delivery.project_id, "lever fail_first", None, True)
            delivery.attempts.append(record)
            return False
        started = time.perf_counter()
        cut = Cut()
        worker = threading.current_thread()
        with self._lock:
            self._cuts[delivery.id] = (delivery.project_id, cut)
        deadline = self._watched(self.timeout, cut.now)
        slow = self._watched(SLOW_SECONDS, lambda: self._mark_slow(worker))
        try:
            if isinstance(target, OSError):
                raise target
            if delivery.status == "cancelled":
                raise RuntimeError("cancelled by a reset")
            ok = self._post(client, content, {**headers, **target.headers()}, target, cut, record)
        except Exception as exc:  # any failure is an attempt's outcome, never a lost delivery
            record["error"] = self._failure(exc, cut, delivery)
            ok = False
        finally:
            deadline.cancel()
            slow.cancel()
            with self._lock:
                self._cuts.pop(delivery.id, None)
        record["duration_ms"] = round((time.perf_counter() - started) * 1000, 1)
        first = _first_sent(delivery)
        delivery.attempts.append(record)
        status = record.get("status_code")
        answered = "unreachable" if status is None else f"{status // 100}xx"
        self.observe(delivery.project_id, delivery.event, answered, first)
        return ok

    def _failure(self, exc: Exception, cut: Cut, delivery: Delivery) -> str:
        """How a failed attempt is recorded: a cut one says why it was cut."""
        if cut.done:
            if delivery.status == "cancelled":
                return "TimeoutError: cancelled by a reset"
            return f"TimeoutError: no complete answer within {self.timeout:g} s"
        return f"{type(exc).__name__}: {exc}"[:300]

    @staticmethod
    def _post(
        client: httpx.Client,
        content: bytes,
        headers: dict[str, str],
        target: Target,
        cut: Cut,
        record: dict[str, Any],
    ) -> bool:
        """One POST, its reply read up to ``REPLY_LIMIT`` bytes (as sent: no decoding)."""
        extensions = {**target.extensions(), "trace": cut.trace}
        request = client.build_request(
            "POST", target.url, content=content, headers=headers, extensions=extensions
        )
        response = client.send(request, stream=True)
        try:
            record["status_code"] = response.status_code
            read = 0
            for chunk in response.iter_raw(16 * 1024):
                read += len(chunk)
                if read > REPLY_LIMIT:
                    record["reply_truncated"] = True
                    break
            record["reply_bytes"] = min(read, REPLY_LIMIT)
        finally:
            response.close()
        if cut.done:
            raise TimeoutError("deadline")
        return 200 <= response.status_code < 300

    def _fails_on_purpose(self, project_id: str) -> bool:
        with self._lock:
            counters = self._counters.get(project_id)
            return counters is not None and counters.fails_next()

    def deliveries(
        self, project_id: str | None = None, newest: int | None = None, state: str | None = None
    ) -> list[dict[str, Any]]:
        """Deliveries in send order, each with its attempts; ``newest``: only the last so
        many (a page showing a few need not describe all 10,000); ``state``: only those in
        that state."""
        with self._lock:
            if project_id is not None:  # one project's records are in send order already
                found = list(self._records.get(project_id, ()))
            else:
                found = sorted((d for r in self._records.values() for d in r), key=_sequence)
        if state is not None:
            found = [d for d in found if d.status == state]
        if newest is not None:
            found = found[-newest:] if newest > 0 else []
        return [d.describe() for d in found]

    def tally(self, project_id: str) -> tuple[int, int, int]:
        """A project's deliveries, their attempts, and how many are settled (no attempt
        left to make): the counts a page polls for, without describing every record."""
        with self._lock:
            found = list(self._records.get(project_id, ()))
        attempts = sum(len(d.attempts) for d in found)
        return len(found), attempts, sum(d.status in SETTLED for d in found)

    def clear(self, project_id: str | None = None) -> None:
        """Forget the delivery records (of one project, or all), drop what is queued and
        stop the retries of a delivery in flight."""
        with self._lock:
            for pid in [p for p in self._records if project_id in (None, p)]:
                for delivery in self._records.pop(pid):
                    if delivery.status not in SETTLED:
                        delivery.status = "cancelled"
            for pid in [p for p in self._held if project_id in (None, p)]:
                del self._held[pid]
            for pid in [p for p in self._counters if project_id in (None, p)]:
                del self._counters[pid]
            for pid in [p for p in self._releases if project_id in (None, p)]:
                del self._releases[pid]
            self._delayed = [d for d in self._delayed if project_id not in (None, d.project_id)]
            for pid, cut in self._cuts.values():
                if project_id in (None, pid):
                    cut.now()  # an attempt in flight ends now, its worker free for others
            self._tick.notify_all()
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
            while self._busy or self._delayed or self._releases or any(self._queued.values()):
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
            self._tick.notify_all()


def _first_sent(delivery: Delivery) -> bool:
    """Whether no attempt went out yet (those failed on purpose, ``fail_first``, never do)."""
    return all(a.get("simulated") for a in delivery.attempts)


def _ignore(project_id: str, what: str, receiver: str | None, first: bool) -> None:
    """The observer of a dispatcher nobody watches."""


def _sequence(delivery: Delivery) -> int:
    return int(delivery.id.removeprefix("wh-"))
