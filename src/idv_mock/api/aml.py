"""POST /submission/aml and GET /report/aml (api-v3.md 4.5, 4.6, 7.4; gaps.md "AML").

Checks of the screening call, in order: API key, body (JSON object, ``amlThreshold`` an
integer 0-100 when given), ``submissionId``, the submission, its nationality, a threshold.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from idv_mock.backend import NotFound, Project
from idv_mock.backend.exceptions import InvalidCountry, NoThreshold
from idv_mock.ground.errors import AML_REPORT, AML_SCREENING, Family
from idv_mock.serving.http import json_response, parse_json, project_of, service_of

PDF_HEADERS = {"Content-Disposition": 'attachment; filename="report.pdf"'}


def _project(request: Request, family: Family) -> Project:
    project = project_of(request)
    if project is None:
        raise family.error("invalid_project")
    return project


async def screen_submission(request: Request) -> Response:
    project = _project(request, AML_SCREENING)
    sid, threshold = _screening_body(await request.body())
    try:
        result = service_of(request).screening.screen(project, sid, threshold)
    except NotFound:
        raise AML_SCREENING.error("invalid_submissionId") from None
    except InvalidCountry as exc:
        raise AML_SCREENING.error("invalid_country", exc.nationality) from None
    except NoThreshold:
        raise AML_SCREENING.error("invalid_aml_threshold") from None
    return json_response(result)


def _screening_body(raw: bytes) -> tuple[str, int | None]:
    try:
        body: Any = parse_json(raw)
    except ValueError:
        raise AML_SCREENING.error("invalid_payload") from None
    if not isinstance(body, dict):
        raise AML_SCREENING.error("invalid_payload")
    threshold = body.get("amlThreshold")
    if isinstance(threshold, float) and threshold.is_integer():
        threshold = int(threshold)  # JSON Schema's integer: 50.0 is 50
    valid_threshold = isinstance(threshold, int) and not isinstance(threshold, bool)
    if threshold is not None and not (valid_threshold and 0 <= threshold <= 100):
        raise AML_SCREENING.error("invalid_payload")
    sid = body.get("submissionId")
    if sid is None or sid == "":
        raise AML_SCREENING.error("missing_parameter")
    if not isinstance(sid, str):
        raise AML_SCREENING.error("invalid_payload")
    return sid, threshold


async def download_report(request: Request) -> Response:
    project = _project(request, AML_REPORT)
    resource_id = request.query_params.get("resourceId")
    if not resource_id:
        raise AML_REPORT.error("missing_parameter")
    try:
        pdf = service_of(request).screening.report_pdf(project, resource_id)
    except NotFound:
        raise AML_REPORT.error("invalid_resourceId") from None
    return Response(pdf, media_type="application/pdf", headers=PDF_HEADERS)
