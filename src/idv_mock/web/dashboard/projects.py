"""The projects page (key masked, options, counts; switch, reset), the login page and the
live stamp the pages poll."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from idv_mock.serving.control import TOKEN_COOKIE, mask_key
from idv_mock.web.dashboard.common import (
    NAV,
    UI,
    UiError,
    current_project,
    form,
    keep_project,
    redirect,
    render,
    service,
    shell,
)


async def projects(request: Request) -> Response:
    backend = service(request)
    rows = []
    for described in backend.describe_projects():
        pid = described["project_id"]
        described["api_key"] = mask_key(str(described["api_key"]))
        rows.append({**described, "counts": backend.dashboard.counts(pid)})
    return render(request, "projects.html", {**shell(request, "/"), "rows": rows})


def _back(value: str) -> str:
    """Where a switch returns to: one of the navigation's pages (never another site)."""
    return value if value in {path for path, _ in NAV} else "/"


async def switch_project(request: Request) -> Response:
    """Choose the project the pages show (kept in a cookie for the dashboard's paths)."""
    fields = await form(request)
    pid = fields.get("project", "")
    service(request).project(pid)  # unknown: 404
    response = redirect(_back(fields.get("back", "/")), f"showing project {pid}")
    keep_project(response, pid)
    return response


async def reset_project(request: Request) -> Response:
    """The project back to its start state (seeded, imported or as created)."""
    pid = request.path_params["project_id"]
    service(request).reset_project(pid)
    return redirect("/", f"project {pid} reset to its start state")


async def pulse(request: Request) -> Response:
    """The current project's change stamp, for the live script of every page."""
    pid = current_project(request).project_id
    stamp = service(request).dashboard.pulse(pid)
    return JSONResponse({"pulse": stamp}, headers={"Cache-Control": "no-store"})


async def login_page(request: Request) -> Response:
    wrong = request.query_params.get("wrong") == "1"
    return render(request, "login.html", {"wrong": wrong, "step": "dash-login"})


async def login(request: Request) -> Response:
    """Keep the typed token in the cookie the exposure rule reads, then open the dashboard.

    A wrong token is said so here, rather than by a 403 on the next page.
    """
    token = (await form(request)).get("token", "")
    if not (token and token.isascii() and token.isprintable() and len(token) <= 4096):
        raise UiError(400, "type the admin token (printable ASCII)")
    if not request.app.state.exposure.accepts(token):
        return RedirectResponse(f"{UI}/login?wrong=1", 303)
    response = RedirectResponse(f"{UI}/", 303)
    response.set_cookie(TOKEN_COOKIE, token, path="/__admin", httponly=True, samesite="strict")
    return response


async def to_index(request: Request) -> Response:
    return RedirectResponse(f"{UI}/", 307)
