"""Validate every response the suite receives against ``schemas/api.json``.

The conftest's clients call :func:`check_response` from an httpx response hook, so a
response whose status is not listed for its operation, or whose body breaks the listed
schemas, fails the test that received it.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

import httpx
import orjson

from idv_mock.ground import schemas


@cache
def _operations() -> list[tuple[str, re.Pattern[str], dict[str, list[str]], str | None]]:
    index = schemas.load("api.json")
    ops = []
    for op in index["operations"] + index["admin_operations"]:
        pattern = re.compile("^" + re.sub(r"\{[^}]+\}", "[^/]+", op["path"]) + "$")
        ops.append((op["method"], pattern, op["responses"], op.get("media")))
    return ops


def expected(method: str, path: str, status: int) -> tuple[list[str], str | None]:
    """The schemas a response may match, and the media type if it is not JSON."""
    # the control API's errors have a shape of their own: {"message", "errors": [...]}
    which = "admin_fallback" if path.startswith("/__admin") else "fallback"
    fallback: dict[str, list[str]] = schemas.load("api.json")[which]
    for op_method, pattern, responses, media in _operations():
        if op_method in (method, "*") and pattern.match(path) and str(status) in responses:
            return responses[str(status)], media
    if str(status) in fallback:
        return fallback[str(status)], None
    raise AssertionError(f"{method} {path} answered {status}, which api.json does not list")


def check(method: str, path: str, status: int, body: Any) -> None:
    names, _ = expected(method, path, status)
    if not names:
        return
    problems = {name: schemas.errors(name, body) for name in names}
    if all(problems.values()):
        raise AssertionError(f"{method} {path} {status}: body matches none of {names}: {problems}")


def check_response(response: httpx.Response) -> None:
    response.read()
    if "x-idv-mock-fault" in response.headers and "errorCode" not in response.text:
        return  # a fault rule's own response: any status and body the test asked for
    request = response.request
    _, media = expected(request.method, request.url.path, response.status_code)
    if media is not None and response.status_code == 200:
        assert response.headers["content-type"].startswith(media)
        return
    assert response.headers.get("content-type", "").startswith("application/json"), (
        f"{request.method} {request.url.path}: not JSON: {response.headers.get('content-type')}"
    )
    check(request.method, request.url.path, response.status_code, orjson.loads(response.content))
