"""The webhooks page's delivery levers: set them, release held deliveries, filter by state.

The same ``Service`` methods as ``PUT .../webhook-delivery`` and ``POST .../webhooks/
release``; the form's simple fields become the control API's body (empty fields: lever off).
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from idv_mock.delivery.levers import RELEASE_ORDERS
from idv_mock.web.dashboard.common import UiError, current_project, form, redirect, service

NUMBERS = {"duplicate": int, "delay_seconds": float, "fail_first": int}
ORDERS = RELEASE_ORDERS


async def set_levers(request: Request) -> Response:
    pid = current_project(request).project_id
    levers = _levers(await form(request))
    found = service(request).delivery.set_levers(pid, levers)
    return redirect("/webhooks", f"delivery levers set: {found or 'prompt delivery'}")


def _levers(fields: dict[str, str]) -> dict[str, Any]:
    """The levers document from the form (a bad number is a 400 page)."""
    doc: dict[str, Any] = {}
    try:
        for name, kind in NUMBERS.items():
            if fields.get(name, "").strip():
                doc[name] = kind(fields[name])
        if fields.get("drop_first", "").strip():
            doc["drop"] = {"first": int(fields["drop_first"])}
        elif fields.get("drop_share", "").strip():
            seed = int(fields.get("drop_seed") or 0)
            doc["drop"] = {"share": float(fields["drop_share"]), "seed": seed}
    except ValueError:
        message = "duplicate, fail_first and drop are whole numbers; delay a number"
        raise UiError(400, message) from None
    if fields.get("hold"):
        doc["hold"] = True
    return doc


async def release(request: Request) -> Response:
    pid = current_project(request).project_id
    fields = await form(request)
    order = fields.get("order", "queued")
    if order not in ORDERS:
        raise UiError(400, "order is queued, reversed or shuffle")
    try:
        seed = int(fields.get("seed") or 0)
    except ValueError:
        raise UiError(400, "seed is a whole number") from None
    released = service(request).delivery.release(pid, {"order": order, "seed": seed})
    return redirect("/webhooks", f"{len(released)} held deliveries released ({order})")
