"""The dashboard's anti-forgery token (a double-submit cookie, as Django's and Grafana's).

A page that renders a form puts the token in it with one call in its template,
``{{ form_token_field() }}``; the first page a browser opens sets the token's cookie
(``SameSite=Strict``, ``HttpOnly``). Every dashboard ``POST`` is checked in one place
(``dashboard.common.page``): the form's ``form_token`` must equal the cookie, which a
foreign page can neither read nor set, so a form it posts (even to ``127.0.0.1``, even from
a browser that sends no ``Origin``) is refused 403 and changes nothing. A handler that
builds its form in Python gets the same field from ``field_html(request)``.

A page on another port of the same host can still set a cookie for this one (cookies are
not kept apart by port), so a token is only taken when the server made it: a random
nonce and its HMAC under a secret drawn when the process starts (``SECRET``). A planted
cookie fails the check, and the page then gets a token of its own.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from typing import Any

from jinja2 import pass_context
from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import Response

COOKIE = "idv_mock_form_token"
FIELD = "form_token"
PATH = "/__admin"
_NEW = "idv_mock_new_form_token"  # request.state: a token made for this request's page
SECRET = secrets.token_bytes(32)  # this process's: tokens of another run are not taken


def token(request: Request) -> str:
    """The browser's token (its cookie), or a new one the response will set."""
    given = request.cookies.get(COOKIE, "")
    if _well_formed(given):
        return given
    made: str | None = getattr(request.state, _NEW, None)
    if made is None:
        made = _signed(secrets.token_urlsafe(18))
        setattr(request.state, _NEW, made)
    return made


def field_html(request: Request) -> Markup:
    """The hidden input a dashboard form carries."""
    return Markup('<input type="hidden" name="{}" value="{}">').format(FIELD, token(request))


@pass_context
def form_token_field(context: Any) -> Markup:
    """``{{ form_token_field() }}`` in a template: the hidden input, for its request."""
    return field_html(context["request"])


def valid(request: Request, fields: dict[str, str]) -> bool:
    """Whether a posted form carries the browser's token."""
    given = request.cookies.get(COOKIE, "")
    sent = fields.get(FIELD, "")
    return _well_formed(given) and hmac.compare_digest(given.encode(), sent.encode("utf-8"))


def keep(request: Request, response: Response) -> Response:
    """Set the cookie of a token made while rendering this response."""
    made = getattr(request.state, _NEW, None)
    if made is not None:
        response.set_cookie(COOKIE, made, path=PATH, httponly=True, samesite="strict")
    return response


def _signed(nonce: str) -> str:
    mac = hmac.new(SECRET, nonce.encode(), hashlib.sha256).digest()[:18]
    return f"{nonce}.{base64.urlsafe_b64encode(mac).decode()}"


def _well_formed(value: str) -> bool:
    """Whether ``value`` is a token this server made (its nonce signed with ``SECRET``)."""
    nonce, dot, _ = value.partition(".")
    if not (dot and 16 <= len(value) <= 96 and value.isascii()):
        return False
    return hmac.compare_digest(_signed(nonce).encode(), value.encode())
