"""Ongoing monitoring (api-v3.md 4.7, 7.5; gaps.md "Ongoing monitoring").

POST checks, in order: project (and option ``monitoring_enabled``), worklist (unknown,
then inactive), required parameters, ``submissionIds`` format, admin. GET and DELETE:
project, worklist (``invalide_worklist``, spelled as the service spells it), payload,
admin, records.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from idv_mock.backend import AdminNotRegistered, NotFound, Project
from idv_mock.backend.exceptions import Inactive
from idv_mock.backend.monitoring import UnknownWorklist
from idv_mock.ground.errors import MISSING_RECORD, ApiError
from idv_mock.ground.errors import MONITORING as ERR
from idv_mock.serving import secure
from idv_mock.serving.http import json_response, parse_json, project_of, service_of

MAX_IDS = 25
REQUIRED = ("submissionIds", "admin")


def _project(request: Request, *, registering: bool = False) -> Project:
    project = project_of(request)
    if project is None or (registering and not project.options.get("monitoring_enabled")):
        raise ERR.error("invalid_project")
    return project


async def _json(request: Request) -> Any:
    try:
        return parse_json(await request.body())
    except ValueError:
        return None


def invalid_path() -> ApiError:
    return ERR.error("invalid_path")


async def register(request: Request) -> Response:
    service = service_of(request)
    project = _project(request, registering=True)
    wid = request.path_params["worklistId"]
    try:
        service.screening.check_worklist(project, wid, accepting=True)
    except UnknownWorklist:
        raise ERR.error("unknown_worklist") from None
    except Inactive:
        raise ERR.error("invalid_worklist") from None
    sids, admin = _register_body(await _json(request))
    try:
        batch = service.screening.monitor(project, wid, sids, admin)
    except AdminNotRegistered:
        raise ERR.error("invalid_admin") from None
    if not batch["success"]:
        raise ERR.error("all_submissions_failed", **batch)
    return json_response(batch)


def _register_body(body: Any) -> tuple[list[str], str]:
    body = body if isinstance(body, dict) else {}
    missing = [name for name in REQUIRED if body.get(name) in (None, "")]
    if missing:
        raise ERR.error("missing_required_parameters", ", ".join(missing))
    sids, admin = body["submissionIds"], body["admin"]
    if not (_id_list(sids)):
        raise ERR.error("invalid_submissionIds")
    if not isinstance(admin, str):
        raise ERR.error("invalid_admin")
    return list(sids), admin


def _id_list(value: Any) -> bool:
    return (
        isinstance(value, list)
        and 1 <= len(value) <= MAX_IDS
        and all(isinstance(v, str) and v for v in value)
    )


async def read_record(request: Request) -> Response:
    service = service_of(request)
    project = _project(request)
    wid, rid = request.path_params["worklistId"], request.path_params["recordId"]
    try:
        record = service.screening.monitoring_record(project, wid, rid)
    except UnknownWorklist:
        raise ERR.error("invalide_worklist") from None
    except NotFound:
        raise ERR.error("invalid_record") from None
    if secure.is_secure(project):
        return json_response(secure.encrypted(record, project))
    return json_response(record)


async def delete_records(request: Request) -> Response:
    service = service_of(request)
    project = _project(request)
    wid = request.path_params["worklistId"]
    try:
        service.screening.check_worklist(project, wid, accepting=False)
    except UnknownWorklist:
        raise ERR.error("invalide_worklist") from None
    body = await _json(request)
    if not isinstance(body, dict) or not _id_list(body.get("recordIds")):
        raise ERR.error("invalid_payload")
    admin = body.get("admin")
    if not isinstance(admin, str) or not admin:
        raise ERR.error("invalid_payload")
    try:
        missing = service.screening.delete_records(project, wid, list(body["recordIds"]), admin)
    except AdminNotRegistered:
        raise ERR.error("invalid_admin") from None
    if missing:
        raise ERR.error("missing_records", details=[MISSING_RECORD for _ in missing])
    return json_response({"message": "records deleted successfully"})
