"""A project's lasting state as a copy: start snapshots, resets, and state documents.

A snapshot shares the stored JSON bytes with the live state (they are immutable), so
taking one or resetting from one copies indexes, never submissions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any

import orjson

from idv_mock.backend import duplicates
from idv_mock.backend.bulk_store import BulkStore
from idv_mock.backend.exceptions import InvalidInput
from idv_mock.backend.packing import Packer
from idv_mock.backend.projections import Projections
from idv_mock.backend.projects import Project
from idv_mock.backend.schedule import Schedule
from idv_mock.delivery.levers import DeliveryLevers
from idv_mock.ground.clock import Clock

LINE = b"\n"  # around each submission of a state file: JSON whitespace, never inside a value


HOLE = b"\x00"  # where a streamed save puts a project's submissions: never in orjson's output
# what a project's submissions are read from after the lock: the stored bytes (immutable)
# and what unpacks the packed ones
Stored = tuple[Sequence[bytes], Packer | None]


def export_parts(clock: Clock, projects: list[Project]) -> tuple[bytes, list[Stored]]:
    """The state document's JSON with each project's submissions a ``HOLE``, and each
    project's stored submissions: a save (``persistence.save``) takes these under the
    service's lock and makes and writes the submissions' JSON after it, a batch at a time,
    so the whole document never exists in memory at once."""
    doc = {
        "version": 1,
        "clock": clock.export(),
        "projects": [export_project(p, hole=True) for p in projects],
    }
    stored = [(p.store.stored(), p.store.packer) for p in projects]
    return orjson.dumps(doc), stored


def export_project(
    project: Project, lines: bool = False, hole: bool = False, index: bool = False
) -> dict[str, Any]:
    """The project in the state document (schemas/state.json), for ``orjson.dumps`` only:
    submissions are their stored JSON (``orjson.Fragment``), other parts may be live
    objects. Duplicate keys are included, as digests cannot be re-made from masked values.
    ``lines``: each submission between two ``LINE`` (still the same JSON), so a reader
    finds them without decoding the document (``persistence.read``); ``index``: with the
    ``line_index`` a reader builds the store's indexes from (a shipped start, ``prebuilt``;
    a streamed save's ``hole`` has it too)."""
    spec = project.describe()
    del spec["submission_count"]
    found = () if hole else project.store.all_json()
    return {
        "project": spec,
        "submissions": orjson.Fragment(HOLE)
        if hole
        else [orjson.Fragment(b"".join((LINE, b, LINE)) if lines else b) for b in found],
        "dup_excluded": project.store.dups.export_exclusions(),
        "dup_keys": project.store.dups.export_keys(),
        **({"line_index": _line_index(project)} if hole or index else {}),
        "projections": project.projections.export(),
        "aml": project.aml.export(),
        "worklists": project.monitoring.export(),
        "tokens": project.tokens.export(),
        "images": _images_export(project.images),
        "clock": project.clock.export(),
        "due": project.schedule.export(),
        **({} if project.delivery.prompt else {"webhook_delivery": project.delivery.to_json()}),
    }


def _line_index(project: Project) -> list[tuple[str, Any, Any, Any]]:
    """What the store's indexes need of each submission, in the order of submissions: a
    state file's reader builds them from this instead of decoding 100k submissions."""
    meta = project.store.meta
    return [(sid, *meta[sid]) for sid in project.store.blobs]


def clone(project: Project) -> Project:
    """An independent copy of a project's lasting state (no fault rules, journal or limit):
    a start snapshot, or a live project made from one."""
    fresh = Project(
        project.project_id,
        project.api_key,
        list(project.admins),
        owned(project.options),
        project.created_at,
    )
    fresh.store = project.store.copy()
    fresh.projections = Projections.restore(owned(project.projections.export()))
    fresh.lazy_parts_of(project)  # AML, worklists, tokens: copied built or not (projects.py)
    fresh.images = {sid: dict(slots) for sid, slots in project.images.items()}  # bytes: immutable
    fresh.clock = Clock.restore(project.clock.export())
    fresh.schedule = project.schedule.copy()
    fresh.delivery = project.delivery  # immutable
    return fresh


def _images_export(stored: dict[str, dict[str, bytes]]) -> dict[str, Any]:
    """``images.export``; ``images.py`` (and the factory's check parts it imports) loaded
    only for a project holding images: a start has none."""
    if not stored:
        return {}
    from idv_mock.backend import images

    return images.export(stored)


def _images_restored(doc: dict[str, Any]) -> dict[str, dict[str, bytes]]:
    if not doc:
        return {}
    from idv_mock.backend import images

    return images.restore(doc)


def owned(doc: Any) -> Any:
    """A deep copy that shares nothing (JSON values only)."""
    return orjson.loads(orjson.dumps(doc))


def import_project(
    doc: dict[str, Any], clock: dict[str, Any], step: Callable[[], None] = lambda: None
) -> Project:
    """A project from its state document (already validated against the schema);
    ``clock``: the document's own, for a project saved before each had one; ``step`` is
    called after each submission (the progress of a large load)."""
    spec = doc["project"]
    project = Project.from_checked(spec, spec.get("created_at", ""))
    project.clock = Clock.restore(doc.get("clock") or clock)
    project.options["clock_mode"] = project.clock.mode
    project.schedule = Schedule.restore(doc.get("due", []))
    for sid, kinds in doc.get("dup_excluded", {}).items():
        project.store.dups.excluded[sid] = frozenset(kinds)
    project.projections = Projections.restore(doc.get("projections", {}))
    aml = doc.get("aml", {})
    if aml.get("entries"):  # restored now: a bad entry is refused with the document
        from idv_mock.backend.aml import AmlState

        project.aml = AmlState.restore(aml)
    else:
        project.defer("aml", aml)
    project.defer("monitoring", doc.get("worklists", []))
    project.defer("tokens", doc.get("tokens", {}))
    project.images = _images_restored(doc.get("images") or {})
    if "due" not in doc:  # saved before schedules: active worklists start their cycles now
        cycle = timedelta(seconds=project.seconds("monitoring_cycle_seconds"))
        for wid in [w.id for w in project.monitoring.worklists.values() if w.active]:
            project.schedule.add(
                project.clock.peek() + cycle, "monitoring_cycle", {"worklist_id": wid}
            )
    project.delivery = DeliveryLevers.from_json(doc.get("webhook_delivery", {}))
    known_keys = doc.get("dup_keys", {})
    given_subs = doc["submissions"]
    if isinstance(given_subs, BulkStore):  # a state file's lines, stored as they were read
        excluded = doc.get("dup_excluded", {})
        count = len(given_subs)
        project.store = given_subs.finish(excluded, known_keys, doc.get("line_index"))
        for _ in range(count):
            step()
        return project
    for given in given_subs:
        # a submission still as its JSON (a state file's line): decoded one at a time
        sub = given if isinstance(given, dict) else orjson.loads(given)
        sid = sub["submission_id"]
        if sid in project.store:
            raise InvalidInput(f"duplicate submission_id {sid}")
        keys = known_keys.get(sid)
        project.store.add(
            sub, [tuple(k) for k in keys] if keys is not None else duplicates.keys_of(sub)
        )
        step()
    return project
