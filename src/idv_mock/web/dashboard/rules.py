"""What steers the API's answers: fault rules, projection policies, the project's own
watchlist entries and monitoring worklists; each listed, created from a form, deleted.

Every change goes through the ``Service`` method the control API or the API uses, with the
same checks (a fault rule is the control API's schema, refused by the same
``unknown_errors`` when it names an error the matched calls cannot give).
"""

from __future__ import annotations

from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import Response

from idv_mock.aml.screening import builtin_watchlist
from idv_mock.ground import schemas
from idv_mock.serving.fault_rules import unknown_errors
from idv_mock.serving.http import parse_json
from idv_mock.web.dashboard.common import (
    UiError,
    current_project,
    form,
    redirect,
    render,
    service,
    shell,
)

FIELDS: tuple[str, ...] = tuple(schemas.load("projection_request.json")["$defs"]["field"]["enum"])
FAULT_KINDS = ("respond", "error", "fault", "delay")
FAULT_EXAMPLE = '{"match": {"method": "GET", "path": "/v3/submission"}, "respond": {"status": 503}}'


# --- fault rules ---


async def faults(request: Request) -> Response:
    pid = current_project(request).project_id
    rules = service(request).calls.faults(pid)
    for rule in rules:
        rule["json"] = orjson.dumps(rule).decode()
    context = {**shell(request, "/faults"), "rules": rules, "kinds": FAULT_KINDS}
    return render(request, "faults.html", {**context, "example": FAULT_EXAMPLE})


async def add_fault(request: Request) -> Response:
    pid = current_project(request).project_id
    spec = _fault_spec(await form(request))
    problems = unknown_errors(spec, request.app.state.api_families)
    if problems:
        raise UiError(400, "invalid fault rule: " + "; ".join(problems[:10]))
    added = service(request).calls.add_fault(pid, spec)
    return redirect("/faults", f"fault rule {added['id']} added")


def _fault_spec(fields: dict[str, str]) -> dict[str, Any]:
    """The rule typed as JSON (the control API's body), else built from the simple fields."""
    raw = fields.get("spec", "").strip()
    if raw:
        try:
            spec = parse_json(raw.encode())
        except ValueError:
            raise UiError(400, "the rule is not JSON") from None
        if not isinstance(spec, dict):
            raise UiError(400, "the rule is a JSON object")
        return spec
    match = {"path": fields.get("path", "").strip()}
    if fields.get("method"):
        match["method"] = fields["method"]
    spec = {"match": match, **_fault_action(fields.get("kind", ""), fields.get("value", ""))}
    for name in ("times", "delay_ms"):
        if fields.get(name, "").strip():
            spec[name] = _integer(fields[name], name)
    return spec


def _fault_action(kind: str, value: str) -> dict[str, Any]:
    value = value.strip()
    if kind == "respond":
        return {"respond": {"status": _integer(value, "status")}}
    if kind in ("error", "fault"):
        return {kind: value}
    if kind == "delay":
        return {}
    raise UiError(400, f"the kind is one of {', '.join(FAULT_KINDS)}")


def _integer(text: str, name: str) -> int:
    text = text.strip()
    if not (text.isascii() and text.isdigit() and len(text) <= 9):
        raise UiError(400, f"{name} is a whole number")
    return int(text)


async def remove_fault(request: Request) -> Response:
    pid = current_project(request).project_id
    await form(request)
    fid = request.path_params["fault_id"]
    service(request).calls.remove_faults(pid, fid)
    return redirect("/faults", f"fault rule {fid} removed")


# --- projection policies ---


async def projections(request: Request) -> Response:
    project = current_project(request)
    found = service(request).projections(project)
    context = {**shell(request, "/projections"), "policies": found, "fields": FIELDS}
    return render(request, "projections.html", context)


async def create_projection(request: Request) -> Response:
    project = current_project(request)
    fields = await form(request)
    chosen = [f for f in FIELDS if fields.get(f"field-{f}")]
    name = fields.get("name", "")
    problems = schemas.errors(
        "projection_request.json", {"name": name, "mode": "exclude", "fields": chosen}
    )
    if problems:
        raise UiError(400, "invalid projection: " + "; ".join(problems[:5]))
    policy = service(request).create_projection(project, name, "exclude", chosen)
    return redirect("/projections", f"projection {policy.name} created")


async def delete_projection(request: Request) -> Response:
    project = current_project(request)
    await form(request)
    policy = service(request).delete_projection(project, request.path_params["projection_id"])
    return redirect("/projections", f"projection {policy.name} deleted")


# --- watchlist ---


async def watchlist(request: Request) -> Response:
    pid = current_project(request).project_id
    own = service(request).screening.own_watchlist(pid)
    builtin = len(builtin_watchlist())
    context = {**shell(request, "/watchlist"), "entries": own, "builtin": builtin}
    return render(request, "watchlist.html", context)


async def add_watchlist_entry(request: Request) -> Response:
    pid = current_project(request).project_id
    fields = await form(request)
    spec: dict[str, Any] = {
        k: fields.get(k, "").strip() for k in ("entry_id", "list", "name", "nationality")
    }
    for name in ("birth_date", "details"):
        if fields.get(name, "").strip():
            spec[name] = fields[name].strip()
    aliases = [a.strip() for a in fields.get("aliases", "").split(",") if a.strip()]
    if aliases:
        spec["aliases"] = aliases
    entry = service(request).screening.add_watchlist_entry(pid, spec)
    return redirect("/watchlist", f"entry {entry['entry_id']} added")


async def delete_watchlist_entry(request: Request) -> Response:
    pid = current_project(request).project_id
    await form(request)
    entry = service(request).screening.delete_watchlist_entry(pid, request.path_params["entry_id"])
    return redirect("/watchlist", f"entry {entry['entry_id']} deleted")


# --- worklists ---


async def worklists(request: Request) -> Response:
    pid = current_project(request).project_id
    found = service(request).screening.worklists(pid)
    return render(request, "worklists.html", {**shell(request, "/worklists"), "lists": found})


async def create_worklist(request: Request) -> Response:
    pid = current_project(request).project_id
    fields = await form(request)
    spec: dict[str, Any] = {"name": fields.get("name", "").strip(), "active": "active" in fields}
    if fields.get("id", "").strip():
        spec["id"] = fields["id"].strip()
    created = service(request).screening.create_worklist(pid, spec)
    return redirect("/worklists", f"worklist {created['id']} created")


async def change_worklist(request: Request) -> Response:
    """Delete, activate or deactivate a worklist (``action`` in the path)."""
    pid = current_project(request).project_id
    await form(request)
    wid, action = request.path_params["worklist_id"], request.path_params["action"]
    if action == "delete":
        service(request).screening.delete_worklist(pid, wid)
    elif action in ("activate", "deactivate"):
        service(request).screening.set_worklist_active(pid, wid, action == "activate")
    else:
        raise UiError(404, "the action is delete, activate or deactivate")
    return redirect("/worklists", f"worklist {wid}: {action}d")


UNIT_SECONDS = {"seconds": 1, "minutes": 60, "hours": 3600, "days": 86400}


async def clock(request: Request) -> Response:
    """The project's clock: now, mode, what falls due, and a form to advance it."""
    pid = current_project(request).project_id
    found = service(request).clocks.describe(pid)
    return render(request, "clock.html", {**shell(request, "/clock"), "clock": found})


async def advance_clock(request: Request) -> Response:
    """Advance by an amount of a unit, or to an instant (``to`` wins when given)."""
    pid = current_project(request).project_id
    fields = await form(request)
    to = fields.get("to", "").strip()
    if to:
        spec: dict[str, Any] = {"to": to}
    else:
        unit = UNIT_SECONDS.get(fields.get("unit", "hours"))
        try:
            amount = float(fields.get("amount", ""))
        except ValueError:
            amount = -1.0
        if unit is None or not amount >= 0:  # NaN too
            raise UiError(400, "give an amount of 0 or more, and a unit, or an instant")
        spec = {"seconds": amount * unit}
    done = service(request).clocks.advance(pid, spec)
    fired = len(done["fired"])
    return redirect("/clock", f"now {done['now']}; {fired} due item(s) ran")
