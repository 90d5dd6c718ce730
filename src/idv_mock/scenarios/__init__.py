"""Scenario files: a ``given`` state and ``steps`` (request, then expectations), run anywhere.

A scenario is a YAML file validated by ``schemas/scenario.json``. :func:`load` reads one
(a malformed file raises :class:`ScenarioError` naming the file, the line and the problem),
:func:`apply_given` puts its state into a :class:`~idv_mock.backend.Service`, and
:func:`run` plays its steps, in-process on a fresh service or against a live server (whose
state is then set through the control API), answering one :class:`StepResult` per step.
The built-in scenarios (the repository's ``scenarios/`` folder, shipped in the wheel as
``idv_mock/scenarios/builtin``) are found by name with :func:`builtin`.

The modules: ``records`` (the records and errors), ``files`` (loading, validation, line
numbers, built-ins), ``matching`` (variables and partial matching), ``control`` (the
Service or ``/__admin``), ``given`` (applying ``given``) and ``runner`` (playing steps).
"""

from __future__ import annotations

from idv_mock.scenarios.files import BUILTIN_DIR, builtin, builtins, find, load, loads
from idv_mock.scenarios.given import apply_given
from idv_mock.scenarios.records import GivenError, Scenario, ScenarioError, StepResult
from idv_mock.scenarios.runner import run

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
