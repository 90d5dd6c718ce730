"""Near-miss hints (api/hints.py): a call that does not match the contract gets a one-line
hint in the header ``x-idv-mock-hint``, its journal entry and the log, and exactly the
status, headers and body it gets with hints off.

Every case sends the same request to two apps over two equal services, one with hints and
one without (``create_app(hints=False)``, what ``--no-hints`` does), and compares them.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from starlette.testclient import TestClient

from conformance import check_response
from conftest import ADMIN, API_KEY, HEADERS
from idv_mock import Service, ServiceConfig
from idv_mock.api.app import create_app
from idv_mock.cli import build_parser
from idv_mock.ground import crypto
from wire import read_answer

HINT = "x-idv-mock-hint"
SECURE_KEY = "secure-key"
OTHER_KEY = "other-key"


def build_service() -> Service:
    service = Service(ServiceConfig(seed_count=5, random_seed=7))
    service.create_project(
        {"project_id": "secure", "api_key": SECURE_KEY, "admins": [ADMIN],
         "options": {"secure_transfer": True}}
    )  # fmt: skip
    service.create_project({"project_id": "other", "api_key": OTHER_KEY, "admins": [ADMIN]})
    service.create_submission("other")
    return service


@dataclass
class Pair:
    """The same service twice: ``on`` with hints, ``off`` without."""

    on: TestClient
    off: TestClient
    services: tuple[Service, Service]
    sid: str = field(default="")

    def send(self, method: str, path: str, **kwargs: Any) -> tuple[Any, Any]:
        """Both answers, after checking that they are the same but for the hint."""
        on = self.on.request(method, path, **kwargs)
        off = self.off.request(method, path, **kwargs)
        assert (on.status_code, on.content) == (off.status_code, off.content)
        assert {k: v for k, v in on.headers.items() if k != HINT} == dict(off.headers.items())
        assert HINT not in off.headers
        return on, off

    def journal(self, project: str, *, hints: bool) -> list[dict[str, Any]]:
        return self.services[0 if hints else 1].calls.journal(project)


@pytest.fixture
def pair() -> Iterator[Pair]:
    services = (build_service(), build_service())
    with (
        TestClient(create_app(services[0])) as on,
        TestClient(create_app(services[1], hints=False)) as off,
    ):
        on.event_hooks["response"] = off.event_hooks["response"] = [check_response]
        found = Pair(on, off, services)
        found.sid = next(iter(services[0].project("default").store))["submission_id"]
        yield found


PROJECTS = ("default", "secure", "other")


def hinted(pair: Pair, caplog: pytest.LogCaptureFixture, method: str, path: str,
           **kwargs: Any) -> str:  # fmt: skip
    """The hint of a call, with hints on only: in the header, in the log (once), and in
    the journal entry of the project whose key it carried (if it carried one)."""
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="idv_mock.hints"):
        on, _ = pair.send(method, path, **kwargs)
    hint: str = on.headers[HINT]
    assert "\n" not in hint and hint.isascii()
    logged = [r.getMessage() for r in caplog.records if r.name == "idv_mock.hints"]
    assert len(logged) == 1 and logged[0].endswith(hint)
    journaled = [e for p in PROJECTS for e in pair.journal(p, hints=True) if "hint" in e]
    assert [e["hint"] for e in journaled] == ([hint] if carries_key(path, kwargs) else [])
    assert not [e for p in PROJECTS for e in pair.journal(p, hints=False) if "hint" in e]
    return hint


def carries_key(path: str, kwargs: dict[str, Any]) -> bool:
    headers = {name.lower() for name in kwargs.get("headers", {})}
    return bool(headers & {"x-api-key", "authorization"}) or "API-KEY=" in path.upper()


# one case per near miss: (id, method, path, request kwargs, words the hint must carry)
CASES: list[tuple[str, str, str, dict[str, Any], tuple[str, ...]]] = [
    ("id in the path", "GET", "/v3/submission/{sid}", {"headers": HEADERS},
     ("GET /v3/submission?submission_id={sid}",)),
    ("plural path", "GET", "/v3/submissions", {"headers": HEADERS}, ("/v3/submission?",)),
    ("missing /v3", "GET", "/submission", {"headers": HEADERS}, ("/v3/submission", "/v3")),
    ("trailing slash", "GET", "/v3/submission/", {"headers": HEADERS}, ("trailing slash",)),
    ("trailing slash on a sub-resource", "GET", "/v3/submission/tokens/", {"headers": HEADERS},
     ("did you mean /v3/submission/tokens? (no trailing slash)",)),
    ("plural on a sub-resource", "POST", "/v3/submissions/review", {"headers": HEADERS},
     ("did you mean /v3/submission/review? (the resource names are singular)",)),
    ("Authorization Bearer", "GET", "/v3/submission",
     {"headers": {"Authorization": f"Bearer {API_KEY}"}}, ("x-api-key", "Authorization")),
    ("X-API-KEY in the query", "GET", f"/v3/submission?X-API-KEY={API_KEY}", {},
     ("x-api-key header", "X-API-KEY")),
    ("api_key in the query", "GET", f"/v3/submission?api_key={API_KEY}", {"headers": HEADERS},
     ("x-api-key header", "api_key")),
    ("no key at all", "GET", "/v3/submission", {}, ("no x-api-key header",)),
    ("submissionId on GET", "GET", "/v3/submission?submissionId={sid}", {"headers": HEADERS},
     ('"submissionId"', '"submission_id"')),
    ("submission_id in the PATCH body", "PATCH", "/v3/submission",
     {"headers": HEADERS,
      "json": {"submission_id": "{sid}", "admin": ADMIN, "data": {"memo": "m"}}},
     ('"submission_id"', '"submissionId"')),
    ("snake case PATCH property", "PATCH", "/v3/submission",
     {"headers": HEADERS, "json": {"submissionId": "{sid}", "admin": ADMIN,
                                   "data": {"full_name": "A B"}}},
     ('"data.full_name"', '"data.fullName"')),
    ("admin instead of admin_name", "DELETE", "/v3/submission?submission_id=nope&admin=a@b.c",
     {"headers": HEADERS}, ('"admin_name"',)),
    ("JSON body on a GET", "GET", "/v3/submission",
     {"headers": HEADERS, "json": {"submission_id": "{sid}"}}, ("query string", "submission_id")),
    ("form body where JSON is expected", "PATCH", "/v3/submission",
     {"headers": HEADERS, "data": {"submissionId": "{sid}", "admin": ADMIN}},
     ("form-encoded", "JSON")),
    ("wrong method", "PUT", "/v3/submission", {"headers": HEADERS},
     ("PUT", "GET, PATCH, DELETE")),
    ("wrong method on a projection", "PATCH", "/v3/projection", {"headers": HEADERS},
     ("GET, POST",)),
    ("plain body to a secure project", "PATCH", "/v3/submission",
     {"headers": {"x-api-key": SECURE_KEY},
      "json": {"submissionId": "x", "admin": ADMIN, "data": {"memo": "m"}}},
     ("Secure Data Transfer is on", "data=<URI-encoded ciphertext>")),
    ("raw ciphertext where the spec says form", "PATCH", "/v3/submission",
     {"headers": {"x-api-key": SECURE_KEY},
      "content": crypto.encrypt({"submissionId": "x"}, SECURE_KEY).encode() + b"%%"},
     ("form field data=",)),
    ("plain parameters to a secure project", "GET", "/v3/submission?submission_id=x",
     {"headers": {"x-api-key": SECURE_KEY}}, ("encrypted query parameter data",)),
    ("encrypted parameter to a plain project", "GET", "/v3/submission?data=abc",
     {"headers": HEADERS}, ("Secure Data Transfer is off",)),
    ("CORS preflight with CORS off", "OPTIONS", "/v3/submission",
     {"headers": {"origin": "http://localhost:3000", "access-control-request-method": "GET"}},
     ("--cors-origin",)),
]  # fmt: skip


def filled(value: Any, sid: str) -> Any:
    if isinstance(value, str):
        return value.replace("{sid}", sid)
    if isinstance(value, dict):
        return {k: filled(v, sid) for k, v in value.items()}
    return value


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "words"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_a_near_miss_gets_a_hint_and_the_same_answer(
    pair: Pair,
    caplog: pytest.LogCaptureFixture,
    method: str,
    path: str,
    kwargs: dict[str, Any],
    words: tuple[str, ...],
) -> None:
    hint = hinted(pair, caplog, method, filled(path, pair.sid), **filled(kwargs, pair.sid))
    for word in words:
        assert filled(word, pair.sid) in hint


def test_the_hint_is_in_the_journal_entry_only_with_hints_on(pair: Pair) -> None:
    body = {"submission_id": pair.sid, "admin": ADMIN, "data": {"memo": "m"}}
    on, _ = pair.send("PATCH", "/v3/submission", headers=HEADERS, json=body)
    [entry] = pair.journal("default", hints=True)
    assert entry["hint"] == on.headers[HINT] and entry["status"] == 400
    [plain] = pair.journal("default", hints=False)
    assert "hint" not in plain
    assert {k: v for k, v in entry.items() if k not in ("hint", "time", "duration_ms")} == {
        k: v for k, v in plain.items() if k not in ("time", "duration_ms")
    }


def test_the_journal_over_http_shows_the_hint(pair: Pair) -> None:
    pair.send("GET", "/v3/submission?submissionId=x", headers=HEADERS)
    requests = pair.on.get("/__admin/projects/default/requests").json()["requests"]
    assert requests[0]["hint"].endswith('did you mean "submission_id"?')


def test_an_unknown_path_is_journaled_in_the_project_of_its_key_with_hints_on(
    pair: Pair,
) -> None:
    pair.send("GET", f"/v3/submission/{pair.sid}", headers=HEADERS)
    [entry] = pair.journal("default", hints=True)
    assert (entry["path"], entry["status"]) == (f"/v3/submission/{pair.sid}", 404)
    assert "submission_id=" in entry["hint"]
    assert pair.journal("default", hints=False) == []  # as before: no project, no journal


def test_an_unknown_path_without_a_key_is_journaled_nowhere(pair: Pair) -> None:
    on, _ = pair.send("GET", "/v3/submissions")
    assert "/v3/submission" in on.headers[HINT]
    assert all(pair.services[0].calls.journal(p) == [] for p in ("default", "secure", "other"))


def test_a_key_sent_as_bearer_lands_in_its_projects_journal(pair: Pair) -> None:
    pair.send("GET", "/v3/submission", headers={"Authorization": f"Bearer {OTHER_KEY}"})
    [entry] = pair.journal("other", hints=True)
    assert entry["status"] == 400 and "x-api-key" in entry["hint"]
    assert entry["headers"]["authorization"] == "****"
    assert pair.journal("default", hints=True) == []
    assert pair.journal("other", hints=False) == []


@pytest.mark.parametrize(
    ("method", "path", "kwargs"),
    [
        ("GET", "/v3/submission?submission_id={sid}", {}),
        ("DELETE", "/v3/submission?submission_id={sid}", {}),
        ("PATCH", "/v3/submission",
         {"json": {"submissionId": "{sid}", "admin": ADMIN, "data": {"memo": "m"}}}),
        ("POST", "/v3/submission/aml", {"json": {"submissionId": "{sid}"}}),
        ("DELETE", "/v3/submission/partial?submission_id={sid}&fields=email", {}),
    ],
    ids=["GET", "DELETE", "PATCH", "AML", "partial DELETE"],
)  # fmt: skip
def test_another_projects_key_gets_no_hint_about_the_id(
    pair: Pair, caplog: pytest.LogCaptureFixture, method: str, path: str, kwargs: dict[str, Any]
) -> None:
    """The id exists, in the default project; the other project's key learns nothing."""
    with caplog.at_level(logging.WARNING, logger="idv_mock.hints"):
        on, _ = pair.send(
            method,
            filled(path, pair.sid),
            headers={"x-api-key": OTHER_KEY},
            **filled(kwargs, pair.sid),
        )
    assert HINT not in on.headers
    assert not [r for r in caplog.records if r.name == "idv_mock.hints"]
    assert all("hint" not in entry for entry in pair.journal("other", hints=True))


def test_a_call_that_matches_the_contract_gets_no_hint(pair: Pair) -> None:
    for method, path, kwargs in [
        ("GET", f"/v3/submission?submission_id={pair.sid}", {}),
        ("GET", "/v3/submission?count=2", {}),
        ("PATCH", "/v3/submission",
         {"json": {"submissionId": pair.sid, "admin": ADMIN, "data": {"memo": "m"}}}),
        ("GET", "/v3/projection", {}),
    ]:  # fmt: skip
        on, _ = pair.send(method, path, headers=HEADERS, **kwargs)
        assert on.status_code == 200 and HINT not in on.headers, (method, path)
    assert all("hint" not in e for e in pair.journal("default", hints=True))


def test_a_hint_quotes_the_callers_text_on_one_printable_line(pair: Pair) -> None:
    on, _ = pair.send("GET", "/v3/submission/" + "%E2%9C%93" * 40, headers=HEADERS)
    hint = on.headers[HINT]
    assert hint.isascii() and hint.isprintable() and len(hint) <= 300


def test_serve_flags() -> None:
    args = build_parser().parse_args(["serve"])
    assert args.hints is True
    assert build_parser().parse_args(["serve", "--no-hints"]).hints is False


def test_a_body_lost_to_an_h2c_upgrade_is_explained(live: Any) -> None:
    """Java's HttpClient asks plain-http servers for HTTP/2 (``Upgrade: h2c``); uvicorn then
    never reads the body, and the PATCH answers parse_error: the hint says why."""
    body = b'{"submissionId": "x", "admin": "admin@example.com", "data": {"memo": "m"}}'
    head = (
        "PATCH /v3/submission HTTP/1.1\r\nhost: 127.0.0.1\r\n"
        "connection: Upgrade, HTTP2-Settings\r\n"
        f"upgrade: h2c\r\nhttp2-settings: AAEAAEAAAAIAAAAA\r\nx-api-key: {API_KEY}\r\n"
        f"content-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", live.port), timeout=10) as sock:
        sock.sendall(head.encode() + body)
        head_bytes, body_bytes = read_answer(sock)
    answer = (head_bytes + b"\r\n\r\n" + body_bytes).decode()
    status, _, rest = answer.partition("\r\n")
    headers, _, content = rest.partition("\r\n\r\n")
    assert status == "HTTP/1.1 400 Bad Request"
    assert (
        content
        == '{"errorCode":"parse_error","message":"data parsing error. please check input data."}'
    )
    assert f"the body ({len(body)} bytes) was not read" in headers and "HTTP_1_1" in headers
