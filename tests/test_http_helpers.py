"""The request helpers that stand in for Starlette's own on every call (``serving/http.py``):
they must give exactly what Starlette gives, only cheaper."""

from __future__ import annotations

import asyncio

from hypothesis import given
from hypothesis import strategies as st
from starlette.requests import Request

from idv_mock.serving.http import body_of, path_of


def request(
    path: str, headers: list[tuple[bytes, bytes]] | None = None, body: bytes = b""
) -> Request:
    scope = {
        "type": "http",
        "method": "GET",
        "path": path,
        "root_path": "",
        "query_string": b"a=1",
        "headers": headers if headers is not None else [(b"host", b"127.0.0.1:8000")],
        "server": ("127.0.0.1", 8000),
        "scheme": "http",
    }
    sent = False

    async def receive() -> dict[str, object]:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return Request(scope, receive)


@given(st.text(min_size=0, max_size=30))
def test_path_of_is_the_urls_path_for_any_path(tail: str) -> None:
    for path in (tail, "/" + tail, "/v3/" + tail, "//" + tail):
        assert path_of(request(path)) == request(path).url.path


def test_path_of_without_a_host_header() -> None:
    for path in ("/v3/submission", "//x", "/a?b", "/é"):
        assert path_of(request(path, headers=[])) == request(path, headers=[]).url.path


def test_body_of_reads_a_body_the_request_says_it_has() -> None:
    said = request("/v3/submission", [(b"content-length", b"2")], b"{}")
    chunked = request("/v3/submission", [(b"transfer-encoding", b"chunked")], b"[]")
    assert asyncio.run(body_of(said)) == b"{}"
    assert asyncio.run(body_of(chunked)) == b"[]"


def test_body_of_does_not_wait_for_a_body_the_request_says_it_lacks() -> None:
    async def never() -> dict[str, object]:
        raise AssertionError("read a body the request said it did not have")

    for headers in ([], [(b"content-length", b"0")]):
        bare = request("/v3/submission", headers)
        assert asyncio.run(body_of(Request(bare.scope, never))) == b""
