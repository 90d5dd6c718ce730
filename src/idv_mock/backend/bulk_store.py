"""One project's submission store filled in bulk from a state file this server wrote.

A state file of 100k submissions loaded one ``SubmissionStore.add`` at a time decodes each
submission, encodes it again and compresses it on the loading thread, and grows the user,
e-mail and duplicate indexes one tuple copy at a time: about 9 s of CPU. A file whose
digest says this server wrote it holds each submission as the exact bytes its store
keeps (``orjson.dumps`` of the submission, the bytes ``export_project`` writes), so here
each line *is* the stored blob: it is decoded once for the four values the indexes need,
never encoded again, compressed in batches on a worker thread (zstd lets go of the GIL),
and the indexes are built once at the end (the read order sorted once, each index's
tuples made once). The store it builds is the one ``add`` would have built, value for
value: the same blobs in the same insertion order (packed from ``PACK_FROM`` on, against
a dictionary trained on the same samples), the same order, indexes and duplicate index.
"""

from __future__ import annotations

from concurrent.futures import Executor, Future
from typing import Any

import orjson

from idv_mock.backend import duplicates
from idv_mock.backend.exceptions import InvalidInput
from idv_mock.backend.packing import PACK_FROM, SAMPLES, Packer, is_packed
from idv_mock.backend.store import SubmissionStore

BATCH = 512  # submissions compressed per job on the worker (about 3.5 MB of JSON)
QUEUED = 2  # jobs waiting at most: the JSON not yet compressed stays under ~10 MB


class BulkStore:
    """A store being filled from lines; ``len`` is how many it holds so far (what the
    state document's placeholder count is checked against)."""

    def __init__(self, pool: Executor | None = None) -> None:
        self.store = SubmissionStore()
        self.lines: list[bytes] = []  # each submission's blob, in the file's order
        self._pool = pool
        self._packed = 0  # lines before this one are compressed or sent to be
        self._jobs: list[tuple[int, Future[list[bytes]]]] = []

    def __len__(self) -> int:
        return len(self.lines)

    def add(self, line: bytes) -> None:
        """One submission as the exact JSON its store keeps (``line`` becomes the blob)."""
        lines = self.lines
        lines.append(line)
        if self.store.packer is None and len(lines) > PACK_FROM:  # as ``add`` decides
            self.store.packer = Packer(lines[PACK_FROM - SAMPLES : PACK_FROM])
            self._packed = PACK_FROM
        if self.store.packer is not None and len(lines) - self._packed >= BATCH:
            self._flush()

    def _flush(self) -> None:
        at, end = self._packed, len(self.lines)
        packer = self.store.packer
        if packer is None or at == end:
            return
        self._packed = end
        batch = self.lines[at:end]
        if self._pool is None:
            self.lines[at:end] = map(packer.pack, batch)
            return
        self._jobs.append((at, self._pool.submit(packer.pack_many, batch)))
        while len(self._jobs) > QUEUED:
            self._collect()

    def _collect(self) -> None:
        at, job = self._jobs.pop(0)
        packed = job.result()
        self.lines[at : at + len(packed)] = packed

    def drain(self) -> None:
        """Every submission added so far compressed and in place (before the worker goes:
        what is left after this is compressed here)."""
        self._flush()
        while self._jobs:
            self._collect()
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
