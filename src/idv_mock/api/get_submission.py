"""GET /submission (api-v3.md 4.2; gaps.md "GET /submission"): the secure branch here, the
page itself in ``serving/submission_page.py`` (shared with the dashboard's list)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from idv_mock.backend import Project
from idv_mock.ground.errors import GET_SUBMISSION as ERR
from idv_mock.serving import secure
from idv_mock.serving.http import JSON, json_response, project_of, query_lists, service_of
from idv_mock.serving.submission_page import PARAMS, page_json, parse, plain_page, single_values

if TYPE_CHECKING:  # the fast lane reads ``takes_plain_page`` without Starlette
    from starlette.requests import Request
    from starlette.responses import Response

ENCRYPTABLE = ("email", "start_date", "end_date", "submission_id")
_SECURE_NAMES = frozenset({*PARAMS, "data"})


async def get_submission(request: Request) -> Response:
    project = project_of(request)
    if project is None:
        raise ERR.error("invalid_project")
    found = query_lists(request)
    if takes_plain_page(project):
        from starlette.responses import Response  # loaded with the route: a dict look-up

        return Response(plain_page(service_of(request), project, found), media_type=JSON)
    query = parse(_decrypted_params(single_values(found, _SECURE_NAMES), project))
    # the plaintext is the page's JSON as a plain project gets it (crypto takes the bytes)
    return json_response(secure.encrypted(page_json(service_of(request), project, query), project))


def takes_plain_page(project: Project) -> bool:
    """Whether the call is answered by ``plain_page`` (the branch the fast lane may take)."""
    return not secure.is_secure(project)


def _decrypted_params(params: dict[str, str], project: Project) -> dict[str, str]:
    """Secure projects: the encryptable parameters come only inside ``data``."""
    if "data" not in params:
        raise ERR.error("missing_data")
    for name in ENCRYPTABLE:
        if name in params:
            raise ERR.error("invalid_parameter", name)
    try:
        inner = secure.decrypt_object(params.pop("data"), project)
    except (secure.BadCiphertext, secure.BadPlaintext) as exc:
        raise ERR.error("invalid_payload") from exc
    for name, value in inner.items():
        if name not in ENCRYPTABLE:
            raise ERR.error("invalid_parameter", name)
        if not isinstance(value, str):
            raise ERR.error("invalid_format", name)
    return {**params, **inner}
