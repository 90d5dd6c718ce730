"""Projection policies of a project (api-v3.md 2.6, 4.8) and what they hid.

A policy is fixed when a hosted-form submission arrives: the store remembers, per
submission, the fields its policy excluded at that moment, so deleting the policy later
changes nothing for that submission (api-v3.md section 3) and only stops filtering new ones.
"""

from __future__ import annotations

from typing import Any

from idv_mock.backend.exceptions import Conflict, NotFound
from idv_mock.ground import schemas

MAX_POLICIES = 10
FIELDS: tuple[str, ...] = tuple(schemas.load("projection_request.json")["$defs"]["field"]["enum"])


class NameTaken(Conflict):
    """A policy of that name exists in the project."""


class LimitReached(Conflict):
    """The project holds ``MAX_POLICIES`` policies already."""


# Plain classes, not dataclasses: a dataclass's generated methods are compiled when its
# module is imported (on every first use: each project holds its projections), for
# comparisons and printing nothing does with these.


class Policy:
    __slots__ = ("created_at", "fields", "mode", "name", "projection_id")

    def __init__(
        self, projection_id: str, name: str, mode: str, fields: list[str], created_at: str
    ) -> None:
        self.projection_id, self.name, self.mode = projection_id, name, mode
        self.fields, self.created_at = fields, created_at

    def describe(self) -> dict[str, Any]:
        return {
            "projection_id": self.projection_id,
            "name": self.name,
            "mode": self.mode,
            "fields": list(self.fields),
            "created_at": self.created_at,
        }


class Projections:
    __slots__ = ("applied", "policies")

    def __init__(
        self,
        policies: dict[str, Policy] | None = None,
        applied: dict[str, list[str]] | None = None,  # submission id -> hidden fields
    ) -> None:
        self.policies: dict[str, Policy] = {} if policies is None else policies
        self.applied: dict[str, list[str]] = {} if applied is None else applied

    def ensure_room(self, name: str) -> None:
        """Refuse a new policy whose name is taken, or past the limit of 10."""
        if any(p.name == name for p in self.policies.values()):
            raise NameTaken(name)
        if len(self.policies) >= MAX_POLICIES:
            raise LimitReached(name)

    def add(self, policy: Policy) -> Policy:
        self.ensure_room(policy.name)
        self.policies[policy.projection_id] = policy
        return policy

    def get(self, projection_id: str) -> Policy:
        found = self.policies.get(projection_id)
        if found is None:
            raise NotFound(f"projection {projection_id} not found")
        return found

    def by_name(self, name: str) -> Policy:
        for policy in self.policies.values():
            if policy.name == name:
                return policy
        raise NotFound(f"projection {name} not found")

    def delete(self, projection_id: str) -> Policy:
        return self.policies.pop(self.get(projection_id).projection_id)

    def export(self) -> dict[str, Any]:
        return {
            "policies": [p.describe() for p in self.policies.values()],
            "applied": {sid: list(f) for sid, f in self.applied.items()},
        }

    @classmethod
    def restore(cls, doc: dict[str, Any]) -> Projections:
        policies = {p["projection_id"]: Policy(**p) for p in doc.get("policies", [])}
        return cls(policies, {sid: list(f) for sid, f in doc.get("applied", {}).items()})


def hide(obj: dict[str, Any], hidden: list[str], style: str) -> dict[str, Any]:
    """``obj`` without the ``hidden`` keys (``style`` "omit"), or with them null ("null")."""
    if style == "null":
        return {k: (None if k in hidden else v) for k, v in obj.items()}
    return {k: v for k, v in obj.items() if k not in hidden}
