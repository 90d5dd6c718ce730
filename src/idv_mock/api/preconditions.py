"""The steps every ``/v3`` call passes before its handler, as one table.

The route (``app.api_endpoint``) runs each step whose ``applies`` says it has work for the
call; the fast lane (``fastlane.py``) answers only a call for which no step applies, and
hands every other call to the route. Both read this one table, so a step added here is
one the lane cannot skip.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from idv_mock.api.limits import MAX_BODY, too_large
from idv_mock.backend import Project
from idv_mock.backend.faults import Call, FaultRule
from idv_mock.backend.parts.clocks import is_due
from idv_mock.ground.errors import GENERIC, RATE_LIMIT, Family
from idv_mock.serving.http import parse_json, path_of, project_of, says_body, service_of

if TYPE_CHECKING:  # the fast lane asks ``any_applies`` without Starlette
    from starlette.requests import Request
    from starlette.responses import Response

Run = Callable[["Request", Family], Awaitable["Response | None"]]


class Step:
    """A row of the table below (a plain class: a dataclass's methods are compiled at
    import, a first use's cost, for comparisons nothing makes)."""

    __slots__ = ("applies", "name", "run")

    def __init__(
        self, name: str, applies: Callable[[Project | None, bool], bool], run: Run
    ) -> None:
        self.name = name
        # cheap: whether ``run`` has anything to do, from what is known before the body is
        # read: the call's project and whether it says it carries a body (a non-zero
        # ``content-length`` or any ``transfer-encoding``)
        self.applies = applies
        self.run = run  # raises the call's ApiError, answers for the call, or None to go on


async def _body_size(request: Request, family: Family) -> Response | None:
    """413 for a body said (``content-length``) or found (``limits.py`` counted the bytes
    of a chunked one) to be over the limit."""
    length = request.headers.get("content-length", "0")
    if not length.isdigit() or int(length) > MAX_BODY or too_large(request.scope):
        raise GENERIC.error("payload_too_large")
    return None


async def _rate_limit(request: Request, family: Family) -> Response | None:
    project = project_of(request)
    wait = None if project is None else service_of(request).calls.admit(project)
    if wait is None:
        return None
    error = RATE_LIMIT.error("too_many_requests")
    error.headers["Retry-After"] = str(wait)
    raise error


async def _fault_rules(request: Request, family: Family) -> Response | None:
    """A fired rule's answer, after its delay. A rule naming an error this call's catalogue
    lacks is skipped, so one rule can cover several calls and fire only where it exists."""
    project = project_of(request)
    if project is None:
        return None
    call = Call(request.method, path_of(request), dict(request.query_params), await _json(request))

    def usable(rule: FaultRule) -> bool:
        return "error" not in rule.spec or family.find(rule.spec["error"]) is not None

    fired = service_of(request).calls.fire_fault(project, call, usable)
    if fired is None:
        return None
    if fired.delay_ms:
        await asyncio.sleep(fired.delay_ms / 1000)
    from idv_mock.api.faults import rule_response  # with the first rule fired (Starlette's)

    return rule_response(fired, family)


async def _json(request: Request) -> object:
    try:
        return parse_json(await request.body())
    except ValueError:  # not JSON, or too deep: a rule's body match sees no body
        return None


def _bodied(project: Project | None, has_body: bool) -> bool:
    return has_body


def _limited(project: Project | None, has_body: bool) -> bool:
    return project is not None and bool(project.options.get("rate_limit_per_second"))


def _faulted(project: Project | None, has_body: bool) -> bool:
    return project is not None and bool(project.faults.rules)


def _due(project: Project | None, has_body: bool) -> bool:
    return project is not None and is_due(project)


async def _run_due(request: Request, family: Family) -> Response | None:
    """What fell due on the project's clock happens before the call sees the state."""
    project = project_of(request)
    if project is not None:
        service_of(request).clocks.run_due(project)
    return None


STEPS: tuple[Step, ...] = (
    Step("due rules", _due, _run_due),
    Step("body size", _bodied, _body_size),
    Step("rate limit", _limited, _rate_limit),
    Step("fault rules", _faulted, _fault_rules),
)


def any_applies(project: Project, has_body: bool) -> bool:
    """Whether a step of ``STEPS`` applies to a call of ``project`` (the fast lane's
    question, asked on every call it takes): each step's own predicate written out in one
    function, since five Python calls cost about 4,000 instructions of a 150,000-instruction
    GET on the server. ``_WRITTEN_OUT`` below keeps it whole: a step added to the table
    stops the import until it is written out here too (``tests/test_fastlane.py`` compares
    this with the table's own predicates, step by step)."""
    return (
        has_body  # body size (_bodied), the cheapest first
        or bool(project.options.get("rate_limit_per_second"))  # rate limit (_limited)
        or bool(project.faults.rules)  # fault rules (_faulted)
        or is_due(project)  # due rules (_due)
    )


_WRITTEN_OUT = ("due rules", "body size", "rate limit", "fault rules")
if tuple(step.name for step in STEPS) != _WRITTEN_OUT:  # pragma: no cover (a coding error)
    raise ImportError("preconditions.any_applies must ask every step of STEPS")


async def run_steps(request: Request, family: Family) -> Response | None:
    """Every step that applies, in order: an answer of one ends the call before its handler.
    First, with the server setting ``auth_errors: gateway``, a missing or wrong key gets the
    vendor's gateway answer, 403 ``{"message": "Forbidden"}``, on every call."""
    project, has_body = project_of(request), says_body(request.scope)
    if project is None and service_of(request).gateway_auth():
        raise GENERIC.error("gateway_forbidden")  # the fast lane never answers an unknown key
    for step in STEPS:
        if step.applies(project, has_body):
            answered = await step.run(request, family)
            if answered is not None:
                return answered
    return None
