"""The request journal of a project: every API call, for tests that verify what was sent.

Bounded (oldest dropped) so a long demo or load test cannot grow it without end.

A call is kept as one flat tuple (a :data:`Row`, fields in :data:`FIELDS` order) in a
``deque`` with a ``maxlen``: recording is an append, the oldest row is dropped in C, and
nothing is copied. Every call of a load test pays for this, and reading the journal is
rare, so rows become dicts (with their ``id``) only when someone reads them. Ids need not
be stored: the rows are consecutive, so a row's id follows from its place and ``counter``.
"""

from __future__ import annotations

import fnmatch
from collections import deque
from typing import Any

DEFAULT_SIZE = 10_000

# a row's fields, in order; "response" is the answer's bytes, "duration" in microseconds,
# "hint" None for most calls. The web layer (api/journaling.py) writes and reads them.
FIELDS = (
    "time",
    "method",
    "path",
    "query",
    "headers",
    "body",
    "status",
    "response",
    "media_type",
    "duration",
    "hint",
)
Row = tuple[Any, ...]
_METHOD, _PATH = FIELDS.index("method"), FIELDS.index("path")


class Journal:
    __slots__ = ("counter", "entries")

    def __init__(self, size: int = DEFAULT_SIZE) -> None:
        self.entries: deque[Row] = deque(maxlen=size)
        self.counter = 0  # rows ever recorded: the id of the newest

    @property
    def size(self) -> int:
        return self.entries.maxlen or 0

    @size.setter
    def size(self, size: int) -> None:
        self.entries = deque(self.entries, maxlen=size)  # the newest ``size`` rows kept

    def record(self, row: Row) -> None:
        self.counter += 1
        self.entries.append(row)

    def find(self, method: str | None = None, path: str | None = None) -> list[dict[str, Any]]:
        """Calls by method (any case) and path glob, oldest first, each a dict of
        :data:`FIELDS` and its ``id`` (raw: the web layer, which recorded them, makes them
        readable)."""
        wanted = None if method is None else method.upper()
        first = self.counter - len(self.entries) + 1
        return [
            {"id": first + index, **dict(zip(FIELDS, row, strict=True))}
            for index, row in enumerate(self.entries)
            if (wanted is None or row[_METHOD] == wanted)
            and (path is None or fnmatch.fnmatchcase(row[_PATH], path))
        ]

    def clear(self) -> int:
        removed = len(self.entries)
        self.entries.clear()
        return removed
