"""Who may use the control API (and the dashboard under it): Redis's protected mode.

Bound to a loopback address, ``/__admin`` is open as it always was: only processes of the
same machine reach it. Bound to any other address (``--host 0.0.0.0``), every ``/__admin``
request must carry the admin token (header ``x-idv-mock-admin-token`` or the dashboard's
cookie ``idv_mock_admin_token``) given with ``--admin-token``, unless the operator opts
out with ``--admin-open``; otherwise it is answered 403 before anything is read. The
dashboard's login page is the one exemption: it is where a person types the token.

Two more checks keep a web page the developer happens to open from driving the mock
(Jupyter's and Grafana's, after the DNS-rebinding attacks on Redis and others). Every
``/__admin`` request (the dashboard's included) must name an allowed host in ``Host``:
``localhost``, a loopback address, the bound address, the in-process names (``testserver``,
``idv-mock``) and ``--allowed-host`` additions; bound beyond loopback, any IP address and
the machine's own name too, and a request carrying the admin token passes (a rebinding
page cannot know it). A page that rebinds its own name to 127.0.0.1 sends that name, so
it is answered 403 before anything is read. And a write (``POST``, ``PUT``, ``PATCH``,
``DELETE``) whose ``Origin`` is not an allowed host's (nor a ``--cors-origin``), or that the
browser marks ``Sec-Fetch-Site: cross-site``, is refused 403. The hosted form is exempt:
applicants' browsers reach it from the integrator's site, as the vendor's.

The hosted form shares the mock's origin, so a script that ever ran in one of its pages
would be "same origin" to every check above. So the control API (``/__admin`` but the
dashboard's pages, which carry their own anti-forgery token) refuses any request a browser
marks as a script's (with ``Sec-Fetch-Site``, which every browser sends here: a
``Sec-Fetch-Mode`` other than ``navigate`` or a ``Sec-Fetch-Dest`` other than ``document``;
or an ``Origin`` on a write) unless it carries the header
``x-idv-mock-admin-token`` with ``--admin-token``'s value: a page cannot read it (the
dashboard's cookie is ``HttpOnly``), and the cookie, which a browser sends by itself, does
not count. ``?show_keys=true`` never answers a browser without that header. Only an
``Origin`` named exactly with ``--cors-origin`` is trusted as it is. Curl, scripts, the
CLI and tests send none of these headers, Node's ``fetch`` only ``Sec-Fetch-Mode``, and
are not affected.
"""

from __future__ import annotations

import hmac
import ipaddress
import socket
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from idv_mock.ground import addresses
from idv_mock.serving.control import CONTROL_PREFIX, TOKEN_COOKIE

if TYPE_CHECKING:
    from starlette.types import Scope

TOKEN_HEADER = b"x-idv-mock-admin-token"
EXEMPT = ("/__admin/ui/login", "/__admin/ui/static/")
UI_PREFIX = "/__admin/ui"  # the dashboard's pages: a browser's by design (web/forgery.py)
IN_PROCESS_HOSTS = ("testserver", "idv-mock")  # TestClient's and the in-process clients'
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def is_loopback(host: str) -> bool:
    """``localhost`` or a loopback address (127.0.0.0/8, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class Exposure:
    """How the server is exposed: ``exposed`` when bound beyond loopback. Made once per
    app and never changed; a plain class, not a dataclass: its generated methods were
    compiled at import (a first use's cost), for comparisons nothing makes."""

    __slots__ = ("exposed", "hosts", "machine", "open", "origins", "token")

    def __init__(
        self,
        exposed: bool = False,
        token: str | None = None,
        open: bool = False,
        hosts: frozenset[str] = frozenset(IN_PROCESS_HOSTS),  # names allowed beyond localhost
        origins: frozenset[str] = frozenset(),  # --cors-origin's: may write from a browser
        machine: frozenset[str] = frozenset(),  # this machine's names
    ) -> None:
        self.exposed, self.token, self.open = exposed, token, open
        self.hosts, self.origins, self.machine = hosts, origins, machine

    @property
    def guarded(self) -> bool:
        return self.exposed and not self.open

    def describe(self) -> str:
        """One line for the banner."""
        if not self.exposed:
            return "control API: open to this machine only (loopback)"
        if self.open:
            return "control API: OPEN TO THE NETWORK (--admin-open): anyone can reset or read it"
        if self.token:
            return "control API: needs the admin token (header x-idv-mock-admin-token)"
        return "control API: refused to every caller (exposed without --admin-token)"

    def refusal(self, scope: Scope) -> tuple[str, ...] | None:
        """Why the request is refused: an error code of ``errors.GENERIC`` and its
        arguments; None when it passes."""
        path: str = scope["path"]
        if not path.startswith(CONTROL_PREFIX):
            return None
        token = _given_token(scope)
        host = _header(scope, b"host")  # none: not a browser (HTTP/1.0), nothing to rebind
        passed = host is None or (self.guarded and self.accepts(token))
        if not passed and not self.host_allowed(host or ""):
            return ("host_not_allowed", _shown(host or ""))
        if scope["method"] not in SAFE_METHODS or _header(scope, b"origin") is not None:
            origin = self._foreign_origin(scope)  # a read that says its origin: checked too
            if origin is not None:
                return ("foreign_origin", origin)
        if is_page(path) and scope["method"] not in SAFE_METHODS:
            origin = _not_own(scope)
            if origin is not None:
                return ("foreign_origin", origin)
        if self.guarded and not path.startswith(EXEMPT) and not self.accepts(token):
            return ("admin_token_required",)
        if not is_page(path) and self._browser_without_token(scope):
            return ("browser_needs_token",)
        return None

    def _browser_without_token(self, scope: Scope) -> bool:
        """Whether a browser's script (or a browser asking for keys) calls the control API
        without the admin token in a header (the cookie, sent by the browser itself, does
        not count)."""
        mode = _header(scope, b"sec-fetch-mode")
        dest = _header(scope, b"sec-fetch-dest")
        origin = _header(scope, b"origin")
        if origin is not None and origin in self.origins:  # --cors-origin, named exactly
            return False
        # a browser sends Sec-Fetch-Site with every request to this (trustworthy) origin;
        # Node's fetch sends Sec-Fetch-Mode alone ("cors") and is a script, not a page
        browser = _header(scope, b"sec-fetch-site") is not None
        scripted = (
            browser
            and (
                (mode is not None and mode != "navigate")
                or (dest is not None and dest != "document")
            )
        ) or (origin is not None and scope["method"] not in SAFE_METHODS)
        keys = b"show_keys" in scope.get("query_string", b"")
        if not (scripted or (browser and keys)):
            return False
        given = _header(scope, TOKEN_HEADER)
        return not (
            self.token
            and given is not None
            and hmac.compare_digest(given.encode(), self.token.encode())
        )

    def host_allowed(self, host: str) -> bool:
        """Whether a ``Host`` header (a name or address, a port or not) names this server."""
        name = _hostname(host)
        if name == "localhost" or name.endswith(".localhost") or name in self.hosts:
            return True
        address = addresses.literal(name) if name and name[0] in "0123456789[:" else None
        if address is not None:
            return self.exposed or address.is_loopback
        return self.exposed and name in self.machine

    def _foreign_origin(self, scope: Scope) -> str | None:
        """The origin of a cross-site write, or None when it is this server's own (or not
        said: curl, scripts and tests send no ``Origin``)."""
        origin = _header(scope, b"origin")
        site = _header(scope, b"sec-fetch-site")
        if site == "cross-site":  # the browser says so: refused whatever Origin claims
            return _shown(origin or "(cross-site)")
        if origin is None:
            return None
        if origin in self.origins:  # named with --cors-origin (never by "*")
            return None
        parts = urlsplit(origin)
        if parts.scheme in ("http", "https") and self.host_allowed(parts.netloc):
            return None
        return _shown(origin)

    def accepts(self, given: str | None) -> bool:
        """Whether ``given`` is the admin token (always, when the rule does not apply)."""
        if not self.guarded:
            return True
        if not (self.token and given):
            return False
        return hmac.compare_digest(given.encode(), self.token.encode())  # any text, no TypeError


def _not_own(scope: Scope) -> str | None:
    """The origin of a dashboard form's post when it is not this server's own (scheme, host
    and port, as the request's ``Host`` names it), or the browser marks it from another
    site (another port of the same host is ``same-site``); None when it is (or not said)."""
    site = _header(scope, b"sec-fetch-site")
    origin = _header(scope, b"origin")
    if site in ("cross-site", "same-site"):
        return _shown(origin or f"({site})")
    if origin is None:
        return None
    own = f"{scope.get('scheme', 'http')}://{(_header(scope, b'host') or '').lower()}"
    return None if origin.lower() == own else _shown(origin)


def is_page(path: str) -> bool:
    """Whether ``path`` is one of the dashboard's pages (or its static files)."""
    return path == UI_PREFIX or path.startswith(UI_PREFIX + "/")


def _given_token(scope: Scope) -> str | None:
    cookies: str | None = None
    name: bytes
    value: bytes
    for name, value in scope["headers"]:
        if name == TOKEN_HEADER:
            return value.decode("latin-1")
        if name == b"cookie":
            cookies = value.decode("latin-1")
    if cookies is None:
        return None
    from http.cookies import CookieError, SimpleCookie  # only for a call that carries cookies

    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(cookies)
    except CookieError:  # a malformed cookie header (an unknown $attribute) carries no token
        return None
    morsel = jar.get(TOKEN_COOKIE)
    return None if morsel is None else str(morsel.value)


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return bytes(value).decode("latin-1")
    return None


def _hostname(host: str) -> str:
    """The name or address of a ``Host`` value (``name:port``, ``[::1]:port``), lowered."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[: host.find("]") + 1] if "]" in host else host
    return host.rsplit(":", 1)[0].rstrip(".") if host.count(":") == 1 else host.rstrip(".")


def _shown(text: str) -> str:
    """A header's value as an error message quotes it: short, printable."""
    clean = "".join(c if c.isprintable() else "?" for c in text[:100])
    return clean or "(none)"


def machine_names(host: str) -> frozenset[str]:
    """This machine's names a browser on the network may use to reach a server bound to
    ``host`` beyond loopback (its host name, fully qualified too); empty on loopback."""
    if is_loopback(host):
        return frozenset()
    names = {socket.gethostname().lower(), socket.getfqdn().lower()}
    return frozenset(n for n in names if n)


def allowed_hosts(bound: str | None, extra: tuple[str, ...] = ()) -> frozenset[str]:
    """The names ``Host`` may carry beyond localhost and loopback addresses: the bound
    address (none in-process: then the in-process clients' names) and ``extra``."""
    given = {_hostname(h) for h in extra if h.strip()}
    if bound is None:
        return frozenset({*IN_PROCESS_HOSTS, *given})
    return frozenset({_hostname(bound), *given})
