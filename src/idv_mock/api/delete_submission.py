"""DELETE /submission and DELETE /submission/partial (api-v3.md 4.3, 4.4; gaps.md)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from idv_mock.backend import NotFound, Project
from idv_mock.backend.edits import DATA_FIELDS, PARTS
from idv_mock.ground.errors import DELETE_SUBMISSION as DEL
from idv_mock.ground.errors import PARTIAL_DELETE as PART
from idv_mock.serving.http import (
    api_key,
    json_response,
    parse_json,
    project_of,
    query_lists,
    service_of,
)

ID_NAMES = ("submission_id", "submissionId")


def _success(content: str) -> Response:
    return json_response({"message": "success", "content": content, "statusCode": 200})


async def delete_submission(request: Request) -> Response:
    service = service_of(request)
    project = project_of(request)
    if project is None:
        raise DEL.error("project_not_found")
    query = query_lists(request)
    sid = _first_id(query)
    if sid is None:
        raise DEL.error("missing_submission_id")
    admin = query["admin_name"][0] if query.get("admin_name") else None
    try:
        service.delete(project, sid, admin)
    except NotFound:
        raise DEL.error("submission_not_found") from None
    return _success(f"Submission {sid} deleted successfully.")


def _first_id(params: dict[str, list[Any]]) -> str | None:
    for name in ID_NAMES:
        values = params.get(name)
        value = _unwrap(values[0]) if values else None
        if isinstance(value, str) and value:
            return value
    return None


def _unwrap(value: Any) -> Any:
    return value.value if isinstance(value, _Body) else value


async def delete_partial(request: Request) -> Response:
    service = service_of(request)
    project = _partial_project(request)
    params = await _partial_params(request)
    sid = _first_id(params)
    if sid is None:
        raise PART.error("missing_submission_id")
    fields_text = _text(params, "fields", "fields_not_string", "fields_not_string_format")
    data_text = _text(
        params, "data_fields", "data_fields_not_string", "data_fields_not_string_format"
    )
    if fields_text is None:
        raise PART.error("missing_fields")
    parts = _names(fields_text, "fields", PARTS, empty="empty_fields")
    data_fields = None
    if data_text is not None:
        if "data" not in parts:
            raise PART.error("data_fields_not_allowed")
        data_fields = _names(data_text, "data_fields", DATA_FIELDS, empty="data_fields_format")
    try:
        service.delete_parts(project, sid, parts, data_fields)
    except NotFound:
        raise PART.error("submission_not_found") from None
    return _success(f"Submission {sid} fields deleted: {fields_text}")


def _partial_project(request: Request) -> Project:
    key = api_key(request)
    if not key:
        raise PART.error("project_not_found")
    project = service_of(request).project_for_key(key)
    if project is None:
        raise PART.error("invalid_api_key")
    return project


async def _partial_params(request: Request) -> dict[str, list[Any]]:
    """Query parameters, and a JSON body's members for names the query lacks."""
    params: dict[str, list[Any]] = dict(query_lists(request))
    raw = await request.body()
    if not raw.strip():
        return params
    try:
        body = parse_json(raw)
    except ValueError:
        raise PART.error("fields_format", "request body is not valid JSON") from None
    if not isinstance(body, dict):
        raise PART.error("fields_format", "request body must be a JSON object")
    for name, value in body.items():
        params.setdefault(name, [_Body(value)])
    return params


class _Body:
    """A value that came in a JSON body (where a non-string gets its own message)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


def _text(params: dict[str, list[Any]], name: str, twice: str, not_string: str) -> str | None:
    values = params.get(name)
    if values is None:
        return None
    if len(values) > 1:
        raise PART.error(twice)
    value = values[0]
    if isinstance(value, _Body):
        if not isinstance(value.value, str):
            raise PART.error(not_string)
        return value.value
    return str(value)


def _names(text: str, name: str, allowed: frozenset[str], *, empty: str) -> list[str]:
    """The comma-separated names, checked for emptiness, format and membership."""
    entries = [e.strip() for e in text.split(",")]
    if not any(entries):
        if empty == "empty_fields":
            raise PART.error(empty)
        raise PART.error(f"{name}_format", "no entries")
    for position, entry in enumerate(entries, start=1):
        if not entry:
            raise PART.error(f"{name}_format", f"empty entry at position {position}")
        if any(c.isspace() for c in entry):
            raise PART.error(f"{name}_format", f"whitespace inside '{entry}'")
    unknown = [e for e in entries if e not in allowed]
    if unknown:
        raise PART.error(f"invalid_{name}", ", ".join(unknown))
    return list(dict.fromkeys(entries))
