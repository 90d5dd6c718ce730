"""The records of the scenario package: a :class:`Scenario`, a :class:`StepResult`, the errors."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_PROJECT = "default"
GIVEN_ORDER = (  # the order in which given entries are applied
    *("projects", "projections", "watchlist", "worklists", "tokens", "webhook_delivery"),
    *("submissions", "watchlist_submissions"),
)


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
