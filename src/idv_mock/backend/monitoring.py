"""Ongoing AML monitoring: worklists and their records (api-v3.md 2.5, 4.7; gaps.md).

Worklists are made and (de)activated through the control API (the spec does not show
how); a record belongs to exactly one worklist, and only an active worklist takes new ones.
The seeded default project starts with one active worklist, ``DEFAULT_WORKLIST``, so the
monitoring calls work (and the OpenAPI document's example id resolves) with no set-up.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from idv_mock.backend.exceptions import Conflict, Inactive, NotFound

DEFAULT_WORKLIST = "default-worklist"
DEFAULT_WORKLIST_NAME = "Default worklist"


class UnknownWorklist(NotFound):
    """No worklist of that id in the project."""


@dataclass(slots=True)
class Worklist:
    id: str
    name: str
    active: bool
    created_at: str
    records: dict[str, dict[str, Any]] = field(default_factory=dict)  # record id -> record
    # what the search cycle compares: the (watchlist, threshold) last screened against, each
    # record's matched entry ids (only new ones alert) and when it was registered
    screened_key: list[Any] | None = None
    seen: dict[str, list[str]] = field(default_factory=dict)
    registered: dict[str, str] = field(default_factory=dict)
    # not saved: each submission as the last matching outside the lock read it, its stored
    # JSON (the bytes object, compared by identity) and its subject, so that an unchanged
    # submission is not decoded again (``parts.screening.Prepared``)
    subjects: dict[str, tuple[bytes, Any]] = field(default_factory=dict, repr=False)

    def describe(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "active": self.active,
            "created_at": self.created_at,
            "record_count": len(self.records),
        }

    def record_for(self, sid: str) -> dict[str, Any] | None:
        return next((r for r in self.records.values() if r["submissionId"] == sid), None)


@dataclass(slots=True)
class Monitoring:
    worklists: dict[str, Worklist] = field(default_factory=dict)

    def add(self, worklist: Worklist) -> Worklist:
        if worklist.id in self.worklists:
            raise Conflict(f"worklist {worklist.id} already exists")
        self.worklists[worklist.id] = worklist
        return worklist

    def get(self, wid: str) -> Worklist:
        found = self.worklists.get(wid)
        if found is None:
            raise UnknownWorklist(f"worklist {wid} not found")
        return found

    def accepting(self, wid: str) -> Worklist:
        worklist = self.get(wid)
        if not worklist.active:
            raise Inactive(wid)
        return worklist

    def export(self) -> list[dict[str, Any]]:
        return [
            {**w.describe(), "records": list(w.records.values()), "screening": _screening(w)}
            for w in self.worklists.values()
        ]

    @classmethod
    def restore(cls, docs: list[dict[str, Any]]) -> Monitoring:
        monitoring = cls()
        for doc in docs:
            records = {r["id"]: r for r in doc.get("records", [])}
            worklist = Worklist(doc["id"], doc["name"], doc["active"], doc["created_at"], records)
            screening = doc.get("screening") or {}
            worklist.screened_key = screening.get("key")
            worklist.seen = {k: list(v) for k, v in screening.get("seen", {}).items()}
            worklist.registered = dict(screening.get("registered", {}))
            monitoring.add(worklist)
        return monitoring


def _screening(worklist: Worklist) -> dict[str, Any]:
    return {
        "key": worklist.screened_key,
        "seen": {k: list(v) for k, v in worklist.seen.items()},
        "registered": dict(worklist.registered),
    }
