"""Start states built ahead: the default start, shipped with the package, so a first
``Service()`` on a cold machine (a CI run, a fresh checkout) loads no Faker and seeds
nothing.

A start is the seeded service's state document (``export_state_json``), gzipped, in
``starts/`` under a name that is its key: what the start depends on (the seeding part of
the configuration) and the code that makes it (this package's seeding modules and schemas,
the installed Faker's ``__init__.py``, which carries Faker's version). Any change of those
gives another key, so a stale file is never read (the service seeds as before), and
``tests/test_prebuilt_start.py`` fails until ``make starts`` (``prebuilt.main()``)
writes it again.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import hashlib
import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from idv_mock.backend.service import ServiceConfig

STARTS = Path(__file__).resolve().parent / "starts"
BUILT_WITH = STARTS / "faker-version.txt"  # the Faker the shipped starts were made with
# the code a start is made by (with schemas)
SEEDING_PACKAGES = ("ground", "delivery", "backend", "backend/parts", "fake", "aml")
_state = {"enabled": True}


def key(config: ServiceConfig) -> str | None:
    """The start's key, or None for a configuration whose start is never prebuilt (a wall
    clock stamps its start with the time it is made)."""
    if config.clock_mode != "tick":
        return None
    seeding = {
        "project_id": config.project_id,
        "api_key": config.api_key,
        "admins": list(config.admins),
        "seed_count": config.seed_count,
        "random_seed": config.random_seed,
        "options": config.options,
        "clock_mode": config.clock_mode,
    }
    try:
        described = json.dumps(seeding, sort_keys=True)
    except (TypeError, ValueError):  # an option no JSON holds: never prebuilt
        return None
    digest = hashlib.sha256(described.encode())
    digest.update(sources_digest().encode())
    return digest.hexdigest()[:32]


@functools.cache
def sources_digest() -> str:
    """The contents of every file seeding runs (read once a process: a few ms)."""
    from idv_mock.ground import schemas

    package = Path(__file__).resolve().parents[1]
    files = sorted(package.glob("*.py"))
    for folder in SEEDING_PACKAGES:
        files += sorted(f for f in (package / folder).glob("*") if f.suffix in (".py", ".json"))
    files += sorted(Path(schemas.schema_dir()).rglob("*.json"))
    faker = importlib.util.find_spec("faker")  # found, not imported
    if faker is not None and faker.origin:
        files.append(Path(faker.origin))
    digest = hashlib.sha256()
    for found in files:
        digest.update(found.relative_to(found.parents[1]).as_posix().encode())
        digest.update(found.read_bytes())
    return digest.hexdigest()


def path_for(config: ServiceConfig) -> Path | None:
    found = key(config)
    return None if found is None else STARTS / f"start-{found}.json.gz"


def load(config: ServiceConfig) -> dict[str, Any] | None:
    """The prebuilt start of ``config`` as a state document, or None (seed as usual)."""
    if not _state["enabled"]:
        return None
    path = path_for(config)
    if path is None or not path.is_file():
        return None
    try:
        return orjson.loads(gzip.decompress(path.read_bytes()))  # type: ignore[no-any-return]
    except (OSError, EOFError, orjson.JSONDecodeError):  # damaged: seed as usual
        return None


@contextlib.contextmanager
def disabled() -> Iterator[None]:
    """Services made inside seed, whatever is prebuilt (to build a start, or compare one)."""
    before = _state["enabled"]
    _state["enabled"] = False
    try:
        yield
    finally:
        _state["enabled"] = before


def build(config: ServiceConfig) -> bytes:
    """The seeded start of ``config``, gzipped as it is shipped (no timestamp: the same
    bytes every time)."""
    from idv_mock.backend.service import Service

    with disabled():
        service = Service(config)
    try:
        return gzip.compress(service.export_state_json(), compresslevel=9, mtime=0)
    finally:
        service.close()


def prebuilt_configs() -> list[ServiceConfig]:
    """The starts shipped: the default one (``idv-mock serve`` and the pytest plugin's)."""
    from idv_mock.backend.service import ServiceConfig

    return [ServiceConfig()]


def write_all() -> list[Path]:
    """Write every shipped start again and remove stale ones: ``make starts``."""
    STARTS.mkdir(exist_ok=True)
    written = []
    for config in prebuilt_configs():
        path = path_for(config)
        assert path is not None
        path.write_bytes(build(config))
        written.append(path)
    for old in STARTS.glob("start-*.json.gz"):
        if old not in written:
            old.unlink()
    BUILT_WITH.write_text(faker_version() + "\n")
    return written


def faker_version() -> str:
    """The installed Faker's version (its distribution's metadata: slow, not for a start)."""
    import importlib.metadata

    return importlib.metadata.version("faker")


def main() -> None:
    """``make starts``."""
    for made in write_all():
        print(f"wrote {made.name} ({made.stat().st_size} bytes)")
