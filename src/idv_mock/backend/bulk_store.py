"""One project's submission store filled in bulk from a state file this server wrote.

A state file of 100k submissions loaded one ``SubmissionStore.add`` at a time decodes each
submission, encodes it again and compresses it on the loading thread, and grows the user,
e-mail and duplicate indexes one tuple copy at a time: about 9 s of CPU. A file whose
digest says this server wrote it holds each submission as the exact bytes its store
keeps (``orjson.dumps`` of the submission, the bytes ``export_project`` writes), so here
each line *is* the stored blob: it is decoded once for the four values the indexes need,
never encoded again, compressed in batches on a worker thread (``packing.Behind``, as
seeding does; zstd lets go of the GIL), and the indexes are built once at the end (the
read order sorted once, each index's tuples made once). The store it builds is the one
``add`` would have built, value for value: the same blobs in the same insertion order
(packed from ``PACK_FROM`` on, against a dictionary trained on the same samples), the
same order, indexes and duplicate index.
"""

from __future__ import annotations

from concurrent.futures import Executor
from typing import Any

import orjson

from idv_mock.backend import duplicates
from idv_mock.backend.exceptions import InvalidInput
from idv_mock.backend.packing import PACK_FROM, SAMPLES, Behind, Packer, is_packed
from idv_mock.backend.store import SubmissionStore


class BulkStore:
    """A store being filled from lines; ``len`` is how many it holds so far (what the
    state document's placeholder count is checked against)."""

    def __init__(self, pool: Executor | None = None) -> None:
        self.store = SubmissionStore()
        self.lines: list[bytes] = []  # each submission's blob, in the file's order
        self._pool = pool  # the reader's worker, shared with its hashing
        self._behind: Behind | None = None  # packing the lines from ``PACK_FROM`` on

    def __len__(self) -> int:
        return len(self.lines)

    def add(self, line: bytes) -> None:
        """One submission as the exact JSON its store keeps (``line`` becomes the blob)."""
        lines = self.lines
        at = len(lines)
        lines.append(line)
        if self.store.packer is None:
            if at < PACK_FROM:  # as ``add`` decides
                return
            self.store.packer = Packer(lines[PACK_FROM - SAMPLES : PACK_FROM])
        if self._behind is None:
            self._behind = Behind(self.store.packer, put_back=self._put_back, pool=self._pool)
        self._behind.add(at, line)

    def _put_back(self, batch: list[tuple[Any, bytes]], packed: list[bytes]) -> None:
        """A batch (consecutive lines, nothing replaces a line meanwhile) packed."""
        at = batch[0][0]
        self.lines[at : at + len(packed)] = packed

    def drain(self) -> None:
        """Every submission added so far compressed and in place (before the worker goes)."""
        if self._behind is not None:
            self._behind.close()
            self._behind = None
        self._pool = None

    def finish(
        self, excluded: dict[str, Any], known_keys: dict[str, Any], index: Any
    ) -> SubmissionStore:
        """The store, its indexes built: ``excluded`` and ``known_keys`` are the project's
        ``dup_excluded`` and ``dup_keys`` (a submission with no saved keys gets them made
        from its data, as ``import_project`` does), ``index`` its ``line_index`` (each
        submission's id, created_at, userid and email; a file without one has each line
        decoded for them)."""
        self.drain()
        store = self.store
        rows = index if _fits(index, len(self.lines)) else list(map(self._row, self.lines))
        store.blobs = dict(zip((row[0] for row in rows), self.lines, strict=True))
        if len(store.blobs) != len(rows):
            seen: set[str] = set()
            for row in rows:
                if row[0] in seen:
                    raise InvalidInput(f"duplicate submission_id {row[0]}")
                seen.add(row[0])
        self.lines = []
        store.meta = meta = {sid: (created, userid, email) for sid, created, userid, email in rows}
        store.order = sorted((created, sid) for sid, (created, _, _) in meta.items())
        by_user: dict[str, list[str]] = {}
        by_email: dict[str, list[str]] = {}
        for sid, (_, userid, email) in meta.items():
            if userid:
                by_user.setdefault(userid, []).append(sid)
            if email:
                by_email.setdefault(email, []).append(sid)
        store.by_user = {k: tuple(v) for k, v in by_user.items()}
        store.by_email = {k: tuple(v) for k, v in by_email.items()}
        self._index_duplicates(excluded, known_keys)
        return store

    def _row(self, blob: bytes) -> tuple[str, str, Any, Any]:
        packer = self.store.packer
        sub = orjson.loads(packer.unpack(blob) if packer and is_packed(blob) else blob)
        sid, created = sub.get("submission_id"), sub.get("created_at")
        if type(sid) is not str or type(created) is not str:
            raise InvalidInput("submission_id and created_at must be strings")
        return sid, created, sub.get("userid"), sub.get("email")

    def _index_duplicates(self, excluded: dict[str, Any], known_keys: dict[str, Any]) -> None:
        """The duplicate index as the saved server had it, built at once: the submissions
        in the order of the file's ``dup_keys`` (the order they were last indexed in: an
        edit or a deleted part re-indexes one), so each key's holders and the next save's
        ``dup_keys`` come out in the same order; creation order (``seq``) is the file's."""
        dups = self.store.dups
        blobs = self.store.blobs
        for sid, kinds in excluded.items():
            dups.excluded[sid] = frozenset(kinds)
        dups.seq = {sid: at for at, sid in enumerate(blobs)}
        entries: dict[duplicates.Key, list[str]] = {}
        nothing: frozenset[str] = frozenset()
        indexed = [sid for sid in known_keys if sid in blobs]
        if len(indexed) < len(blobs):  # submissions without saved keys: theirs made now
            indexed += [sid for sid in blobs if sid not in known_keys]
        for sid in indexed:
            saved = known_keys.get(sid)
            keys = (
                [tuple(k) for k in saved]
                if saved is not None
                else duplicates.keys_of(orjson.loads(self.store.json(sid)))
            )
            skip = dups.excluded.get(sid, nothing)
            kept = [k for k in keys if k[0] not in skip] if skip else keys
            dups.indexed[sid] = kept
            for key in kept:
                entries.setdefault(key, []).append(sid)
        dups.entries = {k: tuple(v) for k, v in entries.items()}


def _fits(index: Any, count: int) -> bool:
    """Whether ``index`` is a line index of ``count`` submissions (a file without one, or
    with a damaged one, has its lines decoded instead)."""
    return (
        isinstance(index, list)
        and len(index) == count
        and all(
            isinstance(row, list) and len(row) == 4 and type(row[0]) is str and type(row[1]) is str
            for row in index
        )
    )
