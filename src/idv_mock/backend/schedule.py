"""What a project's vendor does later: a queue of rules due at an instant.

A rule that will fall due (a token's expiry, an unfinished form's timeout, a worklist's
search cycle, a webhook retry waiting on a frozen clock) is put here with its instant; the
service runs those due when the project's clock passes them (an advance, or time moving on
its own), in time order, each once. ``transient`` items (a retry waiting in a delivery
thread) live only as long as the process and are left out of the state document.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from datetime import datetime
from typing import Any

from idv_mock.ground.clock import iso, parse_iso

# Written out, not dataclasses: a dataclass's generated methods are compiled when its
# module is imported (on every first use: each project holds a schedule).


class Due:
    """An item of a schedule, ordered (and equal) by when it falls due, then by when it
    was added."""

    __slots__ = ("at", "detail", "hook", "seq", "transient", "what")
    __hash__ = None  # type: ignore[assignment]  # equal by value, and changed: unhashable

    def __init__(
        self,
        at: datetime,
        seq: int,
        what: str,
        detail: dict[str, Any] | None = None,
        transient: bool = False,
        hook: Callable[[], None] | None = None,
    ) -> None:
        self.at, self.seq, self.what = at, seq, what
        self.detail: dict[str, Any] = {} if detail is None else detail
        self.transient, self.hook = transient, hook

    def __repr__(self) -> str:
        return f"Due(at={self.at!r}, seq={self.seq!r}, what={self.what!r}, detail={self.detail!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Due):
            return NotImplemented
        return (self.at, self.seq) == (other.at, other.seq)

    def __lt__(self, other: Due) -> bool:
        return (self.at, self.seq) < (other.at, other.seq)

    def __le__(self, other: Due) -> bool:
        return (self.at, self.seq) <= (other.at, other.seq)

    def __gt__(self, other: Due) -> bool:
        return (self.at, self.seq) > (other.at, other.seq)

    def __ge__(self, other: Due) -> bool:
        return (self.at, self.seq) >= (other.at, other.seq)

    def describe(self) -> dict[str, Any]:
        return {"at": iso(self.at), "what": self.what, **self.detail}


class Schedule:
    __slots__ = ("items", "seq")

    def __init__(self) -> None:
        self.items: list[Due] = []  # a heap
        self.seq = 0

    def add(
        self,
        at: datetime,
        what: str,
        detail: dict[str, Any] | None = None,
        *,
        hook: Callable[[], None] | None = None,
    ) -> Due:
        self.seq += 1
        due = Due(at, self.seq, what, dict(detail or {}), transient=hook is not None, hook=hook)
        heapq.heappush(self.items, due)
        return due

    def pop_due(self, until: datetime) -> Due | None:
        """The earliest item due at or before ``until`` (taken off), else None."""
        if self.items and self.items[0].at <= until:
            return heapq.heappop(self.items)
        return None

    def put_back(self, due: Due) -> None:
        """An item taken off by ``pop_due`` and not run, due again as it was."""
        heapq.heappush(self.items, due)

    def remove(self, what: str, **match: Any) -> int:
        """Drop the items of ``what`` whose detail has these values; how many went."""
        kept = [d for d in self.items if not _matches(d, what, match)]
        removed = len(self.items) - len(kept)
        if removed:
            heapq.heapify(kept)
            self.items = kept
        return removed

    def has(self, what: str, **match: Any) -> bool:
        return any(_matches(d, what, match) for d in self.items)

    def describe(self) -> list[dict[str, Any]]:
        return [d.describe() for d in sorted(self.items)]

    def export(self) -> list[dict[str, Any]]:
        return [d.describe() for d in sorted(self.items) if not d.transient]

    def copy(self) -> Schedule:
        """The lasting items, independent of this schedule (a snapshot, a reset)."""
        return Schedule.restore(self.export())

    @classmethod
    def restore(cls, docs: list[dict[str, Any]]) -> Schedule:
        schedule = cls()
        for doc in docs:
            detail = {k: v for k, v in doc.items() if k not in ("at", "what")}
            schedule.add(parse_iso(doc["at"]), doc["what"], detail)
        return schedule


def _matches(due: Due, what: str, match: dict[str, Any]) -> bool:
    return due.what == what and all(due.detail.get(k) == v for k, v in match.items())
