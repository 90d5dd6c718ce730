"""What every dashboard page shares: the current project, rendering, forms, refusals.

Pages are plain functions wrapped by :func:`page`, which turns the ways a request can be
wrong (a backend refusal, an API query the API itself refuses, a bad form) into a 4xx page
that says why, so a person sees a message and a fuzzer sees no 5xx. A form that changes
state answers 303 to a page (post/redirect/get), with a one-line note in ``?note=``.
Every ``POST`` is checked for the anti-forgery token first (``web/forgery.py``): a form
carries it with ``{{ form_token_field() }}`` in its template.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from contextlib import suppress
from typing import Any
from urllib.parse import quote, urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from idv_mock.backend import BackendError, Conflict, NotFound, Project
from idv_mock.ground.errors import GENERIC, ApiError
from idv_mock.serving.control import mask_key
from idv_mock.web import forgery, pages
from idv_mock.web.pages import read_form
from idv_mock.web.pages import service as service

UI = "/__admin/ui"
PROJECT_COOKIE = "idv_mock_ui_project"  # which project the pages show (not a secret)
MAX_FORM = 256 * 1024  # a fault rule or a watchlist entry, typed by a person
Handler = Callable[[Request], Awaitable[Response]]

# the navigation: (path under UI, label)
NAV = (
    ("/", "Projects"),
    ("/submissions", "Submissions"),
    ("/webhooks", "Webhooks"),
    ("/journal", "Journal"),
    ("/faults", "Fault rules"),
    ("/projections", "Projections"),
    ("/watchlist", "Watchlist"),
    ("/worklists", "Worklists"),
    ("/tokens", "Tokens"),
    ("/clock", "Clock"),
    ("/scenarios", "Scenarios"),
)


class UiError(Exception):
    """A request the dashboard refuses: its status and what the person should know."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def current_project(request: Request) -> Project:
    """``?project=`` if given (unknown: 404), else the cookie's project, else the first."""
    backend = service(request)
    asked = request.query_params.get("project")
    if asked is not None:
        return backend.project(asked)
    chosen = request.cookies.get(PROJECT_COOKIE)
    known = backend.project_ids()
    if not known:
        raise UiError(404, "there is no project")
    fallback = "default" if "default" in known else str(known[0])
    pid = chosen if chosen is not None and chosen in known else fallback
    return backend.project(pid)


def render(request: Request, name: str, context: dict[str, Any], status: int = 200) -> Response:
    """A dashboard page in the shared layout; never cached, as each page is a state."""
    page = {
        "t": {"title": "Dashboard"},
        "ui": UI,
        "nav": NAV,
        "note": request.query_params.get("note", "")[:300],
        **context,
    }
    page.setdefault("step", "dash-" + name.rsplit("/", 1)[-1].removesuffix(".html"))
    return pages.render(request, f"dashboard/{name}", "en", page, status)


def shell(request: Request, active: str) -> dict[str, Any]:
    """What the layout shows: the current project (its id, the others, its live stamp) and
    ``active``, the page of the navigation it is on, where a project switch returns."""
    project = current_project(request)
    pid = project.project_id
    backend = service(request)
    return {
        "project": project,
        "pid": pid,
        "projects": backend.project_ids(),
        "masked_key": mask_key(project.api_key),
        "pulse": backend.dashboard.pulse(pid),
        "active": active,
        "back": active,
    }


def pretty(value: Any) -> str:
    """JSON as a page shows it: indented, letters as they are."""
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def redirect(path: str, note: str = "", **query: str) -> Response:
    """303 to a dashboard page (post/redirect/get), with a note to show there."""
    params = {k: v for k, v in query.items() if v}
    if note:
        params["note"] = note
    suffix = f"?{urlencode(params)}" if params else ""
    return RedirectResponse(f"{UI}{quote(path, safe='/')}{suffix}", 303)


async def form(request: Request) -> dict[str, str]:
    """An urlencoded form's first values (what a plain HTML form posts); too big is 413."""
    found = await read_form(request, MAX_FORM)
    if found is None:
        raise UiError(413, "the form is too large")
    return found


def status_of(exc: BackendError) -> int:
    return 404 if isinstance(exc, NotFound) else 409 if isinstance(exc, Conflict) else 400


def page(handler: Handler) -> Handler:
    """``handler`` with its refusals as 4xx pages (a person reads why; nothing is a 500)."""

    async def endpoint(request: Request) -> Response:
        try:
            if request.method == "POST" and not forgery.valid(request, await form(request)):
                raise UiError(403, GENERIC.entry("form_token_invalid").message)
            return forgery.keep(request, _keeping_project(request, await handler(request)))
        except UiError as exc:
            return forgery.keep(request, _refused(request, exc.status, exc.message))
        except BackendError as exc:
            return _refused(request, status_of(exc), _message(exc))
        except ApiError as exc:  # the API's own refusal of the query it was given
            message = str(exc.body.get("message", "")) if isinstance(exc.body, dict) else ""
            return _refused(request, 400, f"the API refuses this query: {message}")

    return endpoint


def _keeping_project(request: Request, response: Response) -> Response:
    """A page opened with ``?project=`` (a link from elsewhere) makes that project the
    current one, so the page's own links stay in it."""
    asked = request.query_params.get("project")
    if asked is None or request.method != "GET" or response.status_code != 200:
        return response
    with suppress(NotFound):  # a page that does not read the project (login) ignores it
        keep_project(response, service(request).project(asked).project_id)
    return response


def keep_project(response: Response, project_id: str) -> None:
    response.set_cookie(PROJECT_COOKIE, project_id, path=UI, httponly=True, samesite="strict")


def _message(exc: BackendError) -> str:
    problems = getattr(exc, "problems", None) or []
    return "; ".join([str(exc), *map(str, problems[:10])])


def _refused(request: Request, status: int, message: str) -> Response:
    return render(request, "error.html", {"status": status, "message": message}, status)
