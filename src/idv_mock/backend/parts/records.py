"""The vendor's record calls beyond api-v3.md: client review, images and migration
(endpoints.md 5-8, 10.2-10.4).

``service.records``, a part of :class:`~idv_mock.backend.Service` given the service's
``Core`` and its checked creation of a submission (for a migration).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from idv_mock.backend import derive, duplicates, edits, events, images
from idv_mock.backend.core import Core
from idv_mock.backend.exceptions import AdminNotRegistered, NotReviewable
from idv_mock.backend.projects import Project
from idv_mock.ground.clock import iso, stamp

Submission = dict[str, Any]
# the service's checked creation of a submission in a project from overrides
Create = Callable[[Project, dict[str, Any]], Submission]
# what a migrated submission never has: no OCR is run and no image is sent (endpoints.md 10.3)
NOT_MIGRATED = ("OCR_raw", "ocr")


class Records:
    """POST /submission/review, GET /image and PUT /submission/image, migration."""

    def __init__(self, core: Core, create: Create) -> None:
        self.core = core
        self.create = create

    # --- client review ---
    def client_review(
        self,
        project: Project,
        sid: str,
        admin: str,
        status: str,
        comment: str | None,
        fields: dict[str, str],
    ) -> Submission:
        """Decide a pending submission: ``fields`` (PATCH names, checked by the caller) are
        written, the result stamped with reviewer ``agent``; ``updated`` (with fields), then
        ``approved`` or ``rejected`` are sent."""
        with self.core.lock:
            if not project.is_admin(admin):
                raise AdminNotRegistered(admin)
            old = self.core.live(project, sid)
            if project.options.get("reviewer") != "client":
                raise NotReviewable("agent")
            if (old.get("kyc") or {}).get("result") != "pending":
                raise NotReviewable("not_pending")
            self.core.changes += 1
            moment = project.clock.now()
            new = edits.apply_changes(old, {**fields, "kycStatus": status})
            kinds = {
                duplicates.KIND_OF_PROPERTY[p] for p in fields if p in duplicates.KIND_OF_PROPERTY
            }
            if kinds:  # as PATCH: identity and number edits change what duplicates are checked on
                project.store.dups.update(sid, duplicates.keys_of(new), kinds)
            new = derive.apply_masking(new, project.options)
            new = _decided(new, status, comment, stamp(moment))
            new = derive.identity_ids(new, project.project_id, before=old)
            if fields:
                new["updateHistory"] = {"updateAdmin": admin, "updateTime": stamp(moment)}
            project.store.replace(new)
            hidden, style = project.hidden_fields(sid), str(project.options["projection_style"])
            when = iso(moment)
            batch = (
                [events.updated_event(new, admin, when, fields, hidden, style)] if fields else []
            )
            batch += events.decision_events(new, hidden, style, reviewer="agent")
            self.core.fire(project, batch)
            return new

    # --- images ---
    def image(self, project: Project, sid: str, slot: str) -> bytes | None:
        """The slot's image: the one put, else the sample; None when the submission names no
        image in that slot (never had one, partially deleted). ``NotFound``: no submission."""
        with self.core.lock:
            sub = self.core.live(project, sid)
            if not (sub.get("image") or {}).get(slot):
                return None
            put = project.images.get(sid, {}).get(slot)
            return put if put is not None else images.sample(sid, slot)

    def put_images(
        self, project: Project, sid: str, admin: str, given: dict[str, bytes], id_type: str
    ) -> Submission:
        """Add or overwrite the submission's images (``idType``, when given, is written too)."""
        with self.core.lock:
            if not project.is_admin(admin):
                raise AdminNotRegistered(admin)
            old = self.core.live(project, sid)
            self.core.changes += 1
            new = dict(old)
            new["image"] = {**(old.get("image") or {}), **{s: images.url(sid, s) for s in given}}
            if id_type:
                new["data"] = {**(old.get("data") or {}), "idType": id_type}
            new["updated_at"] = stamp(project.clock.now())
            project.store.replace(new)
            project.images[sid] = {**project.images.get(sid, {}), **given}
            return new

    def forget_images(self, project: Project, sid: str) -> None:
        """Drop put images the submission no longer names (after a deletion or partial one)."""
        with self.core.lock:
            sub = project.store.get(sid)
            named = (sub or {}).get("image") or {}
            kept = {s: b for s, b in project.images.get(sid, {}).items() if named.get(s)}
            if kept:
                project.images[sid] = kept
            else:
                project.images.pop(sid, None)

    # --- migration ---
    def migrate(self, project: Project, admin: str, overrides: dict[str, Any]) -> Submission:
        """A submission from the client's data, with no verification: no OCR, no images;
        ``approved`` or ``rejected`` is sent."""
        with self.core.lock:
            if not project.is_admin(admin):
                raise AdminNotRegistered(admin)
            sub = self.create(project, overrides)
            bare = {k: v for k, v in sub.items() if k not in NOT_MIGRATED}
            bare["image"] = {slot: "" for slot in images.SLOTS}
            bare = derive.identity_ids(bare, project.project_id)  # no selfie to compare
            bare["recognition_score"] = bare["service_score"] = ""
            project.store.replace(bare)
            result = str(bare["kyc"]["result"])
            style = str(project.options["projection_style"])
            self.core.fire(project, [events.submission_event(result, bare, None, style)])
            return bare


def _decided(sub: Submission, status: str, comment: str | None, now: str) -> Submission:
    """The review's stamps on ``sub`` (a fresh top level from ``apply_changes``)."""
    kyc = dict(sub.get("kyc") or {})
    kyc["result"] = status
    if status == "rejected":
        kyc["comment"], kyc["commentCode"] = [comment or ""], ["other"]
    else:
        kyc["comment"], kyc["commentCode"] = [], []
    sub["kyc"] = kyc
    sub["kyc_result_at"] = sub["updated_at"] = now
    sub["reviewer"] = "agent"
    return sub
