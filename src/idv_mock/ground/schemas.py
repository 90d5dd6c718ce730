"""Load the JSON Schemas of ``schemas/`` and validate against them.

The schema files are the single source of truth for every resource, request and response:
the backend reads allowed values and option defaults from them, the tests validate every
response with them, and the OpenAPI document is generated from them. A wheel carries them
as ``idv_mock/schemas``; a source checkout (editable install) reads the top-level folder.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from idv_mock.ground.jsondepth import MESSAGE as DEPTH_MESSAGE
from idv_mock.ground.jsondepth import STATE_DEPTH, STATE_MESSAGE, too_deep

if TYPE_CHECKING:  # jsonschema and referencing load on the first validation (~50 ms)
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError
    from referencing import Registry

BASE_URI = "https://idv-mock.dev/schemas/"


@functools.cache
def schema_dir() -> Path:
    """The folder holding the schema files, packaged or from the source tree."""
    here = Path(__file__).resolve().parents[1]  # the package folder
    for candidate in (here / "schemas", here.parents[1] / "schemas"):
        if (candidate / "api.json").is_file():
            return candidate
    raise FileNotFoundError("idv-mock schema files not found next to the package")


def packaged_or_source(packaged: Path, source: Path) -> Path:
    """A data folder shipped beside the code: ``packaged`` (the wheel's copy) when it holds
    YAML files, else ``source`` (the repository's folder) when it does, else ``packaged``."""
    for candidate in (packaged, source):
        if candidate.is_dir() and any(candidate.glob("*.yaml")):
            return candidate
    return packaged


def file_or_builtin(name_or_path: str | Path, folder: Path) -> Path | None:
    """A data file by path, else the built-in ``folder/<name>.yaml``; None when neither is."""
    path = Path(name_or_path)
    if path.is_file():
        return path
    named = folder / f"{name_or_path}.yaml"
    return named if named.is_file() else None


@functools.cache
def all_schemas() -> dict[str, dict[str, Any]]:
    """Every schema file by its path under the folder (``webhooks/approved.json``)."""
    root = schema_dir()
    found = sorted(root.rglob("*.json"))
    return {name: load(name) for name in (p.relative_to(root).as_posix() for p in found)}


@functools.cache
def load(name: str) -> dict[str, Any]:
    """One schema file, read alone: a server's start needs a few of the 77."""
    path = schema_dir() / name
    if not path.is_file():
        raise KeyError(name)
    loaded: dict[str, Any] = orjson.loads(path.read_bytes())
    return loaded


@functools.cache
def _registry() -> Registry[Any]:
    from referencing import Registry, Resource

    resources = [(BASE_URI + n, Resource.from_contents(s)) for n, s in all_schemas().items()]
    return Registry().with_resources(resources)


@functools.cache
def validator(name: str) -> Draft202012Validator:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(load(name), registry=_registry())


def errors(name: str, instance: object, ignore: Collection[str] = ()) -> list[str]:
    """Readable messages of every violation, empty when the instance is valid. A document
    nested past the limit (a state document's: ``STATE_DEPTH``) is one violation, found
    without recursing into it. ``ignore``: keywords (``"not"``, ...) whose violations the
    caller says better itself."""
    if name == "state.json":
        if too_deep(instance, STATE_DEPTH):
            return [f"(root): {STATE_MESSAGE}"]
    elif too_deep(instance):
        return [f"(root): {DEPTH_MESSAGE}"]
    found: Iterator[ValidationError] = validator(name).iter_errors(instance)
    kept = (e for e in found if e.validator not in ignore)
    return [_describe(e) for e in sorted(kept, key=lambda e: list(e.absolute_path))]


def _describe(error: ValidationError) -> str:
    where = "/".join(str(p) for p in error.absolute_path) or "(root)"
    return f"{where}: {error.message[:300]}"


def is_valid(name: str, instance: object) -> bool:
    return not too_deep(instance) and bool(validator(name).is_valid(instance))


def definition(name: str) -> dict[str, Any]:
    """One entry of ``defs.json``'s ``$defs``, a local ``$ref`` in it resolved (``kyc_result``
    is ``kyc_outcome`` typed: each list is written once)."""
    defs: dict[str, Any] = load("defs.json")["$defs"]
    found = dict(defs[name])
    ref = str(found.pop("$ref", ""))
    if ref.startswith("#/$defs/"):
        return {**definition(ref.removeprefix("#/$defs/")), **found}
    return found


@functools.cache
def enum(name: str) -> tuple[str, ...]:
    """The allowed values of an enumerated definition of ``defs.json``."""
    return tuple(definition(name)["enum"])


@functools.cache
def countries() -> frozenset[str]:
    """ISO 3166-1 alpha-3 codes the mock knows (``defs.json`` ``country``)."""
    return frozenset(enum("country"))


def option_defaults() -> dict[str, Any]:
    """Default project options, as ``project_options.json`` states them."""
    props: dict[str, Any] = load("project_options.json")["properties"]
    return {key: orjson.loads(orjson.dumps(spec["default"])) for key, spec in props.items()}
