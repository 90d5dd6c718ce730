"""What the web layer asks of the service around each call: the rate limit, fault rules
(added, listed and removed here too) and the request journal.

``service.calls``, a part of :class:`~idv_mock.backend.Service` given the service's
``Core``. It is the only way the HTTP layer reaches per-project call state, so every read
and change of it happens under the service's lock, here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from idv_mock.backend.core import Core
from idv_mock.backend.exceptions import InvalidInput, NotFound
from idv_mock.backend.faults import Call, FaultRule
from idv_mock.backend.journal import MAX_TOTAL_BYTES, Row
from idv_mock.backend.projects import Project
from idv_mock.ground import schemas

Entry = dict[str, Any]
# turns a raw journal entry into its readable form; given the entry's project (for its key)
JournalReader = Callable[[Project, Entry], Entry]


class FiredRule:
    """A fault rule that fired for one call: what to answer, and how long to wait first
    (a plain class: a dataclass's methods are compiled at import, a first use's cost)."""

    __slots__ = ("delay_ms", "id", "spec")

    def __init__(self, id: str, spec: dict[str, Any], delay_ms: int) -> None:
        self.id, self.spec, self.delay_ms = id, spec, delay_ms


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

    def add_fault(
        self, project_id: str, spec: dict[str, Any], *, fallback: bool = False
    ) -> dict[str, Any]:
        """Add a fault rule to a project; answers the rule with its ``id``. ``fallback``: a
        resilience profile's rule, which every other rule of the project goes before."""
        outcomes = [k for k in ("respond", "error", "fault") if k in spec]
        if len(outcomes) > 1:  # said plainly, not as the schema's three "not required" clauses
            problems = schemas.errors("fault_rule.json", spec, ignore=("not",))
            given = " and ".join(outcomes)
            problems.insert(0, f"a rule takes one of respond, error, fault, not {given}")
        else:
            problems = schemas.errors("fault_rule.json", spec) or _sendable(spec.get("respond"))
        if problems or "id" in spec or "hits" in spec:
            raise InvalidInput("invalid fault rule", problems or ["id and hits are read-only"])
        with self.core.lock:
            return self.core.project(project_id).faults.add(spec, fallback).describe()

    def faults(self, project_id: str) -> list[dict[str, Any]]:
        with self.core.lock:
            return [r.describe() for r in self.core.project(project_id).faults.rules]

    def remove_faults(self, project_id: str, fault_id: str | None = None) -> int:
        with self.core.lock:
            removed = self.core.project(project_id).faults.remove(fault_id)
            if fault_id is not None and not removed:
                raise NotFound(f"fault {fault_id} not found")
            return removed

    # --- request journal ---
    def record(self, project: Project, row: Row) -> None:
        """Keep one API call in its project's journal (oldest dropped past the size or the
        project's bytes); past ``MAX_TOTAL_BYTES`` for all journals, the largest journals
        lose their oldest calls first."""
        with self.core.lock:
            self.journal_bytes += project.journal.record(row)
            coverage = self.core.coverage_counts
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


def _sendable(respond: Any) -> list[str]:
    """Why a ``respond`` part could not go on the wire as given (empty when it can)."""
    if not isinstance(respond, dict):
        return []
    framing = {"content-length", "transfer-encoding", "connection"}
    found = [f"respond.headers: {h} is set by the server" for h in respond.get("headers", {})
             if h.lower() in framing]  # fmt: skip
    if respond.get("status") in (204, 304) and respond.get("body") is not None:
        found.append(f"respond: status {respond['status']} has no body")
    return found
