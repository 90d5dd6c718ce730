"""Resilience profiles: named files of webhook delivery levers and API fault rules.

A profile (``profiles/*.yaml``; packaged as ``idv_mock/resilience/profiles``) says how
production misbehaves: ``duplicates``, ``reordered``, ``late``, ``lost-result``,
``flaky-api``, ``slow-api``, ``rate-limited``, and ``baseline`` (nothing). Each is a few
lines a user can copy and change; ``find`` takes a built-in name or a path. The pytest
plugin applies the profile named by ``IDV_MOCK_PROFILE`` to every project it hands out.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from idv_mock.ground import schemas

if TYPE_CHECKING:
    from idv_mock.backend import Service

ENV = "IDV_MOCK_PROFILE"  # the profile (name or path) the pytest plugin applies
ORDER = (
    "baseline",
    "duplicates",
    "reordered",
    "late",
    "lost-result",
    "flaky-api",
    "slow-api",
    "rate-limited",
)


class ProfileError(ValueError):
    """A profile that cannot be found or read."""


@dataclass(frozen=True)
class Profile:
    name: str
    description: str
    webhook_delivery: dict[str, Any] = field(default_factory=dict)
    faults: tuple[dict[str, Any], ...] = ()
    path: str = ""
    survives: str = ""  # what a handler must do to survive it (the report's header says)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "survives": self.survives,
            "webhook_delivery": copy.deepcopy(self.webhook_delivery),
            "faults": copy.deepcopy(list(self.faults)),
        }


_HERE = Path(__file__).resolve().parent
# the wheel's idv_mock/resilience/profiles, else the repository's profiles/
BUILTIN_DIR = schemas.packaged_or_source(_HERE / "profiles", _HERE.parents[2] / "profiles")


def builtins() -> list[str]:
    """The built-in profiles' names, in the report's order (others after, by name)."""
    found = {p.stem for p in BUILTIN_DIR.glob("*.yaml")}
    return [n for n in ORDER if n in found] + sorted(found - set(ORDER))


def find(name_or_path: str) -> Path:
    """A profile file by path, or a built-in one by name."""
    found = schemas.file_or_builtin(name_or_path, BUILTIN_DIR)
    if found is not None:
        return found
    known = ", ".join(builtins())
    raise ProfileError(f"{name_or_path}: no such file or built-in profile (built-in: {known})")


def load(name_or_path: str) -> Profile:
    """A profile, checked against ``schemas/profile.json``."""
    path = find(name_or_path)
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ProfileError(f"{path}: {exc}") from None
    problems = schemas.errors("profile.json", doc)
    if problems:
        raise ProfileError(f"{path}: " + "; ".join(problems))
    return Profile(
        path.stem,
        doc["description"],
        doc.get("webhook_delivery", {}),
        tuple(doc.get("faults", ())),
        str(path),
        doc.get("survives", ""),
    )


def apply(service: Service, project_id: str, profile: Profile) -> None:
    """Put the profile's levers and fault rules on one project. Its rules go after every
    rule the test adds (``fallback``), and a test's own levers (the
    ``idv_webhook_delivery`` marker, ``set``) replace the profile's: the test's own
    choices win (docs/delivery.md "Which rule wins")."""
    service.delivery.set_levers(project_id, copy.deepcopy(profile.webhook_delivery))
    for rule in profile.faults:
        service.calls.add_fault(project_id, copy.deepcopy(rule), fallback=True)
