"""What the web layer asks of the service around each call: the rate limit, fault rules,
the request journal and the project look-ups of the control API.

Kept apart from ``service.py`` so each stays small; :class:`~idv_mock.backend.Service`
inherits these methods. They are the only way the HTTP layer reaches per-project call
state, so every read and change of it happens under the service's lock, here.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from idv_mock.backend.faults import Call, FaultRule
from idv_mock.backend.journal import MAX_TOTAL_BYTES, Row
from idv_mock.backend.projects import Project

if TYPE_CHECKING:
    from idv_mock.webhooks import WebhookDispatcher

Entry = dict[str, Any]
# turns a raw journal entry into its readable form; given the entry's project (for its key)
JournalReader = Callable[[Project, Entry], Entry]


@dataclass(frozen=True, slots=True)
class FiredRule:
    """A fault rule that fired for one call: what to answer, and how long to wait first."""

    id: str
    spec: dict[str, Any]
    delay_ms: int


class CallOperations:
    """Mixin: per-call operations of ``Service`` (limits, faults, journal, look-ups)."""

    _lock: threading.RLock
    projects: dict[str, Project]
    webhooks: WebhookDispatcher
    journal_reader: JournalReader | None
    _journal_bytes: int  # a running total of every journal's bytes (recounted when over)

    if TYPE_CHECKING:  # provided by Service

        def project(self, project_id: str) -> Project: ...

    # --- rate limit ---
    def admit_call(self, project: Project) -> int | None:
        """None when the project's rate limit lets the call in, else the whole seconds until
        it would (``Retry-After``)."""
        if not project.options.get("rate_limit_per_second"):
            return None  # no limit: nothing to read or change, so no lock either
        with self._lock:
            return project.admit_call()

    # --- fault rules ---
    def fire_fault(
        self, project: Project, call: Call, usable: Callable[[FaultRule], bool]
    ) -> FiredRule | None:
        """The first matching rule that fires for ``call`` (its hit counted), with its delay."""
        if not project.faults.rules:
            return None
        with self._lock:
            rule = project.faults.fire(call, usable)
            if rule is None:
                return None
            return FiredRule(rule.id, rule.spec, project.faults.delay_ms(rule.spec))

    # --- request journal ---
    def record_call(self, project: Project, row: Row) -> None:
        """Keep one API call in its project's journal (oldest dropped past the size or the
        project's bytes); past ``MAX_TOTAL_BYTES`` for all journals, the largest journals
        lose their oldest calls first."""
        with self._lock:
            self._journal_bytes += project.journal.record(row)
            if self._journal_bytes > MAX_TOTAL_BYTES:
                self._trim_journals()

    def _trim_journals(self) -> None:
        """The running total recounted (projects come and go), then trimmed (under the lock)."""
        journals = [p.journal for p in self.projects.values()]
        total = sum(j.bytes for j in journals)
        while total > MAX_TOTAL_BYTES:
            largest = max(journals, key=lambda j: j.bytes)
            freed = largest.drop_oldest()
            if not freed:
                break
            total -= freed
        self._journal_bytes = total

    def journal(
        self, project_id: str, method: str | None = None, path: str | None = None
    ) -> list[Entry]:
        """The project's recorded calls by method and path glob, oldest first, readable."""
        with self._lock:
            project = self.project(project_id)
            found = project.journal.find(method, path)
        reader = self.journal_reader
        return [reader(project, e) for e in found] if reader else found

    def clear_journal(self, project_id: str) -> int:
        with self._lock:
            return self.project(project_id).journal.clear()

    # --- look-ups for the control API ---
    def describe_projects(self) -> list[dict[str, Any]]:
        with self._lock:
            return [p.describe() for p in self.projects.values()]

    def project_ids(self) -> list[str]:
        with self._lock:
            return list(self.projects)

    def submission_counts(self) -> dict[str, int]:
        with self._lock:
            return {pid: len(p.store) for pid, p in self.projects.items()}

    def deliveries(self, project_id: str, newest: int | None = None) -> list[dict[str, Any]]:
        """The project's webhook deliveries, each with its attempts."""
        self.project(project_id)  # an unknown project is refused, not an empty list
        return self.webhooks.deliveries(project_id, newest)

    def projections(self, project: Project) -> list[dict[str, Any]]:
        """The project's projection policies, as GET /projection lists them."""
        with self._lock:
            return [p.describe() for p in project.projections.policies.values()]
