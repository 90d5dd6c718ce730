"""Who may use the control API (and the dashboard under it): Redis's protected mode.

Bound to a loopback address, ``/__admin`` is open as it always was: only processes of the
same machine reach it. Bound to any other address (``--host 0.0.0.0``), every ``/__admin``
request must carry the admin token (header ``x-idv-mock-admin-token`` or the dashboard's
cookie ``idv_mock_admin_token``) given with ``--admin-token``, unless the operator opts
out with ``--admin-open``; otherwise it is answered 403 before anything is read. The
dashboard's login page is the one exemption: it is where a person types the token.
"""

from __future__ import annotations

import hmac
import ipaddress
from dataclasses import dataclass
from http.cookies import SimpleCookie

from starlette.types import Scope

from idv_mock.api.admin import CONTROL_PREFIX

TOKEN_HEADER = b"x-idv-mock-admin-token"
TOKEN_COOKIE = "idv_mock_admin_token"
EXEMPT = ("/__admin/ui/login", "/__admin/ui/static/")


def is_loopback(host: str) -> bool:
    """``localhost`` or a loopback address (127.0.0.0/8, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True, slots=True)
class Exposure:
    """How the server is exposed: ``exposed`` when bound beyond loopback."""

    exposed: bool = False
    token: str | None = None
    open: bool = False

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

    def refuses(self, scope: Scope) -> bool:
        """Whether this request to the server is refused by the rule."""
        path: str = scope["path"]
        if not self.guarded or not path.startswith(CONTROL_PREFIX):
            return False
        if path.startswith(EXEMPT):
            return False
        return not self.accepts(_given_token(scope))

    def accepts(self, given: str | None) -> bool:
        """Whether ``given`` is the admin token (always, when the rule does not apply)."""
        if not self.guarded:
            return True
        if not (self.token and given):
            return False
        return hmac.compare_digest(given.encode(), self.token.encode())  # any text, no TypeError


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
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(cookies)
    except Exception:  # a malformed cookie header carries no token
        return None
    morsel = jar.get(TOKEN_COOKIE)
    return None if morsel is None else str(morsel.value)
