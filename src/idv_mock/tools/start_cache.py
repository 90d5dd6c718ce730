"""A large seeded start kept on this machine: ``idv-mock serve --seed-count 100000`` seeds
once, and a later start with the same seeding reads it back in a few seconds.

Seeding cannot be spread over cores (one random stream) and costs about 25 s of CPU for
100k submissions; reading the same state as a state file this server wrote costs about 4 s
(``state_reader``), byte for byte the same state. The entry's name is the key of the
shipped start (``prebuilt.key``: the seeding part of the configuration, the code and
schemas that decide the seeded bytes, Faker's version), so a change of any of those
seeds again; a wall clock (whose start is stamped with the time) is never cached. Only
counts from ``MIN_COUNT`` on are cached: below, seeding is quicker than the file's
save. An entry is a state file (header, digest) whose body after the header is
zstd-compressed (written and read streaming, never whole in memory): a damaged one is
ignored, seeded again and rewritten.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from idv_mock.backend import Service, ServiceConfig, prebuilt
from idv_mock.ground.progress import SILENT, Progress
from idv_mock.tools import persistence, state_reader

MIN_COUNT = 2_000  # seeding 2,000 costs about 0.5 s of CPU, reading them back about 0.1 s
# an entry is a state file whose body is one zstd frame (an eighth of the size); entries of
# earlier versions, plain state files named ``start-KEY.json``, are ignored
SUFFIX = ".jsonz"


def folder() -> Path:
    """``$XDG_CACHE_HOME/idv-mock``, or ``~/.cache/idv-mock`` (the XDG base directory
    rules: a relative ``XDG_CACHE_HOME`` is ignored)."""
    given = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(given) if given and os.path.isabs(given) else Path.home() / ".cache"
    return base / "idv-mock"


def path_for(config: ServiceConfig) -> Path | None:
    """The entry of ``config``'s seeded start, or None when it is not cached."""
    if config.seed_count < MIN_COUNT:
        return None
    found = prebuilt.key(config)
    return None if found is None else folder() / f"start-{found}{SUFFIX}"


def load(path: Path, progress: Progress = SILENT) -> dict[str, Any] | None:
    """The entry as a start for ``Service(config, start=...)``, or None: missing (no
    message) or damaged (``Damaged``)."""
    if not path.is_file():
        return None
    import zstandard

    try:
        found = state_reader.read_lined(path, persistence._HEADER, progress, compressed=True)
    except OSError as exc:
        raise Damaged(persistence.describe_error(exc)) from None
    except zstandard.ZstdError as exc:
        raise Damaged(f"its compressed body is damaged: {exc}") from None
    if found is None:
        raise Damaged("its digest does not match")
    return found[0]


class Damaged(Exception):
    """The entry cannot be read: seeded again and rewritten."""


def save_behind(
    service: Service, path: Path, done: Callable[[bool, str], None]
) -> threading.Thread:
    """A thread (for the caller to start) that writes ``service``'s state as the entry,
    the state as it is now (just seeded: nothing else has happened), so the server answers
    while the entry is written (about 5 s for 100k): a request that changes the state
    meanwhile changes nothing in the entry. ``done`` is told how it ended: written or not,
    and the line to show. Not a daemon: a server stopped meanwhile finishes the entry
    before it exits."""
    parts = service.export_state_parts()

    def write() -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            persistence.remove_stale_temporaries(path)  # a server killed while writing left
            persistence.save(service, path, parts=parts, compressed=True)
        except OSError as exc:
            done(False, f"idv-mock serve: start cache {path} not written ({exc})")
            return
        done(True, f"start cache: {path} written")

    return threading.Thread(target=write, name="idv-mock-start-cache")
