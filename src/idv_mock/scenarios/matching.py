"""Variables (``${name}``, ``${name.path}``, ``$$``) and partial matching of expectations.

An expectation is a partial value: objects match when every member given matches, lists
item by item (or by ``contains``/``length``), and matchers (``$string``, ``$absent``,
``$re:<regex>``, ...) stand for any value of a kind.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from idv_mock.scenarios.records import StepFailure

VAR = re.compile(r"\$(?:(\$)|\{([A-Za-z_][A-Za-z0-9_-]*)((?:\.[A-Za-z0-9_-]+)*)\})")
TYPES: dict[str, Callable[[Any], bool]] = {
    "$any": lambda v: True,
    "$string": lambda v: isinstance(v, str),
    "$number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "$list": lambda v: isinstance(v, list),
    "$object": lambda v: isinstance(v, dict),
}
MATCHERS = (*TYPES, "$absent", "$re:<regex>")


def expand(value: Any, bound: Mapping[str, Any], quote: Callable[[str], str] = str) -> Any:
    """``value`` with ``${name}`` replaced (keeping the type when it is the whole string)."""
    if isinstance(value, dict):
        return {k: expand(v, bound, quote) for k, v in value.items()}
    if isinstance(value, list):
        return [expand(v, bound, quote) for v in value]
    if not isinstance(value, str) or "$" not in value:
        return value
    whole = VAR.fullmatch(value)
    if whole and whole.group(2):
        return _lookup(whole, bound)

    def text(match: re.Match[str]) -> str:
        if match.group(1):
            return "$"
        found = _lookup(match, bound)
        return quote(found if isinstance(found, str) else orjson.dumps(found).decode())

    return VAR.sub(text, value)


def _lookup(match: re.Match[str], bound: Mapping[str, Any]) -> Any:
    name, path = match.group(2), match.group(3)
    if name not in bound:
        raise StepFailure(f"${{{name}}} is not set (did the step saving it fail?)")
    return dig(bound[name], path.lstrip(".")) if path else bound[name]


def dig(value: Any, path: str) -> Any:
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
            raise StepFailure(f"{path}: nothing at {part!r} in {show(value)}")
    return value


class _Missing:
    """The actual value of a member that is not there."""


MISSING = _Missing()


@dataclass(frozen=True, slots=True)
class _Matcher:
    text: str
    accepts: Callable[[Any], bool]


def _matcher(text: str, bound: Mapping[str, Any]) -> _Matcher | None:
    if text == "$absent":
        return _Matcher(text, lambda v: v is MISSING)
    if text in TYPES:
        check = TYPES[text]
        return _Matcher(text, lambda v: v is not MISSING and check(v))
    if text.startswith("$re:"):
        pattern = re.compile(expand(text[4:], bound, re.escape))
        return _Matcher(text, lambda v: isinstance(v, str) and bool(pattern.fullmatch(v)))
    return None


def prepared(value: Any, bound: Mapping[str, Any]) -> Any:
    """An expectation with its matchers made and its variables expanded."""
    if isinstance(value, dict):
        return {k: prepared(v, bound) for k, v in value.items()}
    if isinstance(value, list):
        return [prepared(v, bound) for v in value]
    if isinstance(value, str) and re.match(r"\$[A-Za-z]", value):
        return _matcher(value, bound)
    return expand(value, bound)


def show(value: Any) -> str:
    if value is MISSING:
        return "missing"
    if isinstance(value, _Matcher):
        return value.text
    # a matcher is a dataclass: passed through to ``default``, not written as its fields
    text = orjson.dumps(value, default=show, option=orjson.OPT_PASSTHROUGH_DATACLASS).decode()
    return text if len(text) <= 160 else text[:157] + "..."


def _same(expected: Any, actual: Any) -> bool:
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    return bool(expected == actual)


def compare(expected: Any, actual: Any, where: str, out: list[str]) -> None:
    """Append to ``out`` every way ``actual`` differs from the partial ``expected``."""
    if isinstance(expected, _Matcher):
        if not expected.accepts(actual):
            out.append(f"{where}: expected {expected.text}, got {show(actual)}")
    elif isinstance(expected, dict) and isinstance(actual, list) and _list_ops(expected):
        _match_list(expected, actual, where, out)
    elif isinstance(expected, dict) and isinstance(actual, dict):
        for key, value in expected.items():
            compare(value, actual.get(key, MISSING), f"{where}.{key}", out)
    elif isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            out.append(f"{where}: expected {len(expected)} items, got {len(actual)}")
        for i, (e, a) in enumerate(zip(expected, actual, strict=False)):
            compare(e, a, f"{where}[{i}]", out)
    elif not _same(expected, actual):
        out.append(f"{where}: expected {show(expected)}, got {show(actual)}")


def _list_ops(expected: dict[str, Any]) -> bool:
    return bool(expected) and set(expected) <= {"contains", "length"}


def _match_list(expected: dict[str, Any], actual: list[Any], where: str, out: list[str]) -> None:
    if "length" in expected and not _same(expected["length"], len(actual)):
        out.append(f"{where}: expected {show(expected['length'])} items, got {len(actual)}")
    for item in expected.get("contains", []):
        tries = [differences(item, a, f"{where}[{i}]") for i, a in enumerate(actual)]
        if tries and min(len(t) for t in tries) == 0:
            continue
        closest = min(tries, key=len) if tries else []
        hint = f"; closest: {'; '.join(closest[:3])}" if closest else ""
        out.append(f"{where}: no item matches {show(item)}{hint}")


def differences(expected: Any, actual: Any, where: str = "payload") -> list[str]:
    out: list[str] = []
    compare(expected, actual, where, out)
    return out
