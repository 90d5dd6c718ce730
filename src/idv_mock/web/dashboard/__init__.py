"""The dashboard at ``/__admin/ui/``: see and steer the mock's state in a browser.

Server-rendered pages in the hosted form's layout (``templates/dashboard/``), one module
per group of pages, every one calling ``Service`` methods as the API does. The route table
is data: path, methods, handler; each handler is wrapped by ``common.page`` so a refusal
is a 4xx page. The exposure rule in front of ``/__admin`` (``api/exposure.py``) guards
these pages too, except the login page.
"""

from __future__ import annotations

from starlette.middleware import Middleware
from starlette.routing import BaseRoute, Route

from idv_mock.serving.guard import WriteGuard
from idv_mock.web.dashboard import (
    activity,
    delivery,
    projects,
    rules,
    scenarios,
    submissions,
    tokens,
)
from idv_mock.web.dashboard.common import UI, Handler, page

GET, POST = ["GET"], ["POST"]

TABLE: tuple[tuple[str, list[str], Handler], ...] = (
    ("", GET, projects.to_index),
    ("/", GET, projects.projects),
    ("/login", GET, projects.login_page),
    ("/login", POST, projects.login),
    ("/project", POST, projects.switch_project),
    ("/projects/{project_id}/reset", POST, projects.reset_project),
    ("/pulse", GET, projects.pulse),
    ("/submissions", GET, submissions.submissions),
    ("/submissions", POST, submissions.create_submission),
    ("/submissions/{submission_id}", GET, submissions.submission),
    ("/submissions/{submission_id}/review", POST, submissions.review),
    ("/submissions/{submission_id}/monitor", POST, submissions.monitor),
    ("/reports/{resource_id}", GET, submissions.report),
    ("/webhooks", GET, activity.webhooks),
    ("/webhooks/{delivery_id}/resend", POST, activity.resend),
    ("/webhooks/delivery", POST, delivery.set_levers),
    ("/webhooks/release", POST, delivery.release),
    ("/journal", GET, activity.journal),
    ("/faults", GET, rules.faults),
    ("/faults", POST, rules.add_fault),
    ("/faults/{fault_id}/delete", POST, rules.remove_fault),
    ("/projections", GET, rules.projections),
    ("/projections", POST, rules.create_projection),
    ("/projections/{projection_id}/delete", POST, rules.delete_projection),
    ("/watchlist", GET, rules.watchlist),
    ("/watchlist", POST, rules.add_watchlist_entry),
    ("/watchlist/{entry_id}/delete", POST, rules.delete_watchlist_entry),
    ("/worklists", GET, rules.worklists),
    ("/worklists", POST, rules.create_worklist),
    ("/worklists/{worklist_id}/{action}", POST, rules.change_worklist),
    ("/tokens", GET, tokens.tokens),
    ("/clock", GET, rules.clock),
    ("/clock", POST, rules.advance_clock),
    ("/scenarios", GET, scenarios.scenarios),
    ("/scenarios", POST, scenarios.run),
)

# a write while the state file cannot be saved is refused 503, as on the API (serving/guard.py)
GUARD = [Middleware(WriteGuard)]
ROUTES: list[BaseRoute] = [
    Route(UI + path, page(handler), methods=methods, middleware=GUARD if methods == POST else None)
    for path, methods, handler in TABLE
]

__all__ = ["ROUTES"]
