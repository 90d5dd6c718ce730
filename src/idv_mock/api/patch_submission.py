"""PATCH /submission (api-v3.md 4.1; gaps.md "PATCH /submission").

Checks run in gaps.md's order and the first failure answers: API key, body (and
decryption), submissionId, admin, something to modify, no unknown property, property
values, admin registered, submission exists.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from idv_mock.backend import AdminNotRegistered, InvalidProperty, NotFound, Project
from idv_mock.backend.edits import PATCH_NAMES
from idv_mock.ground.errors import PATCH_SUBMISSION as ERR
from idv_mock.serving import secure
from idv_mock.serving.http import api_key, json_response, parse_json, service_of

SUCCESS = {"message": "success to edit.", "statusCode": 200}
TOP_LEVEL = frozenset({"submissionId", "admin", "data", "projectId"})


async def patch_submission(request: Request) -> Response:
    service = service_of(request)
    project = _project(request)
    body = _body(await request.body(), project)
    sid = _required_string(body, "submissionId", "missing_submissionId")
    admin = _required_string(body, "admin", "missing_admin")
    changes = _changes(body)
    try:
        service.patch(project, sid, admin, changes)
    except InvalidProperty as exc:
        raise ERR.error(f"invalid_{exc.name}") from None
    except AdminNotRegistered:
        raise ERR.error("invalid_admin") from None
    except NotFound:
        raise ERR.error("invalid_submissionId") from None
    if secure.is_secure(project):
        return json_response(secure.encrypted(SUCCESS, project))
    return json_response(SUCCESS)


def _project(request: Request) -> Project:
    key = api_key(request)
    if key is None:
        raise ERR.error("missing_api_key")
    if not key.strip():
        raise ERR.error("missing_project")
    project = service_of(request).project_for_key(key)
    if project is None:
        raise ERR.error("invalid_project")
    return project


def _body(raw: bytes, project: Project) -> dict[str, Any]:
    if secure.is_secure(project):
        try:
            return secure.decrypt_object(secure.ciphertext_from_body(raw), project)
        except secure.BadCiphertext:
            raise ERR.error("decryption_failed") from None
        except secure.BadPlaintext:
            raise ERR.error("parse_error") from None
    try:
        body = parse_json(raw)
    except ValueError:
        raise ERR.error("parse_error") from None
    if not isinstance(body, dict):
        raise ERR.error("parse_error")
    return body


def _required_string(body: dict[str, Any], name: str, missing: str) -> str:
    value = body.get(name)
    if value is None or value == "":
        raise ERR.error(missing)
    if not isinstance(value, str):
        raise ERR.error("parse_error")
    return value


def _changes(body: dict[str, Any]) -> dict[str, str]:
    data = body.get("data")
    if data is None or data == {}:
        raise ERR.error("nothing_to_modify")
    unknown_top = set(body) - TOP_LEVEL
    if not isinstance(data, dict) or unknown_top or set(data) - PATCH_NAMES:
        raise ERR.error("parse_error")
    if not all(isinstance(v, str) for v in data.values()):
        raise ERR.error("parse_error")
    return data
