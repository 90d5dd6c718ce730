"""Reading a state file this server wrote in one pass, its submissions stored as they come.

A file with the server's header and each submission on a line of its own
(``snapshots.LINE``) is read in chunks: each submission's line goes straight into its
project's store (``BulkStore``: kept as the blob it already is, compressed on a worker
thread), the rest of the document (the skeleton: a few MB, dup keys included) is kept to be
decoded at the end, and the digest is computed as the chunks go by. So a file of 700 MB
never sits in memory whole, and nothing of it is decoded twice. Only when the digest
matches is the result used; any other file (no header, an edited one, a damaged line) gets
``None`` and the caller reads it the careful way, with its clear error.
"""

from __future__ import annotations

import hashlib
import os
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from idv_mock.backend.bulk_store import BulkStore
from idv_mock.backend.snapshots import LINE
from idv_mock.ground.progress import Progress

CHUNK = 16 << 20  # read in pieces this big, each a step of the progress line
HEADER_MAX = 128  # the header of a file whose body is compressed is in its first bytes
MB = 1 << 20
JSON_OBJECT = ord("{")
COMMA = b","  # the skeleton between two submissions of the same project


class NotMine(Exception):
    """Not a file this reader takes (the caller reads it the careful way)."""


def read_lined(
    path: Path, header: Any, progress: Progress, compressed: bool = False
) -> tuple[dict[str, Any], int] | None:
    """The document and epoch of ``path`` if its digest matches, its projects' submissions
    as filled ``BulkStore``s; None for any other file. ``header``: the compiled pattern of
    the server's header (epoch, digest). ``compressed``: the body after the plain header
    is one zstd frame (``persistence.save(compressed=True)``), read through a streaming
    decompressor; a damaged frame is a ``zstandard.ZstdError``."""
    with path.open("rb") as found, ThreadPoolExecutor(1, "idv-mock-load") as pool:
        first = found.read(HEADER_MAX if compressed else CHUNK)
        matched = header.match(first)
        if matched is None:
            return None
        epoch, digest = int(matched[1]), matched[2].decode()
        size = os.fstat(found.fileno()).st_size
        task = progress.task("reading", size, "MB", scale=MB) if size >= CHUNK else None
        source: BinaryIO = found
        if compressed:
            source = _decompressed(found, matched.end())
            first = first[: matched.end()] + source.read(CHUNK)
        try:
            doc = _Reader(pool, epoch, found).run(source, first, matched.end(), digest, task)
        except (NotMine, orjson.JSONDecodeError):  # any other error is a bug here: it shows
            return None
    if task is not None:
        task.end()
    return doc, epoch


def _decompressed(found: BinaryIO, at: int) -> BinaryIO:
    """The zstd frame of ``found`` from ``at`` on, as a file of its decompressed bytes.
    Decompressed on this thread: read ahead on another, it ran ~6% quicker at 100k but
    kept ~30 MB more (that thread's allocations come from a malloc arena of its own)."""
    import zstandard

    found.seek(at)
    reader: BinaryIO = zstandard.ZstdDecompressor().stream_reader(found, read_size=1 << 20)
    return reader


class _Reader:
    def __init__(self, pool: ThreadPoolExecutor, epoch: int, file: BinaryIO) -> None:
        self.pool = pool
        self.file = file  # the file read: its position is the progress (compressed or not)
        self.shown = 0
        self.hashed = hashlib.sha256(b"%d:{" % epoch)
        self.skeleton = bytearray()
        self.stores: list[BulkStore] = []
        self.current: BulkStore | None = None
        self.lined = False  # a LINE seen: the text before the next one is a segment
        self.pending: list[bytes] = []  # the start of the segment the next chunk goes on with

    def run(
        self, source: BinaryIO, first: bytes, body_at: int, digest: str, task: Any
    ) -> dict[str, Any]:
        self.hashed.update(memoryview(first)[body_at:])
        hashing: Future[None] = self.pool.submit(lambda: None)
        self._feed(first)
        self._show(task)
        while chunk := source.read(CHUNK):
            # on the worker, between compressions (both let go of the GIL), in order
            hashing = self.pool.submit(self.hashed.update, chunk)
            self._feed(chunk)
            self._show(task)
        hashing.result()
        if self.hashed.hexdigest() != digest:
            raise NotMine("the digest does not match")
        self._segment(b"".join(self.pending), last=True)
        self.pending = []
        for store in self.stores:
            store.drain()
        return self._document()

    def _show(self, task: Any) -> None:
        if task is not None:
            at = self.file.tell()
            task.add(at - self.shown)
            self.shown = at

    def _feed(self, chunk: bytes) -> None:
        """Take every segment ``chunk`` completes; keep what follows its last LINE."""
        end = chunk.find(LINE)
        if end < 0:
            self.pending.append(chunk)  # a segment longer than a chunk (an old layout)
            return
        self._segment(b"".join((*self.pending, chunk[:end])), last=False)
        at = end + 1
        while (end := chunk.find(LINE, at)) >= 0:
            self._segment(chunk[at:end], last=False)
            at = end + 1
        self.pending = [chunk[at:]]

    def _segment(self, part: bytes, last: bool) -> None:
        if not self.lined:  # the document's start, up to the first submission
            self.skeleton += part
            self.lined = not last
            return
        if not last and part and part[0] == JSON_OBJECT:
            if self.current is None:
                self.current = BulkStore(self.pool)
                self.stores.append(self.current)
            self.current.add(part)
            self.skeleton += b"0"  # a placeholder: the document gives each project's count
            return
        if part != COMMA:
            self.current = None  # this project's submissions end here
        self.skeleton += part

    def _document(self) -> dict[str, Any]:
        doc = orjson.loads(self.skeleton)
        self.skeleton = bytearray()
        if not isinstance(doc, dict):
            raise NotMine("not an object")
        doc.pop("state_file", None)
        if not self.stores:  # no submission on a line of its own (saved before the layout)
            return doc
        stores = iter(self.stores)
        for project in doc.get("projects", []):
            if not isinstance(project, dict):
                raise NotMine("a project is not an object")
            subs = project.get("submissions")
            if not isinstance(subs, list) or not subs:
                continue
            if subs.count(0) != len(subs):  # decoded submissions among the lines
                raise NotMine("a project mixes lines and objects")
            store = next(stores, None)
            if store is None or len(store) != len(subs):
                raise NotMine("the submissions do not match their lines")
            project["submissions"] = store
        if next(stores, None) is not None:
            raise NotMine("more lines than submissions")
        return doc
