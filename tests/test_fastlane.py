"""The fast lane for GET /v3/submission (api/fastlane.py) answers exactly as the route does.

Each case calls the ASGI app twice with the same scope, once with the lane and once with
``app.state.fast_lane = False``, and compares every ASGI message sent (status, header list,
body bytes) and the journal entry recorded. A spy on the route's journal call tells which
path answered, so a lane that silently always handed over would fail here.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import orjson
import pytest
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.testclient import TestClient

from conftest import API_KEY, HEADERS, some_submission
from idv_mock import Service, create_app
from idv_mock.api.fastlane import MockApp
from idv_mock.cli import build_parser
from idv_mock.ground import crypto
from idv_mock.serving import journaling
from idv_mock.serving.submission_page import REQUEST_TYPES

URL = "/v3/submission"
KEY_HEADERS = [(b"host", b"testserver"), (b"user-agent", b"wrk"), (b"x-api-key", API_KEY.encode())]
Messages = list[dict[str, Any]]


class RouteSpy:
    """Counts the Starlette route's journal calls: one per API call the route answered."""

    def __init__(self, original: Callable[..., Any]) -> None:
        self.original = original
        self.calls = 0

    async def __call__(self, *args: Any) -> None:
        self.calls += 1
        await self.original(*args)


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> RouteSpy:
    found = RouteSpy(journaling.record)
    monkeypatch.setattr(journaling, "record", found)
    return found


@pytest.fixture
def app(service: Service) -> MockApp:
    return create_app(service)


def call(
    app: MockApp,
    query: bytes,
    headers: list[tuple[bytes, bytes]] | None = None,
    method: str = "GET",
    path: str = URL,
    body: bytes = b"",
) -> Messages:
    """Every message the app sends for one request made of exactly these raw parts."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": query,
        "headers": list(KEY_HEADERS if headers is None else headers),
        "client": ("127.0.0.1", 50000),
        "server": ("testserver", 80),
    }
    messages: Messages = []
    pending = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        return pending.pop() if pending else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        messages.append(message)

    asyncio.run(app(scope, receive, send))
    return messages


def journal(service: Service, project_id: str = "default") -> list[dict[str, Any]]:
    return service.calls.journal(project_id)


def comparable(entry: dict[str, Any]) -> dict[str, Any]:
    """An entry without what differs between two identical calls (id, time, duration)."""
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", entry["time"])
    assert isinstance(entry["duration_ms"], float) and entry["duration_ms"] >= 0
    return {k: v for k, v in entry.items() if k not in ("id", "time", "duration_ms")}


def both_ways(
    app: MockApp,
    service: Service,
    spy: RouteSpy,
    query: bytes,
    headers: list[tuple[bytes, bytes]] | None = None,
) -> tuple[Messages, bool]:
    """The lane's messages (equal to the route's, journal included) and whether it answered."""
    app.state.fast_lane = True
    before, recorded = spy.calls, len(journal(service))
    fast = call(app, query, headers)
    took_lane = spy.calls == before
    fast_entries = journal(service)[recorded:]
    app.state.fast_lane = False
    before, recorded = spy.calls, len(journal(service))
    slow = call(app, query, headers)
    assert spy.calls == before + 1  # the switch does turn the lane off
    slow_entries = journal(service)[recorded:]
    app.state.fast_lane = True
    assert fast == slow
    assert [comparable(e) for e in fast_entries] == [comparable(e) for e in slow_entries]
    return fast, took_lane


def status_and_body(messages: Messages) -> tuple[int, Any]:
    start, body = messages
    assert body.keys() == {"type", "body"}
    return start["status"], orjson.loads(body["body"])


# --- queries the lane answers ---


def _sub(service: Service, index: int = 2) -> dict[str, Any]:
    return some_submission(service, index)


def _next_page(service: Service) -> str:
    newest = _sub(service, 0)
    return f"count=3&nextpage_id={newest['submission_id']}&nextpage_date={newest['created_at']}"


LANE_QUERIES: dict[str, Callable[[Service], str]] = {
    "by id": lambda s: f"submission_id={_sub(s)['submission_id']}",
    "by userid": lambda s: f"userid={quote(_sub(s)['userid'])}",
    "by email": lambda s: f"email={quote(_sub(s)['email'])}",
    "default page": lambda s: "",
    "count 1": lambda s: "count=1",
    "count 2": lambda s: "count=2",
    "count 3": lambda s: "count=3",
    "next page": _next_page,
    "date range": lambda s: f"start_date={_sub(s)['created_at'][:10]}&end_date=2026-01-01",
    "one day": lambda s: "start_date={0}&end_date={0}".format(_sub(s)["created_at"][:10]),
    "until": lambda s: f"end_date={_sub(s)['created_at'][:10]}&count=2",
    **{
        f"request_type {kind}": lambda s, kind=kind: (
            f"submission_id={_sub(s)['submission_id']}&request_type={kind}"
        )
        for kind in sorted(REQUEST_TYPES)
    },
    "request_type by userid": lambda s: f"userid={quote(_sub(s)['userid'])}&request_type=kyc",
    "unknown id": lambda s: "submission_id=no-such-id",
    "empty id": lambda s: "submission_id=",
    "id then count": lambda s: f"count=1&submission_id={_sub(s)['submission_id']}",
    "percent-encoded": lambda s: (
        f"submission_id={quote(_sub(s)['submission_id'], safe='')}&count=%33"
    ),
}


@pytest.mark.parametrize("name", list(LANE_QUERIES))
def test_lane_answers_as_the_route_does(
    app: MockApp, service: Service, spy: RouteSpy, name: str
) -> None:
    messages, took_lane = both_ways(app, service, spy, LANE_QUERIES[name](service).encode())
    status, body = status_and_body(messages)
    assert (status, took_lane) == (200, True)
    assert set(body) <= {"Items", "nextpageKey"}
    assert name in ("unknown id", "empty id") or body["Items"]
    paged = {"count 1": 1, "count 2": 2, "count 3": 3, "next page": 3}
    if name in paged:
        assert "nextpageKey" in body and len(body["Items"]) == paged[name]


def test_lane_headers_are_the_routes(app: MockApp, service: Service, spy: RouteSpy) -> None:
    sid = some_submission(service)["submission_id"]
    messages, took_lane = both_ways(app, service, spy, f"submission_id={sid}".encode())
    start, body = messages
    assert took_lane
    assert start == {
        "type": "http.response.start",
        "status": 200,
        "headers": [
            (b"content-length", str(len(body["body"])).encode()),
            (b"content-type", b"application/json"),
        ],
    }
    assert orjson.loads(body["body"]) == {"Items": [service.stored_submission("default", sid)]}


def test_plus_and_percent_are_decoded_as_starlette_does(
    app: MockApp, service: Service, spy: RouteSpy
) -> None:
    service.create_submission("default", {"userid": "user one", "email": "a+b@example.com"})
    found = {
        b"userid=user+one": 1,
        b"userid=user%20one": 1,
        b"userid=user%2Bone": 0,
        b"email=a%2Bb%40example.com": 1,
        b"email=a+b@example.com": 0,  # the + is a space
        b"email=a%2bb@example.com&count=": -1,  # an empty count is a format error
        b"userid=%E9": 0,  # not UTF-8: a replacement character, as Starlette reads it
        b"userid=\xc3\xa9": 0,  # raw bytes: read as latin-1
        b"&&userid=user+one&": 1,
    }
    for query, items in found.items():
        messages, took_lane = both_ways(app, service, spy, query)
        status, body = status_and_body(messages)
        if items < 0:
            assert (status, took_lane) == (400, False), query
        else:
            assert (status, len(body["Items"]), took_lane) == (200, items, True), query


def test_projected_and_deleted_submissions(app: MockApp, service: Service, spy: RouteSpy) -> None:
    project = service.project("default")
    policy = service.create_projection(project, "hide", "exclude", ["full_name", "gender"])
    claims = {"userid": "u-proj", "email": "p@example.com", "projectionId": policy.projection_id}
    hidden = service.liveform.hosted_submission(
        "default", crypto.encrypt(claims, API_KEY), "approved"
    )
    gone = some_submission(service, 1)["submission_id"]
    service.delete(project, gone, None)
    for query in (
        f"submission_id={hidden['submission_id']}",
        "userid=u-proj",
        "email=p%40example.com",
        f"submission_id={gone}",
        "count=2000",
    ):
        messages, took_lane = both_ways(app, service, spy, query.encode())
        assert (messages[0]["status"], took_lane) == (200, True), query
    [item] = status_and_body(call(app, f"submission_id={gone}".encode()))[1]["Items"]
    assert item["status"] == "Deleted Submission"


# --- calls the lane hands to the route ---


@pytest.mark.parametrize(
    "query",
    [
        b"count=0",
        b"count=abc",
        b"count=2001",
        b"foo=1",
        b"count=1&count=2",
        b"submission_id=a&submission_id=a",
        b"nextpage_id=x",
        b"nextpage_date=bad&nextpage_id=x",
        b"start_date=2026-13-01",
        b"end_date=yesterday",
        b"request_type=nope",
        b"data=abc",
        b"count",
    ],
)
def test_query_errors_are_rendered_by_the_route(
    app: MockApp, service: Service, spy: RouteSpy, query: bytes
) -> None:
    messages, took_lane = both_ways(app, service, spy, query)
    status, body = status_and_body(messages)
    assert (status, took_lane) == (400, False)
    assert set(body) == {"errorCode", "message"}


@pytest.mark.parametrize(
    "headers",
    [
        [(b"host", b"testserver")],
        [(b"x-api-key", b"unknown-key")],
        [(b"x-api-key", b"")],
        [(b"x-api-key", API_KEY.encode()), (b"content-length", b"2")],
        [(b"x-api-key", API_KEY.encode()), (b"transfer-encoding", b"chunked")],
        [(b"x-api-key", b"unknown-key"), (b"x-api-key", API_KEY.encode())],
    ],
)
def test_unusual_requests_are_left_to_the_route(
    app: MockApp, service: Service, spy: RouteSpy, headers: list[tuple[bytes, bytes]]
) -> None:
    _, took_lane = both_ways(app, service, spy, b"count=1", headers)
    assert not took_lane


def test_the_first_key_and_an_empty_content_length_take_the_lane(
    app: MockApp, service: Service, spy: RouteSpy
) -> None:
    headers = [
        (b"x-api-key", API_KEY.encode()),
        (b"x-api-key", b"unknown-key"),
        (b"content-length", b"0"),
        (b"x-custom", b"1"),
        (b"x-custom", b"2"),
    ]
    messages, took_lane = both_ways(app, service, spy, b"count=1", headers)
    assert (messages[0]["status"], took_lane) == (200, True)
    entry = journal(service)[-1]
    assert entry["headers"] == {"x-api-key": "****", "content-length": "0", "x-custom": "2"}
    assert (entry["query"], entry["body"], entry["method"], entry["path"]) == (
        {"count": "1"},
        None,
        "GET",
        URL,
    )


def test_other_methods_and_paths_are_left_to_the_route(app: MockApp, spy: RouteSpy) -> None:
    assert call(app, b"", method="HEAD")[0]["status"] == 405
    assert call(app, b"", path="/v3/submission/")[0]["status"] == 404
    assert call(app, b"submission_id=x", method="DELETE")[0]["status"] == 400
    assert spy.calls == 2  # the 404 of an unknown path is no API call


def test_a_fault_rule_still_fires(client: TestClient, spy: RouteSpy) -> None:
    rule = {"match": {"method": "GET", "path": URL}, "error": "invalid_admin", "times": 1}
    assert client.post("/__admin/projects/default/faults", json=rule).status_code == 201
    r = client.get(URL, params={"count": "1"})
    assert (r.status_code, r.json()) == (
        400,
        {"errorCode": "invalid_admin", "message": "Invalid admin"},
    )
    assert "x-idv-mock-fault" in r.headers
    assert client.get(URL, params={"count": "1"}).status_code == 200
    assert spy.calls == 2  # the spent rule is still listed: the route answers both


def test_a_rate_limit_still_applies(client: TestClient, spy: RouteSpy) -> None:
    options = {"options": {"rate_limit_per_second": 1}}
    assert client.patch("/__admin/projects/default", json=options).status_code == 200
    codes = [client.get(URL, params={"count": "1"}).status_code for _ in range(3)]
    assert codes[0] == 200 and 429 in codes
    assert spy.calls == 3


def test_a_secure_project_still_works(client: TestClient, service: Service, spy: RouteSpy) -> None:
    service.create_project(
        {"project_id": "sec", "api_key": "sec-key", "options": {"secure_transfer": True}}
    )
    sub = service.create_submission("sec")
    data = crypto.encrypt({"submission_id": sub["submission_id"]}, "sec-key")
    r = client.get(URL, params={"data": data}, headers={"x-api-key": "sec-key"})
    assert r.status_code == 200 and r.json()["isEncrypted"] is True
    assert crypto.decrypt(r.json()["data"], "sec-key") == {"Items": [sub]}
    assert spy.calls == 1
    [entry] = journal(service, "sec")
    assert entry["decrypted"] == {"submission_id": sub["submission_id"]}


def test_the_lane_over_http_is_recorded_and_schema_checked(
    client: TestClient, service: Service, spy: RouteSpy
) -> None:
    sid = some_submission(service)["submission_id"]
    r = client.get(URL, params={"submission_id": sid})
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/json"
    assert r.json() == {"Items": [service.stored_submission("default", sid)]}
    assert spy.calls == 0
    [entry] = client.get("/__admin/projects/default/requests").json()["requests"]
    assert entry["query"] == {"submission_id": sid}
    assert entry["response"] == r.json()
    assert entry["headers"]["x-api-key"] == "****"


def test_added_middleware_turns_the_lane_off(service: Service, spy: RouteSpy) -> None:
    app = create_app(service)
    app.user_middleware.insert(0, Middleware(GZipMiddleware))
    with TestClient(app, headers=HEADERS) as c:
        assert c.get(URL, params={"count": "1"}).status_code == 200
    assert spy.calls == 1


def test_serve_runs_without_access_log_unless_asked() -> None:
    assert build_parser().parse_args(["serve"]).access_log is False
    assert build_parser().parse_args(["serve", "--access-log"]).access_log is True


@pytest.mark.parametrize("has_body", [False, True])
@pytest.mark.parametrize("limited", [False, True])
@pytest.mark.parametrize("faulted", [False, True])
@pytest.mark.parametrize("due", [False, True])
def test_any_applies_asks_what_the_steps_ask(
    has_body: bool, limited: bool, faulted: bool, due: bool
) -> None:
    """The lane's one-call question (``preconditions.any_applies``) answers as the table's
    own predicates do, for every mix of the states they read."""
    from types import SimpleNamespace

    from idv_mock.api.preconditions import STEPS, any_applies

    now = 100.0
    project: Any = SimpleNamespace(
        options={"rate_limit_per_second": 5} if limited else {},
        faults=SimpleNamespace(rules=["a rule"] if faulted else []),
        schedule=SimpleNamespace(items=[SimpleNamespace(at=now - 1 if due else now + 1)]),
        clock=SimpleNamespace(peek=lambda: now),
    )
    expected = any(step.applies(project, has_body) for step in STEPS)
    assert expected == (has_body or limited or faulted or due)
    assert any_applies(project, has_body) is expected
