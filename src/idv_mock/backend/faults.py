"""Fault rules: answer chosen calls of a project with a chosen response or error.

A rule matches a call by method, path glob, query (every given pair present) and JSON
body (subset); ``times`` and ``probability`` say how often it fires. The backend only
keeps and matches rules; the web layer turns a fired rule into a response, so an
``error`` is rendered by the matched call's own error catalogue.
"""

from __future__ import annotations

import fnmatch
import random
from collections.abc import Callable
from typing import Any

# Plain classes, not dataclasses: a dataclass's generated methods are compiled when its
# module is imported (this one is on every first use: the preconditions read it), for
# comparisons and printing nothing does with these.


class Call:
    """What a fault rule's match is compared with: one API call."""

    __slots__ = ("body", "method", "path", "query")

    def __init__(self, method: str, path: str, query: dict[str, str], body: Any) -> None:
        self.method, self.path, self.query, self.body = method, path, query, body


class FaultRule:
    __slots__ = ("fallback", "hits", "id", "spec")

    def __init__(
        self,
        id: str,  # the rule's id, as the control API names it
        spec: dict[str, Any],
        hits: int = 0,
        fallback: bool = False,  # a resilience profile's rule: tried after every other rule
    ) -> None:
        self.id, self.spec, self.hits, self.fallback = id, spec, hits, fallback

    @property
    def exhausted(self) -> bool:
        times = self.spec.get("times")
        return times is not None and self.hits >= times

    def matches(self, call: Call) -> bool:
        match = self.spec["match"]
        return (
            match.get("method", call.method) == call.method
            and fnmatch.fnmatchcase(call.path, match["path"])
            and all(call.query.get(k) == v for k, v in match.get("query", {}).items())
            and _subset(match.get("body"), call.body)
        )

    def describe(self) -> dict[str, Any]:
        return {"id": self.id, **self.spec, "hits": self.hits}


def _subset(wanted: Any, got: Any) -> bool:
    if wanted is None:
        return True
    if isinstance(wanted, dict):
        return isinstance(got, dict) and all(
            k in got and _subset(v, got[k]) for k, v in wanted.items()
        )
    return bool(wanted == got)


class FaultRules:
    __slots__ = ("counter", "rng", "rules")

    def __init__(self) -> None:
        self.rules: list[FaultRule] = []
        self.counter = 0
        self.rng = random.Random(0)

    def add(self, spec: dict[str, Any], fallback: bool = False) -> FaultRule:
        """A new rule, tried after the rules before it; a ``fallback`` rule (a resilience
        profile's) after every rule that is not one, so a test's own rules match first
        whenever they were added (docs/delivery.md "Which rule wins")."""
        self.counter += 1
        rule = FaultRule(f"fault-{self.counter}", spec, fallback=fallback)
        if fallback:
            self.rules.append(rule)
        else:
            first = next((n for n, r in enumerate(self.rules) if r.fallback), len(self.rules))
            self.rules.insert(first, rule)
        return rule

    def remove(self, rule_id: str | None = None) -> int:
        """Remove one rule (or all); how many were removed."""
        kept = [r for r in self.rules if rule_id is not None and r.id != rule_id]
        removed = len(self.rules) - len(kept)
        self.rules = kept
        return removed

    def delay_ms(self, spec: dict[str, Any]) -> int:
        """The rule's delay plus its jitter, drawn from the rules' own seeded generator."""
        return int(spec.get("delay_ms", 0)) + self.rng.randint(0, int(spec.get("jitter_ms", 0)))

    def fire(self, call: Call, usable: Callable[[FaultRule], bool]) -> FaultRule | None:
        """The first live, ``usable`` rule matching the call, counted as hit, if its dice say so."""
        for rule in self.rules:
            if rule.exhausted or not rule.matches(call) or not usable(rule):
                continue
            if self.rng.random() >= rule.spec.get("probability", 1):
                continue
            rule.hits += 1
            return rule
        return None
