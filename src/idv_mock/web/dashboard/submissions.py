"""Submissions: the list (pages are the API's own), one submission in full, and review.

The list reads through ``serving.submission_page.plain_page``, the very function that answers
``GET /v3/submission``, so a page here holds the items of the API's page for the same
query and its "next" link carries the API's ``nextpageKey``. KYC result and "deleted" are
not API filters: they narrow the items of that page, and the page says how many it hid.
A submission id is the API's own single-id read (``submission_id``), pasted ids trimmed.
A filter that matches nothing says so, naming the filters, rather than showing an empty table.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import orjson
from starlette.requests import Request
from starlette.responses import Response

from idv_mock.backend import Project
from idv_mock.backend.store import Selection
from idv_mock.ground import schemas
from idv_mock.serving.submission_page import plain_page
from idv_mock.web.dashboard.common import (
    UI,
    UiError,
    current_project,
    form,
    pretty,
    redirect,
    render,
    service,
    shell,
)

API_PARAMS = (
    "submission_id",
    "userid",
    "email",
    "start_date",
    "end_date",
    "count",
    "nextpage_id",
    "nextpage_date",
)
KYC_RESULTS = ("", *schemas.enum("kyc_outcome"))
DELETED = ("any", "hide", "only")
DELETED_STATUS = "Deleted Submission"
REVIEW = {"approve": "approved", "reject": "rejected", "pending": "pending"}


async def submissions(request: Request) -> Response:
    project = current_project(request)
    query = request.query_params
    kyc, deleted = query.get("kyc", ""), query.get("deleted", "any")
    if kyc not in KYC_RESULTS or deleted not in DELETED:
        raise UiError(400, "kyc is approved, rejected or pending; deleted is any, hide or only")
    given = {name: query.get(name, "").strip() for name in API_PARAMS}
    params = {name: [value] for name, value in given.items() if value}
    doc = orjson.loads(plain_page(service(request), project, params))
    rows = [_row(item) for item in doc["Items"]]
    shown = [r for r in rows if _wanted(r, kyc, deleted)]
    context = {
        **shell(request, "/submissions"),
        "rows": shown,
        "hidden": len(rows) - len(shown),
        "page_size": len(rows),
        "filters": {**given, "kyc": kyc, "deleted": deleted},
        "active": _active(given, kyc, deleted),
        "next_url": _next_url(request, doc.get("nextpageKey")),
        "first_url": _first_url(request),
    }
    return render(request, "submissions.html", context)


FILTER_NAMES = {
    "submission_id": "submission id",
    "userid": "user id",
    "email": "e-mail",
    "start_date": "from",
    "end_date": "to",
    "kyc": "KYC result",
    "deleted": "deleted",
}


def _active(given: dict[str, str], kyc: str, deleted: str) -> list[tuple[str, str]]:
    """The filters in force, named as the form labels them (what "no match" lists)."""
    values = {**given, "kyc": kyc, "deleted": "" if deleted == "any" else deleted}
    return [(label, values[name]) for name, label in FILTER_NAMES.items() if values[name]]


def _row(item: dict[str, Any]) -> dict[str, Any]:
    data, kyc = item.get("data") or {}, item.get("kyc") or {}
    return {
        "id": str(item.get("submission_id", "")),
        "created_at": item.get("created_at", ""),
        "userid": item.get("userid", ""),
        "email": item.get("email", ""),
        "name": data.get("full_name", "") if isinstance(data, dict) else "",
        "kyc": kyc.get("result", "") if isinstance(kyc, dict) else "",
        "deleted": item.get("status") == DELETED_STATUS,
    }


def _wanted(row: dict[str, Any], kyc: str, deleted: str) -> bool:
    if kyc and row["kyc"] != kyc:
        return False
    return deleted == "any" or row["deleted"] == (deleted == "only")


def _next_url(request: Request, key: Any) -> str:
    if not isinstance(key, dict):
        return ""
    params = {k: v for k, v in request.query_params.items() if k not in ("note", "project")}
    params.update(nextpage_id=str(key.get("id", "")), nextpage_date=str(key.get("created_at", "")))
    return f"{UI}/submissions?{urlencode(params)}"


def _first_url(request: Request) -> str:
    skip = ("note", "project", "nextpage_id", "nextpage_date")
    params = {k: v for k, v in request.query_params.items() if k not in skip}
    return f"{UI}/submissions?{urlencode(params)}"


# --- one submission ---


async def submission(request: Request) -> Response:
    project = current_project(request)
    sid = request.path_params["submission_id"]
    backend = service(request)
    stored = backend.stored_submission(project.project_id, sid)
    returned = _as_returned(request, project, sid)
    context = {
        **shell(request, "/submissions"),
        "sid": sid,
        "sub": stored,
        "returned": returned,
        "stored_json": pretty(stored),
        "returned_json": pretty(returned) if returned is not None else "",
        "differences": _differences(stored, returned),
        "hidden_fields": backend.dashboard.hidden_fields(project.project_id, sid),
        "records": backend.screening.records_of(project.project_id, sid),
        "worklists": [w for w in backend.screening.worklists(project.project_id) if w["active"]],
        "admins": list(project.admins),
        "deleted": stored.get("status") == DELETED_STATUS,
        "sections": _sections(stored),
    }
    return render(request, "submission.html", context)


def _as_returned(request: Request, project: Project, sid: str) -> dict[str, Any] | None:
    """The item as ``GET /v3/submission?submission_id=`` returns it (projection applied)."""
    items, _ = service(request).read(
        project, Selection(submission_id=sid, count=1), reduced=False, request_type=None
    )
    return orjson.loads(items[0]) if items else None


def _differences(stored: dict[str, Any], returned: dict[str, Any] | None) -> list[str]:
    """What the API's answer leaves out or shows otherwise, top-level field by field."""
    if returned is None:
        return ["the API returns no item for this id"]
    found = [f"{k}: not returned" for k in stored if k not in returned]
    found += [f"{k}: returned as null" for k in stored if k in returned and returned[k] is None
              and stored[k] is not None]  # fmt: skip
    found += [f"{k}: returned only" for k in returned if k not in stored]
    return found


# sections of a submission in the order the detail page shows them (the rest follow)
SECTION_ORDER = (
    "data", "ocr", "OCR_raw", "kyc", "aml", "image", "memo", "review", "projection",
    "duplicated_users", "duplicated_selfie_users", "duplicated_information",
    "custom_duplicated_information", "additional_list", "project_options",
)  # fmt: skip


def _sections(sub: dict[str, Any]) -> list[tuple[str, Any]]:
    """Every part of the submission that is an object or a list, each a section."""
    keys = [k for k in SECTION_ORDER if k in sub]
    keys += [k for k in sub if k not in keys and isinstance(sub[k], (dict, list))]
    return [(k, sub[k]) for k in keys]


async def review(request: Request) -> Response:
    """Approve, reject (with a reason) or set pending, as an administrator's PATCH does
    (``Service.review``: the same ``edit``, so ``updated`` goes out, then the result)."""
    project = current_project(request)
    sid = request.path_params["submission_id"]
    fields = await form(request)
    status = REVIEW.get(fields.get("action", ""))
    if status is None:
        raise UiError(400, "the action is approve, reject or pending")
    admin = fields.get("admin") or (project.admins[0] if project.admins else "")
    changes = {"kycStatus": status}
    reason = fields.get("reason", "").strip()
    if reason:
        changes["memo"] = f"{status}: {reason}"[:2000]
    service(request).edit(project, sid, admin, changes)
    return redirect(f"/submissions/{sid}", f"kycStatus set to {status} by {admin}")


async def monitor(request: Request) -> Response:
    """Register the submission as a record of an active worklist (``register_record``:
    the monitoring POST's rules, and its ``aml_monitor`` webhook)."""
    project = current_project(request)
    sid = request.path_params["submission_id"]
    fields = await form(request)
    wid = fields.get("worklist_id", "")
    admin = fields.get("admin") or None
    record = service(request).screening.register_record(project.project_id, wid, sid, admin)
    return redirect(f"/submissions/{sid}", f"record {record['id']} of worklist {wid}")


async def report(request: Request) -> Response:
    """An AML report's PDF (``GET /v3/report/aml`` without the API key to type)."""
    project = current_project(request)
    pdf = service(request).screening.report_pdf(project, request.path_params["resource_id"])
    return Response(pdf, media_type="application/pdf", headers={"Cache-Control": "no-store"})


async def create_submission(request: Request) -> Response:
    """A Faker submission in the current project (handy for demos), with its webhooks."""
    project = current_project(request)
    await form(request)
    sub = service(request).create_submission(project.project_id, {}, fire_webhooks=True)
    return redirect(f"/submissions/{sub['submission_id']}", "submission created")
