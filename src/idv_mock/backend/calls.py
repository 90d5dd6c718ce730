"""What the web layer asks of the service around each call: the rate limit, fault rules
and the request journal.

``service.calls``, a part of :class:`~idv_mock.backend.Service` given the service's
``Core``. It is the only way the HTTP layer reaches per-project call state, so every read
and change of it happens under the service's lock, here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from idv_mock.backend.core import Core
from idv_mock.backend.faults import Call, FaultRule
from idv_mock.backend.journal import MAX_TOTAL_BYTES, Row
from idv_mock.backend.projects import Project

Entry = dict[str, Any]
# turns a raw journal entry into its readable form; given the entry's project (for its key)
JournalReader = Callable[[Project, Entry], Entry]


@dataclass(frozen=True, slots=True)
class FiredRule:
    """A fault rule that fired for one call: what to answer, and how long to wait first."""

    id: str
    spec: dict[str, Any]
    delay_ms: int


class Calls:
    """Per-call state of every project: rate limits, fault rules, request journals."""

    def __init__(self, core: Core) -> None:
        self.core = core
        self.reader: JournalReader | None = None  # set by the web layer that records
        self.journal_bytes = 0  # a running total of every journal's bytes (recounted when over)

    # --- rate limit ---
    def admit(self, project: Project) -> int | None:
        """None when the project's rate limit lets the call in, else the whole seconds until
        it would (``Retry-After``)."""
        if not project.options.get("rate_limit_per_second"):
            return None  # no limit: nothing to read or change, so no lock either
        with self.core.lock:
            return project.admit_call()

    # --- fault rules ---
    def fire_fault(
        self, project: Project, call: Call, usable: Callable[[FaultRule], bool]
    ) -> FiredRule | None:
        """The first matching rule that fires for ``call`` (its hit counted), with its delay."""
        if not project.faults.rules:
            return None
        with self.core.lock:
            rule = project.faults.fire(call, usable)
            if rule is None:
                return None
            return FiredRule(rule.id, rule.spec, project.faults.delay_ms(rule.spec))

    # --- request journal ---
    def record(self, project: Project, row: Row) -> None:
        """Keep one API call in its project's journal (oldest dropped past the size or the
        project's bytes); past ``MAX_TOTAL_BYTES`` for all journals, the largest journals
        lose their oldest calls first."""
        with self.core.lock:
            self.journal_bytes += project.journal.record(row)
            coverage = self.core.coverage
            if coverage.recording:
                coverage.response(project.project_id, row[1], row[2], row[6], row[7])
            if self.journal_bytes > MAX_TOTAL_BYTES:
                self._trim_journals()

    def _trim_journals(self) -> None:
        """The running total recounted (projects come and go), then trimmed (under the lock)."""
        journals = [p.journal for p in self.core.projects.values()]
        total = sum(j.bytes for j in journals)
        while total > MAX_TOTAL_BYTES:
            largest = max(journals, key=lambda j: j.bytes)
            freed = largest.drop_oldest()
            if not freed:
                break
            total -= freed
        self.journal_bytes = total

    def journal(
        self, project_id: str, method: str | None = None, path: str | None = None
    ) -> list[Entry]:
        """The project's recorded calls by method and path glob, oldest first, readable."""
        with self.core.lock:
            project = self.core.project(project_id)
            found = project.journal.find(method, path)
        reader = self.reader
        return [reader(project, e) for e in found] if reader else found

    def clear_journal(self, project_id: str) -> int:
        with self.core.lock:
            return self.core.project(project_id).journal.clear()
