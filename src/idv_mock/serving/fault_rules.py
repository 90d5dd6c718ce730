"""Which calls a fault rule's ``match`` covers, and whether each can give the rule's
``error``: the control API refuses such a rule and the dashboard's form says why."""

from __future__ import annotations

import fnmatch
import re
from typing import Any

from idv_mock.ground.errors import Family


def unknown_errors(spec: dict[str, Any], routes: dict[str, dict[str, Family]]) -> list[str]:
    """Why a rule's ``error`` cannot be rendered by some call its match covers (empty if ok)."""
    name = spec.get("error")
    if name is None:
        return []
    match = spec.get("match", {})
    covered = [
        (path, method, family)
        for path, families in routes.items()
        if _overlap(path, str(match.get("path", "")))
        for method, family in families.items()
        if match.get("method", method) == method
    ]
    if not covered:
        return [f"match covers no API call: {match}"]
    if any(family.find(name) is not None for _, _, family in covered):
        return []
    return [f"{method} {path} has no error {name!r}" for path, method, _ in covered]


def _overlap(template: str, glob: str) -> bool:
    """Whether some path of the route ``template`` (``{id}`` parts) can match ``glob``."""
    as_glob = re.sub(r"\{[^}]+\}", "*", template)
    return fnmatch.fnmatchcase(template, glob) or fnmatch.fnmatchcase(glob, as_glob)
