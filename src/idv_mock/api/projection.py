"""The projection API (api-v3.md 4.8, 7.6; gaps.md "Projection").

Checks of POST, in order: API key (403), JSON, encrypted body on a secure project, the
three members and their types, the name's charset, the mode, the field names, then the
project's rules (name taken, 10 policies), each answered with 7.6's status and message.
"""

from __future__ import annotations

import re
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from idv_mock.backend import NotFound, Project
from idv_mock.backend.projections import FIELDS, LimitReached, NameTaken
from idv_mock.ground import schemas
from idv_mock.ground.errors import PROJECTION as ERR
from idv_mock.ground.errors import ApiError
from idv_mock.serving import secure
from idv_mock.serving.http import json_response, parse_json, project_of, service_of

NAME = re.compile(schemas.load("projection_request.json")["properties"]["name"]["pattern"])
ALLOWED = frozenset(FIELDS)


def _project(request: Request) -> Project:
    project = project_of(request)
    if project is None:
        raise ERR.error("forbidden")
    return project


async def create_projection(request: Request) -> Response:
    project = _project(request)
    body = _body(await request.body(), project)
    name, mode, fields = _members(body)
    try:
        policy = service_of(request).create_projection(project, name, mode, fields)
    except NameTaken:
        raise ERR.error("name_exists") from None
    except LimitReached:
        raise ERR.error("count_limit") from None
    return json_response(
        {"message": "Create projection success", "projection_id": policy.projection_id}
    )


def _body(raw: bytes, project: Project) -> dict[str, Any]:
    try:
        body = parse_json(raw)
    except ValueError:
        raise ERR.error("invalid_json") from None
    if secure.is_secure(project):
        text = body.get("data") if isinstance(body, dict) else None
        if not isinstance(text, str):
            raise ERR.error("invalid_encrypted_body")
        try:
            body = secure.decrypt_object(text, project)
        except (secure.BadCiphertext, secure.BadPlaintext):
            raise ERR.error("invalid_encrypted_body") from None
    if not isinstance(body, dict):
        raise ERR.error("invalid_body")
    return body


def _members(body: dict[str, Any]) -> tuple[str, str, list[str]]:
    name, mode, fields = body.get("name"), body.get("mode"), body.get("fields")
    if not isinstance(name, str) or not isinstance(mode, str) or not _strings(fields):
        raise ERR.error("invalid_body")
    assert isinstance(fields, list)
    if not NAME.fullmatch(name):
        raise ERR.error("invalid_name")
    if mode != "exclude":
        raise ERR.error("invalid_mode", mode)
    unknown = [f for f in fields if f not in ALLOWED]
    if unknown:
        raise ERR.error("invalid_fields", ", ".join(unknown))
    return name, mode, list(dict.fromkeys(fields))


def _strings(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, str) for v in value)


async def list_projections(request: Request) -> Response:
    project = _project(request)
    items = service_of(request).projections(project)
    return json_response({"items": items, "message": "Get projection list success"})


async def get_projection(request: Request) -> Response:
    project = _project(request)
    try:
        policy = service_of(request).projection(project, request.path_params["projectionId"])
    except NotFound:
        raise ERR.error("not_found") from None
    return json_response({"item": policy.describe(), "message": "Get projection success"})


async def delete_projection(request: Request) -> Response:
    project = _project(request)
    try:
        service_of(request).delete_projection(project, request.path_params["projectionId"])
    except NotFound:
        raise ERR.error("not_found") from None
    return json_response({"message": "Delete projection success"})


def collection_not_allowed() -> ApiError:
    return ERR.error("collection_method")


def item_not_allowed() -> ApiError:
    return ERR.error("item_method")
