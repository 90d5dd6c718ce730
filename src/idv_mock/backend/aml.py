"""AML screening results and report records of a project (api-v3.md 2.7, 4.5, 4.6).

Screening matches a submission against the built-in fictional watchlist plus the project's
own entries. A ``Red Flag`` result gets one ``resourceId`` per match, each naming a report;
reports stay downloadable until the submission is deleted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # matching (rapidfuzz's tables, the built-in list) loads with a screening
    from idv_mock.aml.screening import Entry, Match, Subject

RED_FLAG = "Red Flag"
# no match at or above the threshold: the vendor's "No Matches (Not Screened)" (FAQ), the
# value its samples show; ID check sends nothing but these two
NO_MATCH = "Not Screened"
DEFAULT_MONITORING_THRESHOLD = 80


@dataclass(slots=True)
class AmlState:
    entries: list[Entry] = field(default_factory=list)  # the project's own watchlist entries
    reports: dict[str, dict[str, Any]] = field(default_factory=dict)  # resourceId -> report info

    def watchlist(self) -> tuple[Entry, ...]:
        from idv_mock.aml.screening import builtin_watchlist

        return (*builtin_watchlist(), *self.entries)

    def entry(self, entry_id: str) -> Entry | None:
        return next((e for e in self.watchlist() if e.entry_id == entry_id), None)

    def forget(self, sid: str) -> None:
        """Drop the reports of a deleted submission (its AML data is deleted, 4.3)."""
        self.reports = {k: v for k, v in self.reports.items() if v["submission_id"] != sid}

    def export(self) -> dict[str, Any]:
        return {"entries": [e.to_json() for e in self.entries], "reports": dict(self.reports)}

    @classmethod
    def restore(cls, doc: dict[str, Any]) -> AmlState:
        if not doc.get("entries"):
            return cls([], dict(doc.get("reports", {})))
        from idv_mock.aml.screening import Entry

        entries = [Entry.from_json(e) for e in doc["entries"]]
        return cls(entries, dict(doc.get("reports", {})))


def match_json(resource_id: str, match: Match) -> dict[str, Any]:
    """A match as ``aml.matches[]`` shows it."""
    entry = match.entry
    return {
        "resourceId": resource_id,
        "entryId": entry.entry_id,
        "list": entry.list,
        "name": entry.name,
        "matchedName": match.matched_name,
        "score": match.score,
        "nameScore": round(match.name_score, 1),
        "birthDate": entry.birth_date,
        "nationality": entry.nationality,
        "details": entry.details,
    }


def raw_data(subject: Subject, threshold: int, when: str, matches: list[Match]) -> dict[str, Any]:
    return {
        "threshold": threshold,
        "searchedName": subject.name,
        "birthDate": subject.birth_date,
        "nationality": subject.nationality,
        "screenedAt": when,
        "matchCount": len(matches),
        "lists": sorted({m.entry.list for m in matches}),
    }


def report_info(
    resource_id: str,
    sub: dict[str, Any],
    raw: dict[str, Any],
    match: Match,
    others: list[dict[str, Any]],
) -> dict[str, Any]:
    """What a report prints (``idv_mock.aml.report.render_aml_report``)."""
    data = sub.get("data") or {}
    entry = match.entry
    return {
        "resource_id": resource_id,
        "submission_id": sub["submission_id"],
        "subject_name": data.get("full_name", ""),
        "subject_name_en": data.get("full_name_en", ""),
        "birth_date": data.get("date_of_birth", ""),
        "nationality": data.get("nationality", ""),
        "screened_at": raw["screenedAt"],
        "threshold": raw["threshold"],
        "result": RED_FLAG,
        "match": {
            **entry.to_json(),
            "score": match.score,
            "name_score": round(match.name_score, 1),
            "matched_name": match.matched_name,
        },
        "other_matches": others,
    }
