"""A Starlette ``Route`` built when it is first asked anything: the app's routes (the API's,
the control API's, ``/openapi.json``) are made once a process (``app._shared_routes``),
and making them compiles a path pattern and wraps a middleware per route, about 4 ms of a
first use, which the fast lane (``fastlane.py``: ``GET /v3/submission``, what a first
test usually calls) never looks at. The first call the router sees builds each route it
walks past; after that a route is an ordinary ``Route`` (its attributes are its own, and
this class's ``__getattr__`` is never called again)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from starlette.routing import Route

_BUILDING = threading.Lock()


class LazyRoute(Route):
    def __init__(self, path: str, endpoint: Callable[..., Any], **options: Any) -> None:
        # no Route.__init__ here: __getattr__ runs it on the first attribute asked for
        self.__dict__["_lazy"] = (path, endpoint, options)

    def __getattr__(self, name: str) -> Any:
        """Only for a name this route does not have yet: build it, then answer. Built on
        a route of its own and copied in at once (``dict.update``), so a thread reading it
        meanwhile sees it unbuilt or whole, never half made (say, without its middleware)."""
        if name.startswith("__") or "_lazy" not in self.__dict__:
            raise AttributeError(name)
        with _BUILDING:
            if "path_regex" not in self.__dict__:
                path, endpoint, options = self.__dict__["_lazy"]
                self.__dict__.update(Route(path, endpoint, **options).__dict__)
        return object.__getattribute__(self, name)
