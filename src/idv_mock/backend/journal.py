"""The request journal of a project: every API call, for tests that verify what was sent.

Bounded (oldest dropped) so a long demo or load test cannot grow it without end: by
calls (``--journal-size``, 10,000 a project) and by bytes (``MAX_PROJECT_BYTES`` a
project, ``MAX_TOTAL_BYTES`` for all projects together, counted on the kept bodies,
responses and queries, plus ``ROW_OVERHEAD`` a row), since 10,000 calls of 60 KB bodies
held 560 MB (issue 27). Bodies and responses over ``journaling.KEEP_BYTES`` are kept cut
and marked (the row's ``truncated``) by the web layer before they get here.

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
MAX_PROJECT_BYTES = 64 * 1024 * 1024
MAX_TOTAL_BYTES = 256 * 1024 * 1024
ROW_OVERHEAD = 512  # the tuple, its numbers, strings and deque slot (headers are shared)

# a row's fields, in order; "response" is the answer's bytes, "duration" in microseconds,
# "hint" None for most calls. The web layer (serving/journaling.py) writes and reads them.
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
    "truncated",
)
Row = tuple[Any, ...]
_METHOD, _PATH = FIELDS.index("method"), FIELDS.index("path")
_QUERY, _BODY, _RESPONSE = FIELDS.index("query"), FIELDS.index("body"), FIELDS.index("response")


def row_bytes(row: Row) -> int:
    """What a row holds, about: its bodies and query, and the fixed part."""
    return len(row[_BODY]) + len(row[_RESPONSE]) + len(row[_QUERY]) + ROW_OVERHEAD


class Journal:
    __slots__ = ("bytes", "counter", "entries", "max_bytes")

    def __init__(self, size: int = DEFAULT_SIZE, max_bytes: int = MAX_PROJECT_BYTES) -> None:
        self.entries: deque[Row] = deque(maxlen=size)
        self.counter = 0  # rows ever recorded: the id of the newest
        self.bytes = 0  # row_bytes of the rows kept
        self.max_bytes = max_bytes

    @property
    def size(self) -> int:
        return self.entries.maxlen or 0

    @size.setter
    def size(self, size: int) -> None:
        self.entries = deque(self.entries, maxlen=size)  # the newest ``size`` rows kept
        self.bytes = sum(map(row_bytes, self.entries))

    def record(self, row: Row) -> int:
        """Keep ``row`` (the oldest rows dropped past the size or the bytes); the change in
        bytes kept."""
        # row_bytes written out (twice): every API call runs this, and a function call is
        # a good part of its cost
        self.counter += 1
        entries = self.entries
        change = len(row[_BODY]) + len(row[_RESPONSE]) + len(row[_QUERY])
        if len(entries) == entries.maxlen and entries:  # the oldest is dropped by the append
            dropped = entries[0]
            change -= len(dropped[_BODY]) + len(dropped[_RESPONSE]) + len(dropped[_QUERY])
        else:
            change += ROW_OVERHEAD
        entries.append(row)
        kept = self.bytes = self.bytes + change
        if kept > self.max_bytes:
            while self.bytes > self.max_bytes and len(entries) > 1:
                self.bytes -= row_bytes(entries.popleft())
            return self.bytes - (kept - change)
        return change

    def drop_oldest(self) -> int:
        """Drop the oldest row (for the bound on all journals); the bytes freed."""
        if not self.entries:
            return 0
        freed = row_bytes(self.entries.popleft())
        self.bytes -= freed
        return freed

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
        self.bytes = 0
        return removed
