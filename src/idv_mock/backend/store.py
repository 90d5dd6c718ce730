"""One project's submissions: storage, read order, look-up indexes, duplicate index.

Reads are newest first (``created_at``, ties by ``submission_id``), kept as an ascending
list of ``(created_at, submission_id)`` keys so a page is a bisect and a short walk, at any
size. The store holds submissions as stored; views are made in ``views.py``.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from idv_mock.backend.duplicates import DuplicateIndex, Key

Submission = dict[str, Any]
SortKey = tuple[str, str]


@dataclass(frozen=True, slots=True)
class Selection:
    """Which submissions a read wants (api-v3.md 4.2); ``after`` is the paging position."""

    submission_id: str | None = None
    userid: str | None = None
    email: str | None = None
    start_date: str | None = None
    end_date: str | None = None
    after: SortKey | None = None
    count: int = 50


@dataclass(slots=True)
class SubmissionStore:
    items: dict[str, Submission] = field(default_factory=dict)
    order: list[SortKey] = field(default_factory=list)
    by_user: dict[str, list[str]] = field(default_factory=dict)
    by_email: dict[str, list[str]] = field(default_factory=dict)
    dups: DuplicateIndex = field(default_factory=DuplicateIndex)
    encoded: dict[str, tuple[Submission, bytes]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[Submission]:
        return iter(self.items.values())

    def get(self, sid: str) -> Submission | None:
        return self.items.get(sid)

    def add(self, sub: Submission, dup_keys: list[Key]) -> None:
        sid = sub["submission_id"]
        self.items[sid] = sub
        bisect.insort(self.order, (sub["created_at"], sid))
        self._index_contacts(sub)
        self.dups.add(sid, dup_keys)

    def encode(self, view: Submission) -> bytes:
        """The JSON of a view; a stored submission's is kept until the submission changes.

        Stored submissions are never changed in place (a change stores a new dict), so the
        identity check is all the invalidation needed; reads of pages then join bytes.
        """
        sid = view.get("submission_id")
        if not isinstance(sid, str) or self.items.get(sid) is not view:
            return orjson.dumps(view)
        cached = self.encoded.get(sid)
        if cached is None or cached[0] is not view:
            cached = (view, orjson.dumps(view))
            self.encoded[sid] = cached
        return cached[1]

    def replace(self, old: Submission, new: Submission) -> None:
        """Swap a stored submission for a new version of it (same id and ``created_at``)."""
        self.encoded.pop(new["submission_id"], None)
        self._unindex_contacts(old)
        self.items[new["submission_id"]] = new
        self._index_contacts(new)

    def _index_contacts(self, sub: Submission) -> None:
        for index, key in ((self.by_user, "userid"), (self.by_email, "email")):
            if sub.get(key):
                index.setdefault(sub[key], []).append(sub["submission_id"])

    def _unindex_contacts(self, sub: Submission) -> None:
        for index, key in ((self.by_user, "userid"), (self.by_email, "email")):
            holders = index.get(sub.get(key) or "")
            if holders and sub["submission_id"] in holders:
                holders.remove(sub["submission_id"])
                if not holders:
                    del index[sub[key]]

    def select(self, sel: Selection) -> tuple[list[Submission], SortKey | None]:
        """One page of matches, newest first, and the key of its last item if more follow."""
        found: list[Submission] = []
        for sub in self._candidates(sel):
            if _matches(sub, sel):
                found.append(sub)
                if len(found) > sel.count:
                    break
        if len(found) > sel.count:
            last = found[sel.count - 1]
            return found[: sel.count], (last["created_at"], last["submission_id"])
        return found, None

    def _candidates(self, sel: Selection) -> Iterator[Submission]:
        if sel.submission_id is not None:
            hit = self.items.get(sel.submission_id)
            return iter([hit] if hit else [])
        ids = self.by_user.get(sel.userid) if sel.userid is not None else None
        if sel.userid is None and sel.email is not None:
            ids = self.by_email.get(sel.email)
        if sel.userid is not None or sel.email is not None:
            subs = [self.items[i] for i in ids or []]
            subs.sort(key=lambda s: (s["created_at"], s["submission_id"]), reverse=True)
            return iter(subs)
        return self._walk_down(sel)

    def _walk_down(self, sel: Selection) -> Iterator[Submission]:
        hi = len(self.order)
        if sel.end_date is not None:
            hi = bisect.bisect_left(self.order, (sel.end_date + "~", ""))
        if sel.after is not None:
            hi = min(hi, bisect.bisect_left(self.order, sel.after))
        for i in range(hi - 1, -1, -1):
            created, sid = self.order[i]
            if sel.start_date is not None and created < sel.start_date:
                return
            yield self.items[sid]


def _matches(sub: Submission, sel: Selection) -> bool:
    created = sub["created_at"]
    key = (created, sub["submission_id"])
    return (
        (sel.userid is None or sub.get("userid") == sel.userid)
        and (sel.email is None or sub.get("email") == sel.email)
        and (sel.start_date is None or created >= sel.start_date)
        and (sel.end_date is None or created[:10] <= sel.end_date)
        and (sel.after is None or key < sel.after)
    )
