"""GET /submission/applicant (the vendor's applicantId page; gaps.md "Values an integrator
branches on"): the approved submissions of one person. The vendor documents no error for
this call, so a missing ``applicant_id`` answers with GET /submission's ``missing_data``
(the mock's choice, docs/gaps.md) and an unknown one with ``[]``."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from idv_mock.ground.errors import GET_SUBMISSION as ERR
from idv_mock.serving.http import json_response, project_of, service_of


async def get_applicants(request: Request) -> Response:
    project = project_of(request)
    if project is None:
        raise ERR.error("invalid_project")
    applicant_id = request.query_params.get("applicant_id", "")
    if not applicant_id:
        raise ERR.error("missing_data")
    return json_response(service_of(request).applicants(project, applicant_id))
