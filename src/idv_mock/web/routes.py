"""Every page's route: the hosted form's, the dashboard's, the static files and the icon.

Imported by ``idv_mock.web.LazyPages`` on the first request for a page, not with the app.
"""

from __future__ import annotations

from starlette.routing import BaseRoute

from idv_mock.web import dashboard, liveform
from idv_mock.web.pages import FAVICON, STATIC

ROUTES: list[BaseRoute] = [*liveform.ROUTES, *dashboard.ROUTES, STATIC, FAVICON]

__all__ = ["ROUTES"]
