"""Simulated time: each project's clock and what falls due on it.

``service.clocks``, a part of :class:`~idv_mock.backend.Service` given the service's
``Core``; the part that owns a rule registers it (``on``). Callers use its names directly
(``service.clocks.handle``, ``.describe``, ``.advance``, ``.watch``). An advance runs
every rule that falls due inside the interval, in time order, each with the project's
clock pinned at its own instant (its webhook carries that instant), and returns once they
ran and their webhooks are queued: Stripe's test clocks' ``advancing`` then ``ready``,
made synchronous. Time that passes on its own (``tick`` readings, ``wall``) runs what
fell due the next time the project's clock is looked at.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

from idv_mock.backend.core import Core
from idv_mock.backend.exceptions import BackendError, InvalidInput
from idv_mock.backend.projects import Project
from idv_mock.backend.schedule import Due
from idv_mock.ground import errors
from idv_mock.ground.clock import iso, parse_instant, parse_iso

if TYPE_CHECKING:
    from idv_mock.delivery.webhooks import Delivery

# what a kind of due item does when its project's clock reaches it: the ids of the webhooks
# it sent, given the project, the item's details and its instant
Rule = Callable[[Project, dict[str, Any], datetime], list[str]]
# a repeating rule's period when its next run would change nothing (a search cycle with
# nothing new to screen), else None: such runs are counted, not run one by one
Idle = Callable[[Project, dict[str, Any]], timedelta | None]
# a rule's costly part that needs no shared state once started (a search cycle's matching):
# given the project and the item's details under the lock, the work an advance runs without
# the lock just before the rule (which then finds its results ready), or None
Work = Callable[[], None]
Prepare = Callable[[Project, dict[str, Any]], Work | None]
MAX_FIRED = 1000  # an advance's answer lists this many rules that fired, and counts the rest
SLICE_SECONDS = 0.02  # an advance holds the service's lock this long at most at a time
LAST = datetime(9000, 1, 1, tzinfo=timezone.utc)  # time stops here: no test needs more
RETRY_POLL = 0.25  # a retry waiting on a frozen clock checks this often for a cancellation


class ProjectClock:
    """One project's clock, for Python callers (the plugin's ``idv_project.clock``,
    ``service.clocks.handle("default")`` in-process or under ``idv_mock.mock()``): the same
    operations as the control API's ``/clock`` calls. Written out rather than a frozen
    dataclass, whose six generated methods were compiled at import (a first use's cost)."""

    __slots__ = ("clocks", "project_id")

    def __init__(self, clocks: Clocks, project_id: str) -> None:
        self.clocks, self.project_id = clocks, project_id

    def __repr__(self) -> str:
        return f"ProjectClock(project_id={self.project_id!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ProjectClock):
            return NotImplemented
        return (self.clocks, self.project_id) == (other.clocks, other.project_id)

    def __hash__(self) -> int:
        return hash((id(self.clocks), self.project_id))

    @property
    def now(self) -> datetime:
        return parse_iso(self.clocks.describe(self.project_id)["now"])

    @property
    def mode(self) -> str:
        return str(self.clocks.describe(self.project_id)["mode"])

    @property
    def due(self) -> list[dict[str, Any]]:
        """What falls due, earliest first (``at``, ``what`` and its details)."""
        found: list[dict[str, Any]] = self.clocks.describe(self.project_id)["due"]
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
            return self.clocks.advance(
                self.project_id, {"to": iso(to) if isinstance(to, datetime) else to}
            )
        total = seconds + 60 * minutes + 3600 * hours + 86400 * days
        return self.clocks.advance(self.project_id, {"seconds": total})


class Clocks:
    """Every project's clock: reading and advancing it, running the rules that fall due."""

    def __init__(self, core: Core) -> None:
        self.core = core
        self.rules: dict[str, Rule] = {}  # what each kind of due item does (docs/time.md)
        self.idle: dict[str, Idle] = {}  # repeating rules' idle runs, coalesced
        self.prepare: dict[str, Prepare] = {}  # rules' costly parts, run outside the lock
        self.watching: threading.Event | None = None  # set to stop ``watch``

    def on(
        self, what: str, rule: Rule, idle: Idle | None = None, prepare: Prepare | None = None
    ) -> None:
        """Run ``rule`` for each item of kind ``what`` that falls due; ``idle`` tells when
        the next runs of a repeating rule would do nothing (then they are only counted);
        ``prepare`` gives the part of a run an advance does outside the lock."""
        self.rules[what] = rule
        if idle is not None:
            self.idle[what] = idle
        if prepare is not None:
            self.prepare[what] = prepare

    # --- public operations ---
    def handle(self, project_id: str) -> ProjectClock:
        """A handle on the project's clock (``.now``, ``.due``, ``.advance(hours=3)``)."""
        with self.core.lock:
            self.core.project(project_id)  # an unknown project is refused now, not at first use
        return ProjectClock(self, project_id)

    def describe(self, project_id: str) -> dict[str, Any]:
        """The project's now, mode, and what is due (after running what already fell due)."""
        with self.core.lock:
            project = self.core.project(project_id)
            self.catch_up(project)
            clock = project.clock
            return {
                "now": iso(clock.peek()),
                "mode": clock.mode,
                "due": project.schedule.describe(),
            }

    def advance(self, project_id: str, spec: dict[str, Any]) -> dict[str, Any]:
        """Move the project's clock forward by ``{"seconds": N}`` or to ``{"to": ISO}``;
        every rule due on the way runs at its instant. Answers the new now and what fired
        (the first ``MAX_FIRED``; ``fired_count`` counts them all).

        The catch-up runs in slices of at most ``SLICE_SECONDS`` under the lock, the
        project's clock moved to the last instant run at the end of each, so other
        projects' calls are answered between slices whatever the span. A rule's costly part
        (a search cycle re-screening every record) runs between slices, outside the lock;
        the rule itself then runs whole under it, so no call sees half of one."""
        with self.core.lock:
            project = self.core.project(project_id)
            start = project.clock.peek()
            target = _target(spec, start)
            self.core.changes += 1
        fired = Fired()
        ready: list[Due] = []  # the item whose costly part ran outside the lock
        while True:
            with self.core.lock:
                if self.core.projects.get(project_id) is not project:
                    break  # reset or deleted meanwhile: what is left is not this advance's
                deadline = time.monotonic() + SLICE_SECONDS
                step = self._run_until(project, target, fired, deadline, ready)
                if step is True:
                    project.clock.advance_to(max(target, project.clock.peek()))
                    break
            if step is False:
                time.sleep(0.0005)  # let a waiting thread take the lock
            else:
                step()  # the next rule's costly part, outside the lock
        with self.core.lock:
            answer = {
                "now": iso(project.clock.peek()),
                "mode": project.clock.mode,
                "fired": fired.listed,
                "fired_count": fired.count,
            }
        self.core.webhooks.wake()  # delayed deliveries of a frozen project now due go out
        return answer

    def run_due(self, project: Project) -> None:
        """Run what fell due on the project's clock while time passed on its own (the web
        layer asks before an API call when ``is_due`` says something is)."""
        with self.core.lock:
            self.catch_up(project)

    def catch_up(self, project: Project) -> list[dict[str, Any]]:
        """Run what fell due on the project's clock (under the lock): a touch of the project."""
        if not is_due(project):
            return []
        self.core.changes += 1
        fired = Fired()
        self._run_until(project, project.clock.peek(), fired)
        return fired.listed

    # --- running the rules ---
    def _run_until(
        self,
        project: Project,
        until: datetime,
        fired: Fired,
        deadline: float | None = None,
        ready: list[Due] | None = None,
    ) -> bool | Work:
        """Run what falls due up to ``until``; False when ``deadline`` (monotonic) came
        first, with the clock moved to the last instant run. Given ``ready`` (an advance),
        a rule with a costly part not yet done stops the run: its work is answered, for
        the caller to run outside the lock, and the item is left due, then noted in
        ``ready``."""
        ran: datetime | None = None
        while (due := project.schedule.pop_due(until)) is not None:
            if fired.full and self._coalesce(project, due, until, fired):
                continue
            if ready is not None and (work := self._prepare(project, due, ready)) is not None:
                project.schedule.put_back(due)
                if ran is not None:
                    project.clock.advance_to(max(ran, project.clock.peek()))
                return work
            ran = due.at
            with project.clock.pinned(due.at):
                try:
                    sent = self._run(project, due)
                except BackendError as exc:  # e.g. the link's projection was deleted since
                    fired.add({**due.describe(), "webhooks": [], "error": str(exc)})
                    continue
            fired.add({**due.describe(), "webhooks": sent})
            if deadline is not None and time.monotonic() > deadline:
                project.clock.advance_to(max(due.at, project.clock.peek()))
                return False
        return True

    def _prepare(self, project: Project, due: Due, ready: list[Due]) -> Work | None:
        """The costly part of ``due``'s rule, unless it ran already (once per item: the rule
        computes what changed meanwhile itself)."""
        prepare = self.prepare.get(due.what)
        if prepare is None or due.hook is not None or (ready and ready[0] is due):
            return None
        work = prepare(project, due.detail)
        ready[:] = [due] if work is not None else []
        return work

    def _coalesce(self, project: Project, due: Due, until: datetime, fired: Fired) -> bool:
        """Count, without running them, the idle runs of a repeating rule from ``due`` up to
        ``until``, and put its next run after them; False when its next run is not idle."""
        idle = self.idle.get(due.what)
        period = None if idle is None or due.hook is not None else idle(project, due.detail)
        if period is None or period <= timedelta(0):
            return False
        runs = (until - due.at) // period + 1
        fired.count += runs
        project.schedule.add(due.at + runs * period, due.what, due.detail)
        return True

    def _run(self, project: Project, due: Due) -> list[str]:
        if due.hook is not None:  # a webhook retry waiting on this clock
            due.hook()
            return []
        rule = self.rules.get(due.what)
        if rule is None:
            return []
        self.core.coverage_counts.note(project.project_id, f"time {due.what}")
        return rule(project, due.detail, due.at)

    # --- time passing on its own ---
    def watch(self, interval: float = 1.0) -> threading.Event:
        """Run what falls due on ``tick`` and ``wall`` clocks every ``interval`` seconds,
        without waiting for a touch (``idv-mock serve`` does: a webhook due in 3 minutes
        goes out then). Answers the event that stops the watcher (``stop_watching``, which
        ``Service.close`` calls, sets it)."""
        stop = threading.Event()

        def watch() -> None:
            while not stop.wait(interval):
                with self.core.lock:
                    for project in list(self.core.projects.values()):
                        if project.clock.mode != "frozen":
                            self.catch_up(project)

        threading.Thread(target=watch, daemon=True, name="idv-clock-watch").start()
        self.watching = stop
        return stop

    def stop_watching(self) -> None:
        if self.watching is not None:
            self.watching.set()

    # --- webhook delays and retries on a frozen clock ---
    def webhook_now(self, project_id: str) -> float:
        """A project's time in seconds for the dispatcher's delays (``delay_seconds``,
        ``auto_release``): its clock when ``frozen`` (the delay waits for an advance), else
        real (monotonic) time. Called under the dispatcher's lock, so it reads without the
        service's lock: one dict look-up and the clock's fields."""
        project = self.core.projects.get(project_id)
        if project is not None and project.clock.mode == "frozen":
            return project.clock.peek().timestamp()
        return time.monotonic()

    def webhook_stamp(self, project_id: str) -> str:
        """A delivery record's time (its ``created_at``, an attempt's ``at``) on the project's
        clock, as every other time of the project's data. Read without the service's lock,
        as ``webhook_now``: a ``tick`` clock is peeked, not moved, so a delivery shows the
        instant of the event it carries."""
        project = self.core.projects.get(project_id)
        if project is None:  # deleted meanwhile: the record's time is the server's
            return iso(self.core.clock.peek())
        return iso(project.clock.peek())

    def webhook_pause(self, delivery: Delivery, seconds: float) -> None:
        """The delivery thread's pause before a retry: real time, except on a ``frozen``
        project, where the retry falls due on the project's clock and waits for an advance
        (or for the delivery to be cancelled by a reset)."""
        go = threading.Event()
        with self.core.lock:
            project = self.core.projects.get(delivery.project_id)
            frozen = project is not None and project.clock.mode == "frozen"
            if project is not None and frozen:
                at = project.clock.peek() + timedelta(seconds=seconds)
                detail = {"delivery": delivery.id, "event": delivery.event}
                project.schedule.add(at, "webhook_retry", detail, hook=go.set)
        if not frozen:
            time.sleep(seconds)
            return
        # in flight the delivery is ``sending``; a reset or a deleted project cancels it, and
        # a project no longer frozen (its mode changed) retries now
        while not go.wait(RETRY_POLL) and delivery.status == "sending":
            if not self._frozen(delivery.project_id):
                return

    def _frozen(self, project_id: str) -> bool:
        """Read without the lock, as ``webhook_now``: one look-up and a field."""
        project = self.core.projects.get(project_id)
        return project is not None and project.clock.mode == "frozen"


class Fired:
    """What an advance ran: the first ``MAX_FIRED`` listed, all counted."""

    __slots__ = ("count", "listed")

    def __init__(self) -> None:
        self.listed: list[dict[str, Any]] = []
        self.count = 0

    @property
    def full(self) -> bool:
        return len(self.listed) >= MAX_FIRED

    def add(self, item: dict[str, Any]) -> None:
        self.count += 1
        if len(self.listed) < MAX_FIRED:
            self.listed.append(item)


def is_due(project: Project) -> bool:
    """Whether a rule of the project fell due (cheap: read without the lock)."""
    items = project.schedule.items
    return bool(items) and items[0].at <= project.clock.peek()


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
