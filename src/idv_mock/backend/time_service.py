"""Simulated time as operations of the service: each project's clock and what falls due.

Kept apart from ``service.py`` so each stays small; :class:`~idv_mock.backend.Service`
inherits these methods. An advance runs every rule that falls due inside the interval, in
time order, each with the project's clock pinned at its own instant (its webhook carries
that instant), and returns once they ran and their webhooks are queued: Stripe's test
clocks' ``advancing`` then ``ready``, made synchronous. Time that passes on its own (``tick``
readings, ``wall``) runs what fell due the next time the project's clock is looked at.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, ClassVar

from idv_mock import errors
from idv_mock.backend.exceptions import BackendError, InvalidInput
from idv_mock.backend.projects import Project
from idv_mock.backend.schedule import Due
from idv_mock.clock import iso, parse_instant, parse_iso

if TYPE_CHECKING:
    from idv_mock.webhooks import Delivery, WebhookDispatcher

Rule = Callable[[Any, Project, dict[str, Any], datetime], list[str]]
LAST = datetime(9000, 1, 1, tzinfo=timezone.utc)  # time stops here: no test needs more
RETRY_POLL = 0.25  # a retry waiting on a frozen clock checks this often for a cancellation


@dataclass(frozen=True, slots=True)
class ProjectClock:
    """One project's clock, for Python callers (the plugin's ``idv_project.clock``,
    ``service.project_clock("default")`` in-process or under ``idv_mock.mock()``): the same
    operations as the control API's ``/clock`` calls."""

    service: TimeOperations
    project_id: str

    @property
    def now(self) -> datetime:
        return parse_iso(self.service.clock_of(self.project_id)["now"])

    @property
    def mode(self) -> str:
        return str(self.service.clock_of(self.project_id)["mode"])

    @property
    def due(self) -> list[dict[str, Any]]:
        """What falls due, earliest first (``at``, ``what`` and its details)."""
        found: list[dict[str, Any]] = self.service.clock_of(self.project_id)["due"]
        return found

    def advance(
        self,
        *,
        seconds: float = 0,
        minutes: float = 0,
        hours: float = 0,
        days: float = 0,
        to: datetime | str | None = None,
    ) -> dict[str, Any]:
        """Move forward by the sum of the units, or ``to`` an instant; answers ``now`` and
        what ``fired`` on the way (each rule at its own instant)."""
        if to is not None:
            return self.service.advance_clock(
                self.project_id, {"to": iso(to) if isinstance(to, datetime) else to}
            )
        total = seconds + 60 * minutes + 3600 * hours + 86400 * days
        return self.service.advance_clock(self.project_id, {"seconds": total})


class TimeOperations:
    """Mixin: the clock operations of ``Service``."""

    _lock: threading.RLock
    changes: int

    if TYPE_CHECKING:  # provided by Service and its other mixins

        def project(self, project_id: str) -> Project: ...

        projects: dict[str, Project]
        webhooks: WebhookDispatcher

    # --- public operations ---
    def project_clock(self, project_id: str) -> ProjectClock:
        """A handle on the project's clock (``.now``, ``.due``, ``.advance(hours=3)``)."""
        with self._lock:
            self.project(project_id)  # an unknown project is refused now, not at first use
        return ProjectClock(self, project_id)

    def clock_of(self, project_id: str) -> dict[str, Any]:
        """The project's now, mode, and what is due (after running what already fell due)."""
        with self._lock:
            project = self.project(project_id)
            self._catch_up(project)
            clock = project.clock
            return {
                "now": iso(clock.peek()),
                "mode": clock.mode,
                "due": project.schedule.describe(),
            }

    def advance_clock(self, project_id: str, spec: dict[str, Any]) -> dict[str, Any]:
        """Move the project's clock forward by ``{"seconds": N}`` or to ``{"to": ISO}``;
        every rule due on the way runs at its instant. Answers the new now and what fired."""
        with self._lock:
            project = self.project(project_id)
            start = project.clock.peek()
            target = _target(spec, start)
            self.changes += 1
            fired = self._run_until(project, target)
            project.clock.advance_to(max(target, project.clock.peek()))
            answer = {"now": iso(project.clock.peek()), "mode": project.clock.mode, "fired": fired}
        self.webhooks.wake()  # delayed deliveries of a frozen project now due go out
        return answer

    def run_due(self, project: Project) -> None:
        """Run what fell due on the project's clock while time passed on its own (the web
        layer asks before an API call when ``is_due`` says something is)."""
        with self._lock:
            self._catch_up(project)

    @staticmethod
    def is_due(project: Project) -> bool:
        """Whether a rule of the project fell due (cheap: read without the lock)."""
        items = project.schedule.items
        return bool(items) and items[0].at <= project.clock.peek()

    def _catch_up(self, project: Project) -> list[dict[str, Any]]:
        if not self.is_due(project):
            return []
        self.changes += 1
        return self._run_until(project, project.clock.peek())

    # --- running the rules ---
    def _run_until(self, project: Project, until: datetime) -> list[dict[str, Any]]:
        fired: list[dict[str, Any]] = []
        while (due := project.schedule.pop_due(until)) is not None:
            with project.clock.pinned(due.at):
                try:
                    sent = self._run(project, due)
                except BackendError as exc:  # e.g. the link's projection was deleted since
                    fired.append({**due.describe(), "webhooks": [], "error": str(exc)})
                    continue
            fired.append({**due.describe(), "webhooks": sent})
        return fired

    def _run(self, project: Project, due: Due) -> list[str]:
        if due.hook is not None:  # a webhook retry waiting on this clock
            due.hook()
            return []
        rule = self._RULES.get(due.what)
        return [] if rule is None else rule(self, project, due.detail, due.at)

    _RULES: ClassVar[dict[str, Rule]] = {}  # Service's table: each rule lives with its part

    # --- time passing on its own ---
    def watch_clocks(self, interval: float = 1.0) -> threading.Event:
        """Run what falls due on ``tick`` and ``wall`` clocks every ``interval`` seconds,
        without waiting for a touch (``idv-mock serve`` does: a webhook due in 3 minutes
        goes out then). Answers the event that stops the watcher (``Service.close`` sets
        the one it is given via ``_clock_watch``)."""
        stop = threading.Event()

        def watch() -> None:
            while not stop.wait(interval):
                with self._lock:
                    for project in list(self.projects.values()):
                        if project.clock.mode != "frozen":
                            self._catch_up(project)

        threading.Thread(target=watch, daemon=True, name="idv-clock-watch").start()
        self._clock_watch = stop
        return stop

    _clock_watch: threading.Event | None = None

    # --- webhook delays and retries on a frozen clock ---
    def webhook_now(self, project_id: str) -> float:
        """A project's time in seconds for the dispatcher's delays (``delay_seconds``,
        ``auto_release``): its clock when ``frozen`` (the delay waits for an advance), else
        real (monotonic) time. Called under the dispatcher's lock, so it reads without the
        service's lock: one dict look-up and the clock's fields."""
        project = self.projects.get(project_id)
        if project is not None and project.clock.mode == "frozen":
            return project.clock.peek().timestamp()
        return time.monotonic()

    def webhook_pause(self, delivery: Delivery, seconds: float) -> None:
        """The delivery thread's pause before a retry: real time, except on a ``frozen``
        project, where the retry falls due on the project's clock and waits for an advance
        (or for the delivery to be cancelled by a reset)."""
        go = threading.Event()
        with self._lock:
            project = self.projects.get(delivery.project_id)
            frozen = project is not None and project.clock.mode == "frozen"
            if project is not None and frozen:
                at = project.clock.peek() + timedelta(seconds=seconds)
                detail = {"delivery": delivery.id, "event": delivery.event}
                project.schedule.add(at, "webhook_retry", detail, hook=go.set)
        if not frozen:
            time.sleep(seconds)
            return
        while not go.wait(RETRY_POLL) and delivery.status == "pending":
            pass


def _target(spec: Any, start: datetime) -> datetime:
    """Where an advance goes; refuses a step back and anything but one of the two forms."""
    if not isinstance(spec, dict) or len(spec) != 1 or not {"seconds", "to"} & set(spec):
        raise InvalidInput(errors.CLOCK_ADVANCE_BODY)
    if "seconds" in spec:
        seconds = spec["seconds"]
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
            raise InvalidInput(errors.CLOCK_ADVANCE_BODY)
        if seconds < 0:
            raise InvalidInput(errors.CLOCK_BACKWARDS.format(f"{seconds} seconds", iso(start)))
        if seconds > (LAST - start).total_seconds():
            raise InvalidInput(errors.CLOCK_TOO_FAR)
        return start + timedelta(seconds=seconds)
    to = parse_instant(spec["to"]) if isinstance(spec["to"], str) else None
    if to is None:
        raise InvalidInput(errors.CLOCK_BAD_TO)
    if to < start:
        raise InvalidInput(errors.CLOCK_BACKWARDS.format(iso(to), iso(start)))
    if to > LAST:
        raise InvalidInput(errors.CLOCK_TOO_FAR)
    return to
