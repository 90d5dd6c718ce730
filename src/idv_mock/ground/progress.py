"""Progress of long work (seeding, loading and saving a state file) on one terminal line.

``idv-mock serve --seed-count 100000`` seeds for seconds before it answers; without a
line that moves, a user sees a silent terminal and cannot tell a slow start from a hung
one. Shown only on a terminal (a pipe or a log file gets nothing: no carriage returns in
CI logs) and not with ``--quiet``. Standard library only; a task's ``add`` is called once
per submission, so it looks at the clock only every few hundred calls.
"""

from __future__ import annotations

import time
from typing import TextIO

EVERY = 256  # calls between two looks at the clock
REDRAW_S = 0.1  # at most ten redraws a second


class Task:
    """One piece of work of a known size; ``add`` as it goes, ``end`` when done."""

    def __init__(self, out: TextIO | None, label: str, total: int, unit: str, scale: int) -> None:
        self.out, self.label, self.total, self.unit, self.scale = out, label, total, unit, scale
        self.done = 0
        self._every = EVERY if scale == 1 else 1  # counted in bytes: each add is a big step
        self._countdown = self._every
        self._started = self._drawn = time.monotonic()

    def add(self, n: int = 1) -> None:
        self.done += n
        self._countdown -= 1
        if self._countdown > 0 or self.out is None:
            return
        self._countdown = self._every
        now = time.monotonic()
        if now - self._drawn >= REDRAW_S:
            self._drawn = now
            self._draw(now, final=False)

    def end(self) -> None:
        if self.out is not None:
            self._draw(time.monotonic(), final=True)

    def line(self, now: float, final: bool) -> str:
        """``seeding: 40,000/100,000 submissions (9,800/s, 6 s left)``; at the end the
        time it took."""
        spent = max(now - self._started, 1e-9)
        rate = self.done / spent
        done, total = self.done // self.scale, self.total // self.scale
        head = f"{self.label}: {done:,}/{total:,} {self.unit}"
        if final:
            return f"{head} in {spent:.1f} s"
        left = (self.total - self.done) / rate if rate > 0 else 0.0
        return f"{head} ({rate / self.scale:,.0f}/s, {left:.0f} s left)"

    def _draw(self, now: float, final: bool) -> None:
        assert self.out is not None
        self.out.write(f"\r\x1b[2K{self.line(now, final)}" + ("\n" if final else ""))
        self.out.flush()


class Progress:
    """Where tasks are shown: ``Progress.on_terminal(stream)``, or ``Progress(None)`` to
    count without showing (what a service made in-process gets by default)."""

    def __init__(self, out: TextIO | None) -> None:
        self.out = out

    @classmethod
    def on_terminal(cls, out: TextIO, quiet: bool = False) -> Progress:
        """Shown on ``out`` if it is a terminal and not ``quiet``, else silent."""
        try:
            shown = not quiet and out.isatty()
        except (AttributeError, ValueError):  # closed or not a real stream
            shown = False
        return cls(out if shown else None)

    def task(self, label: str, total: int, unit: str, scale: int = 1) -> Task:
        return Task(self.out, label, total, unit, scale)


SILENT = Progress(None)
