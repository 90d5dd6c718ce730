"""AML screening, reports, watchlists and ongoing monitoring.

``service.screening``, a part of :class:`~idv_mock.backend.Service` given the service's
``Core`` and its way of creating a submission (for a watchlist person); callers use its
names directly (``service.screening.watchlist``, ``.create_worklist``, ...), and the
service registers ``monitoring_cycle`` with its clocks.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Container
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from functools import partial
from typing import TYPE_CHECKING, Any

import orjson

from idv_mock.backend import aml, events
from idv_mock.backend.aml import DEFAULT_MONITORING_THRESHOLD, NO_MATCH, RED_FLAG
from idv_mock.backend.core import Core
from idv_mock.backend.exceptions import (
    AdminNotRegistered,
    Conflict,
    Inactive,
    InvalidCountry,
    InvalidInput,
    NotFound,
    NoThreshold,
)
from idv_mock.backend.monitoring import Worklist
from idv_mock.backend.projects import Project
from idv_mock.ground import schemas
from idv_mock.ground.clock import iso

if TYPE_CHECKING:
    from idv_mock.aml import screening


def _screening() -> Any:
    """The matching module, loaded with the first screening (not with every server); the
    report module (fpdf, about 0.1 s) loads when a report is asked for."""
    from idv_mock.aml import screening

    return screening


Submission = dict[str, Any]
# creates a submission in a project from overrides (the service's, checked and derived)
Create = Callable[[str, dict[str, Any]], Submission]
COUNTRIES = schemas.countries()
_DATE = re.compile(schemas.definition("date")["pattern"])
SUCCESS_MESSAGE = "complete to search AML."


class Screening:
    """Each project's AML screening, reports, watchlist and monitoring worklists."""

    def __init__(self, core: Core, create_submission: Create) -> None:
        self.core = core
        self.create_submission = create_submission
        # search cycles' matching done by an advance outside the lock, by (project, worklist)
        self.prepared: dict[tuple[str, str], Prepared] = {}

    # --- screening ---
    def screen(self, project: Project, sid: str, threshold: int | None) -> dict[str, Any]:
        """POST /submission/aml: match, store the result in ``aml``, one report per match."""
        with self.core.lock:
            self.core.changes += 1
            sub = self.core.live(project, sid)
            nationality = str((sub.get("data") or {}).get("nationality", ""))
            if nationality not in COUNTRIES:
                raise InvalidCountry(nationality)
            if threshold is None:
                threshold = project.options.get("aml_threshold")
            if threshold is None:
                raise NoThreshold()
            subject = _screening().subject_of(sub)
            found = _screening().screen(subject, project.aml.watchlist(), threshold)
            raw = aml.raw_data(subject, threshold, iso(project.clock.now()), found)
            ids: list[str] = []
            for _ in found:
                ids.append(self.core.fresh_uuid({*project.aml.reports, *ids}))
            result = RED_FLAG if found else NO_MATCH
            matches = [aml.match_json(i, m) for i, m in zip(ids, found, strict=True)]
            state = {"raw_data": raw, "matches": matches}
            new = {**sub, "aml": {**state, "risk_level_summary": result, "currentstatus": result}}
            project.store.replace(new)
            self._keep_reports(project, new, raw, ids, found)
            if (new.get("kyc") or {}).get("result") == "approved":  # the vendor screens no other
                hidden, style = project.hidden_fields(sid), str(project.options["projection_style"])
                self.core.fire(project, [events.aml_event(new, hidden, style)])
            return {"message": SUCCESS_MESSAGE, "result": result, "raw_data": raw}

    @staticmethod
    def _keep_reports(
        project: Project,
        sub: Submission,
        raw: dict[str, Any],
        ids: list[str],
        found: list[screening.Match],
    ) -> None:
        brief = [
            {"resource_id": i, "entry_id": m.entry.entry_id, "name": m.entry.name, "score": m.score}
            for i, m in zip(ids, found, strict=True)
        ]
        for i, match in zip(ids, found, strict=True):
            others = [b for b in brief if b["resource_id"] != i]
            project.aml.reports[i] = aml.report_info(i, sub, raw, match, others)

    def report_pdf(self, project: Project, resource_id: str) -> bytes:
        with self.core.lock:
            info = project.aml.reports.get(resource_id)
            if info is None:
                raise NotFound(f"report {resource_id} not found")
        from idv_mock.aml import report

        return report.render_aml_report(info)

    # --- the project's own watchlist ---
    def add_watchlist_entry(self, project_id: str, spec: dict[str, Any]) -> dict[str, Any]:
        problems = schemas.errors("watchlist_entry.json", spec)
        if problems:
            raise InvalidInput("invalid watchlist entry", problems)
        with self.core.lock:
            self.core.changes += 1
            project = self.core.project(project_id)
            if project.aml.entry(spec["entry_id"]) is not None:
                raise Conflict(f"entry {spec['entry_id']} exists already")
            entry: screening.Entry = _screening().Entry.from_json({**_ENTRY_DEFAULTS, **spec})
            project.aml.entries.append(entry)
            return entry.to_json()

    def watchlist(self, project_id: str) -> list[dict[str, Any]]:
        with self.core.lock:
            return [e.to_json() for e in self.core.project(project_id).aml.watchlist()]

    def watchlist_submission(
        self, project_id: str, entry_id: str, overrides: dict[str, Any] | None = None
    ) -> Submission:
        """A submission whose person is a watchlist entry, to make a Red Flag on purpose."""
        problems = schemas.errors("submission_fields.json", overrides or {})
        if problems:
            raise InvalidInput("invalid overrides", problems)
        with self.core.lock:
            entry = self.core.project(project_id).aml.entry(entry_id)
            if entry is None:
                raise NotFound(f"watchlist entry {entry_id} not found")
            first, _, last = entry.name.partition(" ")
            person = {"full_name": entry.name, "first_name": first, "last_name": last}
            person["nationality"] = entry.nationality
            if entry.birth_date:
                person["date_of_birth"] = entry.birth_date
            merged = {**(overrides or {})}
            merged["data"] = {**person, **(merged.get("data") or {})}
            return self.create_submission(project_id, merged)

    # --- monitoring ---
    def create_worklist(self, project_id: str, spec: dict[str, Any]) -> dict[str, Any]:
        problems = schemas.errors("worklist.json", spec)
        if problems or {"created_at", "record_count", "records", "screening"} & set(spec):
            raise InvalidInput("invalid worklist", problems or ["created_at is read-only"])
        with self.core.lock:
            self.core.changes += 1
            project = self.core.project(project_id)
            wid = spec.get("id") or self.core.fresh_uuid(project.monitoring.worklists)
            if wid in project.monitoring.worklists:
                raise Conflict(f"worklist {wid} exists already")
            active = bool(spec.get("active", True))
            worklist = Worklist(wid, spec["name"], active, iso(project.clock.now()))
            worklist.screened_key = _watch_key(project)  # records are screened as they come
            project.monitoring.add(worklist)
            self._cycle_from_now(project, worklist)
            return worklist.describe()

    def set_worklist_active(self, project_id: str, wid: str, active: bool) -> dict[str, Any]:
        """(De)activate; only an active worklist has a search cycle due."""
        with self.core.lock:
            self.core.changes += 1
            project = self.core.project(project_id)
            worklist = project.monitoring.get(wid)
            worklist.active = active
            self._cycle_from_now(project, worklist)
            return worklist.describe()

    @staticmethod
    def _cycle_from_now(project: Project, worklist: Worklist) -> None:
        """An active worklist's next search cycle one cycle from now (one is due at most)."""
        due = project.schedule.has("monitoring_cycle", worklist_id=worklist.id)
        if not worklist.active:
            project.schedule.remove("monitoring_cycle", worklist_id=worklist.id)
        elif not due:
            cycle = timedelta(seconds=project.seconds("monitoring_cycle_seconds"))
            at = project.clock.peek() + cycle
            project.schedule.add(at, "monitoring_cycle", {"worklist_id": worklist.id})

    def monitoring_cycle(self, project: Project, detail: dict[str, Any], at: datetime) -> list[str]:
        """The rule ``monitoring_cycle``: re-screen the worklist's records against the
        watchlist as it is now; a record that matches an entry it had not matched before is
        updated and its submission gets ``aml_monitor``. The next cycle is scheduled.
        Nothing changed since the last cycle (same entries, same threshold): nothing to do."""
        worklist = project.monitoring.worklists.get(str(detail["worklist_id"]))
        if worklist is None or not worklist.active:
            return []
        cycle = timedelta(seconds=project.seconds("monitoring_cycle_seconds"))
        project.schedule.add(at + cycle, "monitoring_cycle", {"worklist_id": worklist.id})
        key, old = _watch_key(project), worklist.screened_key
        if key == old:
            return []
        worklist.screened_key = key
        entries = _to_screen(project, old, key)
        prepared = self.prepared.pop((project.project_id, worklist.id), None)
        ready = prepared.found if prepared and prepared.fits(worklist, entries, key[0]) else {}
        if ready and prepared is not None:
            worklist.subjects = prepared.subjects  # for the next cycle's matching
        sent: list[str] = []
        for record in list(worklist.records.values()) if entries else []:
            if self._rescreen(project, worklist, record, entries, key[0], at, ready):
                sent.append("aml_monitor")
        return sent if project.options.get("webhook_url") else []

    def prepare_cycle(self, project: Project, detail: dict[str, Any]) -> Callable[[], None] | None:
        """The cycle's costly part, for an advance to run outside the lock: each record's
        submission matched against what the cycle will screen, from the submission's stored
        JSON as it is now. The rule takes a result only while that JSON is the same object
        (a submission changed meanwhile is matched again then), so the cycle's outcome is
        the one it would have had in one step. None: the cycle has nothing to screen."""
        worklist = project.monitoring.worklists.get(str(detail.get("worklist_id")))
        if worklist is None or not worklist.active:
            return None
        key, old = _watch_key(project), worklist.screened_key
        entries = _to_screen(project, old, key) if key != old else ()
        if not entries or not worklist.records:
            return None
        project.store.settle()  # a large seeding's submissions all built (seed_split.py)
        blobs, seen = project.store.blobs, worklist.seen
        found = [
            (str(r["submissionId"]), blobs.get(str(r["submissionId"])), seen.get(r["id"]))
            for r in worklist.records.values()
        ]
        prepared = Prepared(worklist, entries, key[0], _sends(self.core, project))
        self.prepared[(project.project_id, worklist.id)] = prepared
        items = [(s, b, k) for s, b, k in found if b is not None]
        return partial(prepared.match, items, worklist.subjects)

    @staticmethod
    def idle_cycle(project: Project, detail: dict[str, Any]) -> timedelta | None:
        """The cycle's period when the worklist's next search cycles change nothing (active,
        and the watchlist and threshold as the last cycle screened), else None: an advance
        then counts them instead of running each (a year of 1-second cycles)."""
        worklist = project.monitoring.worklists.get(str(detail.get("worklist_id")))
        if worklist is None or not worklist.active or worklist.screened_key != _watch_key(project):
            return None
        return timedelta(seconds=project.seconds("monitoring_cycle_seconds"))

    def _rescreen(
        self,
        project: Project,
        worklist: Worklist,
        record: dict[str, Any],
        entries: tuple[screening.Entry, ...],
        threshold: int,
        at: datetime,
        ready: dict[str, Ready],
    ) -> bool:
        """One record against ``entries``; True when it alerted (something new). ``ready``:
        what an advance matched outside the lock, by submission, with the JSON it read."""
        sid = str(record["submissionId"])
        done = ready.get(sid)
        sub: Submission | None = None
        if done is not None and done[0] is project.store.blobs.get(sid):
            found, sub = done[1], done[2]
        else:
            sub = project.store.get(sid)
            found = _match(sub, entries, threshold)
        if found is None:
            return False
        ids = [m.entry.entry_id for m in found]
        known = worklist.seen.get(record["id"])
        worklist.seen[record["id"]] = sorted({*ids, *(known or [])})
        new = [i for i in ids if i not in (known or [])]
        if known is None or not new:  # no earlier result to compare with, or nothing new
            return False
        record.update(
            status="screenedWithMatches",
            openCount=int(record.get("openCount", 0)) + len(new),
            updateTime=iso(at),
        )
        created = worklist.registered.get(record["id"], str(record.get("updateTime", "")))
        brief = {"recordId": record["id"], "worklistId": worklist.id, "created_at": created}
        style = str(project.options["projection_style"])
        if _sends(self.core, project):  # (only then: an event costs more than the rest)
            sub = sub or project.store.get(sid)
            assert sub is not None  # its JSON was read above, under the same lock
            hidden = project.hidden_fields(sid)
            self.core.fire(project, [events.aml_monitor_event(sub, [brief], hidden, style)])
        return True

    def worklists(self, project_id: str) -> list[dict[str, Any]]:
        with self.core.lock:
            return [
                w.describe() for w in self.core.project(project_id).monitoring.worklists.values()
            ]

    # --- the dashboard's: reads and deletions the control API has not ---
    def records_of(self, project_id: str, sid: str) -> list[dict[str, Any]]:
        """Every monitoring record of a submission, each with its worklist's id and name."""
        with self.core.lock:
            worklists = self.core.project(project_id).monitoring.worklists.values()
            return [
                {"worklist_id": w.id, "worklist_name": w.name, **copy.deepcopy(r)}
                for w in worklists
                for r in w.records.values()
                if r.get("submissionId") == sid
            ]

    def own_watchlist(self, project_id: str) -> list[dict[str, Any]]:
        """The project's own watchlist entries (the built-in list cannot be changed)."""
        with self.core.lock:
            return [e.to_json() for e in self.core.project(project_id).aml.entries]

    def delete_watchlist_entry(self, project_id: str, entry_id: str) -> dict[str, Any]:
        """Remove one of the project's own entries; later screenings no longer match it."""
        with self.core.lock:
            aml = self.core.project(project_id).aml
            found = next((e for e in aml.entries if e.entry_id == entry_id), None)
            if found is None:
                raise NotFound(f"watchlist entry {entry_id} not found in the project's own list")
            self.core.changes += 1
            aml.entries.remove(found)
            return found.to_json()

    def delete_worklist(self, project_id: str, wid: str) -> dict[str, Any]:
        """Remove a worklist and its records (the API then answers it as unknown)."""
        with self.core.lock:
            project = self.core.project(project_id)
            monitoring = project.monitoring
            described = monitoring.get(wid).describe()
            self.core.changes += 1
            del monitoring.worklists[wid]
            project.schedule.remove("monitoring_cycle", worklist_id=wid)
            return described

    def register_record(
        self, project_id: str, wid: str, sid: str, admin: str | None = None
    ) -> dict[str, Any]:
        """One submission registered in a worklist outside the API (the control API, the
        dashboard): ``monitor``'s rules and its ``aml_monitor`` webhook, as the project's
        first administrator unless ``admin`` is given; the record."""
        with self.core.lock:
            project = self.core.project(project_id)
            who = admin or (project.admins[0] if project.admins else "")
            try:
                batch = self.monitor(project, wid, [sid], who)
            except Inactive:
                raise InvalidInput(f"worklist {wid} is not active") from None
            except AdminNotRegistered:
                raise InvalidInput(f"{who} is not an administrator of the project") from None
            if batch["failedResults"]:
                raise InvalidInput("cannot monitor it", [batch["failedResults"][0]["error"]])
            record_id = batch["successResults"][0]["recordIds"][0]
            return copy.deepcopy(project.monitoring.get(wid).records[record_id])

    def check_worklist(self, project: Project, wid: str, *, accepting: bool) -> None:
        """Raise ``UnknownWorklist`` (or ``Inactive`` when ``accepting``) for a bad worklist."""
        with self.core.lock:
            if accepting:
                project.monitoring.accepting(wid)
            else:
                project.monitoring.get(wid)

    def monitor(self, project: Project, wid: str, sids: list[str], admin: str) -> dict[str, Any]:
        """Register submissions in an active worklist, each on its own (4.7)."""
        with self.core.lock:
            self.core.changes += 1
            worklist = project.monitoring.accepting(wid)
            if not project.is_admin(admin):
                raise AdminNotRegistered(admin)
            ok: list[dict[str, Any]] = []
            failed: list[dict[str, Any]] = []
            fresh: list[events.Event] = []
            for sid in sids:
                known = {r["id"] for r in worklist.records.values()}
                error, record_id = self._register(project, worklist, sid, admin)
                if error is None and record_id not in known:
                    fresh.append(self._monitor_event(project, worklist, record_id))
                if error is None:
                    ok.append({"submissionId": sid, "recordIds": [record_id], "status": "success"})
                else:
                    entry = {"submissionId": sid, "recordIds": [], "status": "failed"}
                    failed.append({**entry, "error": error})
            self.core.fire(project, fresh)
            return {
                "success": bool(ok),
                "successCount": len(ok),
                "failedCount": len(failed),
                "successResults": ok,
                "failedResults": failed,
            }

    @staticmethod
    def _monitor_event(project: Project, worklist: Worklist, record_id: str) -> events.Event:
        """``aml_monitor``: the submission is now a record of ``worklist``."""
        record = worklist.records[record_id]
        sid = str(record["submissionId"])
        sub = project.store.get(sid) or {"submission_id": sid}
        ref = {"recordId": record_id, "worklistId": worklist.id, "created_at": record["updateTime"]}
        hidden, style = project.hidden_fields(sid), str(project.options["projection_style"])
        return events.aml_monitor_event(sub, [ref], hidden, style)

    def _register(
        self, project: Project, worklist: Worklist, sid: str, admin: str
    ) -> tuple[str | None, str]:
        sub = project.store.get(sid)
        if sub is None or sub.get("status") == "Deleted Submission":
            return f"Cannot find submission: {sid}", ""
        if (sub.get("kyc") or {}).get("result") != "approved":
            return f"This submission is not approved: {sid}", ""
        data = sub.get("data") or {}
        if not _valid_person(data.get("full_name"), data.get("date_of_birth")):
            return f"Invalid fullName or birthDate: {sid}", ""
        existing = worklist.record_for(sid)
        if existing is not None:
            return None, str(existing["id"])
        record, found = self._new_record(project, sub, admin, worklist.records)
        worklist.records[record["id"]] = record
        worklist.seen[record["id"]] = sorted(m.entry.entry_id for m in found)
        worklist.registered[record["id"]] = str(record["updateTime"])
        worklist.subjects[sid] = (project.store.blobs[sid], _screening().subject_of(sub))
        return None, str(record["id"])

    def _new_record(
        self, project: Project, sub: Submission, admin: str, taken: Container[str]
    ) -> tuple[dict[str, Any], list[screening.Match]]:
        data = sub.get("data") or {}
        threshold = project.options.get("aml_threshold") or DEFAULT_MONITORING_THRESHOLD
        found = _screening().screen(
            _screening().subject_of(sub), project.aml.watchlist(), threshold
        )
        record = {
            "id": self.core.fresh_uuid(taken),
            "name": data["full_name"],
            "submissionId": sub["submission_id"],
            "nationality": data.get("nationality", ""),
            "status": "screenedWithMatches" if found else "screenedNoMatches",
            "dob": data["date_of_birth"],
            "email": sub.get("email", ""),
            "memo": "",
            "tags": [],
            "admin": admin,
            "updateTime": iso(project.clock.now()),
            "openCount": len(found),
            "falsePositiveCount": 0,
            "truePositiveCount": 0,
            "discardedCount": 0,
        }
        return record, found

    def monitoring_record(self, project: Project, wid: str, record_id: str) -> dict[str, Any]:
        with self.core.lock:
            record = project.monitoring.get(wid).records.get(record_id)
            if record is None:
                raise NotFound(f"record {record_id} not found")
            return copy.deepcopy(record)  # the caller's to change

    def delete_records(
        self, project: Project, wid: str, record_ids: list[str], admin: str
    ) -> list[str]:
        """Delete the records of this worklist among ``record_ids``; the ids not found."""
        with self.core.lock:
            self.core.changes += 1
            worklist = project.monitoring.get(wid)
            if not project.is_admin(admin):
                raise AdminNotRegistered(admin)
            missing = [r for r in record_ids if r not in worklist.records]
            for rid in record_ids:
                worklist.records.pop(rid, None)
                worklist.seen.pop(rid, None)
                worklist.registered.pop(rid, None)
            return missing


@dataclass(slots=True)
class Prepared:
    """A search cycle's matching, done ahead outside the lock (``prepare_cycle``): for each
    submission, the stored JSON it read, what it matched (None: deleted) and, when that
    looked new, the decoded submission its alert needs."""

    worklist: Worklist
    entries: tuple[screening.Entry, ...]
    threshold: int
    alerts_sent: bool  # the project's alerts go somewhere: keep what they need
    found: dict[str, Ready] = field(default_factory=dict)
    subjects: dict[str, tuple[bytes, Any]] = field(default_factory=dict)  # as Worklist's

    def fits(
        self, worklist: Worklist, entries: tuple[screening.Entry, ...], threshold: int
    ) -> bool:
        return self.worklist is worklist and self.threshold == threshold and self.entries == entries

    def match(
        self, blobs: list[tuple[str, bytes, list[str] | None]], before: dict[str, Any]
    ) -> None:
        """Reads nothing shared but immutable bytes, the record's earlier matches as they
        were (``known``) and the subjects the last cycle read (``before``, which a cycle
        replaces, never changes), so it needs no lock; a submission whose JSON is the one
        the last cycle read is not decoded again. The interpreter hands its turn to the
        threads answering other calls every few milliseconds (a ``time.sleep(0)`` per
        submission costed more than the matching on a loaded host)."""
        for sid, blob, known in blobs:
            last = before.get(sid)
            sub = None if last is not None and last[0] is blob else orjson.loads(blob)
            subject = last[1] if sub is None and last is not None else _subject(sub)
            found = None if subject is None else _screening().screen(subject, *self.criteria)
            new = known is not None and any(m.entry.entry_id not in known for m in found or ())
            new = new and self.alerts_sent
            if new and sub is None:
                sub = orjson.loads(blob)
            self.subjects[sid] = (blob, subject)
            self.found[sid] = (blob, found, sub if new else None)

    @property
    def criteria(self) -> tuple[tuple[screening.Entry, ...], int]:
        return self.entries, self.threshold


# what an advance matched outside the lock for a submission: the stored JSON it read, the
# matches (None: deleted) and the decoded submission when it is likely to alert
Ready = tuple[bytes, "list[screening.Match] | None", "Submission | None"]


def _match(
    sub: Submission | None, entries: tuple[screening.Entry, ...], threshold: int
) -> list[screening.Match] | None:
    """What a live submission matches; None for a deleted one (a cycle skips it)."""
    subject = _subject(sub)
    if subject is None:
        return None
    found: list[screening.Match] = _screening().screen(subject, entries, threshold)
    return found


def _sends(core: Core, project: Project) -> bool:
    """Whether the project's events go anywhere (``Core.fire`` sends them only then)."""
    return bool(project.options.get("webhook_url") or core.routes.get(project.project_id))


def _subject(sub: Submission | None) -> screening.Subject | None:
    """Who a live submission screens; None for a deleted one."""
    if sub is None or sub.get("status") == "Deleted Submission":
        return None
    subject: screening.Subject = _screening().subject_of(sub)
    return subject


def _watch_key(project: Project) -> list[Any]:
    """What a search cycle's result depends on besides the records: the threshold and the
    project's own entries (the built-in list never changes)."""
    threshold = project.options.get("aml_threshold") or DEFAULT_MONITORING_THRESHOLD
    return [threshold, *(e.entry_id for e in project.aml.entries)]


def _to_screen(
    project: Project, old: list[Any] | None, key: list[Any]
) -> tuple[screening.Entry, ...]:
    """The entries a cycle must screen to find what is new: only those added since the last
    cycle when the threshold is the same (each entry scores on its own, so the others'
    results cannot have changed), else the whole watchlist."""
    before = set(old[1:]) if old is not None and old[0] == key[0] else None
    if before is None or not before <= set(key[1:]):
        return project.aml.watchlist()
    return tuple(e for e in project.aml.entries if e.entry_id not in before)


_ENTRY_DEFAULTS = {"aliases": [], "birth_date": "", "details": "", "source": "project watchlist"}


def _valid_person(name: Any, birth: Any) -> bool:
    if not isinstance(name, str) or not name.strip() or not isinstance(birth, str):
        return False
    if not _DATE.fullmatch(birth):
        return False
    try:
        date.fromisoformat(birth)
    except ValueError:
        return False
    return True
