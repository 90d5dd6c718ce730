"""Which active mock answers a URL: base URLs, the targets behind them, and who sees whom.

Every client patch (httpx sync and async, requests) asks :func:`decide` the same question
with the URL split the same way, so the three cannot disagree about what is mocked.
"""

from __future__ import annotations

import contextvars
import threading
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from idv_mock.transport import ASGITransport, AsyncASGITransport

APP_PREFIX = "/v3"  # where the app serves the API, whatever base URL a mock answers
DEFAULT_PORTS = {"http": 80, "https": 443}

# (scheme, host, port, raw path): a URL as every patch sees it
Where = tuple[str, str, int, str]


class UnmockedRequestError(RuntimeError):
    """A call outside every mocked base URL while a mock refuses to pass calls through.

    Not an ``httpx``/``requests`` error on purpose: the client code under test must not be
    able to catch and retry it as if the network had failed, since it is a test-setup fault.
    """


@dataclass(frozen=True, slots=True)
class BaseUrl:
    """A base URL split once, so matching a request costs a comparison or two."""

    text: str
    scheme: str
    host: str
    port: int
    path: str  # no trailing slash; "" for a whole host

    @classmethod
    def parse(cls, text: str) -> BaseUrl:
        parts = urlsplit(text)
        scheme = parts.scheme.lower()
        if scheme not in DEFAULT_PORTS or not parts.hostname:
            raise ValueError(f"not an http(s) base URL: {text!r}")
        port = parts.port or DEFAULT_PORTS[scheme]
        return cls(text.rstrip("/"), scheme, parts.hostname.lower(), port, parts.path.rstrip("/"))

    def app_path(self, where: Where) -> str | None:
        """The path the app sees for a request at ``where``, or None when not under this URL."""
        scheme, host, port, path = where
        if port != self.port or host != self.host or scheme != self.scheme:
            return None
        prefix = self.path
        if path == prefix or path.startswith(prefix + "/"):
            return APP_PREFIX + path[len(prefix) :]
        return None


def split_httpx(url: httpx.URL) -> Where:
    scheme = url.scheme
    path = url.raw_path.partition(b"?")[0].decode("ascii")
    return scheme, url.host, url.port or DEFAULT_PORTS.get(scheme, 0), path


def split_text(url: str) -> Where:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    port = parts.port or DEFAULT_PORTS.get(scheme, 0)
    return scheme, (parts.hostname or "").lower(), port, parts.path or "/"


class Target:
    """What one active mock answers with: its app behind the in-process transports."""

    def __init__(
        self, app: Any, base_urls: tuple[BaseUrl, ...], passthrough: bool, raise_errors: bool
    ) -> None:
        self.base_urls = base_urls
        self.passthrough = passthrough
        self.active = True
        self.sync = ASGITransport(app, raise_app_exceptions=raise_errors)
        self.asynchronous = AsyncASGITransport(app, raise_app_exceptions=raise_errors)

    def app_path(self, where: Where) -> str | None:
        for base in self.base_urls:
            path = base.app_path(where)
            if path is not None:
                return path
        return None

    def close(self) -> None:
        self.active = False
        self.sync.close()


_active: list[Target] = []  # every active target of the process, in start order
_active_lock = threading.Lock()
# The targets started in this context (thread or task): they win over other threads' mocks
# of the same URL, so concurrent mocks in a thread pool each answer their own thread.
_entered: contextvars.ContextVar[tuple[Target, ...]] = contextvars.ContextVar(
    "idv_mock_entered", default=()
)


def register(target: Target) -> None:
    with _active_lock:
        _active.append(target)
    _entered.set((*_entered.get(), target))


def unregister(target: Target) -> None:
    with _active_lock:
        if target in _active:
            _active.remove(target)
    _entered.set(tuple(t for t in _entered.get() if t is not target))


def decide(target: Target, where: Where, url: object) -> str | None:
    """The app path when ``target``'s patch layer answers here, None to pass the call on.

    Raises :class:`UnmockedRequestError` when ``target`` refuses pass-through and no
    active mock answers the URL at all.
    """
    if not target.active:
        return None  # a layer left in the chain after its mock stopped: inert
    path = target.app_path(where)
    if path is not None:
        return path if _visible(target, where) else None
    if not target.passthrough and not any(t.app_path(where) is not None for t in list(_active)):
        bases = ", ".join(b.text for b in target.base_urls)
        raise UnmockedRequestError(
            f"idv-mock: {url} is not under a mocked base URL ({bases}) and the mock was"
            " started with passthrough=False"
        )
    return None


def _visible(target: Target, where: Where) -> bool:
    """Whether no mock of this context answers ``where`` in ``target``'s stead."""
    mine = _entered.get()
    if not mine or target in mine:
        return True
    return not any(t.active and t.app_path(where) is not None for t in mine)
