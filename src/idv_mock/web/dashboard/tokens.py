"""The token pool of the current project: each token's life (registered, used, expired,
deleted), as ``GET /v3/submission/tokens`` and the hosted form see it."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from idv_mock.web.dashboard.common import current_project, render, service, shell

SHOWN = 200  # newest tokens a page shows, and as many recently deleted ones


async def tokens(request: Request) -> Response:
    project = current_project(request)
    backend = service(request)
    lives = backend.tokens.lives(project.project_id, SHOWN)
    context = {
        **shell(request, "/tokens"),
        "tokens": lives,
        "count": backend.tokens.count(project),
        "preregistration": bool(project.options.get("token_preregistration")),
        "private": bool(project.options.get("liveform_private_mode")),
    }
    return render(request, "tokens.html", context)
