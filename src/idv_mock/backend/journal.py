"""The request journal of a project: every API call, for tests that verify what was sent.

Bounded (oldest dropped) so a long demo or load test cannot grow it without end.
"""

from __future__ import annotations

import fnmatch
from collections import deque
from dataclasses import dataclass, field
from typing import Any

DEFAULT_SIZE = 10_000


@dataclass(slots=True)
class Journal:
    size: int = DEFAULT_SIZE
    entries: deque[dict[str, Any]] = field(default_factory=deque)
    counter: int = 0

    def record(self, entry: dict[str, Any]) -> None:
        self.counter += 1
        self.entries.append({"id": self.counter, **entry})
        while len(self.entries) > self.size:
            self.entries.popleft()

    def find(self, method: str | None = None, path: str | None = None) -> list[dict[str, Any]]:
        """Calls by method (any case) and path glob, oldest first, as recorded (raw: the web
        layer, which recorded them, makes them readable)."""
        return [
            e
            for e in self.entries
            if (method is None or e["method"] == method.upper())
            and (path is None or fnmatch.fnmatchcase(e["path"], path))
        ]

    def clear(self) -> int:
        removed = len(self.entries)
        self.entries.clear()
        return removed
