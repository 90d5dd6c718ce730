"""GET /v3/image and PUT /v3/submission/image: a submission's images (endpoints.md 6, 7, 10.4).

GET answers the image file itself with its own ``Content-Type`` (``image/png`` for the
mock's samples); the vendor documents no error, so the mock's are PUT's texts plus two of
its own. PUT takes ``multipart/form-data`` (the vendor's format; Base64 text fields, or
file parts), and also a form-urlencoded or JSON body (the old GitBook's "Body/Raw Json").
Checks of PUT, in order: API key, the body, ``submissionId`` and ``admin``, at least one
image, ``idType`` with an ID image and its value, each image's Base64 and format (jpg,
jpeg, png), then the admin and the submission.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl

from starlette.requests import Request
from starlette.responses import Response

from idv_mock.backend import AdminNotRegistered, NotFound, Project
from idv_mock.backend.images import ID_SLOTS, SLOTS, decode, media_type
from idv_mock.ground import schemas
from idv_mock.ground.errors import GET_IMAGE, PUT_IMAGE
from idv_mock.serving.http import json_response, parse_json, project_of, query_lists, service_of

SUCCESS = {"message": "complete to update image."}
ID_TYPES = frozenset(schemas.enum("id_type"))
PUT_FIELDS = frozenset({"submissionId", "admin", "idType", *SLOTS})


async def get_image(request: Request) -> Response:
    project = project_of(request)
    if project is None:
        raise GET_IMAGE.error("invalid_project")
    query = {k: v[-1] for k, v in query_lists(request).items()}
    sid = query.get("submissionId") or query.get("submission_id")
    slot = query.get("type")
    if not sid or not slot:
        raise GET_IMAGE.error("missing_data")
    if slot not in SLOTS:
        raise GET_IMAGE.error("invalid_type", slot)
    try:
        found = service_of(request).records.image(project, sid, slot)
    except NotFound:
        raise GET_IMAGE.error("invalid_submission") from None
    if found is None:
        raise GET_IMAGE.error("image_not_found")
    return Response(found, media_type=media_type(found))


async def put_image(request: Request) -> Response:
    project = project_of(request)
    if project is None:
        raise PUT_IMAGE.error("invalid_project")
    fields = _fields(request.headers.get("content-type", ""), await request.body())
    sid, admin = fields.get("submissionId"), fields.get("admin")
    if not isinstance(sid, str) or not sid or not isinstance(admin, str) or not admin:
        raise PUT_IMAGE.error("missing_data")
    given = {slot: fields[slot] for slot in SLOTS if fields.get(slot)}
    if not given:
        raise PUT_IMAGE.error("invalid_data")
    id_type = fields.get("idType") or ""
    if any(slot in given for slot in ID_SLOTS) and not id_type:
        raise PUT_IMAGE.error("missing_idType")
    if id_type and id_type not in ID_TYPES:
        raise PUT_IMAGE.error("invalid_idType")
    return _put(request, project, sid, admin, _decoded(given), str(id_type))


def _put(
    request: Request, project: Project, sid: str, admin: str, given: dict[str, bytes], kind: str
) -> Response:
    try:
        service_of(request).records.put_images(project, sid, admin, given, kind)
    except AdminNotRegistered:
        raise PUT_IMAGE.error("invalid_admin") from None
    except NotFound:
        raise PUT_IMAGE.error("invalid_submission") from None
    return json_response(SUCCESS)


def _decoded(given: dict[str, str | bytes]) -> dict[str, bytes]:
    found = {}
    for slot, value in given.items():
        image = value if isinstance(value, bytes) and media_type(value) else None
        if isinstance(value, str):
            image = decode(value)
        if image is None:
            raise PUT_IMAGE.error("invalid_payload")
        found[slot] = image
    return found


def _fields(content_type: str, raw: bytes) -> dict[str, Any]:
    """The body's fields: text values, or bytes for a multipart file part."""
    kind = content_type.split(";")[0].strip().lower()
    if kind == "multipart/form-data":
        fields = _multipart(content_type, raw)
    elif kind == "application/x-www-form-urlencoded":
        try:
            fields = dict(parse_qsl(raw.decode(), keep_blank_values=True))
        except UnicodeDecodeError:
            raise PUT_IMAGE.error("invalid_payload") from None
    else:
        try:
            fields = parse_json(raw)
        except ValueError:
            raise PUT_IMAGE.error("invalid_payload") from None
    if not isinstance(fields, dict) or set(fields) - PUT_FIELDS:
        raise PUT_IMAGE.error("invalid_payload")
    if not all(isinstance(v, (str, bytes)) for v in fields.values()):
        raise PUT_IMAGE.error("invalid_payload")
    return fields


def _multipart(content_type: str, raw: bytes) -> dict[str, str | bytes]:
    from email.message import EmailMessage  # the e-mail package: a tenth of building an app
    from email.parser import BytesParser
    from email.policy import HTTP

    head = f"Content-Type: {content_type}\r\n\r\n".encode("latin-1", "replace")
    message = BytesParser(policy=HTTP).parsebytes(head + raw)
    if not isinstance(message, EmailMessage) or not message.is_multipart():
        raise PUT_IMAGE.error("invalid_payload")
    fields: dict[str, str | bytes] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True)
        if not isinstance(name, str) or not isinstance(payload, bytes):
            raise PUT_IMAGE.error("invalid_payload")
        if part.get_filename() is not None:
            fields[name] = payload
            continue
        try:
            fields[name] = payload.decode()
        except UnicodeDecodeError:
            raise PUT_IMAGE.error("invalid_payload") from None
    return fields
