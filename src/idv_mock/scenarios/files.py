"""Scenario files: read, validate (naming the file and line of a problem), find built-ins."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from jsonschema.exceptions import best_match

from idv_mock.ground import schemas
from idv_mock.scenarios.matching import MATCHERS, TYPES, VAR, show
from idv_mock.scenarios.records import DEFAULT_PROJECT, GIVEN_ORDER, Scenario, ScenarioError

_HERE = Path(__file__).resolve().parent
# the wheel's idv_mock/scenarios/builtin, else the repository's scenarios/
BUILTIN_DIR = schemas.packaged_or_source(_HERE / "builtin", _HERE.parents[2] / "scenarios")


class _Loader(yaml.SafeLoader):
    """Safe YAML that keeps dates as text: ``date_of_birth: 1990-01-02`` stays a string."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in found if tag != "tag:yaml.org,2002:timestamp"]
    for first, found in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def find(name_or_path: str | Path) -> Path:
    """A scenario file by path, or a built-in one by name (``onboarding-approved``)."""
    found = schemas.file_or_builtin(name_or_path, BUILTIN_DIR)
    if found is not None:
        return found
    known = ", ".join(builtins())
    raise ScenarioError(
        Path(name_or_path), 0, f"no such file or built-in scenario (built-in: {known})"
    )


def builtins() -> list[str]:
    """Names of the built-in scenarios."""
    return sorted(p.stem for p in BUILTIN_DIR.glob("*.yaml"))


def builtin(name: str) -> Scenario:
    """A built-in scenario by name."""
    path = BUILTIN_DIR / f"{name}.yaml"
    if not path.is_file():
        raise ScenarioError(path, 0, f"no built-in scenario {name!r} ({', '.join(builtins())})")
    return load(path)


def load(path: str | Path) -> Scenario:
    """Read and check a scenario file; raises :class:`ScenarioError` when it is malformed."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(path, 0, f"cannot read: {exc}") from None
    return loads(text, str(path))


def loads(text: str, file: str = "<string>") -> Scenario:
    root, doc = _compose(text, file)
    error = best_match(schemas.validator("scenario.json").iter_errors(doc))
    if error is not None:
        path = list(error.absolute_path)
        node, key = _node_at(root, path)
        if error.validator == "additionalProperties" and isinstance(node, yaml.MappingNode):
            allowed = error.schema.get("properties", {}) if isinstance(error.schema, dict) else {}
            key = next((k for k, _ in node.value if k.value not in allowed), key)
        message = error.message
        if error.validator in ("anyOf", "oneOf") and error.context:
            reasons = "; ".join(list(dict.fromkeys(e.message for e in error.context))[:4])
            message = f"{show(error.instance)} matches none of the allowed forms: {reasons}"
        raise ScenarioError(file, _line(key or node), f"{_where(path)}: {message[:400]}")
    lines = _entry_lines(root, doc)
    _check_references(root, doc, file)
    return Scenario(
        name=doc["name"],
        description=doc.get("description", ""),
        project=doc.get("project", DEFAULT_PROJECT),
        given=doc.get("given") or {},
        steps=doc.get("steps") or [],
        file=file,
        lines=lines,
    )


def _compose(text: str, file: str) -> tuple[yaml.Node, Any]:
    loader = _Loader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            raise ScenarioError(file, 1, "the file is empty")
        _check_duplicate_keys(root, file)
        return root, loader.construct_document(root)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = f"not valid YAML: {exc.problem or exc.context}"
        raise ScenarioError(file, mark.line + 1 if mark else 1, problem) from None
    except yaml.YAMLError as exc:
        raise ScenarioError(file, 1, f"not valid YAML: {exc}") from None
    finally:
        loader.dispose()


def _nodes(node: yaml.Node) -> Iterator[yaml.Node]:
    yield node
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            yield from _nodes(key)
            yield from _nodes(value)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            yield from _nodes(item)


def _check_duplicate_keys(root: yaml.Node, file: str) -> None:
    for node in _nodes(root):
        if isinstance(node, yaml.MappingNode):
            seen: set[str] = set()
            for key, _ in node.value:
                if not isinstance(key, yaml.ScalarNode):
                    continue
                if key.value in seen:
                    raise ScenarioError(file, _line(key), f"duplicate key {key.value!r}")
                seen.add(key.value)


def _line(node: yaml.Node) -> int:
    return int(node.start_mark.line) + 1


def _node_at(node: yaml.Node, path: list[Any]) -> tuple[yaml.Node, yaml.Node | None]:
    """The node at a JSON path (as far as it goes), and the key node naming it."""
    key: yaml.Node | None = None
    for part in path:
        if isinstance(node, yaml.MappingNode):
            pair = next(((k, v) for k, v in node.value if k.value == str(part)), None)
            if pair is None:
                break
            key, node = pair
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            key, node = None, node.value[part]
        else:
            break
    return node, key


def _where(path: list[Any]) -> str:
    text = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)
    return text.lstrip(".") or "(root)"


def _entry_lines(root: yaml.Node, doc: dict[str, Any]) -> dict[str, int]:
    lines = {}
    for kind in GIVEN_ORDER:
        for i in range(len((doc.get("given") or {}).get(kind, []))):
            lines[f"given.{kind}[{i}]"] = _line(_node_at(root, ["given", kind, i])[0])
    for i in range(len(doc.get("steps") or [])):
        lines[f"steps[{i}]"] = _line(_node_at(root, ["steps", i])[0])
    return lines


def _given_ids(root: yaml.Node, doc: dict[str, Any], file: str) -> set[str]:
    given, ids = doc.get("given") or {}, set()
    for kind in GIVEN_ORDER[1:]:
        for i, entry in enumerate(given.get(kind, [])):
            name = entry.get("id", entry["name"] if kind == "projections" else None)
            if name is None:
                continue
            if name in ids:
                line = _line(_node_at(root, ["given", kind, i])[0])
                raise ScenarioError(file, line, f"given.{kind}[{i}]: id {name!r} is used twice")
            ids.add(name)
    return ids


def _check_references(root: yaml.Node, doc: dict[str, Any], file: str) -> None:
    """Every ``${name}`` is bound before use, and every matcher is known."""
    bound = _given_ids(root, doc, file)
    if "given" in doc:
        _check_scalars(_node_at(root, ["given"])[0], bound, file, matchers=False)
    for i, step in enumerate(doc.get("steps") or []):
        node = _node_at(root, ["steps", i])[0]
        for part in ("request", "expect", "webhooks"):
            if part in step:
                sub = _node_at(node, [part])[0]
                _check_scalars(sub, bound, file, matchers=part != "request")
        bound |= set(step.get("save", {}))


def _check_scalars(node: yaml.Node, bound: set[str], file: str, *, matchers: bool) -> None:
    for scalar in _nodes(node):
        if not isinstance(scalar, yaml.ScalarNode) or "$" not in scalar.value:
            continue
        text = scalar.value
        for match in VAR.finditer(text):
            if match.group(2) and match.group(2) not in bound:
                problem = f"${{{match.group(2)}}} is not a given id or a variable saved earlier"
                raise ScenarioError(file, _line(scalar), problem)
        if matchers and re.match(r"\$[A-Za-z]", text):
            _check_matcher(text, file, _line(scalar))


def _check_matcher(text: str, file: str, line: int) -> None:
    if text.startswith("$re:"):
        try:
            re.compile(VAR.sub("x", text[4:]))
        except re.error as exc:
            raise ScenarioError(file, line, f"{text!r}: not a regular expression: {exc}") from None
    elif text != "$absent" and text not in TYPES:
        known = ", ".join(MATCHERS)
        problem = f"unknown matcher {text!r} (known: {known}; $$ is a literal $)"
        raise ScenarioError(file, line, problem)
