"""moto-style interception: code calling the real base URL is answered in-process, no server.

::

    with idv_mock.mock() as service:       # or @idv_mock.mock(), or the idv_mocked fixture
        requests.get("https://rest-api.argosidentity.com/v3/submission", headers=...)

While a mock is active, ``httpx.HTTPTransport.handle_request``,
``httpx.AsyncHTTPTransport.handle_async_request`` and (when requests is installed)
``requests.adapters.HTTPAdapter.send`` answer calls under the mocked base URLs from the
mock's app, through :mod:`idv_mock.transport`; every other URL goes on to whatever the
method was before (the network, or respx, pytest-httpx, responses), untouched. When
requests is installed but cannot be patched, its calls to mocked URLs raise
:class:`InterceptionUnavailable` instead of reaching the network.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import unittest
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import Any, TypeVar

from idv_mock.backend import Service, ServiceConfig
from idv_mock.intercept import _httpx
from idv_mock.intercept._layers import Layer
from idv_mock.intercept._refusing import InterceptionUnavailable, requests_refusal
from idv_mock.intercept._routing import BaseUrl, Target, UnmockedRequestError, register, unregister

__all__ = [
    "DEFAULT_BASE_URL",
    "InterceptionUnavailable",
    "Mock",
    "UnmockedRequestError",
    "mock",
]

DEFAULT_BASE_URL = "https://rest-api.argosidentity.com/v3"
F = TypeVar("F", bound=Callable[..., Any])


class Mock:
    """Decorator (functions, coroutines, classes), context manager (sync and async).

    Each start makes a fresh ``Service`` with the default project of ``idv-mock serve``
    (unless one was given) and patches the clients; each stop undoes both. One ``Mock``
    is active at most once at a time; nest two mocks for two base URLs.

    ``base_urls``: one or several; a path other than ``/v3`` is served as ``/v3``.
    ``service``: serve this one instead of a fresh one (not closed at the end). Project
    options of the fresh one's default project: ``api_key``, ``admin``, ``seed_count``,
    ``random_seed``, ``clock`` (``tick``, ``wall`` or ``frozen``: its clock mode; advance it
    with ``service.clocks.handle("default").advance(...)``), ``auth_errors`` (``api-v3``, or
    ``gateway``: a missing or wrong key answers 403 ``{"message": "Forbidden"}``; the server
    setting of ``PUT /__admin/settings``). ``passthrough=False``: a call
    to any other URL raises :class:`UnmockedRequestError` naming it.
    ``raise_app_exceptions=False``: an exception inside the app answers 500 instead of
    reaching the caller.
    """

    def __init__(
        self,
        base_urls: str | Iterable[str] = (DEFAULT_BASE_URL,),
        service: Service | None = None,
        passthrough: bool = True,
        *,
        raise_app_exceptions: bool = True,
        api_key: str | None = None,
        admin: str | None = None,
        seed_count: int | None = None,
        random_seed: int | None = None,
        clock: str | None = None,
        auth_errors: str | None = None,
    ) -> None:
        texts = (base_urls,) if isinstance(base_urls, str) else tuple(base_urls)
        if not texts:
            raise ValueError("mock() needs at least one base URL")
        self.base_urls = tuple(BaseUrl.parse(text) for text in texts)
        project: dict[str, Any] = {
            "api_key": api_key,
            "admins": None if admin is None else (admin,),
            "seed_count": seed_count,
            "random_seed": random_seed,
            "clock_mode": clock,
            "auth_errors": auth_errors,
        }
        given = {name: value for name, value in project.items() if value is not None}
        if service is not None and given:
            raise TypeError("give either service= or project options, not both")
        self._config = dataclasses.replace(ServiceConfig(), **given)  # serve's defaults
        self._given = service
        self.passthrough = passthrough
        self.raise_app_exceptions = raise_app_exceptions
        self._running: tuple[Service, Target, list[Layer]] | None = None

    @property
    def service(self) -> Service:
        """The service answering while the mock is active (its control API, journal, faults)."""
        if self._running is None:
            raise RuntimeError("the mock is not active")
        return self._running[0]

    def start(self) -> Service:
        if self._running is not None:
            raise RuntimeError("this mock is already active; make another for a nested one")
        from idv_mock import create_app

        service = self._given or Service(self._config)
        app = create_app(service)
        target = Target(app, self.base_urls, self.passthrough, self.raise_app_exceptions)
        register(target)
        self._running = (service, target, _layers(target))
        return service

    def stop(self) -> None:
        if self._running is None:
            return
        service, target, layers = self._running
        self._running = None
        for layer in reversed(layers):
            layer.undo()
        unregister(target)
        target.close()
        if self._given is None:
            service.close()

    def __enter__(self) -> Service:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    async def __aenter__(self) -> Service:
        return self.start()

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def __call__(self, func: F) -> F:
        if isinstance(func, type):
            return self._decorate_class(func)  # type: ignore[return-value]
        if inspect.iscoroutinefunction(func):
            return self._decorate_async(func)
        return self._decorate_sync(func)

    def _decorate_sync(self, func: F) -> F:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    def _decorate_async(self, func: F) -> F:
        @functools.wraps(func)
        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            async with self:
                return await func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    def _decorate_class(self, cls: type) -> type:
        """As moto: a TestCase runs setUp, the test and tearDown in one mock; else per test."""
        if issubclass(cls, unittest.TestCase):
            return self._decorate_test_case(cls)
        for name, value in list(vars(cls).items()):
            if name.startswith("test") and inspect.isfunction(value):
                setattr(cls, name, self(value))
        return cls

    def _decorate_test_case(self, cls: type[unittest.TestCase]) -> type:
        set_up = cls.setUp
        this = self

        def setUp(case: unittest.TestCase) -> None:
            this.start()
            case.addCleanup(this.stop)
            set_up(case)

        cls.setUp = setUp  # type: ignore[method-assign,assignment]
        return cls


mock = Mock  # ``idv_mock.mock(...)``: the moto-style spelling of the same thing


def _layers(target: Target) -> list[Layer]:
    """The patches of every installed client: httpx always, requests when installed."""
    return _httpx.layers(target) + _requests_layers(target)


def _requests_layers(target: Target) -> list[Layer]:
    """requests' layer; a refusing one when requests is installed but cannot be patched
    (its calls to mocked URLs raise ``InterceptionUnavailable``, never reach the network)."""
    try:
        import requests.adapters  # noqa: F401  # not installed: no requests call to cover
    except ImportError:
        return []
    try:
        from idv_mock.intercept import _requests
    except ImportError as exc:
        return requests_refusal(target, exc)
    return _requests.layers(target)
