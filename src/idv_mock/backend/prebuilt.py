"""Start states built ahead: the default start, shipped with the package, so a first
``Service()`` on a cold machine (a CI run, a fresh checkout) loads no Faker and seeds
nothing.

A start is the seeded service's state document, gzipped, in ``starts/`` under a name that
is its key. The document is ``export_state_json``'s with each submission on a line of its
own and each project's ``line_index`` (the state file's layout, ``snapshots.LINE``): the
same JSON, read (``load``) without decoding a submission, each line becoming the stored
bytes as they are (``bulk_store.BulkStore``) and the indexes built from ``line_index`` and
``dup_keys``. Decoding the whole document and encoding each submission again was most of a
start. The gzip member is stored, not compressed (level 0: about 370 KB against 51 KB;
the wheel, a zip, compresses it): reading it is a copy and a CRC, where inflating it was a
fifth of a start. The key is what the start depends on (the seeding part of
the configuration) and the code that decides its bytes (``seeding_files``: the seeding
modules and every module of the package they import, the schemas seeding reads, the
installed Faker's ``__init__.py``, which carries Faker's version). Any change of those
gives another key, so a stale file is never read (the service seeds as before), and
``tests/test_prebuilt_start.py`` fails until ``make starts`` (``prebuilt.main()``)
writes it again. A change anywhere else (the CLI, the pages, the API, the other parts of
the service) keeps the key.

The modules are named by import name and their imports found by reading their source
(nothing is imported), so a module that moves only needs its new name here: a name that
is not found fails loudly (``SeedingModuleMissing``) rather than leaving a file out.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import hashlib
import importlib.util
import json
import os
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from idv_mock.backend.service import ServiceConfig

STARTS = Path(__file__).resolve().parent / "starts"
SOURCES = STARTS / "sources.txt"  # the files the key covers, found by ``make starts``
BUILT_WITH = STARTS / "faker-version.txt"  # the Faker the shipped starts were made with
# What decides a start's bytes, by import name: these modules and every ``idv_mock`` module
# they import, at any depth (a module imported inside a function too).
SEEDING_MODULES = (
    "idv_mock.backend.seed",  # the seeded mix
    "idv_mock.backend.seed_split",  # a large one on two cores
    "idv_mock.fake.factory",  # every seeded value (its imports: draws, checks, compat, ...)
    "idv_mock.backend.derive",  # the derived fields of each stored submission
    "idv_mock.backend.duplicates",
    "idv_mock.backend.store",
    "idv_mock.backend.projects",  # the project a start holds (options, clock, parts)
    "idv_mock.backend.snapshots",  # the state document a start is
)
# Read, their imports not followed (each imports most of the package): the service runs
# the seeding (``_seed``, ``_create``, ``create_project``, ``export_state_json``), the core
# holds its state, this module writes the file.
SEEDING_RUNNERS = ("idv_mock.backend.service", "idv_mock.backend.core", "idv_mock.backend.prebuilt")
# the schemas seeding reads (project validation and defaults, codes), with what they $ref
SEEDING_SCHEMAS = ("project.json", "project_options.json", "defs.json", "webhooks/common.json")


class SeedingModuleMissing(LookupError):
    """A module named in ``SEEDING_MODULES``/``SEEDING_RUNNERS`` (or imported by one) is
    not where its name says: it moved, and the list must follow it."""


_state = {"enabled": True}
GZIP = 31  # zlib's wbits for a gzip member (``load`` reads it without the gzip module)


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
    """The contents of every file that decides a start's bytes (read once a process).
    Which files those are is read from ``starts/sources.txt``, written by ``make starts``:
    finding them again (reading every seeding module's imports) costs a cold first use
    more than a hundred milliseconds. ``tests/test_prebuilt_key.py`` fails when the list
    written differs from the one found."""
    listed = _recorded_paths()
    if listed is not None:
        try:
            return digest_of(listed)
        except OSError:  # a listed file is gone (moved since ``make starts``): look again
            pass
    return digest_of(found_files())


def found_files() -> list[Path]:
    """The files deciding a start's bytes, found by reading the seeding modules."""
    from idv_mock.ground import schemas

    return seeding_files(Path(__file__).resolve().parents[1], Path(schemas.schema_dir()))


def _roots() -> dict[str, Path]:
    from idv_mock.ground import schemas

    faker = importlib.util.find_spec("faker")  # found, not imported
    roots = {"package": Path(__file__).resolve().parents[1]}  # idv_mock's folder
    roots["schemas"] = Path(schemas.schema_dir()).resolve()
    if faker is not None and faker.origin:
        roots["faker"] = Path(faker.origin).parent
    return roots


def recorded_files() -> list[Path] | None:
    """The files ``make starts`` found, as ``sources.txt`` lists them (a root and a path
    under it a line), or None without that list."""
    found = _recorded_paths()
    return None if found is None else [Path(path) for path in found]


def _recorded_paths() -> list[str] | None:
    """``recorded_files`` as path strings: a first start's key makes no ``Path`` per file
    (a third of working the key out was there)."""
    try:
        with open(SOURCES, encoding="utf-8") as listing:
            lines = listing.read().splitlines()
    except OSError:
        return None
    roots = {name: os.fspath(root) for name, root in _roots().items()}
    files = []
    for line in lines:
        root, _, rest = line.partition(" ")
        if root not in roots:
            return None
        files.append(os.path.join(roots[root], *rest.split("/")))
    return files


def record_files(files: list[Path]) -> str:
    """``sources.txt``'s text for ``files``: each as its root's name and its path there."""
    roots = _roots()
    lines = []
    for path in files:
        for name, root in roots.items():
            if path.resolve().is_relative_to(root):
                lines.append(f"{name} {path.resolve().relative_to(root).as_posix()}")
                break
        else:
            raise SeedingModuleMissing(f"{path} is under none of {sorted(roots)}")
    return "\n".join(lines) + "\n"


def digest_of(files: Sequence[str | Path]) -> str:
    """Each file's folder and name (``backend/seed.py``) and its bytes; read unbuffered
    with ``open`` rather than ``Path.read_bytes`` (half the cost of a first ``Service()``
    was here)."""
    digest = hashlib.sha256()
    for found in files:
        folder, name = os.path.split(os.fspath(found))
        digest.update(f"{os.path.basename(folder)}/{name}".encode())
        with open(found, "rb", buffering=0) as file:
            digest.update(file.readall())
    return digest.hexdigest()


def seeding_files(package: Path, schema_root: Path) -> list[Path]:
    """The files a start's bytes depend on, sorted: the seeding modules of ``package``
    (``idv_mock``'s folder) with what they import and the data files beside them, the
    seeding schemas under ``schema_root`` with what they reference, Faker's
    ``__init__.py``."""
    modules = _imported(package, SEEDING_MODULES) | {
        _module_file(package, name) for name in SEEDING_RUNNERS
    }
    data = {f for m in modules for f in m.parent.glob("*.json")}
    files = sorted(modules | data) + _schemas(schema_root)
    faker = importlib.util.find_spec("faker")  # found, not imported
    if faker is not None and faker.origin:
        files.append(Path(faker.origin))
    return files


def _module_file(package: Path, name: str) -> Path:
    """The source file of the module ``name`` (``idv_mock.x.y``) under ``package``."""
    base = package.joinpath(*name.split(".")[1:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    raise SeedingModuleMissing(
        f"{name} (a seeding module, prebuilt.py) is not found: it moved; update "
        "SEEDING_MODULES/SEEDING_RUNNERS in idv_mock/backend/prebuilt.py"
    )


def _is_module(package: Path, name: str) -> bool:
    base = package.joinpath(*name.split(".")[1:])
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _imported(package: Path, roots: tuple[str, ...]) -> set[Path]:
    """The files of ``roots`` and of every ``idv_mock`` module they import, at any depth."""
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo += _imports_of(package, name)
    return {_module_file(package, name) for name in seen}


def _imports_of(package: Path, name: str) -> list[str]:
    """The ``idv_mock`` modules ``name``'s source imports (``from pkg import sub`` names
    ``pkg.sub`` when it is a module, else ``pkg`` itself)."""
    source = _module_file(package, name)
    here = name if source.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(source.read_bytes())):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = here.rsplit(".", node.level - 1)[0] if node.level > 1 else here
            module = (
                (node.module or "")
                if not node.level
                else ".".join(p for p in (base, node.module) if p)
            )
            subs = [f"{module}.{a.name}" for a in node.names]
            modules = [s for s in subs if _is_module(package, s)]
            found += modules if len(modules) == len(subs) else [module, *modules]
    top = __name__.partition(".")[0]  # idv_mock
    return [m for m in found if m.partition(".")[0] == top]


def _schemas(root: Path) -> list[Path]:
    """``SEEDING_SCHEMAS`` and every schema file they reference (``$ref``), at any depth."""
    seen: set[Path] = set()
    todo = [root / name for name in SEEDING_SCHEMAS]
    while todo:
        path = todo.pop().resolve()
        if path in seen:
            continue
        seen.add(path)
        todo += [path.parent / ref for ref in _file_refs(orjson.loads(path.read_bytes()))]
    return sorted(seen)


def _file_refs(node: Any) -> list[str]:
    """The files named by the ``$ref`` values in a schema (``defs.json#/...``: defs.json)."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        own = [ref.partition("#")[0]] if isinstance(ref, str) and ref.partition("#")[0] else []
        return own + [f for value in node.values() for f in _file_refs(value)]
    if isinstance(node, list):
        return [f for value in node for f in _file_refs(value)]
    return []


def path_for(config: ServiceConfig) -> Path | None:
    found = key(config)
    return None if found is None else STARTS / f"start-{found}.json.gz"


def available(config: ServiceConfig) -> bool:
    """Whether ``Service(config)`` starts from a shipped start (``load`` reads it)."""
    path = path_for(config) if _state["enabled"] else None
    return path is not None and path.is_file()


def load(config: ServiceConfig) -> dict[str, Any] | None:
    """The prebuilt start of ``config`` as a state document whose projects' submissions
    are each a ``BulkStore`` of their lines (``import_project`` takes it), or None (seed as
    usual)."""
    if not _state["enabled"]:
        return None
    path = path_for(config)
    if path is None or not path.is_file():
        return None
    try:
        with open(path, "rb", buffering=0) as file:
            return document(zlib.decompress(file.readall(), GZIP))
    except (OSError, zlib.error, ValueError, LookupError, TypeError):  # damaged: seed as usual
        return None


def document(raw: bytes) -> dict[str, Any]:
    """The state document of a start's bytes (``build``'s layout), each project's
    submissions a ``BulkStore`` of their lines; raises ValueError when it is not so laid
    out. Lines alternate with the document around them: a submission, then ``,`` or the
    rest of the document up to the next project's first; each submission is put back as a
    ``0`` to decode the document without them (the placeholders give each project's
    count)."""
    from idv_mock.backend.bulk_store import BulkStore
    from idv_mock.backend.snapshots import LINE

    parts = raw.split(LINE)
    lines = parts[1::2]
    doc = orjson.loads(b"0".join(parts[0::2]))
    if not isinstance(doc, dict) or not isinstance(doc.get("projects"), list):
        raise ValueError("not a state document")
    taken = 0
    for project in doc["projects"]:
        held = project["submissions"]
        if not isinstance(held, list) or any(type(p) is not int or p != 0 for p in held):
            raise ValueError("a submission off its line")
        store = BulkStore()
        for line in lines[taken : taken + len(held)]:
            store.add(line)
        taken += len(held)
        project["submissions"] = store
    if taken != len(lines):
        raise ValueError("a submission off its line")
    return doc


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
    bytes every time): ``export_state_json``'s document, each submission on its line, each
    project with its ``line_index`` (what ``document`` reads)."""
    from idv_mock.backend.service import Service
    from idv_mock.backend.snapshots import export_project

    with disabled():
        service = Service(config)
    try:
        doc = {
            "version": 1,
            "clock": service.clock.export(),
            "projects": [
                export_project(p, lines=True, index=True) for p in service.projects.values()
            ],
        }
        import gzip

        return gzip.compress(orjson.dumps(doc), compresslevel=0, mtime=0)
    finally:
        service.close()


def prebuilt_configs() -> list[ServiceConfig]:
    """The starts shipped: the default one (``idv-mock serve`` and the pytest plugin's)."""
    from idv_mock.backend.service import ServiceConfig

    return [ServiceConfig()]


def write_all() -> list[Path]:
    """Write every shipped start again and remove stale ones: ``make starts``."""
    STARTS.mkdir(exist_ok=True)
    SOURCES.write_text(record_files(found_files()))  # first: the keys below are read by it
    sources_digest.cache_clear()
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
