"""Keeping a demo's state across restarts: ``idv-mock serve --state-file PATH``.

Saves are atomic (write a temporary file beside the target, fsync, rename, fsync the
folder), so a crash or ``kill -9`` between saves loses at most the last interval and never
leaves a half-written file; a failed save removes its temporary file, and a start removes
the ones a killed server left. A file that is not an idv-mock state is refused rather
than overwritten.

The file starts with a header the server writes itself, ``{"state_file": {"epoch": N,
"sha256": ...}, ...}``. The digest covers the epoch and the rest of the document, so a
file this server wrote loads without the JSON Schema check (seconds per thousand
submissions); a foreign or edited one gets the full check, once. The epoch counts the
starts of the file: each start bumps it and saves at once, before serving, and the id
generator mixes it in, so no two starts hand out the same ids, even when a crash lost what
the last one handed out.

A file this server wrote is read in one pass (``state_reader``: each submission's line
stored as it is, no document in memory) and saved a batch at a time (``state_writer``);
any other file is read whole and checked, as before.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import logging
import os
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from idv_mock.backend import InvalidInput, Service
from idv_mock.backend.snapshots import LINE
from idv_mock.ground import schemas
from idv_mock.ground.clock import iso
from idv_mock.ground.gc_pause import no_gc
from idv_mock.ground.jsondepth import STATE_DEPTH, too_deep
from idv_mock.ground.progress import SILENT, Progress
from idv_mock.tools import state_reader, state_writer

_HEADER = re.compile(rb'\{"state_file":\{"epoch":(\d{1,18}),"sha256":"([0-9a-f]{64})"\},')
LOG = logging.getLogger("idv_mock.state_file")
MB = 1 << 20
CHUNK = 16 * MB  # read and written in pieces this big, each a step of the progress line
JSON_OBJECT = ord("{")
ZSTD_LEVEL = 1  # zstd's fastest: a state file to an eighth (3: 1.5x the CPU, 1% smaller)
_STALE = re.compile(r"\.(?P<name>.+)\.(?P<pid>\d+)\.tmp")


class StateFileError(Exception):
    """The state file cannot be used; the message says why and what to do."""


def _digest(epoch: int, body: memoryview) -> str:
    """The digest of the document without its header (``body`` is what follows its ``{``)."""
    found = hashlib.sha256(b"%d:{" % epoch)
    found.update(body)
    return found.hexdigest()


def _header(epoch: int, digest: str) -> bytes:
    return b'{"state_file":{"epoch":%d,"sha256":"%s"},' % (epoch, digest.encode())


def _tmp_path(path: Path) -> Path:
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


def save(
    service: Service,
    path: Path,
    epoch: int = 0,
    progress: Progress = SILENT,
    parts: state_writer.Parts | None = None,
    compressed: bool = False,
) -> None:
    """Write the whole state to ``path`` atomically; on failure nothing is left behind.
    The body is written a batch at a time after a header of the right length, and the
    header (its digest made as the body went by) written over it before the fsync and the
    rename. ``progress``: where the write shows how far it is (in MB); ``parts``: the
    state as ``Service.export_state_parts`` took it earlier (else taken now);
    ``compressed``: the body as one zstd frame after the plain header (the start cache's
    entries: ``state_reader.read_lined(compressed=True)`` reads them)."""
    placeholder = _header(epoch, "0" * 64)
    tmp = _tmp_path(path)
    task = progress.task("saving", 0, "MB", scale=MB)
    try:
        with tmp.open("wb") as out:
            out.write(placeholder)
            with no_gc(), _body_writer(out, compressed) as body:
                # the document's parts: a list per submission (duplicate keys)
                digest = state_writer.write_body(service, body, epoch, task, parts)
            out.seek(0)
            out.write(_header(epoch, digest))
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
        task.end()
    except BaseException:
        with contextlib.suppress(OSError):  # the save's own error is the one to report
            tmp.unlink(missing_ok=True)
        raise
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)


@contextlib.contextmanager
def _body_writer(out: BinaryIO, compressed: bool) -> Iterator[BinaryIO]:
    """``out``, or a zstd frame written into it (streamed: no copy of the body is kept),
    ended when the body is done; ``out`` stays open for its header."""
    if not compressed:
        yield out
        return
    import zstandard

    compressor = zstandard.ZstdCompressor(level=ZSTD_LEVEL, write_checksum=True)
    with compressor.stream_writer(out, closefd=False) as frame:
        yield frame


@dataclass(slots=True)
class Loaded:
    """A state file read and checked: its document and its epoch."""

    doc: dict[str, Any]
    epoch: int


def read(path: Path, progress: Progress = SILENT) -> Loaded:
    """Read and check ``path``: a file with a matching digest skips the schema check. One
    this server wrote with a line per submission is read in one pass, its submissions
    stored as they come (``state_reader``); for any other the whole file is read, and a
    lined one's submissions stay JSON (each a view of its line, decoded one at a time as
    it is stored: a state of 100k never exists as 3 GB of objects at once)."""
    try:
        with no_gc():  # millions of new objects: no collection walking them again and again
            streamed = state_reader.read_lined(path, _HEADER, progress)
        if streamed is not None:  # this server's own file, read in one pass
            return Loaded(*streamed)
        raw = _read_bytes(path, progress)
        epoch, trusted = _verified(raw)
        with no_gc():  # millions of new objects: no collection walking them again and again
            lined = _lined(raw) if trusted else None
            doc = orjson.loads(raw) if lined is None else lined
    except (OSError, orjson.JSONDecodeError) as exc:
        raise StateFileError(
            f"{path}: not a readable JSON file ({exc}); not overwriting it"
        ) from None
    if not isinstance(doc, dict):
        raise StateFileError(
            f"{path}: not an idv-mock state file (not an object); not overwriting it"
        )
    header = doc.pop("state_file", None)
    if not trusted:
        epoch = _header_epoch(path, header)
        _check_foreign(path, doc)
    return Loaded(doc, epoch)


def _lined(raw: bytes | bytearray) -> Any:
    """The document of a file saved with each submission on a line of its own
    (``snapshots.LINE``), its submissions left as views of their lines; None for a file
    saved without (before the layout: decoded whole)."""
    at = raw.find(LINE)
    if at < 0:
        return None
    view, subs = memoryview(raw), []
    skeleton = bytearray(view[:at])
    while at >= 0:  # lines alternate: a submission ("{"), then "," or "]" and what follows
        end = raw.find(LINE, at + 1)
        line = view[at + 1 : end] if end >= 0 else view[at + 1 :]
        if end >= 0 and raw[at + 1] == JSON_OBJECT:
            subs.append(line)
            skeleton += b"0"  # a placeholder: the document gives each project's count
        else:
            skeleton += line
        at = end
    doc = orjson.loads(skeleton)
    projects = doc.get("projects", []) if isinstance(doc, dict) else []
    lists = [p["submissions"] for p in projects if isinstance(p, dict) and "submissions" in p]
    if not all(isinstance(found, list) for found in lists):
        return None  # decoded whole: the schema check says what is wrong
    holes = [
        [at for at, sub in enumerate(found) if type(sub) is int and sub == 0] for found in lists
    ]
    if sum(map(len, holes)) != len(subs):
        return None  # not laid out as this server saves it (a submission off its line)
    lines = iter(subs)
    for found, at_holes in zip(lists, holes, strict=True):
        for at in at_holes:
            found[at] = next(lines)
    return doc


def _read_bytes(path: Path, progress: Progress) -> bytes | bytearray:
    """The file's bytes, read in chunks so a large one shows how far it is (into one
    buffer: no second copy of a file of hundreds of MB)."""
    with path.open("rb") as found:
        size = os.fstat(found.fileno()).st_size
        if size < CHUNK:
            return found.read()
        task = progress.task("reading", size, "MB", scale=MB)
        raw = bytearray(size)
        view, at = memoryview(raw), 0
        while at < size:
            got = found.readinto(view[at : at + CHUNK])
            if not got:
                break
            at += got
            task.add(got)
        task.end()
        del view
        return raw if at == size else raw[:at]


def _verified(raw: bytes | bytearray) -> tuple[int, bool]:
    """The header's epoch and whether its digest matches the rest of the file."""
    found = _HEADER.match(raw)
    if found is None:
        return 0, False
    epoch = int(found[1])
    return epoch, _digest(epoch, memoryview(raw)[found.end() :]) == found[2].decode()


MAX_EPOCH = 10**18 - 1  # what the header's 18 digits hold


def _header_epoch(path: Path, header: Any) -> int:
    """The epoch of a file's own header, checked: a state document without one (an export
    of ``GET /__admin/state``) starts at 0; a header with a missing or invalid epoch is
    refused, since guessing one could hand out ids an earlier start handed out."""
    if header is None:
        return 0
    epoch = header.get("epoch") if isinstance(header, dict) else None
    if type(epoch) is int and 0 <= epoch <= MAX_EPOCH:
        return epoch
    found = "missing" if not isinstance(header, dict) or "epoch" not in header else repr(epoch)
    raise StateFileError(
        f"{path}: state_file.epoch must be a whole number from 0 to {MAX_EPOCH} "
        f"(found: {found[:40]}); fix it, or remove the state_file header to start the "
        "count again; not overwriting it"
    )


def _check_foreign(path: Path, doc: dict[str, Any]) -> None:
    """The full check of a file this server did not write as it is: depth, then schema."""
    if too_deep(doc, STATE_DEPTH):
        detail = f"JSON nested deeper than {STATE_DEPTH} levels"
        raise StateFileError(f"{path}: not an idv-mock state file ({detail}); not overwriting it")
    problems = schemas.errors("state.json", doc)
    if problems:
        detail = "; ".join(problems[:3])
        raise StateFileError(f"{path}: not an idv-mock state file ({detail}); not overwriting it")


def load(service: Service, path: Path, progress: Progress = SILENT) -> bool:
    """Load ``path`` into ``service`` if it exists; False when there is no file yet."""
    return _load(service, path, progress) is not None


def _load(service: Service, path: Path, progress: Progress = SILENT) -> Loaded | None:
    if not path.exists():
        return None
    loaded = read(path, progress)
    try:
        # checked once, above
        # the file's state, as loaded, is the server's start: both resets go back to it
        service.import_state(
            loaded.doc, validate=False, give=True, progress=progress, as_start=True
        )
    except InvalidInput as exc:
        raise StateFileError(f"{path}: {exc}; not overwriting it") from None
    loaded.doc.clear()  # its submissions' lines hold the file's bytes: not through the save
    return loaded


def remove_stale_temporaries(path: Path) -> None:
    """Temporary files of ``path`` left by servers that are gone (a kill during a save)."""
    for candidate in path.parent.glob(f".{path.name}.*.tmp"):
        found = _STALE.fullmatch(candidate.name)
        if found and found["name"] == path.name and not _alive(int(found["pid"])):
            with contextlib.suppress(OSError):  # not ours to remove after all: leave it
                candidate.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return False  # a temporary file of this process is from an earlier life of its pid
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, another user's
    return True


class StateFile:
    """One server's state file: open (load, new epoch, save at once), save when changed.

    Saves are serialized, so the periodic saver and the final save never share a temporary
    file. Every outcome is recorded in ``service.save_health``.
    """

    def __init__(
        self,
        service: Service,
        path: Path,
        *,
        stop_writes: bool = True,
        progress: Progress = SILENT,
    ) -> None:
        self.service, self.path = service, path
        self.progress = progress  # shown by the load, the first save and ``save(shown=True)``
        self.health = service.save_health
        self.health.path, self.health.stop_writes = str(path), stop_writes
        self._lock = threading.Lock()
        self._saved: tuple[int, Any] | None = None  # the change marker of the last save

    @property
    def epoch(self) -> int:
        return self.health.epoch

    def open(self) -> bool:
        """Load the file (if any) and start a new epoch, saved before anything is served:
        a save that fails now is a ``StateFileError`` (the server does not start)."""
        remove_stale_temporaries(self.path)
        with no_gc():  # a large file is millions of objects: collect none of them meanwhile
            loaded = _load(self.service, self.path, self.progress)
            if loaded is not None and loaded.epoch >= MAX_EPOCH:  # checked before writing
                raise StateFileError(
                    f"{self.path}: state_file.epoch is {MAX_EPOCH}, the last one: this start "
                    "cannot count further; remove the state_file header to start the count "
                    "again; not overwriting it"
                )
            self.health.epoch = (loaded.epoch if loaded else 0) + 1
            self.service.factory.set_epoch(self.health.epoch)
            try:
                self.save(shown=True)
            except OSError as exc:
                error = describe_error(exc)
                raise StateFileError(f"{self.path}: cannot save the state file ({error})") from None
        return loaded is not None

    def _marker(self) -> tuple[int, Any]:
        return self.service.changes, self.service.clock.current

    def changed(self) -> bool:
        return self._saved != self._marker() or bool(self.health.consecutive_failures)

    def save(self, shown: bool = False) -> None:
        """Save now; raises (and records) the failure. ``shown``: with its progress (the
        first and the last save; periodic ones stay quiet while the server answers)."""
        with self._lock:
            marker = self._marker()  # before the export: a change during it saves again later
            try:
                save(self.service, self.path, self.health.epoch, self.progress if shown else SILENT)
            except Exception as exc:
                self.health.failed(describe_error(exc))
                raise
            self._saved = marker
            self.health.succeeded(iso(datetime.now(timezone.utc)))

    def save_if_changed(self, shown: bool = False) -> bool:
        """Save when anything changed since the last save (or it failed); True if it saved."""
        if not self.changed():
            return False
        self.save(shown)
        return True


def describe_error(exc: BaseException) -> str:
    """One line: ``No space left on device (ENOSPC)`` rather than a traceback."""
    if isinstance(exc, OSError) and exc.strerror:
        name = errno.errorcode.get(exc.errno or -1, "")
        return f"{exc.strerror} ({name})" if name else exc.strerror
    return f"{type(exc).__name__}: {exc}"


class PeriodicSaver:
    """Saves every ``interval`` seconds when something changed, on a daemon thread.

    A failed save never ends the thread: it is logged (one line), recorded in the service's
    save health (which refuses writes while it lasts, unless switched off) and retried
    after a pause that doubles from ``min(interval, 1 s)`` up to ``MAX_BACKOFF``.
    """

    MAX_BACKOFF = 30.0

    def __init__(self, state: StateFile, interval: float) -> None:
        self.state, self.interval = state, interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="idv-mock-saver")

    def start(self) -> PeriodicSaver:
        if self.interval > 0:
            self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self._pause()):
            try:
                self.state.save_if_changed()
            except Exception as exc:  # the saver must outlive any failure
                self._log_failure(exc)

    def _pause(self) -> float:
        failures = self.state.health.consecutive_failures
        if not failures:
            return self.interval
        return min(min(self.interval, 1.0) * 2.0 ** (failures - 1), self.MAX_BACKOFF)

    def _log_failure(self, exc: Exception) -> None:
        health = self.state.health
        refused = "; writes answer 503 until a save succeeds" if health.stop_writes else ""
        LOG.error(
            "save to %s failed: %s (%d in a row); retrying in %g s%s",
            self.state.path,
            describe_error(exc),
            health.consecutive_failures,
            self._pause(),
            refused,
        )

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(60)
