"""One project's submissions: storage, read order, look-up indexes, duplicate index.

Each submission is kept as its JSON (orjson bytes), not as nested dicts: about a quarter
of the memory (8 KB against 28 KB for a full one), and a read of a whole item, the most
common call, joins stored bytes without serializing anything. Whoever needs the object
(an edit, a view, a screening) decodes a fresh copy, so nothing stored is ever changed in
place and a start snapshot can share the bytes with the live state.

A store of ``packing.PACK_FROM`` submissions or more keeps each new one compressed
(``packing.py``: about 1.1 KB instead of 7 KB); ``json`` gives its exact JSON again, and
the last ones given are kept (a polled item or a page read again is found by identity, as
the page memo and ``shared`` expect). Edited versions are stored plain.

Reads are newest first (``created_at``, ties by ``submission_id``), kept as an ascending
list of ``(created_at, submission_id)`` keys so a page is a bisect and a short walk, at any
size; user id and e-mail have their own indexes.
"""

from __future__ import annotations

import bisect
import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol, overload

import orjson

from idv_mock.backend.duplicates import DuplicateIndex, Key
from idv_mock.backend.packing import JSON_START, PACK_FROM, SAMPLES, Behind, Packer, is_packed
from idv_mock.ground.by_value import ByValue

Submission = dict[str, Any]
SortKey = tuple[str, str]
Meta = tuple[str, Any, Any]  # created_at, userid, email: what a selection compares
# a submission's bytes while it is not built yet (a large seeding indexes every submission
# first and builds them behind: ``seed_split.py``); found through ``SubmissionStore.unbuilt``
PENDING = b""


class Unbuilt(Protocol):
    """Where a store finds the bytes of a submission stored as ``PENDING``."""

    def blob(self, sid: str) -> bytes:
        """The submission's bytes, built (waits for its stretch, asked for first)."""

    def wait(self) -> None:
        """Until every submission is built."""


class Selection(ByValue):
    """Which submissions a read wants (api-v3.md 4.2); ``after`` is the paging position.
    Equal, hashed and shown by value, read-only by convention (``ByValue``: not a frozen
    dataclass, whose generated methods were compiled at import, on every first use)."""

    __slots__ = ("after", "count", "email", "end_date", "start_date", "submission_id", "userid")
    FIELDS = ("submission_id", "userid", "email", "start_date", "end_date", "after", "count")

    def __init__(
        self,
        submission_id: str | None = None,
        userid: str | None = None,
        email: str | None = None,
        start_date: str | None = None,
        end_date: str | None = None,
        after: SortKey | None = None,
        count: int = 50,
    ) -> None:
        self.submission_id, self.userid, self.email = submission_id, userid, email
        self.start_date, self.end_date = start_date, end_date
        self.after, self.count = after, count


class SubmissionStore:
    """A plain class, not a dataclass (its methods were compiled at import, on every first
    use): stores are never compared or printed whole."""

    __slots__ = (
        "behind",
        "blobs",
        "by_email",
        "by_user",
        "decoded",
        "dups",
        "meta",
        "order",
        "pack_behind",
        "packer",
        "unbuilt",
        "unpacked",
        "views",
    )

    def __init__(
        self,
        blobs: dict[str, bytes] | None = None,
        meta: dict[str, Meta] | None = None,
        order: list[SortKey] | None = None,
        by_user: dict[str, tuple[str, ...]] | None = None,
        by_email: dict[str, tuple[str, ...]] | None = None,
        dups: DuplicateIndex | None = None,
        packer: Packer | None = None,
        unbuilt: Unbuilt | None = None,
    ) -> None:
        self.blobs: dict[str, bytes] = {} if blobs is None else blobs
        self.meta: dict[str, Meta] = {} if meta is None else meta
        self.order: list[SortKey] = [] if order is None else order
        # immutable values, so copies are shallow
        self.by_user: dict[str, tuple[str, ...]] = {} if by_user is None else by_user
        self.by_email: dict[str, tuple[str, ...]] = {} if by_email is None else by_email
        self.dups = DuplicateIndex() if dups is None else dups
        # JSON of derived views (the user-id list's summary), made on first read, dropped
        # when the submission changes: a repeated user-id read then costs no decoding
        self.views: dict[str, dict[str, bytes]] = {}
        # decoded submissions kept for the next edit (``shared``), each with the blob it is
        self.decoded: dict[str, tuple[bytes, Submission]] = {}
        self.packer = packer  # set once the store is large (packing.py)
        # the JSON of packed submissions read last, each with its packed bytes
        self.unpacked: dict[str, tuple[bytes, bytes]] = {}
        self.pack_behind = False  # while seeding: pack on a second thread (packing.Behind)
        self.behind: Behind | None = None
        # where the bytes of those stored ``PENDING`` come from (a seeding building behind)
        self.unbuilt = unbuilt

    DECODED_LIMIT = 64  # a 7 KB submission decodes to about 40 KB of objects
    UNPACKED_LIMIT = 1024  # about 7 MB: a few pages and the polled items

    def __len__(self) -> int:
        return len(self.blobs)

    def __contains__(self, sid: object) -> bool:
        return sid in self.blobs

    def __iter__(self) -> Iterator[Submission]:
        """Every submission, decoded, in the order they were stored."""
        return (orjson.loads(self.json(sid)) for sid in list(self.blobs))

    def json(self, sid: str) -> bytes:
        """The stored submission's JSON (``KeyError`` when there is none)."""
        blob = self.blobs[sid]
        if not blob:
            blob = self._built(sid)
        if self.packer is None or not is_packed(blob):
            return blob
        kept = self.unpacked.get(sid)
        if kept is not None and kept[0] is blob:
            return kept[1]
        found = self.packer.unpack(blob)
        if len(self.unpacked) >= self.UNPACKED_LIMIT:
            self.unpacked.clear()
        self.unpacked[sid] = (blob, found)
        return found

    def jsons(self, sids: list[str]) -> list[bytes]:
        """The JSON of each of ``sids`` (all stored). A packed store's page is ``json`` of
        each, written out: a page at a random depth decompresses up to 50 of them, and
        the loop's own cost counts beside it
        (docs/performance.md, "Paging at depth (session 13, s13-depth)")."""
        blobs = self.blobs
        if self.packer is None:  # a small store: its bytes as they are
            return list(map(blobs.__getitem__, sids))
        unpack, unpacked = self.packer.unpacker(), self.unpacked
        found: list[bytes] = []
        for sid in sids:
            blob = blobs[sid]
            if not blob:
                blob = self._built(sid)
            if blob[0] == JSON_START:  # plain (stored before packing, or edited)
                found.append(blob)
                continue
            kept = unpacked.get(sid)
            if kept is not None and kept[0] is blob:
                found.append(kept[1])
                continue
            json = unpack(blob)
            if len(unpacked) >= self.UNPACKED_LIMIT:
                unpacked.clear()
            unpacked[sid] = (blob, json)
            found.append(json)
        return found

    def all_json(self) -> Iterator[bytes]:
        """Every submission's JSON, in the order they were stored."""
        if self.packer is None:
            return iter(list(self.blobs.values()))
        unpack = self.packer.unpack  # not kept: each is read once
        return (unpack(b) if is_packed(b) else b for b in self.stored())

    def stored(self) -> Sequence[bytes]:
        """Every stored blob as it is now, in the order they were stored; those not built
        yet are waited for as they are reached (a save of the state as it is now)."""
        blobs = list(self.blobs.values())
        if self.unbuilt is None or all(blobs):
            return blobs
        return Resolving(list(self.blobs), blobs, self.unbuilt)

    def _built(self, sid: str) -> bytes:
        """The one way to the bytes of a submission stored ``PENDING``: built (or waited
        for) and kept here in its place."""
        assert self.unbuilt is not None, f"{sid} is stored without its bytes"
        blob = self.unbuilt.blob(sid)
        if not self.blobs.get(sid):  # not replaced meanwhile (an edit, on another thread)
            self.blobs[sid] = blob
        return blob

    def settle(self) -> None:
        """Every submission's bytes in ``blobs`` (waits for a seeding building behind):
        for a caller reading ``blobs`` itself."""
        if self.unbuilt is None:
            return
        self.unbuilt.wait()
        for sid in [sid for sid, blob in self.blobs.items() if not blob]:
            self._built(sid)

    def get(self, sid: str) -> Submission | None:
        """A fresh decoded copy: the caller may change it without touching the store."""
        return orjson.loads(self.json(sid)) if sid in self.blobs else None

    def shared(self, sid: str) -> Submission | None:
        """The decoded submission, shared, for a caller that changes nothing in it (copies
        what it changes, as ``Service.edit`` does): decoding a 7 KB submission costs about
        15 µs, most of a PATCH, and a submission is often edited several times in a row.
        Found again by the identity of its stored bytes, which change with every change."""
        if sid not in self.blobs:
            return None
        blob = self.json(sid)
        kept = self.decoded.get(sid)
        if kept is not None and kept[0] is blob:
            return kept[1]
        return self._keep(sid, blob, orjson.loads(blob))

    def _keep(self, sid: str, blob: bytes, doc: Submission) -> Submission:
        if len(self.decoded) >= self.DECODED_LIMIT:
            self.decoded.clear()
        self.decoded[sid] = (blob, doc)
        return doc

    def view(self, sid: str, kind: str, make: Callable[[Submission], Any]) -> bytes:
        """The JSON of ``make(submission)``, kept under ``kind`` until the submission changes."""
        kept = self.views.setdefault(sid, {})
        found = kept.get(kind)
        if found is None:
            found = kept[kind] = orjson.dumps(make(orjson.loads(self.json(sid))))
        return found

    def add(self, sub: Submission, dup_keys: list[Key]) -> None:
        sid = sub["submission_id"]
        if sid in self.blobs:  # a second order key and stale indexes would follow
            raise ValueError(f"submission {sid} is already stored")
        blob = orjson.dumps(sub)
        self.start_packing()
        if self.packer is None:
            self.blobs[sid] = _compact(blob)
        elif self.pack_behind:
            if self.behind is None:
                self.behind = Behind(self.packer, self.blobs)
            self.blobs[sid] = blob  # until its batch comes back packed
            self.behind.add(sid, blob)
        else:
            self.blobs[sid] = self.packer.pack(blob)
        self.index(sid, (sub["created_at"], sub.get("userid"), sub.get("email")), dup_keys)

    def start_packing(self) -> None:
        """Train the packer once the store holds ``PACK_FROM`` (what ``add`` does first)."""
        if self.packer is None and len(self.blobs) >= PACK_FROM:
            self.packer = Packer(list(self.blobs.values())[-SAMPLES:])

    def index(self, sid: str, meta: Meta, dup_keys: list[Key]) -> None:
        """Index a submission whose bytes are in ``blobs`` (``add``; a split seeding puts
        them there when they come back built, ``seed_split.py``)."""
        self.meta[sid] = meta
        key = (meta[0], sid)
        if not self.order or key > self.order[-1]:
            self.order.append(key)  # the usual case: created now, so newest
        else:
            bisect.insort(self.order, key)
        self._index_contacts(sid)
        self.dups.add(sid, dup_keys)

    @contextlib.contextmanager
    def packing_behind(self) -> Iterator[None]:
        """Many added in a row (seeding): packed on a second thread, all of them packed
        when this ends; zstd holds no GIL, so the packing costs the seeding thread little."""
        self.pack_behind = True
        try:
            yield
        finally:
            self.pack_behind = False
            if self.behind is not None:
                self.behind.close()
                self.behind = None

    def replace(self, new: Submission, shared: bool = False) -> None:
        """Swap a stored submission for a new version of it (same id and ``created_at``).
        ``shared``: ``new`` is kept decoded for ``shared`` (its caller hands it to no one
        who could change it)."""
        sid = new["submission_id"]
        self.views.pop(sid, None)
        self.unpacked.pop(sid, None)
        blob = self.blobs[sid] = _compact(orjson.dumps(new))  # an edited one: stored plain
        if shared:
            self._keep(sid, blob, new)
        meta = (new["created_at"], new.get("userid"), new.get("email"))
        if meta != self.meta[sid]:
            self._unindex_contacts(sid)
            self.meta[sid] = meta
            self._index_contacts(sid)

    def copy(self) -> SubmissionStore:
        """An independent store sharing the (immutable) stored bytes: a snapshot or a reset
        costs the indexes, not the submissions."""
        return SubmissionStore(
            dict(self.blobs),
            dict(self.meta),
            list(self.order),
            dict(self.by_user),
            dict(self.by_email),
            self.dups.copy(),
            packer=self.packer,
            unbuilt=self.unbuilt,
        )

    def _index_contacts(self, sid: str) -> None:
        _, userid, email = self.meta[sid]
        if userid:
            self.by_user[userid] = (*self.by_user.get(userid, ()), sid)
        if email:
            self.by_email[email] = (*self.by_email.get(email, ()), sid)

    def _unindex_contacts(self, sid: str) -> None:
        _, userid, email = self.meta[sid]
        for index, value in ((self.by_user, userid), (self.by_email, email)):
            holders = index.get(value or "")
            if holders and sid in holders:
                rest = tuple(h for h in holders if h != sid)
                if rest:
                    index[value] = rest
                else:
                    del index[value]

    def select(self, sel: Selection) -> tuple[list[str], SortKey | None]:
        """One page of matching ids, newest first, and the key of its last one if more follow."""
        sid = sel.submission_id
        if sid is not None and sel.count >= 1:  # by id, what polling clients send: one or none
            return ([sid] if sid in self.blobs and self._matches(sid, sel) else []), None
        if sid is None and sel.userid is None and sel.email is None:
            return self._page(sel)
        found: list[str] = []
        for sid in self._candidates(sel):
            if self._matches(sid, sel):
                found.append(sid)
                if len(found) > sel.count:
                    break
        if len(found) > sel.count:
            last = found[sel.count - 1]
            return found[: sel.count], (self.meta[last][0], last)
        return found, None

    def _candidates(self, sel: Selection) -> Iterator[str]:
        if sel.submission_id is not None:
            return iter([sel.submission_id] if sel.submission_id in self.blobs else [])
        if sel.userid is not None:
            ids = self.by_user.get(sel.userid) or ()
        else:
            ids = self.by_email.get(sel.email or "") or ()
        return iter(sorted(ids, key=lambda s: (self.meta[s][0], s), reverse=True))

    def _page(self, sel: Selection) -> tuple[list[str], SortKey | None]:
        """A page of everything between the dates: three bisects and one slice, whatever
        the store's size (every key in the slice matches, so nothing is checked one by one)."""
        order = self.order
        hi = len(order)
        if sel.end_date is not None:  # created_at[:10] <= end_date
            hi = bisect.bisect_left(order, (sel.end_date + "~", ""))
        if sel.after is not None:
            hi = min(hi, bisect.bisect_left(order, sel.after))
        lo = 0 if sel.start_date is None else bisect.bisect_left(order, (sel.start_date, ""))
        keys = order[max(lo, hi - sel.count - 1) : hi][::-1]
        if len(keys) > sel.count:
            return [sid for _, sid in keys[: sel.count]], keys[sel.count - 1]
        return [sid for _, sid in keys], None

    def _matches(self, sid: str, sel: Selection) -> bool:
        created, userid, email = self.meta[sid]
        return (
            (sel.userid is None or userid == sel.userid)
            and (sel.email is None or email == sel.email)
            and (sel.start_date is None or created >= sel.start_date)
            and (sel.end_date is None or created[:10] <= sel.end_date)
            and (sel.after is None or (created, sid) < sel.after)
        )


class Resolving(Sequence[bytes]):
    """Stored blobs taken at one moment, those not built yet found as they are read."""

    def __init__(self, sids: list[str], blobs: list[bytes], unbuilt: Unbuilt) -> None:
        self._sids, self._blobs, self._unbuilt = sids, blobs, unbuilt

    def __len__(self) -> int:
        return len(self._blobs)

    @overload
    def __getitem__(self, at: int) -> bytes: ...
    @overload
    def __getitem__(self, at: slice) -> Sequence[bytes]: ...
    def __getitem__(self, at: int | slice) -> bytes | Sequence[bytes]:
        if isinstance(at, slice):
            return [self[i] for i in range(*at.indices(len(self)))]
        return self._blobs[at] or self._unbuilt.blob(self._sids[at])

    def __iter__(self) -> Iterator[bytes]:
        blob_of = self._unbuilt.blob
        for sid, blob in zip(self._sids, self._blobs, strict=True):
            yield blob or blob_of(sid)


def _compact(blob: bytes) -> bytes:
    """An exact-size copy: orjson's own buffer keeps its growth room (about 10 KB of memory
    held for a 6 KB submission), which at 100k submissions is most of the footprint."""
    return bytes(memoryview(blob))
