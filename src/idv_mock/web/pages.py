"""Rendering shared by every page: the Jinja2 environment, the static files, the layout.

One ``templates/base.html`` and one ``static/idv.css`` serve the hosted form and whatever
other pages join ``web/`` later, so they look like one product.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from idv_mock.backend import Service, liveform_links
from idv_mock.ground import schemas
from idv_mock.serving.http import service_of
from idv_mock.web import forgery, i18n

HERE = Path(__file__).parent
templates = Jinja2Templates(directory=HERE / "templates")
# Every template escapes what it renders, whatever its extension: Jinja's default
# (``select_autoescape()``) covers .html and .xml only, which left ``_document.svg``,
# included inline in the hosted form's page, echoing an applicant's markup raw.
templates.env.autoescape = True
# No inline script runs on any page (the hosted form's, the dashboard's): a value that
# slipped past escaping still cannot run script in the mock's origin, where /__admin is.
# Inline styles stay (the form's mainColor/innerColor, checked as colours).
CSP = (
    "default-src 'self'; script-src 'self'; object-src 'none'; base-uri 'none'; "
    "style-src 'self' 'unsafe-inline'; img-src 'self' data:"
)
templates.env.globals.update(
    id_type_name=i18n.id_type_name,
    country_name=i18n.country_name,
    form_token_field=forgery.form_token_field,  # a dashboard form's anti-forgery field
    kyc_outcomes=schemas.enum("kyc_outcome"),  # the tester panel's outcomes, the filter's
    genders=schemas.enum("gender"),  # the document step's choice
)
STATIC = Mount("/static", app=StaticFiles(directory=HERE / "static"), name="static")


async def favicon(request: Request) -> Response:
    """Browsers ask every server for /favicon.ico: the form's tab gets an icon, not a 404."""
    headers = {"Cache-Control": "public, max-age=86400"}
    return FileResponse(HERE / "static" / "favicon.ico", media_type="image/x-icon", headers=headers)


FAVICON = Route("/favicon.ico", favicon, methods=["GET", "HEAD"])


def render(
    request: Request, name: str, lang: str, context: dict[str, Any], status: int = 200
) -> Response:
    """A page in ``lang`` (``t`` holds its words); never cached, as each page is a state."""
    page = {"lang": lang, "t": i18n.labels(lang), **context}
    headers = {"Cache-Control": "no-store", "Content-Security-Policy": CSP}
    return templates.TemplateResponse(request, name, page, status_code=status, headers=headers)


def first_values(body: bytes) -> dict[str, str]:
    """An urlencoded form's first values (what a plain HTML form posts)."""
    return liveform_links.first_values(
        parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True)
    )


async def read_form(request: Request, limit: int) -> dict[str, str] | None:
    """The request's form (``first_values``), or None when its body is over ``limit``
    bytes, said (``content-length``) or found."""
    length = request.headers.get("content-length", "0")
    if not length.isdigit() or int(length) > limit:
        return None
    body = await request.body()
    return None if len(body) > limit else first_values(body)


def service(request: Request) -> Service:
    return service_of(request)
