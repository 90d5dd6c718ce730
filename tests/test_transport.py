"""idv_mock.transport: the in-process transports answer exactly as TestClient and
httpx.ASGITransport do, and cost none of their per-call machinery."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from conftest import ADMIN, API_KEY, some_submission
from idv_mock import Service, create_app
from idv_mock.transport import (
    ASGITransport,
    AsyncASGITransport,
    AsyncInProcessClient,
    InProcessClient,
)

BASE = "http://idv-mock"
# every client sends the same headers (TestClient would otherwise say "testclient")
HEADERS = {"x-api-key": API_KEY, "user-agent": "idv-mock-tests"}
Answer = tuple[int, list[tuple[str, str]], bytes]
Call = tuple[str, str, dict[str, Any]]


def script(service: Service) -> list[Call]:
    """Calls covering reads, errors, writes and odd encodings, in an order that shows state."""
    sid = some_submission(service, 0)["submission_id"]
    gone = some_submission(service, 1)["submission_id"]
    patch = {"submissionId": sid, "admin": ADMIN, "data": {"lastName": "Public"}}
    return [
        ("GET", "/v3/submission", {"params": {"submission_id": sid}}),
        ("GET", "/v3/submission", {"params": {"count": "5"}}),
        ("GET", "/v3/nothing", {}),
        ("GET", "/v3/submission", {"params": {"count": "0"}}),
        ("PATCH", "/v3/submission", {"json": patch}),
        ("GET", f"/v3/submission?submission_id={sid}", {}),
        ("DELETE", "/v3/submission", {"params": {"submission_id": gone, "admin_name": ADMIN}}),
        ("GET", "/v3/submission", {"params": {"submission_id": gone}}),
        ("GET", "/v3/submission?userid=a%20b+c%2Bd&email=x%2By%40z.com&count=3", {}),
        ("GET", "/v3/submission", {"params": {"userid": "é ü+/?&="}}),
        ("GET", "/v3/projection/a%20b%C3%A9", {}),
        ("DELETE", "/v3/projection/p%2Fq", {}),
        ("POST", "/v3/projection", {"json": {"name": "n1", "mode": "exclude", "fields": ["x"]}}),
        ("GET", "/v3/projection", {}),
        ("PATCH", "/v3/submission", {"content": b"{not json"}),
        ("GET", "/v3/submission", {"headers": {"x-api-key": "ключ".encode()}}),
        ("HEAD", "/v3/submission", {}),
        ("PUT", "/v3/submission", {"json": {}}),
        ("GET", "/openapi.json", {}),
    ]


def answer(response: httpx.Response) -> Answer:
    return response.status_code, response.headers.multi_items(), response.content


def journal(service: Service) -> list[dict[str, Any]]:
    """What the app saw of every call (without the timings)."""
    entries = service.calls.journal("default")
    return [{k: v for k, v in e.items() if k not in ("time", "duration_ms")} for e in entries]


def through_testclient(service: Service, calls: list[Call]) -> list[Answer]:
    with TestClient(create_app(service), base_url=BASE, headers=HEADERS) as client:
        return [answer(client.request(m, url, **kw)) for m, url, kw in calls]


def through_httpx_asgi(service: Service, calls: list[Call]) -> list[Answer]:
    async def main() -> list[Answer]:
        transport = httpx.ASGITransport(create_app(service))
        async with httpx.AsyncClient(transport=transport, base_url=BASE, headers=HEADERS) as c:
            return [answer(await c.request(m, url, **kw)) for m, url, kw in calls]

    return asyncio.run(main())


def through_sync(service: Service, calls: list[Call]) -> list[Answer]:
    transport = ASGITransport(create_app(service))
    with InProcessClient(transport=transport, base_url=BASE, headers=HEADERS) as client:
        return [answer(client.request(m, url, **kw)) for m, url, kw in calls]


def through_async(service: Service, calls: list[Call]) -> list[Answer]:
    async def main() -> list[Answer]:
        transport = AsyncASGITransport(create_app(service))
        async with AsyncInProcessClient(transport=transport, base_url=BASE, headers=HEADERS) as c:
            return [answer(await c.request(m, url, **kw)) for m, url, kw in calls]

    return asyncio.run(main())


def through_plain_httpx(service: Service, calls: list[Call]) -> list[Answer]:
    """The new transport under a plain httpx.Client, as a user would write it."""
    transport = ASGITransport(create_app(service))
    with httpx.Client(transport=transport, base_url=BASE, headers=HEADERS) as client:
        return [answer(client.request(m, url, **kw)) for m, url, kw in calls]


Runner = Callable[[Service, list[Call]], list[Answer]]


@pytest.mark.parametrize("runner", [through_sync, through_async, through_plain_httpx])
def test_answers_and_state_are_those_of_testclient_and_httpx(
    service: Service, runner: Runner
) -> None:
    twins = [Service(service.config) for _ in range(2)]
    calls = script(service)
    got = runner(service, calls)
    assert got == through_testclient(twins[0], calls)
    assert got == through_httpx_asgi(twins[1], calls)
    assert journal(service) == journal(twins[0]) == journal(twins[1])
    assert [status for status, _, _ in got][:8] == [200, 200, 404, 400, 200, 200, 200, 200]


@pytest.mark.parametrize("runner", [through_sync, through_async])
def test_non_ascii_response_headers_are_those_of_httpx(service: Service, runner: Runner) -> None:
    # TestClient cannot read them (it decodes header bytes as UTF-8); httpx keeps the bytes
    twin = Service(service.config)
    respond = {"status": 503, "headers": {"x-note": "café"}, "body": {"message": "é"}}
    for one in (service, twin):
        one.calls.add_fault("default", {"match": {"path": "/v3/submission"}, "respond": respond})
    calls: list[Call] = [("GET", "/v3/submission", {})]
    got = runner(service, calls)
    assert got == through_httpx_asgi(twin, calls)
    assert ("x-note", "café") in got[0][1]


def test_request_bodies_reach_the_app(service: Service) -> None:
    sid = some_submission(service, 0)["submission_id"]
    body = {"submissionId": sid, "admin": ADMIN, "data": {"lastName": "Bodyreached"}}
    with sync_client(service) as client:
        assert client.patch("/v3/submission", json=body).status_code == 200
        items = client.get("/v3/submission", params={"submission_id": sid}).json()["Items"]
    assert items[0]["data"]["last_name"] == "Bodyreached"
    journaled = service.calls.journal("default", "PATCH")
    assert journaled[-1]["body"] == body


def sync_client(service: Service, **kwargs: Any) -> httpx.Client:
    transport = ASGITransport(create_app(service), **kwargs)
    return InProcessClient(transport=transport, base_url=BASE, headers=HEADERS)


def delay_rule(service: Service, ms: int = 30) -> None:
    rule = {"match": {"path": "/v3/submission"}, "delay_ms": ms, "times": 1}
    service.calls.add_fault("default", rule)


def test_a_fault_rule_delay_runs_on_the_sync_transport(service: Service) -> None:
    delay_rule(service)
    with sync_client(service) as client:
        started = time.perf_counter()
        assert client.get("/v3/submission").status_code == 200
        assert time.perf_counter() - started >= 0.03


def test_the_sync_client_works_inside_a_running_event_loop(service: Service) -> None:
    delay_rule(service)
    client = sync_client(service)

    async def inside() -> list[int]:
        asyncio.get_running_loop()  # a sync call here must not nest in this loop
        started = time.perf_counter()
        codes = [client.get("/v3/submission").status_code for _ in range(3)]
        assert time.perf_counter() - started >= 0.03
        return codes

    assert asyncio.run(inside()) == [200, 200, 200]
    assert client.get("/v3/submission").status_code == 200  # and outside again
    background = client._transport._loops.background  # type: ignore[attr-defined]
    assert background is not None
    loop, thread = background
    client.close()
    assert loop.is_closed() and not thread.is_alive()


def test_closing_the_transport_closes_its_loops(service: Service) -> None:
    transport = ASGITransport(create_app(service))
    with httpx.Client(transport=transport, base_url=BASE, headers=HEADERS) as client:
        assert client.get("/v3/submission").status_code == 200
        loop = transport._local.loop
        assert not loop.is_closed()
    assert loop.is_closed()
    with pytest.raises(RuntimeError, match="closed"):
        transport.handle_request(httpx.Request("GET", f"{BASE}/v3/submission"))
    transport.close()  # twice is fine


def test_each_thread_gets_its_own_loop(service: Service) -> None:
    with sync_client(service) as client:
        codes: list[int] = []

        def work() -> None:
            codes.extend(client.get("/v3/submission").status_code for _ in range(20))

        threads = [threading.Thread(target=work) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        loops = client._transport._loops.loops  # type: ignore[attr-defined]
    assert codes == [200] * 80
    assert len(loops) == 4 and all(loop.is_closed() for loop in loops)


# --- exceptions and network faults ---------------------------------------------------------


async def boom(request: Request) -> Response:
    raise ValueError("boom")


class AfterStart:
    """Starts a response, then fails: a bug, or a deliberate drop of the connection."""

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"par", "more_body": True})
        raise self.exc


class Dropped(BaseException):
    """Like the mock's ConnectionAborted: past every handler, so the server drops the line."""


FAILING = Starlette(routes=[Route("/boom", boom)])


def sync_call(app: Any, path: str, **kwargs: Any) -> httpx.Response:
    with httpx.Client(transport=ASGITransport(app, **kwargs), base_url=BASE) as client:
        return client.get(path)


def async_call(app: Any, path: str, **kwargs: Any) -> httpx.Response:
    async def main() -> httpx.Response:
        transport = AsyncASGITransport(app, **kwargs)
        async with httpx.AsyncClient(transport=transport, base_url=BASE) as client:
            return await client.get(path)

    return asyncio.run(main())


@pytest.mark.parametrize("call", [sync_call, async_call])
def test_app_exceptions_propagate_unless_told_otherwise(call: Callable[..., Any]) -> None:
    with pytest.raises(ValueError, match="boom"):
        call(FAILING, "/boom")
    with pytest.raises(RuntimeError, match="late"):
        call(AfterStart(RuntimeError("late")), "/")
    r = call(FAILING, "/boom", raise_app_exceptions=False)
    assert (r.status_code, r.text) == (500, "Internal Server Error")
    r = call(AfterStart(RuntimeError("late")), "/", raise_app_exceptions=False)
    assert (r.status_code, r.content) == (200, b"par")


@pytest.mark.parametrize("call", [sync_call, async_call])
def test_a_dropped_connection_is_a_protocol_error(call: Callable[..., Any]) -> None:
    with pytest.raises(httpx.RemoteProtocolError):
        call(AfterStart(Dropped()), "/")
    with pytest.raises(KeyboardInterrupt):
        call(AfterStart(KeyboardInterrupt()), "/")


def test_network_faults_look_as_they_do_over_http(service: Service) -> None:
    def once(kind: str) -> None:
        service.calls.add_fault(
            "default", {"match": {"path": "/v3/submission"}, "fault": kind, "times": 1}
        )

    with sync_client(service) as client:
        once("connection_reset")
        with pytest.raises(httpx.TransportError):
            client.get("/v3/submission")
        once("empty_response")
        assert client.get("/v3/submission").content == b""
        once("malformed_json")
        with pytest.raises(ValueError):
            client.get("/v3/submission").json()
        assert client.get("/v3/submission").status_code == 200  # the client still works


# --- the scope and streaming ---------------------------------------------------------------


def echo_scope(seen: list[dict[str, Any]]) -> Any:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append({**scope, "body": (await receive())["body"]})
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body"})

    return app


@pytest.mark.parametrize("call", [sync_call, async_call])
def test_the_scope_is_what_uvicorn_gives(call: Callable[..., Any]) -> None:
    seen: list[dict[str, Any]] = []
    assert call(echo_scope(seen), "/a%20b%2Fc%C3%A9?x=1%202&y=+").status_code == 204
    scope = seen[0]
    assert scope["path"] == "/a b/cé"
    assert scope["raw_path"] == b"/a%20b%2Fc%C3%A9"
    assert scope["query_string"] == b"x=1%202&y=+"
    assert (scope["type"], scope["method"], scope["scheme"]) == ("http", "GET", "http")
    assert scope["http_version"] == "1.1" and scope["root_path"] == ""
    assert scope["server"] == ("idv-mock", 80)
    assert scope["asgi"]["version"] == "3.0"
    assert scope["state"] == {} and scope["body"] == b""
    assert (b"host", b"idv-mock") in scope["headers"]
    assert all(key == key.lower() for key, _ in scope["headers"])


def test_raw_header_bytes_reach_the_app_unchanged() -> None:
    seen: list[dict[str, Any]] = []
    with httpx.Client(transport=ASGITransport(echo_scope(seen)), base_url=BASE) as client:
        client.get("/", headers={"X-Latin": b"\xe9t\xe9", "X-Utf8": "ключ".encode()})
    headers = dict(seen[0]["headers"])
    assert headers[b"x-latin"] == b"\xe9t\xe9" and headers[b"x-utf8"] == "ключ".encode()


async def chunks() -> Any:
    for part in (b"one,", b"two,", b"three"):
        await asyncio.sleep(0)
        yield part


async def stream(request: Request) -> Response:
    return StreamingResponse(chunks(), media_type="text/plain")


async def echo(request: Request) -> Response:
    return JSONResponse({"got": (await request.body()).decode(), "q": request.query_params["q"]})


STREAMING = Starlette(routes=[Route("/stream", stream), Route("/echo", echo, methods=["POST"])])


@pytest.fixture(params=["sync", "async"])
def streaming_client(request: pytest.FixtureRequest) -> Iterator[Callable[..., httpx.Response]]:
    if request.param == "sync":
        with httpx.Client(transport=ASGITransport(STREAMING), base_url=BASE) as client:
            yield client.request
        return

    def call(*args: Any, **kwargs: Any) -> httpx.Response:
        async def main() -> httpx.Response:
            transport = AsyncASGITransport(STREAMING)
            async with httpx.AsyncClient(transport=transport, base_url=BASE) as client:
                return await client.request(*args, **kwargs)

        return asyncio.run(main())

    yield call


def test_a_streaming_response_is_not_cut_short(
    streaming_client: Callable[..., httpx.Response],
) -> None:
    # StreamingResponse listens for http.disconnect while it sends: it must not come early
    assert streaming_client("GET", "/stream").content == b"one,two,three"
    r = streaming_client("POST", "/echo", params={"q": "a b"}, content=b"x" * 70_000)
    assert r.json() == {"got": "x" * 70_000, "q": "a b"}


def test_streamed_request_bodies_are_given_whole() -> None:
    def parts() -> Iterator[bytes]:
        yield b"ab"
        yield b"cd"

    with httpx.Client(transport=ASGITransport(STREAMING), base_url=BASE) as client:
        r = client.post("/echo", params={"q": "1"}, content=parts())
    assert r.json() == {"got": "abcd", "q": "1"}


# --- the clients ---------------------------------------------------------------------------


def test_merged_urls_follow_a_new_base_url(service: Service) -> None:
    with sync_client(service) as client:
        assert client.get("/submission").status_code == 404  # base has no /v3
        client.base_url = httpx.URL(f"{BASE}/v3")
        assert client.get("/submission").status_code == 200
        assert str(client.build_request("GET", "/submission").url) == f"{BASE}/v3/submission"
        absolute = client.build_request("GET", "http://other/x?y=1#frag").url
        assert absolute == httpx.URL("http://other/x?y=1#frag")


def test_cookies_are_still_kept() -> None:
    async def sets(request: Request) -> Response:
        response = JSONResponse({"cookie": request.cookies.get("a")})
        response.set_cookie("a", "1")
        return response

    app = Starlette(routes=[Route("/c", sets)])
    with InProcessClient(transport=ASGITransport(app), base_url=BASE) as client:
        assert client.get("/c").json() == {"cookie": None}
        assert client.cookies["a"] == "1"
        assert client.get("/c").json() == {"cookie": "1"}


def test_async_client_in_one_loop_after_another(service: Service) -> None:
    transport = AsyncASGITransport(create_app(service))
    client = AsyncInProcessClient(transport=transport, base_url=f"{BASE}/v3", headers=HEADERS)

    async def one() -> int:
        delay_rule(service, 5)
        return (await client.get("/submission")).status_code

    assert [asyncio.run(one()) for _ in range(2)] == [200, 200]
    asyncio.run(client.aclose())
