"""Random bytes, headers and queries on every route: never a 5xx, never a traceback."""

from __future__ import annotations

import re
import string

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from idv_mock import Service, ServiceConfig, create_app
from idv_mock.ground import schemas

INDEX = schemas.load("api.json")
ROUTES = sorted(
    {(op["method"], op["path"]) for op in INDEX["operations"] + INDEX["admin_operations"]}
)
METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
SERVICE = Service(ServiceConfig(seed_count=3))
CLIENT = TestClient(create_app(SERVICE), raise_server_exceptions=False)
# the spec's own 500s (monitoring's all_submissions_failed, GET's processing_error by fault)
SPEC_500 = {"all_submissions_failed"}


def concrete(path: str, segment: str) -> str:
    return re.sub(r"\{[^}]+\}", segment or "x", path)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    route=st.sampled_from(ROUTES),
    method=st.sampled_from([*METHODS, None]),
    segment=st.text(string.ascii_letters + string.digits + "-_.~!$&'()*+,;=:@", max_size=12),
    body=st.binary(max_size=300),
    query=st.dictionaries(st.text(max_size=6), st.text(max_size=12), max_size=4),
    key=st.sampled_from(["mock-api-key", "", "wrong"]),
)
def test_no_route_answers_5xx(
    route: tuple[str, str], method: str | None, segment: str, body: bytes,
    query: dict[str, str], key: str,
) -> None:  # fmt: skip
    verb = method or (route[0] if route[0] != "*" else "GET")
    path = concrete(route[1], segment.strip())
    r = CLIENT.request(verb, path, params=query, content=body, headers={"x-api-key": key})
    if r.status_code >= 500:
        assert r.json().get("errorCode") in SPEC_500, (verb, path, r.status_code, r.text)
    if path.startswith("/__admin/reset") or path == "/__admin/state":
        SERVICE.reset()


def deep_json(levels: int) -> bytes:
    return b'{"a":' * levels + b"1" + b"}" * levels


def chunked(total: int) -> object:
    def chunks():  # type: ignore[no-untyped-def]
        for _ in range(total // 65536):
            yield b"x" * 65536

    return chunks()


HOSTILE = {
    "deep": lambda: {"content": deep_json(400)},
    "chunked": lambda: {"content": chunked(2 * 1024 * 1024)},
    "oversized": lambda: {"content": b"x" * (1024 * 1024 + 10)},
    "huge_headers": lambda: {"headers": {"x-big": "a" * 20_000}},
}


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    route=st.sampled_from(ROUTES),
    method=st.sampled_from(METHODS),
    kind=st.sampled_from(sorted(HOSTILE)),
)
def test_hostile_input_then_the_control_api_never_answers_5xx(
    route: tuple[str, str], method: str, kind: str
) -> None:
    """Deep JSON, chunked and oversized bodies, huge headers (issue 14): refused with a 4xx,
    and every control-API read afterwards still answers (the journal above all)."""
    path = concrete(route[1], "x")
    extra: dict = HOSTILE[kind]()  # type: ignore[type-arg]
    headers = {"x-api-key": "mock-api-key", **extra.pop("headers", {})}
    r = CLIENT.request(method, path, headers=headers, **extra)
    if r.status_code >= 500:
        assert r.json().get("errorCode") in SPEC_500, (method, path, kind, r.status_code, r.text)
    for read in (
        "/__admin/projects",
        "/__admin/projects/default/requests",
        "/__admin/projects/default/faults",
        "/__admin/projects/default/webhooks",
        "/__admin/state?summary=true",
    ):
        assert CLIENT.get(read).status_code == 200, (read, method, path, kind)
    if path.startswith("/__admin"):
        SERVICE.reset()
