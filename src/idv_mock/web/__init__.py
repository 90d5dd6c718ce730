"""Pages for people: the hosted verification form and the dashboard (``/__admin/ui/``).

Server-rendered with Jinja2 (``templates/``, one shared ``base.html``) and a little CSS
(``static/``); no JavaScript. Pages call the backend through ``Service`` methods, as
``api/`` does.
"""

from __future__ import annotations

from starlette.routing import BaseRoute

from idv_mock.web import dashboard, liveform
from idv_mock.web.pages import FAVICON, STATIC

ROUTES: list[BaseRoute] = [*liveform.ROUTES, *dashboard.ROUTES, STATIC, FAVICON]

__all__ = ["ROUTES"]
