"""Scenario files: a ``given`` state and ``steps`` (request, then expectations), run anywhere.

A scenario is a YAML file validated by ``schemas/scenario.json``. :func:`load` reads one
(a malformed file raises :class:`ScenarioError` naming the file, the line and the problem),
:func:`apply_given` puts its state into a :class:`~idv_mock.backend.Service`, and
:func:`run` plays its steps, in-process on a fresh service or against a live server (whose
state is then set through the control API), answering one :class:`StepResult` per step.
The built-in scenarios (the repository's ``scenarios/`` folder, shipped in the wheel as
``idv_mock/scenarios``) are found by name with :func:`builtin`.
"""

from __future__ import annotations

import re
import time
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import httpx
import orjson
import yaml
from jsonschema.exceptions import best_match

from idv_mock import crypto, schemas
from idv_mock.backend import BackendError, InvalidInput, Service, ServiceConfig
from idv_mock.receiver import WebhookReceiver

__all__ = [
    "BUILTIN_DIR",
    "GivenError",
    "Scenario",
    "ScenarioError",
    "StepResult",
    "apply_given",
    "builtin",
    "builtins",
    "find",
    "load",
    "loads",
    "run",
]

DEFAULT_PROJECT = "default"
GIVEN_ORDER = (  # the order in which given entries are applied
    *("projects", "projections", "watchlist", "worklists"),
    *("submissions", "watchlist_submissions"),
)
SETTLE_SECONDS = 0.5  # how long a webhook count is watched for late deliveries
_VAR = re.compile(r"\$(?:(\$)|\{([A-Za-z_][A-Za-z0-9_-]*)((?:\.[A-Za-z0-9_-]+)*)\})")
_TYPES: dict[str, Callable[[Any], bool]] = {
    "$any": lambda v: True,
    "$string": lambda v: isinstance(v, str),
    "$number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "$list": lambda v: isinstance(v, list),
    "$object": lambda v: isinstance(v, dict),
}
_MATCHERS = (*_TYPES, "$absent", "$re:<regex>")


def _builtin_dir() -> Path:
    here = Path(__file__).resolve().parent
    for candidate in (here / "scenarios", here.parents[1] / "scenarios"):
        if candidate.is_dir() and any(candidate.glob("*.yaml")):
            return candidate
    return here / "scenarios"


BUILTIN_DIR = _builtin_dir()


# --- errors and records ---
class ScenarioError(ValueError):
    """A malformed scenario file: where (file, line) and what is wrong."""

    def __init__(self, file: str | Path, line: int, problem: str) -> None:
        self.file, self.line, self.problem = str(file), line, problem
        super().__init__(f"{file}:{line}: {problem}" if line else f"{file}: {problem}")


class GivenError(ScenarioError):
    """A ``given`` entry the service refused (an id taken, an unknown entry, ...)."""


class StepFailure(Exception):
    """A step could not be carried out (unbound variable, undecryptable body, ...)."""


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    description: str
    project: str
    given: dict[str, Any]
    steps: list[dict[str, Any]]
    file: str = "<string>"
    lines: dict[str, int] = field(default_factory=dict)  # "steps[2]", "given.submissions[0]"

    @property
    def uses_webhooks(self) -> bool:
        return any(step.get("webhooks") for step in self.steps)

    @property
    def projects(self) -> list[str]:
        """Every project the scenario names, its default project first."""
        named = [self.project, *(p["project_id"] for p in self.given.get("projects", []))]
        for kind in GIVEN_ORDER[1:]:
            named += [e.get("project", self.project) for e in self.given.get(kind, [])]
        for step in self.steps:
            named.append(step.get("project", self.project))
            named += [w["project"] for w in step.get("webhooks", []) if "project" in w]
        return list(dict.fromkeys(named))


@dataclass(frozen=True, slots=True)
class StepResult:
    name: str
    passed: bool
    problems: tuple[str, ...] = ()
    status: int | None = None
    line: int = 0

    def __str__(self) -> str:
        head = f"PASS {self.name}" if self.passed else f"FAIL {self.name}"
        if not self.passed and self.line:
            head += f" (line {self.line})"
        return "\n".join([head, *(f"    {p}" for p in self.problems)])


# --- loading ---
class _Loader(yaml.SafeLoader):
    """Safe YAML that keeps dates as text: ``date_of_birth: 1990-01-02`` stays a string."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in found if tag != "tag:yaml.org,2002:timestamp"]
    for first, found in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def find(name_or_path: str | Path) -> Path:
    """A scenario file by path, or a built-in one by name (``onboarding-approved``)."""
    path = Path(name_or_path)
    if path.is_file():
        return path
    named = BUILTIN_DIR / f"{name_or_path}.yaml"
    if named.is_file():
        return named
    known = ", ".join(builtins())
    raise ScenarioError(path, 0, f"no such file or built-in scenario (built-in: {known})")


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
            message = f"{_show(error.instance)} matches none of the allowed forms: {reasons}"
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
        for match in _VAR.finditer(text):
            if match.group(2) and match.group(2) not in bound:
                problem = f"${{{match.group(2)}}} is not a given id or a variable saved earlier"
                raise ScenarioError(file, _line(scalar), problem)
        if matchers and re.match(r"\$[A-Za-z]", text):
            _check_matcher(text, file, _line(scalar))


def _check_matcher(text: str, file: str, line: int) -> None:
    if text.startswith("$re:"):
        try:
            re.compile(_VAR.sub("x", text[4:]))
        except re.error as exc:
            raise ScenarioError(file, line, f"{text!r}: not a regular expression: {exc}") from None
    elif text != "$absent" and text not in _TYPES:
        known = ", ".join(_MATCHERS)
        problem = f"unknown matcher {text!r} (known: {known}; $$ is a literal $)"
        raise ScenarioError(file, line, problem)


# --- templates and matching ---
def _expand(value: Any, bound: Mapping[str, Any], quote: Callable[[str], str] = str) -> Any:
    """``value`` with ``${name}`` replaced (keeping the type when it is the whole string)."""
    if isinstance(value, dict):
        return {k: _expand(v, bound, quote) for k, v in value.items()}
    if isinstance(value, list):
        return [_expand(v, bound, quote) for v in value]
    if not isinstance(value, str) or "$" not in value:
        return value
    whole = _VAR.fullmatch(value)
    if whole and whole.group(2):
        return _lookup(whole, bound)

    def text(match: re.Match[str]) -> str:
        if match.group(1):
            return "$"
        found = _lookup(match, bound)
        return quote(found if isinstance(found, str) else orjson.dumps(found).decode())

    return _VAR.sub(text, value)


def _lookup(match: re.Match[str], bound: Mapping[str, Any]) -> Any:
    name, path = match.group(2), match.group(3)
    if name not in bound:
        raise StepFailure(f"${{{name}}} is not set (did the step saving it fail?)")
    return _dig(bound[name], path.lstrip(".")) if path else bound[name]


def _dig(value: Any, path: str) -> Any:
    for part in path.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif (
            isinstance(value, list)
            and re.fullmatch(r"-?\d+", part)
            and -len(value) <= int(part) < len(value)
        ):
            value = value[int(part)]
        else:
            raise StepFailure(f"{path}: nothing at {part!r} in {_show(value)}")
    return value


class _Missing:
    """The actual value of a member that is not there."""


_MISSING = _Missing()


@dataclass(frozen=True, slots=True)
class _Matcher:
    text: str
    accepts: Callable[[Any], bool]


def _matcher(text: str, bound: Mapping[str, Any]) -> _Matcher | None:
    if text == "$absent":
        return _Matcher(text, lambda v: v is _MISSING)
    if text in _TYPES:
        check = _TYPES[text]
        return _Matcher(text, lambda v: v is not _MISSING and check(v))
    if text.startswith("$re:"):
        pattern = re.compile(_expand(text[4:], bound, re.escape))
        return _Matcher(text, lambda v: isinstance(v, str) and bool(pattern.fullmatch(v)))
    return None


def _expected(value: Any, bound: Mapping[str, Any]) -> Any:
    """An expectation with its matchers made and its variables expanded."""
    if isinstance(value, dict):
        return {k: _expected(v, bound) for k, v in value.items()}
    if isinstance(value, list):
        return [_expected(v, bound) for v in value]
    if isinstance(value, str) and re.match(r"\$[A-Za-z]", value):
        return _matcher(value, bound)
    return _expand(value, bound)


def _show(value: Any) -> str:
    if value is _MISSING:
        return "missing"
    if isinstance(value, _Matcher):
        return value.text
    text = orjson.dumps(value, default=_show).decode()
    return text if len(text) <= 160 else text[:157] + "..."


def _same(expected: Any, actual: Any) -> bool:
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    return bool(expected == actual)


def _match(expected: Any, actual: Any, where: str, out: list[str]) -> None:
    """Append to ``out`` every way ``actual`` differs from the partial ``expected``."""
    if isinstance(expected, _Matcher):
        if not expected.accepts(actual):
            out.append(f"{where}: expected {expected.text}, got {_show(actual)}")
    elif isinstance(expected, dict) and isinstance(actual, list) and _list_ops(expected):
        _match_list(expected, actual, where, out)
    elif isinstance(expected, dict) and isinstance(actual, dict):
        for key, value in expected.items():
            _match(value, actual.get(key, _MISSING), f"{where}.{key}", out)
    elif isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            out.append(f"{where}: expected {len(expected)} items, got {len(actual)}")
        for i, (e, a) in enumerate(zip(expected, actual, strict=False)):
            _match(e, a, f"{where}[{i}]", out)
    elif not _same(expected, actual):
        out.append(f"{where}: expected {_show(expected)}, got {_show(actual)}")


def _list_ops(expected: dict[str, Any]) -> bool:
    return bool(expected) and set(expected) <= {"contains", "length"}


def _match_list(expected: dict[str, Any], actual: list[Any], where: str, out: list[str]) -> None:
    if "length" in expected and not _same(expected["length"], len(actual)):
        out.append(f"{where}: expected {expected['length']} items, got {len(actual)}")
    for item in expected.get("contains", []):
        tries = [_problems(item, a, f"{where}[{i}]") for i, a in enumerate(actual)]
        if tries and min(len(t) for t in tries) == 0:
            continue
        closest = min(tries, key=len) if tries else []
        hint = f"; closest: {'; '.join(closest[:3])}" if closest else ""
        out.append(f"{where}: no item matches {_show(item)}{hint}")


def _problems(expected: Any, actual: Any, where: str = "payload") -> list[str]:
    out: list[str] = []
    _match(expected, actual, where, out)
    return out


# --- applying the given state ---
class _Control(Protocol):
    """The control operations ``given`` needs: the Service in-process, or ``/__admin``."""

    def describe(self, pid: str) -> dict[str, Any] | None: ...
    def create_project(self, spec: dict[str, Any]) -> None: ...
    def update_project(self, pid: str, changes: dict[str, Any]) -> None: ...
    def submission(self, pid: str, overrides: dict[str, Any], fire: bool) -> str: ...
    def hosted(self, pid: str, token: str, outcome: str, overrides: dict[str, Any]) -> str: ...
    def projection(self, pid: str, name: str, mode: str, fields: list[str]) -> str: ...
    def watch(self, pid: str, entry: dict[str, Any]) -> None: ...
    def watchlist_submission(self, pid: str, entry_id: str, overrides: dict[str, Any]) -> str: ...
    def worklist(self, pid: str, spec: dict[str, Any]) -> str: ...


class _Refused(Exception):
    """The control API refused a call."""


@dataclass(slots=True)
class _ServiceControl:
    service: Service

    def describe(self, pid: str) -> dict[str, Any] | None:
        found = self.service.projects.get(pid)
        return found.describe() if found is not None else None

    def create_project(self, spec: dict[str, Any]) -> None:
        self.service.create_project(spec)

    def update_project(self, pid: str, changes: dict[str, Any]) -> None:
        self.service.update_project(pid, changes)

    def submission(self, pid: str, overrides: dict[str, Any], fire: bool) -> str:
        sub = self.service.create_submission(pid, overrides, fire_webhooks=fire)
        return str(sub["submission_id"])

    def hosted(self, pid: str, token: str, outcome: str, overrides: dict[str, Any]) -> str:
        return str(self.service.hosted_submission(pid, token, outcome, overrides)["submission_id"])

    def projection(self, pid: str, name: str, mode: str, fields: list[str]) -> str:
        project = self.service.project(pid)
        return self.service.create_projection(project, name, mode, fields).projection_id

    def watch(self, pid: str, entry: dict[str, Any]) -> None:
        self.service.add_watchlist_entry(pid, entry)

    def watchlist_submission(self, pid: str, entry_id: str, overrides: dict[str, Any]) -> str:
        sub = self.service.watchlist_submission(pid, entry_id, overrides)
        return str(sub["submission_id"])

    def worklist(self, pid: str, spec: dict[str, Any]) -> str:
        return str(self.service.create_worklist(pid, spec)["id"])


@dataclass(slots=True)
class _HttpControl:
    http: httpx.Client

    def call(self, method: str, path: str, body: Any = None, **kw: Any) -> Any:
        response = self.http.request(method, path, json=body, **kw)
        if response.status_code >= 300:
            raise _Refused(f"{method} {path} answered {response.status_code}: {response.text}")
        return response.json()

    def describe(self, pid: str) -> dict[str, Any] | None:
        response = self.http.get(f"/__admin/projects/{pid}")
        found: dict[str, Any] | None = response.json() if response.status_code == 200 else None
        return found

    def create_project(self, spec: dict[str, Any]) -> None:
        self.call("POST", "/__admin/projects", spec)

    def update_project(self, pid: str, changes: dict[str, Any]) -> None:
        self.call("PATCH", f"/__admin/projects/{pid}", changes)

    def submission(self, pid: str, overrides: dict[str, Any], fire: bool) -> str:
        params = {"fire_webhooks": "true"} if fire else {}
        path = f"/__admin/projects/{pid}/submissions"
        return str(self.call("POST", path, overrides, params=params)["submission_id"])

    def hosted(self, pid: str, token: str, outcome: str, overrides: dict[str, Any]) -> str:
        body = {"token": token, "outcome": outcome, "overrides": overrides}
        path = f"/__admin/projects/{pid}/hosted-submissions"
        return str(self.call("POST", path, body)["submission_id"])

    def projection(self, pid: str, name: str, mode: str, fields: list[str]) -> str:
        info = self.describe(pid) or {}
        body: dict[str, Any] = {"name": name, "mode": mode, "fields": fields}
        if info.get("options", {}).get("secure_transfer"):
            body = {"data": _cipher(info)(body)}
        headers = {"x-api-key": str(info.get("api_key", ""))}
        return str(self.call("POST", "/v3/projection", body, headers=headers)["projection_id"])

    def watch(self, pid: str, entry: dict[str, Any]) -> None:
        self.call("POST", f"/__admin/projects/{pid}/watchlist", entry)

    def watchlist_submission(self, pid: str, entry_id: str, overrides: dict[str, Any]) -> str:
        body = {"entry_id": entry_id, "overrides": overrides}
        path = f"/__admin/projects/{pid}/watchlist-submissions"
        return str(self.call("POST", path, body)["submission_id"])

    def worklist(self, pid: str, spec: dict[str, Any]) -> str:
        return str(self.call("POST", f"/__admin/projects/{pid}/worklists", spec)["id"])


def _cipher(info: Mapping[str, Any]) -> Callable[[Any], str]:
    key, derivation = str(info["api_key"]), str(info["options"].get("key_derivation", "sha256"))
    return lambda value: crypto.encrypt(value, key, derivation)


def _reason(exc: Exception) -> str:
    problems = exc.problems if isinstance(exc, InvalidInput) else []
    return "; ".join([str(exc), *problems[:5]])


class _Given:
    """Applies a scenario's ``given`` through a control, binding each entry's ``id``."""

    def __init__(self, control: _Control, scenario: Scenario, default_key: str | None) -> None:
        self.control, self.scenario, self.default_key = control, scenario, default_key
        self.bound: dict[str, Any] = {}
        self._info: dict[str, dict[str, Any]] = {}

    def info(self, pid: str) -> dict[str, Any]:
        """The project as the control API describes it (cached until ``forget``)."""
        if pid not in self._info:
            found = self.control.describe(pid)
            if found is None and pid == DEFAULT_PROJECT and self.default_key:
                found = {"api_key": self.default_key, "options": {}}
            if found is None:
                raise StepFailure(f"project {pid} does not exist")
            if pid == DEFAULT_PROJECT and self.default_key:
                found["api_key"] = self.default_key
            self._info[pid] = found
        return self._info[pid]

    def forget(self) -> None:
        self._info.clear()

    @contextmanager
    def _entry(self, where: str) -> Iterator[None]:
        try:
            yield
        except (BackendError, _Refused, StepFailure, crypto.CryptoError, httpx.HTTPError) as exc:
            line = self.scenario.lines.get(where, 0)
            raise GivenError(self.scenario.file, line, f"{where}: {_reason(exc)}") from None

    def _each(self, kind: str, apply: Callable[[dict[str, Any], str], None]) -> None:
        for i, entry in enumerate(self.scenario.given.get(kind, [])):
            with self._entry(f"given.{kind}[{i}]"):
                spec = _expand(entry, self.bound)
                apply(spec, spec.get("project", self.scenario.project))

    def projects(self) -> None:
        self._each("projects", self._project)

    def rest(self) -> dict[str, Any]:
        """Every other entry, in ``GIVEN_ORDER``; answers the bound ids."""
        self._each("projections", self._projection)
        self._each("watchlist", lambda spec, pid: self.control.watch(pid, spec["entry"]))
        self._each("worklists", self._worklist)
        self._each("submissions", self._submission)
        self._each("watchlist_submissions", self._watchlist_submission)
        return self.bound

    def _project(self, spec: dict[str, Any], _: str) -> None:
        pid, found = spec["project_id"], self.control.describe(spec["project_id"])
        if found is None:
            if "api_key" not in spec:
                raise _Refused(f"project {pid} does not exist; give its api_key to create it")
            self.control.create_project(spec)
        elif spec.get("api_key", found["api_key"]) != found["api_key"]:
            raise _Refused(f"project {pid} exists with another api_key")
        else:
            changes: dict[str, Any] = {k: spec[k] for k in ("admins", "options") if k in spec}
            if changes:
                self.control.update_project(pid, changes)

    def _projection(self, spec: dict[str, Any], pid: str) -> None:
        mode = spec.get("mode", "exclude")
        found = self.control.projection(pid, spec["name"], mode, spec["fields"])
        self.bound[spec.get("id", spec["name"])] = found

    def _worklist(self, spec: dict[str, Any], pid: str) -> None:
        body = {"id": spec["id"], "name": spec["name"], "active": spec.get("active", True)}
        self.bound[spec["id"]] = self.control.worklist(pid, body)

    def _submission(self, spec: dict[str, Any], pid: str) -> None:
        overrides, hosted = _overrides(spec), spec.get("hosted")
        if hosted is None:
            sid = self.control.submission(pid, overrides, bool(spec.get("fire_webhooks")))
        else:
            token = _cipher(self.info(pid))(hosted["token"])
            outcome = hosted.get("outcome", "approved")
            sid = self.control.hosted(pid, token, outcome, overrides)
        self._bind(spec, sid)

    def _watchlist_submission(self, spec: dict[str, Any], pid: str) -> None:
        sid = self.control.watchlist_submission(pid, spec["entry_id"], _overrides(spec))
        self._bind(spec, sid)

    def _bind(self, spec: dict[str, Any], sid: str) -> None:
        if "id" in spec:
            self.bound[spec["id"]] = sid

    def wire(self, url: str) -> dict[str, Any]:
        """Point every project of the scenario at ``url``/<project>; the URLs they had."""
        before = {}
        for pid in self.scenario.projects:
            found = self.control.describe(pid)
            if found is not None:
                before[pid] = found["options"].get("webhook_url")
                self.control.update_project(pid, {"options": {"webhook_url": f"{url}/{pid}"}})
        return before

    def unwire(self, before: dict[str, Any]) -> None:
        for pid, url in before.items():
            with suppress(BackendError, _Refused, httpx.HTTPError):  # gone after a reset step
                self.control.update_project(pid, {"options": {"webhook_url": url}})


def _overrides(spec: dict[str, Any]) -> dict[str, Any]:
    overrides = dict(spec.get("overrides", {}))
    if "id" in spec:
        overrides.setdefault("submission_id", f"sub-{spec['id']}")
    return overrides


def apply_given(service: Service, scenario: Scenario) -> dict[str, Any]:
    """Put the scenario's ``given`` into ``service``; answers the ids bound by name."""
    given = _Given(_ServiceControl(service), scenario, None)
    given.projects()
    return given.rest()


# --- running the steps ---
class _Runner:
    def __init__(self, scenario: Scenario, given: _Given, http: httpx.Client) -> None:
        self.scenario, self.given, self.http = scenario, given, http
        self.receiver: WebhookReceiver | None = None
        self._webhooks: list[tuple[str, str, Any]] = []  # (project, event, payload)

    def run(self, stack: ExitStack) -> list[StepResult]:
        try:
            self.given.projects()
            if self.scenario.uses_webhooks:
                self.receiver = stack.enter_context(WebhookReceiver())
                stack.callback(self.given.unwire, self.given.wire(self.receiver.url))
            self.given.rest()
        except GivenError as exc:
            return [StepResult("given", False, (exc.problem,), line=exc.line)]
        except (BackendError, _Refused, httpx.HTTPError) as exc:
            return [StepResult("given", False, (f"webhook receiver: {_reason(exc)}",))]
        return [self._step(i, step) for i, step in enumerate(self.scenario.steps)]

    def _step(self, index: int, step: dict[str, Any]) -> StepResult:
        problems: list[str] = []
        status = None
        pid = step.get("project", self.scenario.project)
        try:
            if "request" in step:
                response = self._send(step["request"], pid)
                status = response.status_code
                self._check(step, response, pid, problems)
            for expectation in step.get("webhooks", []):
                problems += self._webhook(expectation, expectation.get("project", pid))
        except (StepFailure, httpx.HTTPError) as exc:
            problems.append(str(exc))
        line = self.scenario.lines.get(f"steps[{index}]", 0)
        return StepResult(step["name"], not problems, tuple(problems), status, line)

    def _send(self, spec: dict[str, Any], pid: str) -> httpx.Response:
        req = _expand(spec, self.given.bound)
        seal = _cipher(self.given.info(pid)) if req.get("encrypt") else None
        headers = dict(req.get("headers", {}))
        key = req["api_key"] if "api_key" in req else self.given.info(pid)["api_key"]
        if key is not None:
            headers["x-api-key"] = str(key)
        kw: dict[str, Any] = {"headers": headers}
        params = [(k, v) for k, vs in req.get("query", {}).items() for v in _texts(vs, seal)]
        if params:
            kw["params"] = params
        if "json" in req:
            kw["json"] = {"data": seal(req["json"])} if seal else req["json"]
        elif "form" in req:
            kw["data"] = {k: _texts(v, seal)[0] for k, v in req["form"].items()}
        elif "content" in req:
            kw["content"] = req["content"].encode("utf-8")
        path = req["path"]
        if not path.startswith(("/__admin", "/v3/")):
            path = "/v3" + path
        if path.startswith("/__admin"):
            self.given.forget()  # the control API may change a project's key derivation
        try:
            return self.http.request(req["method"], path, **kw)
        except httpx.HTTPError as exc:
            raise StepFailure(f"{req['method']} {path}: {exc}") from None

    def _check(
        self, step: dict[str, Any], response: httpx.Response, pid: str, out: list[str]
    ) -> None:
        expect = _expected(step.get("expect", {}), self.given.bound)
        status, wanted = response.status_code, expect.get("status")
        allowed = wanted if isinstance(wanted, list) else [wanted]
        ok = 200 <= status < 300 if wanted is None else status in allowed
        if not ok:
            shown = "2xx" if wanted is None else " or ".join(map(str, allowed))
            out.append(f"status: expected {shown}, got {status} {response.text[:300]}")
        media = response.headers.get("content-type", "").split(";")[0].strip()
        if "content_type" in expect and media.lower() != expect["content_type"].lower():
            out.append(f"content_type: expected {expect['content_type']}, got {media or 'none'}")
        for name, value in expect.get("headers", {}).items():
            _match(value, response.headers.get(name, _MISSING), f"headers.{name}", out)
        if "body" not in expect and not step.get("save"):
            return
        body = self._body(response, pid, bool(expect.get("decrypt")))
        if "body" in expect:
            _match(expect["body"], body, "body", out)
        for name, path in step.get("save", {}).items():
            try:
                self.given.bound[name] = _dig(body, path)
            except StepFailure as exc:
                out.append(f"save {name}: {exc}")

    def _body(self, response: httpx.Response, pid: str, decrypt: bool) -> Any:
        try:
            body = orjson.loads(response.content)
        except orjson.JSONDecodeError:
            media = response.headers.get("content-type", "none")
            raise StepFailure(f"body: not JSON ({media}, {len(response.content)} bytes)") from None
        return self._decrypted(body, pid) if decrypt else body

    def _decrypted(self, body: Any, pid: str) -> Any:
        if not (isinstance(body, dict) and body.get("isEncrypted") is True):
            raise StepFailure(f"body: not encrypted: {_show(body)}")
        info = self.given.info(pid)
        derivation = str(info["options"].get("key_derivation", "sha256"))
        try:
            return crypto.decrypt(str(body.get("data")), str(info["api_key"]), derivation)
        except crypto.CryptoError as exc:
            raise StepFailure(f"body: does not decrypt with {pid}'s key: {exc}") from None

    # --- webhooks ---
    def _webhook(self, spec: dict[str, Any], pid: str) -> list[str]:
        event, count = spec["event"], spec.get("count")
        payload = _expected(spec.get("payload", {}), self.given.bound)
        deadline = time.monotonic() + float(spec.get("timeout", 5))
        found = self._matching(pid, event, payload)
        while len(found) < (1 if count is None else count) and time.monotonic() < deadline:
            time.sleep(0.02)
            found = self._matching(pid, event, payload)
        if count is not None:
            time.sleep(SETTLE_SECONDS)
            found = self._matching(pid, event, payload)
            if len(found) != count:
                return [f"webhook {event}: expected {count} matching, got {len(found)}"]
            return []
        if found:
            return []
        same = [p for proj, ev, p in self._webhooks if (proj, ev) == (pid, event)]
        if not same:
            seen = sorted({f"{ev} ({proj})" for proj, ev, _ in self._webhooks}) or ["nothing"]
            return [f"webhook {event}: none sent to {pid}; received {', '.join(seen)}"]
        closest = min((_problems(payload, p) for p in same), key=len)
        return [f"webhook {event}: none of {len(same)} matched; closest: {'; '.join(closest[:4])}"]

    def _matching(self, pid: str, event: str, payload: Any) -> list[Any]:
        assert self.receiver is not None
        for item in self.receiver.received[len(self._webhooks) :]:
            proj = item.path.rstrip("/").rsplit("/", 1)[-1]
            body = item.body
            if isinstance(body, dict) and body.get("isEncrypted") is True:
                body = self._decrypted(body, proj)
            self._webhooks.append((proj, item.event, body))
        return [
            p
            for proj, ev, p in self._webhooks
            if (proj, ev) == (pid, event) and not _problems(payload, p)
        ]


def _texts(value: Any, seal: Callable[[Any], str] | None) -> list[str]:
    """Query or form values as text: objects encrypted (or JSON), lists repeated."""
    if isinstance(value, list):
        return [t for v in value for t in _texts(v, seal)]
    if isinstance(value, dict):
        return [seal(value) if seal else orjson.dumps(value).decode()]
    if isinstance(value, bool):
        return ["true" if value else "false"]
    return [str(value)]


def _root(base_url: str) -> str:
    root = base_url.rstrip("/")
    return root[: -len("/v3")] if root.endswith("/v3") else root


def _in_process_client(service: Service) -> httpx.Client:
    """Starlette's TestClient (an ``httpx.Client``) on the app, answering 500s as responses."""
    from idv_mock.api.app import create_app

    with warnings.catch_warnings():  # Starlette 1.x prefers the httpx2 fork; httpx works alike
        warnings.filterwarnings("ignore", "Using .httpx. with .starlette.testclient")
        from starlette.testclient import TestClient

        app = create_app(service)
        return TestClient(app, base_url="http://testserver", raise_server_exceptions=False)


def run(
    scenario: Scenario,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    service: Service | None = None,
    reset: bool = False,
    on_response: Callable[[httpx.Response], None] | None = None,
) -> list[StepResult]:
    """Apply ``given`` and play the steps; one result per step (or one failed ``given``).

    Without ``base_url``: in-process, on ``service`` or a fresh one (``api_key`` is then
    the default project's key). With it (``http://host:port/v3``): against that server,
    ``given`` through its control API, ``api_key`` the default project's key there.
    ``reset`` first calls ``POST /__admin/reset``; ``on_response`` sees every response.
    """
    with ExitStack() as stack:
        if base_url is None:
            if service is None:
                config = ServiceConfig(webhook_backoff=(0.05, 0.1))
                if api_key:
                    config.api_key = api_key
                service = Service(config)
                stack.callback(service.close)
            http: httpx.Client = stack.enter_context(_in_process_client(service))
            control: _Control = _ServiceControl(service)
        else:
            http = stack.enter_context(httpx.Client(base_url=_root(base_url), timeout=30))
            control = _HttpControl(http)
        if on_response is not None:
            http.event_hooks["response"] = [on_response]
        if reset:
            try:
                _HttpControl(http).call("POST", "/__admin/reset")
            except (_Refused, httpx.HTTPError) as exc:
                return [StepResult("reset", False, (str(exc),))]
        results = _Runner(scenario, _Given(control, scenario, api_key), http).run(stack)
    if base_url is not None and not reset and results and results[0].name == "given":
        hint = "the server may hold an earlier run's state: reset=True (--reset) starts afresh"
        results[0] = StepResult("given", False, (*results[0].problems, hint), line=results[0].line)
    return results
