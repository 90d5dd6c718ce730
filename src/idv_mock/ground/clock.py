"""The mock's clocks: one per project, and the server's own.

Every timestamp the mock writes comes from a clock, so the same ``--random-seed`` gives
byte-identical responses. Modes: ``tick`` (the default) starts at a fixed instant and moves
forward by a fixed step each time it is read; ``wall`` follows real time (plus whatever a
test advanced it by); ``frozen`` stands still until advanced. Every mode can be advanced,
and only forward: a test moves a project's time to make what the vendor does later happen
now (``backend/schedule.py``).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

from idv_mock.ground import schemas
from idv_mock.ground.by_value import ByValue

DEFAULT_START = datetime(2026, 1, 1, 9, 0, 0, tzinfo=timezone.utc)
MODES = schemas.enum("clock_mode")


def _real() -> datetime:
    return datetime.fromtimestamp(time.time(), tz=timezone.utc)


class Clock(ByValue):
    """Not a dataclass, whose generated methods were compiled at import (on every first
    use); equal and shown by value (``ByValue``), as before; changed, so unhashable."""

    __slots__ = ("current", "mode", "moved", "offset", "pin", "step_ms")
    FIELDS = ("mode", "current", "step_ms", "offset", "pin", "moved")

    def __init__(
        self,
        mode: str = "tick",
        current: datetime = DEFAULT_START,
        step_ms: int = 1000,
        offset: timedelta = timedelta(0),  # wall mode: how far advances moved it past real time
        pin: datetime | None = None,  # while a due rule runs: every reading is its instant
        moved: bool = False,  # a test advanced it: times a client computed are judged on it
    ) -> None:
        self.mode, self.current, self.step_ms = mode, current, step_ms
        self.offset, self.pin, self.moved = offset, pin, moved

    __hash__ = None  # type: ignore[assignment]  # equal by value, and changed: unhashable

    def now(self) -> datetime:
        if self.pin is not None:
            return self.pin
        if self.mode == "wall":
            return _real() + self.offset
        if self.mode == "tick":
            self.current += timedelta(milliseconds=self.step_ms)
        return self.current

    def peek(self) -> datetime:
        """The current time without advancing a ticking clock."""
        if self.pin is not None:
            return self.pin
        if self.mode == "wall":
            return _real() + self.offset
        return self.current

    def advance_to(self, moment: datetime) -> None:
        """Move forward to ``moment`` (the caller checked it is not in the past)."""
        self.moved = True
        if self.mode == "wall":
            self.offset += moment - self.peek()
        else:
            self.current = moment

    def set_mode(self, mode: str) -> None:
        """Change mode without time going back: a wall clock switched to ``frozen`` stays
        where it was; a clock ahead of real time switched to ``wall`` keeps its lead."""
        if mode == self.mode:
            return
        here = self.peek()
        self.mode = mode
        if mode == "wall":
            self.offset = max(timedelta(0), here - _real())
        else:
            self.current = here

    @contextlib.contextmanager
    def pinned(self, moment: datetime) -> Iterator[None]:
        """Every reading inside is ``moment``: a rule due at T stamps T, not T plus ticks."""
        before = self.pin
        self.pin = moment
        try:
            yield
        finally:
            self.pin = before

    def copy(self, mode: str | None = None) -> Clock:
        fresh = Clock(self.mode, self.peek(), self.step_ms, self.offset, moved=self.moved)
        if mode is not None:
            fresh.set_mode(mode)
        return fresh

    def export(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"mode": self.mode, "now": iso(self.peek()), "step_ms": self.step_ms}
        if self.offset:
            doc["offset_ms"] = int(self.offset / timedelta(milliseconds=1))
        if self.moved:
            doc["moved"] = True
        return doc

    @classmethod
    def restore(cls, state: dict[str, Any]) -> Clock:
        offset = timedelta(milliseconds=int(state.get("offset_ms", 0)))
        mode = state["mode"]
        clock = cls(mode, parse_iso(state["now"]), int(state.get("step_ms", 1000)), offset)
        clock.moved = bool(state.get("moved", False))
        if mode == "wall" and clock.peek() < clock.current:  # never behind what was saved
            clock.offset += clock.current - clock.peek()
        return clock


def client_time(clock: Clock) -> datetime:
    """What a time a client computed from its own clock (``startValidUntil``) is judged
    against: real time, as the vendor judges it, while the project's clock keeps the
    default ticking from its start; the project's clock once a test froze it (mode
    ``frozen``) or moved it (an advance); ``wall``: real time plus what it was moved by."""
    if clock.mode == "tick" and not clock.moved and clock.pin is None:
        return _real()
    return clock.peek()


_STAMP_SEPARATORS = str.maketrans("T:.", "---")


def stamp(moment: datetime) -> str:
    """The service's timestamp form, YYYY-MM-DD-HH-MM-SS-ZZZ (ZZZ: milliseconds)."""
    # isoformat is C: several times cheaper than strftime, and a submission has dozens
    return moment.isoformat(timespec="milliseconds")[:23].translate(_STAMP_SEPARATORS)


def iso(moment: datetime) -> str:
    """ISO 8601 with milliseconds and a trailing Z."""
    return moment.isoformat(timespec="milliseconds")[:23] + "Z"


def parse_iso(text: str) -> datetime:
    """The instant of an ``iso`` string. Its own form is read by ``fromisoformat`` (C):
    ``strptime``'s first call imports ``_strptime`` and compiles its patterns, a good part
    of a restored start's cost on a cold machine; anything else goes to ``strptime``,
    which accepts (and refuses) what it always did."""
    if len(text) == 24 and text[19] == "." and text[23] == "Z" and text.isascii():
        try:
            found = datetime.fromisoformat(text[:23])
        except ValueError:
            found = None
        if found is not None and iso(found) == text:
            return found.replace(tzinfo=timezone.utc)
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)


def parse_instant(text: str) -> datetime | None:
    """Any ISO 8601 instant (``Z``, an offset, or none: UTC); None when it is not one."""
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    if moment.year < 1970:  # far outside any test's reach
        return None
    try:
        return moment.astimezone(timezone.utc)
    except OverflowError:  # 9999-12-31T23:00:00-14:00 is past what a datetime holds
        return None
