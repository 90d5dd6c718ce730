"""What happened: webhook deliveries (with "send again") and the request journal."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from idv_mock.backend.parts.delivery import STATES
from idv_mock.web.dashboard.common import (
    UiError,
    current_project,
    form,
    pretty,
    redirect,
    render,
    service,
    shell,
)

METHODS = ("", "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")
SHOWN = 200  # newest entries a page shows (the journal keeps up to 10,000)


async def webhooks(request: Request) -> Response:
    pid = current_project(request).project_id
    state = request.query_params.get("state", "")
    if state and state not in STATES:
        raise UiError(400, f"state is one of {', '.join(STATES)}")
    found = service(request).delivery.in_state(pid, state or None)[-SHOWN:][::-1]
    for delivery in found:
        delivery["payload_json"] = pretty(delivery["payload"])
    context = {
        **shell(request, "/webhooks"),
        "deliveries": found,
        "states": STATES,
        "state": state,
        "levers": service(request).delivery.levers(pid),
    }
    return render(request, "webhooks.html", context)


async def resend(request: Request) -> Response:
    pid = current_project(request).project_id
    await form(request)
    again = service(request).delivery.resend(pid, request.path_params["delivery_id"])
    return redirect("/webhooks", f"{again['event']} queued again as {again['id']}")


async def journal(request: Request) -> Response:
    pid = current_project(request).project_id
    query = request.query_params
    method, path, status = query.get("method", ""), query.get("path", ""), query.get("status", "")
    if method.upper() not in METHODS or not _status_ok(status):
        raise UiError(400, "method is an HTTP method; status is a code (404) or a class (4xx)")
    glob = path if not path or any(c in path for c in "*?[") else f"{path}*"
    entries = service(request).calls.journal(pid, method or None, glob or None)
    shown = [_entry(e) for e in reversed(entries) if _status_matches(e.get("status"), status)]
    context = {
        **shell(request, "/journal"),
        "entries": shown[:SHOWN],
        "total": len(shown),
        "filters": {"method": method.upper(), "path": path, "status": status},
        "methods": METHODS,
    }
    return render(request, "journal.html", context)


def _status_ok(text: str) -> bool:
    """Empty, a code (``404``) or a class (``4xx``)."""
    if not text:
        return True
    head, tail = text[:1], text[1:]
    return len(text) == 3 and head.isdigit() and (tail.isdigit() or tail.lower() == "xx")


def _status_matches(code: Any, wanted: str) -> bool:
    if not wanted:
        return True
    text = str(code)
    return text == wanted or (wanted[1:].lower() == "xx" and text[:1] == wanted[:1])


def _entry(entry: dict[str, Any]) -> dict[str, Any]:
    """An entry with its parts as text a page can show as they are."""
    query = entry.get("query") or {}
    shown = {**entry, "query_text": "&".join(f"{k}={v}" for k, v in query.items())}
    for part in ("body", "response", "headers", "decrypted"):
        if part in entry:
            shown[f"{part}_json"] = pretty(entry[part])
    return shown
