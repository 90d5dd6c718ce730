"""The scenarios page: the built-in scenarios, run one against the current state, PASS/FAIL.

``idv_mock.scenarios`` sits a layer above ``web/`` (ARCHITECTURE.md), so the page does not
import it: whoever assembles the server hands it over as ``app.state.scenarios`` (the
module itself fits :class:`ScenarioBook`), as ``idv-mock serve`` does. Without it the page
says so. A run's results are kept here, in the app, for the page the POST redirects to.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Protocol

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from idv_mock.backend import Service
from idv_mock.web.dashboard.common import UiError, form, redirect, render, service, shell

KEPT_RUNS = 20


class ScenarioBook(Protocol):
    """What the page needs of ``idv_mock.scenarios``."""

    def builtins(self) -> list[str]: ...

    def builtin(self, name: str) -> Any: ...

    def run(self, scenario: Any, *, service: Service) -> list[Any]: ...


def book_of(request: Request) -> ScenarioBook | None:
    found: ScenarioBook | None = getattr(request.app.state, "scenarios", None)
    return found


def _runs(request: Request) -> OrderedDict[str, dict[str, Any]]:
    state = request.app.state
    if not hasattr(state, "dashboard_runs"):
        state.dashboard_runs = OrderedDict()
    runs: OrderedDict[str, dict[str, Any]] = state.dashboard_runs
    return runs


async def scenarios(request: Request) -> Response:
    book = book_of(request)
    names = book.builtins() if book is not None else []
    shown = _runs(request).get(request.query_params.get("run", ""))
    context = shell(request, "/scenarios")
    context.update(names=names, plugged=book is not None, result=shown)
    return render(request, "scenarios.html", context)


async def run(request: Request) -> Response:
    """Play a built-in scenario in-process on this server's state (its ``given`` added to
    what is there); optionally reset the state first."""
    book = book_of(request)
    if book is None:
        raise UiError(409, "this server was started without the scenario runner")
    fields = await form(request)
    name = fields.get("name", "")
    if name not in book.builtins():
        raise UiError(404, f"no built-in scenario {name!r}")
    backend = service(request)
    if fields.get("reset"):
        backend.reset()
    try:
        scenario = book.builtin(name)
        results = await run_in_threadpool(book.run, scenario, service=backend)
    except ValueError as exc:  # a malformed scenario file (ScenarioError)
        raise UiError(400, str(exc)) from None
    note, run_id = _keep(request, name, results)
    return redirect("/scenarios", note, run=run_id)


def _keep(request: Request, name: str, results: list[Any]) -> tuple[str, str]:
    """Keep a run's results for the page to show; its note and id."""
    runs = _runs(request)
    steps = [
        {"name": r.name, "passed": r.passed, "problems": list(r.problems), "status": r.status}
        for r in results
    ]
    passed = all(s["passed"] for s in steps)
    run_id = str(int(next(reversed(runs), "0")) + 1)
    runs[run_id] = {"name": name, "steps": steps, "passed": passed}
    while len(runs) > KEPT_RUNS:
        runs.popitem(last=False)
    return f"{name}: {'PASS' if passed else 'FAIL'}", run_id
