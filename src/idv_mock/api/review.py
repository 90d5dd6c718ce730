"""POST /v3/submission/review: the client's decision on a pending submission (endpoints.md 5,
10.2).

The vendor documents both a JSON body and "URL query format": a body is read when one is
sent, else the query (``updateFields`` there is JSON text). Checks, in order: API key, the
input's shape (``admin``, ``submissionId``, ``status``, ``rejectComment`` for a rejection,
``updateFields``), then the admin, the submission, the project's reviewer and the status.
Every refusal is HTTP 400 ``{"message"}`` (the vendor's key names are not published).
"""

from __future__ import annotations

from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import Response

from idv_mock.backend import AdminNotRegistered, NotFound, Project
from idv_mock.backend.edits import PATCH_NAMES, first_invalid
from idv_mock.backend.exceptions import NotReviewable
from idv_mock.ground import schemas
from idv_mock.ground.errors import REVIEW as ERR
from idv_mock.serving.http import json_response, parse_json, project_of, query_lists, service_of

SUCCESS = "Success to review submission."
# updateFields: the PATCH properties a review may correct (the vendor's example names six)
UPDATE_FIELDS = PATCH_NAMES - {"kycStatus", "memo"}
STATUSES = schemas.enum("final_result")


async def review_submission(request: Request) -> Response:
    project = project_of(request)
    if project is None:
        raise ERR.error("project_not_found")
    given = await _input(request)
    admin = _text(given, "admin", "admin_required")
    sid = _text(given, "submissionId", "submission_id_required")
    status = given.get("status")
    if status not in STATUSES:
        raise ERR.error("invalid_status")
    comment = given.get("rejectComment")
    if status == "rejected" and not (isinstance(comment, str) and comment.strip()):
        raise ERR.error("reject_comment_required")
    fields = _fields(given.get("updateFields"))
    return _decide(request, project, sid, admin, str(status), comment, fields)


def _decide(
    request: Request,
    project: Project,
    sid: str,
    admin: str,
    status: str,
    comment: Any,
    fields: dict[str, str],
) -> Response:
    text = comment if status == "rejected" else None
    try:
        service_of(request).records.client_review(project, sid, admin, status, text, fields)
    except AdminNotRegistered:
        raise ERR.error("admin_denied") from None
    except NotFound:
        raise ERR.error("invalid_submission_id") from None
    except NotReviewable as exc:
        raise ERR.error("not_client_review" if exc.reason == "agent" else "not_pending") from None
    return json_response({"submissionId": sid, "message": SUCCESS, "finalStatus": status})


async def _input(request: Request) -> dict[str, Any]:
    raw = await request.body()
    if raw.strip():
        try:
            body = parse_json(raw)
        except ValueError:
            raise ERR.error("invalid_data_format") from None
        if not isinstance(body, dict):
            raise ERR.error("invalid_data_format")
        return body
    query: dict[str, Any] = {k: v[-1] for k, v in query_lists(request).items()}
    if isinstance(query.get("updateFields"), str):
        try:
            query["updateFields"] = orjson.loads(query["updateFields"])
        except orjson.JSONDecodeError:
            raise ERR.error("invalid_data_format") from None
    return query


def _text(given: dict[str, Any], name: str, missing: str) -> str:
    value = given.get(name)
    if not isinstance(value, str) or not value.strip():
        raise ERR.error(missing)
    return value


def _fields(value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or set(value) - UPDATE_FIELDS:
        raise ERR.error("invalid_data_format")
    if not all(isinstance(v, str) for v in value.values()) or first_invalid(value):
        raise ERR.error("invalid_data_format")
    return dict(value)
