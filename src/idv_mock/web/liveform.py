"""The hosted verification form (Liveform): its pages and the URL contract on the wire.

A link (``/liveform/?pid=...`` or ``/?pid=...``) is read by the backend, which starts a
session; each step is a page (GET) and its form (POST, then 303 to the next page), so the
form works without JavaScript and a browser's back button only shows the current step
again. Refusals go to ``/error-page/<slug>`` as the vendor's form does; every link visit
is journaled with what the form read, ignored and did not know.
"""

from __future__ import annotations

import logging
import time
from typing import Any
from urllib.parse import urlencode

import orjson
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from idv_mock.backend import BackendError, NotFound
from idv_mock.backend.coverage_counts import ERROR_PAGE, NO_PROJECT, STEP_PAGE
from idv_mock.backend.liveform_flow import (
    INJECTION_RESULTS,
    REASONS,
    RETRY_CODES,
    Session,
    StepInputError,
    confirmed_fields,
)
from idv_mock.backend.liveform_links import LANGS, RETURNED, Refused
from idv_mock.ground.errors import GENERIC, LIVEFORM
from idv_mock.serving import journaling
from idv_mock.serving.guard import WriteGuard
from idv_mock.web.pages import read_form, render, service

ERROR_KEYS = {entry.key for entry in LIVEFORM.entries}
HINT_HEADER = "x-idv-mock-hint"  # as the API's near-miss hints (api/hints.py)
LOG = logging.getLogger("idv_mock.hints")
MAX_FORM = 64 * 1024  # a step's form is a few fields


async def root(request: Request) -> Response:
    """``/`` is the form's base URL when the query names a project, else not found."""
    if request.method not in ("GET", "HEAD") or "pid" not in request.query_params:
        raise GENERIC.error("not_found")
    return await start(request)


async def start(request: Request) -> Response:
    """Open a link: a session and its first page, or the error page of the refusal."""
    started = time.perf_counter()
    pairs = request.query_params.multi_items()
    pid = request.query_params.get("pid", "")
    lang = request.query_params.get("lang", "en")
    try:
        ip = request.client.host if request.client else ""
        session = service(request).liveform.open(pid, pairs, ip)
    except Refused as exc:
        response = _to_error(exc, pid, lang)
        _journal(request, pid, response.status_code, {"error": exc.code}, started)
        return response
    summary = {"session": session.session_id, **session.link.describe()}
    response = RedirectResponse(_step_url(session), 303)
    hint = "; ".join(session.link.hints()) or None
    if hint is not None:  # where a person looks: the header, the journal, the log
        response.headers[HINT_HEADER] = hint
        LOG.warning("GET %s: %s", request.url.path, hint)
    _journal(request, pid, response.status_code, summary, started, hint)
    return response


def _journal(
    request: Request,
    pid: str,
    status: int,
    summary: dict[str, Any],
    started: float,
    hint: str | None = None,
) -> None:
    """The visit in the project's journal; its response is what the form made of the link."""
    try:
        project = service(request).project(pid)
    except NotFound:
        return
    scope = request.scope
    body = orjson.dumps(summary)
    journaling.record_call(
        service(request), project, "GET", scope["path"], scope["query_string"],
        scope["headers"], b"", status, body, "application/json", started, hint,
    )  # fmt: skip


def _step_url(session: Session) -> str:
    return f"/liveform/s/{session.session_id}/{session.step}"


def _to_error(exc: Refused, pid: str, lang: str) -> Response:
    query = {"pid": pid, "lang": lang, **{k: v for k, v in exc.known.items() if v}}
    if exc.detail:
        query["name"] = exc.detail
    return RedirectResponse(f"/error-page/{exc.key}?{urlencode(query)}", 303)


async def error_page(request: Request) -> Response:
    """The form's error page: its message and code, and the way back to the integrator."""
    slug = request.path_params["slug"]
    if slug not in ERROR_KEYS:  # an error page that does not exist is not found either
        slug = "page-not-found"
    entry = LIVEFORM.entry(slug)
    query = request.query_params
    lang = _lang(query.get("lang", "en"))
    values = {k: query.get(k, "") for k in RETURNED}
    values.update(submissionId="", kycStatus="", errorCode=entry.code)
    back = service(request).liveform.return_url(query.get("pid", ""), values)
    message = entry.message.replace("{}", query.get("name", "a parameter"))
    context = {"code": entry.code, "message": message, "back": back, "step": "error"}
    _count_page(request, query.get("pid", ""), ERROR_PAGE + slug)
    return render(request, "liveform/error.html", lang, context, entry.status)


def _count_page(request: Request, pid: str, page: str) -> None:
    """A page shown, for contract coverage (an unknown project's under ``NO_PROJECT``)."""
    backend = service(request)
    try:
        backend.project(pid)
    except NotFound:
        pid = NO_PROJECT
    backend.coverage.counts.note(pid, "page " + page)


def _lang(value: str) -> str:
    return value if value in LANGS else "en"


async def step_page(request: Request) -> Response:
    """The session's current step; any other step's URL leads to the current one."""
    sid, step = request.path_params["session_id"], request.path_params["step"]
    try:
        session = service(request).liveform.session(sid)
    except Refused as exc:
        return _to_error(exc, "", _lang(request.query_params.get("lang", "en")))
    if session.blocked:  # sent to a loop page: the flow does not go on
        blocked = Refused(session.blocked, known=session.link.returned())
        return _to_error(blocked, session.project_id, session.link.lang)
    if step != session.step:
        return RedirectResponse(_step_url(session), 303)
    return _render_step(request, session)


async def step_form(request: Request) -> Response:
    """A step's form: the next page (303), the same page with the field to fix (400), or
    the error page of a refusal (an expired token at completion)."""
    sid, step = request.path_params["session_id"], request.path_params["step"]
    form = await read_form(request, MAX_FORM)
    if form is None:
        raise GENERIC.error("payload_too_large")
    try:
        session = service(request).liveform.step(sid, step, form)
    except StepInputError as exc:
        return _render_step(request, service(request).liveform.session(sid), exc.field, form)
    except Refused as exc:
        link = _link_of(request, sid)
        return _to_error(exc, link[0], link[1])
    except BackendError:  # the submission refused what the applicant typed
        return _render_step(request, service(request).liveform.session(sid), "document", form)
    return RedirectResponse(_step_url(session), 303)


def _link_of(request: Request, sid: str) -> tuple[str, str]:
    try:
        session = service(request).liveform.session(sid)
    except Refused:
        return "", "en"
    return session.project_id, session.link.lang


def _render_step(
    request: Request,
    session: Session,
    invalid: str = "",
    form: dict[str, str] | None = None,
) -> Response:
    context = {
        "session": session,
        "step": session.step,
        "link": session.link,
        "action": _step_url(session),
        "invalid": invalid,
        "values": {**session.document, **(form or {})},
        **_step_context(request, session),
    }
    status = 400 if invalid else 200
    _count_page(request, session.project_id, STEP_PAGE + session.step)
    return render(request, f"liveform/{session.step}.html", session.link.lang, context, status)


def _step_context(request: Request, session: Session) -> dict[str, Any]:
    backend = service(request)
    if session.step in ("country", "id_type"):
        return backend.liveform.choices(session.session_id)
    if session.step == "document":
        return {"confirmed": confirmed_fields(session.link)}
    if session.step == "tester":
        return {"reasons": list(REASONS), "retry_codes": RETRY_CODES}
    if session.step == "address":
        return {"results": INJECTION_RESULTS}
    if session.step == "done":
        back = backend.liveform.return_url(session.project_id, session.returned())
        return {"back": back, "returned": session.returned()}
    return {}


async def returned(request: Request) -> Response:
    """A return URL for demos and tests: shows what the form sent back."""
    lang = _lang(request.query_params.get("lang", "en"))
    values = request.query_params.multi_items()
    return render(request, "liveform/returned.html", lang, {"values": values, "step": "returned"})


async def not_found(request: Request) -> Response:
    """A form URL that does not exist: the vendor's ``page-not-found`` page."""
    query = {"lang": _lang(request.query_params.get("lang", "en"))}
    return RedirectResponse(f"/error-page/page-not-found?{urlencode(query)}", 303)


async def closed(request: Request) -> Response:
    lang = _lang(request.query_params.get("lang", "en"))
    return render(request, "liveform/closed.html", lang, {"step": "closed"})


ROUTES = [
    Route("/", root, methods=["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]),
    Route("/liveform/", start, methods=["GET"]),
    Route("/liveform", start, methods=["GET"]),
    Route("/liveform/returned", returned, methods=["GET"]),
    Route("/liveform/closed", closed, methods=["GET"]),
    Route("/liveform/s/{session_id}/{step}", step_page, methods=["GET"]),
    Route(  # the form's writes refused 503 while the state file cannot be saved (guard.py)
        "/liveform/s/{session_id}/{step}",
        step_form,
        methods=["POST"],
        middleware=[Middleware(WriteGuard)],
    ),
    Route("/error-page/{slug}", error_page, methods=["GET"]),
    Route("/liveform/{rest:path}", not_found, methods=["GET"]),
]
