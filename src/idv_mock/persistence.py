"""Keeping a demo's state across restarts: ``idv-mock serve --state-file PATH``.

Saves are atomic (write a temporary file beside the target, fsync, rename, fsync the
folder), so a crash or ``kill -9`` between saves loses at most the last interval and never
leaves a half-written file. A file that is not an idv-mock state is refused rather than
overwritten.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import orjson

from idv_mock import schemas
from idv_mock.backend import InvalidInput, Service


class StateFileError(Exception):
    """The state file cannot be used; the message says why and what to do."""


def save(service: Service, path: Path) -> None:
    data = service.export_state_json()
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with tmp.open("wb") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, path)
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)


def load(service: Service, path: Path) -> bool:
    """Load ``path`` into ``service`` if it exists; False when there is no file yet."""
    if not path.exists():
        return False
    try:
        doc = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:
        raise StateFileError(
            f"{path}: not a readable JSON file ({exc}); not overwriting it"
        ) from None
    problems = schemas.errors("state.json", doc)
    if problems:
        detail = "; ".join(problems[:3])
        raise StateFileError(f"{path}: not an idv-mock state file ({detail}); not overwriting it")
    try:
        service.import_state(doc)
    except InvalidInput as exc:
        raise StateFileError(f"{path}: {exc}; not overwriting it") from None
    return True


class PeriodicSaver:
    """Saves every ``interval`` seconds on a daemon thread until stopped."""

    def __init__(self, service: Service, path: Path, interval: float) -> None:
        self.service, self.path, self.interval = service, path, interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="idv-mock-saver")

    def start(self) -> PeriodicSaver:
        if self.interval > 0:
            self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            save(self.service, self.path)

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(5)
