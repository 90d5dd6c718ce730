"""The service object: every project's state, the clock, and the operations on them.

This is what the web layer and the control API call, and what tests drive in-process.
Operations take the service's lock, so a test thread may seed state while the server
thread answers requests. ``reset()`` restores a snapshot taken right after seeding,
which is both faster than seeding again and byte-identical to it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import orjson

from idv_mock import schemas
from idv_mock.backend import derive, duplicates, edits, seed, views
from idv_mock.backend.exceptions import (
    AdminNotRegistered,
    Conflict,
    InvalidInput,
    InvalidProperty,
    NotFound,
)
from idv_mock.backend.projects import Project
from idv_mock.backend.store import Selection, SortKey
from idv_mock.clock import Clock, iso, stamp
from idv_mock.fake import SubmissionFactory, deep_merge

Submission = dict[str, Any]
Listener = Callable[[str, Project, Submission, dict[str, Any]], None]
POST_SEED = 1_000_003  # the factory's seed offset for everything created after seeding


@dataclass(slots=True)
class ServiceConfig:
    project_id: str = "default"
    api_key: str = "mock-api-key"
    admins: tuple[str, ...] = ("admin@example.com",)
    seed_count: int = 50
    random_seed: int = 0
    options: dict[str, Any] = field(default_factory=dict)
    clock_mode: str = "tick"


class Service:
    def __init__(self, config: ServiceConfig | None = None) -> None:
        self.config = config or ServiceConfig()
        self._lock = threading.RLock()
        self.factory = SubmissionFactory(self.config.random_seed)
        self.listeners: list[Listener] = []
        self.clock = Clock(self.config.clock_mode)
        self.projects: dict[str, Project] = {}
        self._by_key: dict[str, Project] = {}
        self._seed()
        self._snapshot = orjson.dumps(self.export_state())

    # --- start state ---
    def _seed(self) -> None:
        cfg = self.config
        spec = {"project_id": cfg.project_id, "api_key": cfg.api_key, "admins": list(cfg.admins)}
        project = self.create_project({**spec, "options": cfg.options})
        self.factory.reseed(cfg.random_seed)

        def create(overrides: dict[str, Any], when: datetime) -> Submission:
            return self._create(project, overrides, when)

        seed.seed(self.factory, self.clock.peek(), cfg.seed_count, create)
        self.factory.reseed(cfg.random_seed + POST_SEED)

    def reset(self) -> None:
        """Back to the state right after start-up (seeded default project only)."""
        with self._lock:
            self.import_state(orjson.loads(self._snapshot), validate=False)
            self.factory.reseed(self.config.random_seed + POST_SEED)

    # --- projects ---
    def create_project(self, spec: dict[str, Any]) -> Project:
        with self._lock:
            project = Project.from_input(spec, "")
            if project.project_id in self.projects:
                raise Conflict(f"project {project.project_id} already exists")
            if project.api_key in self._by_key:
                raise Conflict("api_key is already used by another project")
            project.created_at = iso(self.clock.now())
            self.projects[project.project_id] = project
            self._by_key[project.api_key] = project
            return project

    def update_project(self, project_id: str, changes: dict[str, Any]) -> Project:
        """Change a project's admins and options (options merge over the current ones)."""
        with self._lock:
            project = self.project(project_id)
            unknown = set(changes) - {"admins", "options"}
            if unknown:
                raise InvalidInput(f"cannot change {', '.join(sorted(unknown))}")
            if not isinstance(changes.get("options", {}), dict):
                raise InvalidInput("options must be an object")
            spec = project.describe()
            spec["admins"] = changes.get("admins", spec["admins"])
            spec["options"] = {**spec["options"], **(changes.get("options") or {})}
            del spec["submission_count"]
            updated = Project.from_input(spec, project.created_at)
            project.admins, project.options = updated.admins, updated.options
            return project

    # --- fault rules ---
    def add_fault(self, project_id: str, spec: dict[str, Any]) -> dict[str, Any]:
        """Add a fault rule to a project; answers the rule with its ``id``."""
        problems = schemas.errors("fault_rule.json", spec)
        if problems or "id" in spec or "hits" in spec:
            raise InvalidInput("invalid fault rule", problems or ["id and hits are read-only"])
        with self._lock:
            return self.project(project_id).faults.add(spec).describe()

    def faults(self, project_id: str) -> list[dict[str, Any]]:
        with self._lock:
            return [r.describe() for r in self.project(project_id).faults.rules]

    def remove_faults(self, project_id: str, fault_id: str | None = None) -> int:
        with self._lock:
            removed = self.project(project_id).faults.remove(fault_id)
            if fault_id is not None and not removed:
                raise NotFound(f"fault {fault_id} not found")
            return removed

    def project(self, project_id: str) -> Project:
        found = self.projects.get(project_id)
        if found is None:
            raise NotFound(f"project {project_id} not found")
        return found

    def project_for_key(self, api_key: str) -> Project | None:
        return self._by_key.get(api_key)

    # --- submissions: creation ---
    def create_submission(
        self, project_id: str, overrides: dict[str, Any] | None = None
    ) -> Submission:
        """A Faker submission with ``overrides`` deep-merged over it, derived and stored."""
        with self._lock:
            project = self.project(project_id)
            overrides = overrides or {}
            problems = schemas.errors("submission_fields.json", overrides)
            if problems:
                raise InvalidInput("invalid submission", problems)
            if "status" in overrides:
                raise InvalidInput("status is set by a deletion, not on creation")
            sid = overrides.get("submission_id")
            if sid is not None and project.store.get(sid) is not None:
                raise Conflict(f"submission {sid} already exists")
            before = self.clock.current
            try:
                return self._create(project, overrides, self.clock.now(), validate=True)
            except InvalidInput:
                self.clock.current = before
                raise

    def _create(
        self, project: Project, overrides: dict[str, Any], when: datetime, validate: bool = False
    ) -> Submission:
        raw = deep_merge(
            self.factory.build(when, overrides, userid=overrides.get("userid")), overrides
        )
        keys = duplicates.keys_of(raw)  # before masking
        sub = derive.derive(raw, project.options, project.project_options())
        found = project.store.dups.check(keys)
        sub["duplicated_users"] = found.users
        sub["duplicated_selfie_users"] = found.selfie_users
        sub["duplicated_information"] = found.information
        sub["custom_duplicated_information"] = found.custom_information
        if validate:
            problems = schemas.errors("submission.json", sub)
            if problems:
                raise InvalidInput("the merged submission is not valid", problems)
        project.store.add(sub, keys)
        self._emit("submission.created", project, sub)
        return sub

    def stored_submission(self, project_id: str, sid: str) -> Submission:
        found = self.project(project_id).store.get(sid)
        if found is None:
            raise NotFound(f"submission {sid} not found")
        return found

    # --- submissions: the API's operations ---
    def read(
        self, project: Project, sel: Selection, *, reduced: bool, request_type: str | None
    ) -> tuple[list[Submission], SortKey | None]:
        with self._lock:
            found, next_key = project.store.select(sel)
            shaped = [views.reduced(s) if reduced else s for s in found]
            return [views.by_request_type(s, request_type) for s in shaped], next_key

    def edit(self, project: Project, sid: str, admin: str, changes: dict[str, str]) -> Submission:
        """Apply PATCH properties; checks values, then the admin, then the submission."""
        with self._lock:
            bad = edits.first_invalid(changes)
            if bad is not None:
                raise InvalidProperty(bad)
            if not project.is_admin(admin):
                raise AdminNotRegistered(admin)
            old = self._live(project, sid)
            now = stamp(self.clock.now())
            edited = edits.apply_changes(old, changes)
            kinds = {
                duplicates.KIND_OF_PROPERTY[p] for p in changes if p in duplicates.KIND_OF_PROPERTY
            }
            project.store.dups.update(sid, duplicates.keys_of(edited), kinds)
            new = derive.apply_masking(edited, project.options)
            new = self._edit_stamps(new, changes, admin, now)
            project.store.replace(old, new)
            self._emit("submission.updated", project, new, admin=admin, changes=changes)
            return new

    @staticmethod
    def _edit_stamps(sub: Submission, changes: dict[str, str], admin: str, now: str) -> Submission:
        sub["updated_at"] = now
        sub["updateHistory"] = {"updateAdmin": admin, "updateTime": now}
        if "memo" in changes:
            sub["memo"] = {**sub["memo"], "updated_at": now}
        status = changes.get("kycStatus")
        if status is not None:
            sub["pending_at" if status == "pending" else "kyc_result_at"] = now
        return sub

    def delete(self, project: Project, sid: str, admin_name: str | None) -> Submission:
        """Delete a submission for good, keeping only what identifies no one (4.3)."""
        with self._lock:
            old = self._live(project, sid)
            new = views.retained(old)
            project.store.replace(old, new)
            project.store.dups.exclude(sid, duplicates.KINDS)
            self._emit("submission.deleted", project, new, admin_name=admin_name)
            return new

    def delete_parts(
        self, project: Project, sid: str, parts: list[str], data_fields: list[str] | None
    ) -> Submission:
        """Delete parts of a submission (4.4); deleted checked parts end duplicate checks."""
        with self._lock:
            old = self._live(project, sid)
            new, ended = edits.remove_parts(old, parts, data_fields)
            project.store.replace(old, new)
            project.store.dups.exclude(sid, ended)
            return new

    def _live(self, project: Project, sid: str) -> Submission:
        sub = project.store.get(sid)
        if sub is None or views.is_deleted(sub):
            raise NotFound(f"submission {sid} not found")
        return sub

    def _emit(self, event: str, project: Project, sub: Submission, **detail: Any) -> None:
        for listener in self.listeners:
            listener(event, project, sub, detail)

    # --- whole state ---
    def export_state(self) -> dict[str, Any]:
        with self._lock:
            return {
                "version": 1,
                "clock": self.clock.export(),
                "projects": [_export_project(p) for p in self.projects.values()],
            }

    def import_state(self, state: dict[str, Any], *, validate: bool = True) -> None:
        """Replace the whole state; an invalid document changes nothing."""
        problems = schemas.errors("state.json", state) if validate else []
        if problems:
            raise InvalidInput("invalid state document", problems)
        state = orjson.loads(orjson.dumps(state))  # own copy: callers keep theirs
        projects = [_import_project(p) for p in state["projects"]]
        if len({p.api_key for p in projects}) != len(projects):
            raise InvalidInput("two projects share an api_key")
        if len({p.project_id for p in projects}) != len(projects):
            raise InvalidInput("two projects share a project_id")
        with self._lock:
            self.clock = Clock.restore(state["clock"])
            self.projects = {p.project_id: p for p in projects}
            self._by_key = {p.api_key: p for p in projects}


def _export_project(project: Project) -> dict[str, Any]:
    spec = project.describe()
    del spec["submission_count"]
    return {
        "project": spec,
        "submissions": list(project.store),
        "dup_excluded": project.store.dups.export_exclusions(),
        "dup_keys": project.store.dups.export_keys(),
    }


def _import_project(doc: dict[str, Any]) -> Project:
    spec = doc["project"]
    project = Project.from_input(spec, spec.get("created_at", ""))
    for sid, kinds in doc.get("dup_excluded", {}).items():
        project.store.dups.excluded[sid] = set(kinds)
    known_keys = doc.get("dup_keys", {})
    for sub in doc["submissions"]:
        sid = sub["submission_id"]
        if project.store.get(sid) is not None:
            raise InvalidInput(f"duplicate submission_id {sid}")
        keys = known_keys.get(sid)
        project.store.add(
            sub, [tuple(k) for k in keys] if keys is not None else duplicates.keys_of(sub)
        )
    return project
