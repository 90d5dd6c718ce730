"""POST /v3/submission/migration: insert a submission with no verification (endpoints.md 8,
10.3), answering api-v3.md 7.2's table, which is the vendor's migration table.

Checks, in order: API key (``invalid_project``), the body (decrypted on a secure
project; ``invalid_payload``), no unknown parameter (``invalid_parameter: <name>``), the
required ones (``missing_data``), each value's format (``invalid_format: <name>``), then
the admin (``invalid_admin``). Fields map to the resource as ``FIELDS`` says.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from idv_mock.backend import AdminNotRegistered, InvalidInput, Project
from idv_mock.ground import schemas
from idv_mock.ground.errors import MIGRATION as ERR
from idv_mock.ground.errors import ApiError
from idv_mock.serving import secure
from idv_mock.serving.http import json_response, parse_json, project_of, service_of

_DATE = re.compile(schemas.definition("date")["pattern"])
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
_COUNTRIES = schemas.countries()


def _date(value: str) -> bool:
    return bool(_DATE.fullmatch(value))


def _any(value: str) -> bool:
    return True


def _ip(value: str) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


# request field -> (where it goes: top-level key, or "data.<key>"; its format rule)
FIELDS: dict[str, tuple[str, Any]] = {
    "admin": ("", lambda v: bool(_EMAIL.fullmatch(v))),
    "email": ("email", lambda v: bool(_EMAIL.fullmatch(v))),
    "fullName": ("data.full_name", _any),
    "firstName": ("data.first_name", _any),
    "lastName": ("data.last_name", _any),
    "birthDate": ("data.date_of_birth", _date),
    "kycStatus": ("kyc.result", frozenset(schemas.enum("final_result")).__contains__),
    "idType": ("data.idType", frozenset(schemas.enum("id_type")).__contains__),
    "issuingCountry": ("data.idcard_issuingCountry", _COUNTRIES.__contains__),
    "nationality": ("data.nationality", _COUNTRIES.__contains__),
    "gender": ("data.gender", frozenset(schemas.enum("gender")).__contains__),
    "issueDate": ("data.idcard_issueDate", _date),
    "expireDate": ("data.idcard_expireDate", _date),
    "ipAddress": ("data.ip_address", _ip),
    "identityNumber": ("data.identityNumber", _any),
    "documentNumber": ("data.documentNumber", _any),
    "address_city": ("data.address_city", _any),
    "address_country": ("data.address_country", _any),
    "address_state": ("data.address_state", _any),
    "address_street": ("data.address_street", _any),
    "address_full": ("data.address_formatted", _any),
    "cf1": ("data.cf1", _any),
    "cf2": ("data.cf2", _any),
    "cf3": ("data.cf3", _any),
    "userid": ("userid", _any),
}
REQUIRED = ("admin", "email", "fullName", "birthDate", "kycStatus")


async def migrate_submission(request: Request) -> Response:
    project = project_of(request)
    if project is None:
        raise ERR.error("invalid_project")
    body = await _body(request, project)
    unknown = [name for name in body if name not in FIELDS]
    if unknown:
        raise ERR.error("invalid_parameter", unknown[0])
    if any(body.get(name) in (None, "") for name in REQUIRED):
        raise ERR.error("missing_data")
    for name, value in body.items():
        if not isinstance(value, str) or not FIELDS[name][1](value):
            raise ERR.error("invalid_format", name)
    try:
        sub = service_of(request).records.migrate(project, body["admin"], overrides(body))
    except AdminNotRegistered:
        raise ERR.error("invalid_admin") from None
    except InvalidInput as exc:  # a value the stored resource's schema refuses
        raise _refused_value(exc) from None
    answer = {"message": "success", "submissionId": sub["submission_id"]}
    return json_response(secure.encrypted(answer, project) if project.secure else answer)


def _refused_value(exc: InvalidInput) -> ApiError:
    """``invalid_format`` naming the request field of the first refused resource field."""
    targets = {target.replace(".", "/"): name for name, (target, _) in FIELDS.items() if target}
    for problem in exc.problems:
        where = problem.split(":", 1)[0]
        if where in targets:
            return ERR.error("invalid_format", targets[where])
    return ERR.error("processing_error")


def overrides(body: dict[str, str]) -> dict[str, Any]:
    """The submission's fields from the request's (``FIELDS``); the KYC result carries no
    comment, as nothing was checked."""
    found: dict[str, Any] = {"data": {}, "kyc": {"comment": [], "commentCode": []}}
    for name, value in body.items():
        target = FIELDS[name][0]
        if "." in target:
            top, key = target.split(".")
            found[top][key] = value
        elif target:
            found[target] = value
    return found


async def _body(request: Request, project: Project) -> dict[str, Any]:
    raw = await request.body()
    try:
        if project.secure:
            return secure.decrypt_object(secure.ciphertext_from_body(raw), project)
        body = parse_json(raw)
    except ValueError:
        raise ERR.error("invalid_payload") from None
    if not isinstance(body, dict):
        raise ERR.error("invalid_payload")
    return body
