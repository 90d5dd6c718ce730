"""Writing a state file's body a batch at a time, its digest made as it goes.

``export_state_json`` builds the whole document (700 MB for 100k submissions, plus each
submission's JSON once more in a list): a save of 100k held 1.8 GB at its peak. Here the
service gives the document with a hole per project's submissions and the stored bytes
(``Service.export_state_parts``, under its lock), and each batch of submissions' JSON is
made, hashed and written before the next: the file is byte for byte what
``export_state_json(lines=True)`` would be, each submission between two ``LINE``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import BinaryIO

from idv_mock.backend import Service
from idv_mock.backend.packing import is_packed
from idv_mock.backend.snapshots import HOLE, LINE, Stored
from idv_mock.ground.progress import Task

BATCH = 2 << 20  # bytes of JSON joined into one write
QUEUED = 2  # batches waiting for the writer at most
FIRST = b"[" + LINE
BETWEEN = LINE + b"," + LINE
LAST = LINE + b"]"


Parts = tuple[bytes, list[Stored]]  # what ``Service.export_state_parts`` gives


def write_body(
    service: Service, out: BinaryIO, epoch: int, task: Task, taken: Parts | None = None
) -> str:
    """Write the state document after its ``{`` to ``out``; its digest (as the header
    says it: the epoch, then the body). ``task`` counts MB, its total estimated as it goes.
    ``taken``: the state as taken earlier (a save on another thread of the state of a
    moment before), else taken now."""
    skeleton, stored = taken if taken is not None else service.export_state_parts()
    parts = skeleton[1:].split(HOLE)  # after its "{"; one part more than projects
    assert len(parts) == len(stored) + 1, "a NUL byte in the document"
    digest = hashlib.sha256(b"%d:{" % epoch)
    count = sum(len(blobs) for blobs, _ in stored)
    done = 0
    writes: list[Future[None]] = []

    def put(pieces: list[bytes]) -> None:
        for piece in pieces:  # not joined: a large buffer made and freed per batch would
            digest.update(piece)  # leave the heap it came from grown for good
            out.write(piece)

    with ThreadPoolExecutor(1, "idv-mock-save") as pool:
        for part, project in zip(parts, stored, strict=False):
            writes.append(pool.submit(put, [part]))
            for batch, size, length in _batches(project):
                writes.append(pool.submit(put, batch))
                while len(writes) > QUEUED:  # the batches made and not written: a few MB
                    writes.pop(0).result()
                done += size
                # the total guessed from the submissions written so far
                task.total = max(task.done + length, task.done * count // max(done, 1))
                task.add(length)
        writes.append(pool.submit(put, [parts[-1]]))
        for write in writes:
            write.result()  # its error, if any, is the save's
    task.total = task.done = task.done + len(parts[-1])
    return digest.hexdigest()


def _batches(project: Stored) -> Iterator[tuple[list[bytes], int, int]]:
    """The project's submissions as JSON (``[``, each between ``LINE``s, ``]``), in batches
    of about ``BATCH`` bytes, each with how many submissions it holds and its length."""
    blobs, packer = project
    if not blobs:
        yield [b"[]"], 0, 2
        return
    unpack = packer.unpack if packer is not None else None
    pieces: list[bytes] = [FIRST]
    size, held = len(FIRST), 0
    for at, blob in enumerate(blobs):
        if at:
            pieces.append(BETWEEN)
        found = unpack(blob) if unpack is not None and is_packed(blob) else blob
        pieces.append(found)
        size += len(found) + len(BETWEEN)
        held += 1
        if size >= BATCH:
            yield pieces, held, size
            pieces, size, held = [], 0, 0
    pieces.append(LAST)
    yield pieces, held, size + len(LAST) - len(BETWEEN)
