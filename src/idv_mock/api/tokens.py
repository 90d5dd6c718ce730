"""POST, GET and DELETE /v3/submission/tokens: the token pool (endpoints.md 1-4, 10.1).

The body is JSON text whatever the ``Content-Type`` (the vendor's samples send
``text/plain``). Checks run in this order and the first failure answers: API key, body
(decrypted on a secure project), ``tokenId`` an array of strings, the per-call limit, each
ID's length then format, then the pool. A refused call changes nothing. POST processes
IDs one by one, as the vendor does: a bad ID among good ones is counted in
``summary.failed`` and listed in ``details.failed`` (with its error), the good ones are
registered; only a call with no good ID is refused, with the first bad one's error.
DELETE by ID still answers a bad ID for the whole call (docs/gaps.md).
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from idv_mock.backend import NotFound, Project
from idv_mock.backend.parts.tokens import PoolFull
from idv_mock.backend.token_pool import TokenIdError, check_token_id
from idv_mock.ground.errors import TOKENS as ERR
from idv_mock.ground.errors import ApiError
from idv_mock.serving import secure
from idv_mock.serving.http import json_response, parse_json, project_of, query_lists, service_of

ALL_IN_POOL = "All tokens are now in the pool"
SOME_IN_POOL = "{} tokens are now in the pool; {} failed"  # chosen: the vendor's is not shown
QUERY = frozenset({"tokenId", "type", "nextPageKeyId", "nextPageKeyTime"})


async def register_tokens(request: Request) -> Response:
    project = _project(request)
    body = await _body(request, project)
    if set(body) - {"tokenId"}:
        raise ERR.error("invalid_payload")
    ids = _id_list(body, project)
    good, bad = _checked(ids)
    if not good:  # nothing to process: the first bad ID's error, for the whole call
        raise ERR.error(bad[0].code, bad[0].token)
    try:
        summary = service_of(request).tokens.register(project, good)
    except PoolFull as exc:
        raise ERR.error("token_limit_exceeded", f"{exc.limit}") from None
    if not bad:
        return _answer({"success": True, "message": ALL_IN_POOL, "summary": summary}, project)
    summary = {**summary, "totalSubmitted": len(ids), "failed": len(bad)}
    failed = [{"tokenId": e.token, **ERR.error(e.code, e.token).body} for e in bad]
    message = SOME_IN_POOL.format(summary["processed"], len(bad))
    answer = {"success": True, "message": message, "summary": summary}
    return _answer({**answer, "details": {"failed": failed}}, project)


async def read_tokens(request: Request) -> Response:
    project = _project(request)
    query = _query(request)
    service = service_of(request)
    if "type" in query:
        return _answer({"success": True, "count": service.tokens.count(project)}, project)
    if "tokenId" in query:
        token_id = query["tokenId"]
        try:
            found = service.tokens.get(project, token_id)
        except NotFound:
            raise ERR.error("token_not_found") from None
        return _answer({"success": True, "tokenId": token_id, "data": found}, project)
    return _answer(service.tokens.page(project, query.get("nextPageKeyId")), project)


async def delete_tokens(request: Request) -> Response:
    project = _project(request)
    body = await _body(request, project)
    if "count" in body:
        return _delete_oldest(request, project, body)
    if set(body) - {"tokenId"}:
        raise ERR.error("invalid_payload")
    ids = _ids(body, project)
    try:
        deleted, missing = service_of(request).tokens.delete(project, ids)
    except NotFound:
        raise ERR.error("token_id_not_found") from None
    answer = _deleted(len(ids), deleted, len(missing))
    if missing:
        answer["details"] = {"notFound": missing}
    return _answer(answer, project)


def _delete_oldest(request: Request, project: Project, body: dict[str, Any]) -> Response:
    """Time-based N deletion: ``{"count": N}`` deletes the N tokens registered first."""
    count = body["count"]
    if set(body) - {"count"} or not isinstance(count, int) or isinstance(count, bool):
        raise ERR.error("invalid_payload")
    limit = int(project.options["token_delete_count_limit"])
    if count < 1:
        raise ERR.error("invalid_payload")
    if count > limit:
        raise ERR.error("request_token_limit_exceeded", f"{limit}")
    gone = service_of(request).tokens.delete_oldest(project, count)
    answer = _deleted(count, len(gone), 0)
    answer["details"] = {"deleted": gone}
    return _answer(answer, project)


def _deleted(submitted: int, deleted: int, missing: int) -> dict[str, Any]:
    summary = {"totalSubmitted": submitted, "deleted": deleted, "notFound": missing, "failed": 0}
    return {
        "success": True,
        "message": f"Successfully deleted {deleted} tokens",
        "summary": summary,
    }


def _project(request: Request) -> Project:
    project = project_of(request)
    if project is None:
        raise ERR.error("invalid_project")
    return project


async def _body(request: Request, project: Project) -> dict[str, Any]:
    raw = await request.body()
    try:
        if secure.is_secure(project):
            return secure.decrypt_object(secure.ciphertext_from_body(raw), project)
        body = parse_json(raw)
    except ValueError:  # not JSON; on a secure project, not a ciphertext of a JSON object
        raise ERR.error("invalid_payload") from None
    if not isinstance(body, dict):
        raise ERR.error("invalid_payload")
    return body


def _id_list(body: dict[str, Any], project: Project) -> list[str]:
    """``tokenId`` as the whole call needs it: a non-empty array of strings, within the
    per-call limit (else the call is refused)."""
    ids = body.get("tokenId")
    if not isinstance(ids, list) or not ids or not all(isinstance(t, str) for t in ids):
        raise ERR.error("invalid_token_id")
    limit = int(project.options["token_request_limit"])
    if len(ids) > limit:
        raise ERR.error("request_token_limit_exceeded", f"{limit}")
    return ids


def _checked(ids: list[str]) -> tuple[list[str], list[TokenIdError]]:
    """The good IDs and the bad ones' errors, each in the order given."""
    good, bad = [], []
    for token in ids:
        try:
            check_token_id(token)
        except TokenIdError as exc:
            bad.append(exc)
        else:
            good.append(token)
    return good, bad


def _ids(body: dict[str, Any], project: Project) -> list[str]:
    """DELETE's IDs: a bad one refuses the whole call."""
    ids = _id_list(body, project)
    _good, bad = _checked(ids)
    if bad:
        raise ERR.error(bad[0].code, bad[0].token)
    return ids


def _query(request: Request) -> dict[str, str]:
    query = {}
    for name, values in query_lists(request).items():
        if name not in QUERY or len(values) != 1:
            raise ERR.error("invalid_query_parameters", name)
        query[name] = values[0]
    if query.get("type", "count") != "count":
        raise ERR.error("invalid_query_parameters", "type")
    return query


def _answer(body: dict[str, Any], project: Project) -> Response:
    return json_response(secure.encrypted(body, project) if secure.is_secure(project) else body)


def not_allowed() -> ApiError:
    return ERR.error("invalid_path")
