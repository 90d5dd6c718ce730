"""Pages for people: the hosted verification form and the dashboard (``/__admin/ui/``).

Server-rendered with Jinja2 (``templates/``, one shared ``base.html``) and a little CSS
(``static/``); no JavaScript. Pages call the backend through ``Service`` methods, as
``api/`` does.

The app mounts ``PAGES`` behind the API and control routes; the pages' modules (Jinja2,
the dashboard, the form: a third of building an app) load on the first request for a
page, so a test that only calls the API never pays for them.
"""

from __future__ import annotations

import importlib
import threading

from starlette.routing import BaseRoute, Mount, Router
from starlette.types import Receive, Scope, Send


class LazyPages:
    """An ASGI app routing to ``idv_mock.web.routes.ROUTES``, built on first use.

    Mounted at the root behind every API route: a path no page has reaches the app's own
    404 handler, as it did when the pages were routes of the app itself."""

    def __init__(self) -> None:
        self._router: Router | None = None
        self._lock = threading.Lock()  # two apps, one per thread, may start at once

    @property
    def routes(self) -> list[BaseRoute]:
        return self.router.routes

    @property
    def router(self) -> Router:
        if self._router is None:
            with self._lock:
                if self._router is None:
                    built: list[BaseRoute] = importlib.import_module("idv_mock.web.routes").ROUTES
                    self._router = Router(routes=built, redirect_slashes=False)
        return self._router

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.router(scope, receive, send)


def lazy_mount() -> Mount:
    """A mount for the pages of one app (each app its own, so nothing is shared)."""
    return Mount("", app=LazyPages())


__all__ = ["LazyPages", "lazy_mount"]
