"""``idv_mock.tools.verify``: passes against the mock, names the field against a broken stand-in.

The stand-in is a small Starlette proxy in front of a live mock: it records every method it
receives (the probe must only ever send GET) and can corrupt one thing in the answers, so
the probe's verdicts are tested against real HTTP, plain and Secure Data Transfer alike.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
from pytest_idv_mock.fixtures import serve_in_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from conftest import API_KEY, LiveServer, free_port
from idv_mock import Service, ServiceConfig
from idv_mock.ground import crypto
from idv_mock.tools.verify import UNKNOWN_TOKEN, listed_schemas, main

pytestmark = pytest.mark.live

Corrupt = Callable[[str, int, Any], Any]
METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]


def seeded(**options: Any) -> Service:
    """Five submissions and one projection policy, so no probe is skipped."""
    service = Service(ServiceConfig(seed_count=5, options=options))
    service.create_projection(service.project("default"), "no_birth", "exclude", ["age_group"])
    return service


class StandIn:
    """A proxy to the mock that records each method and passes answers through ``corrupt``."""

    def __init__(self, upstream: str, corrupt: Corrupt | None = None) -> None:
        self.upstream = upstream
        self.corrupt = corrupt
        self.methods: list[str] = []

    async def proxy(self, request: Request) -> Response:
        self.methods.append(request.method)
        headers = {k: v for k, v in request.headers.items() if k == "x-api-key"}
        async with httpx.AsyncClient() as client:
            answer = await client.request(
                request.method,
                self.upstream + request.url.path,
                params=request.url.query,
                headers=headers,
                content=await request.body(),
            )
        if not answer.headers.get("content-type", "").startswith("application/json"):
            kind = answer.headers.get("content-type")  # GET /image: the file as it is
            return Response(answer.content, answer.status_code, media_type=kind)
        body = answer.json()
        if self.corrupt is not None:
            body = self.corrupt(request.url.path, answer.status_code, body)
        return JSONResponse(body, status_code=answer.status_code)

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/{path:path}", self.proxy, methods=METHODS)])


@contextmanager
def stand_in(service: Service, corrupt: Corrupt | None = None) -> Iterator[tuple[str, StandIn]]:
    with LiveServer(service) as live:
        proxy = StandIn(f"http://127.0.0.1:{live.port}", corrupt)
        with serve_in_thread(proxy.app()) as running:  # as conftest's LiveServer
            yield f"http://127.0.0.1:{running.port}/v3", proxy


def on_items(change: Callable[[list[Any]], None]) -> Corrupt:
    """Apply ``change`` to the ``Items`` of every GET /submission success, decrypting and
    re-encrypting a secure answer so the probe must decrypt to see the damage."""

    def corrupt(path: str, status: int, body: Any) -> Any:
        if path != "/v3/submission" or status != 200:
            return body
        secure = body.get("isEncrypted") is True
        plain = crypto.decrypt(body["data"], API_KEY) if secure else body
        if plain.get("Items"):
            change(plain["Items"])
        return {"data": crypto.encrypt(plain, API_KEY), "isEncrypted": True} if secure else plain

    return corrupt


def kyc_maybe(items: list[Any]) -> None:
    items[0].setdefault("kyc", {})["result"] = "maybe"


def drop_items(path: str, status: int, body: Any) -> Any:
    if path == "/v3/submission" and status == 200 and isinstance(body, dict):
        return {k: v for k, v in body.items() if k != "Items"}
    return body


def lowercase_forbidden(path: str, status: int, body: Any) -> Any:
    return {"message": "forbidden"} if status == 403 else body


def verify(base_url: str, *extra: str) -> int:
    return main(["--base-url", base_url, "--api-key", API_KEY, *extra])


def summary(out: str) -> str:
    return out.strip().splitlines()[-1]


def test_passes_against_the_mock(capsys: pytest.CaptureFixture[str]) -> None:
    with LiveServer(seeded()) as live:
        assert verify(live.base_url) == 0
    out = capsys.readouterr().out
    assert summary(out) == "24 checks, 0 failed"
    assert "ok   GET /submission?count=2 200" in out
    assert "ok   GET /submission/tokens?type=count 200" in out  # issue 30's read-only probes
    assert f"ok   GET /submission/tokens?tokenId={UNKNOWN_TOKEN} 400" in out
    assert "&type=selfieImage 200" in out
    assert "ok   GET /projection (no x-api-key) 403" in out
    assert "skip" not in out and "FAIL" not in out


def test_passes_against_a_secure_mock(capsys: pytest.CaptureFixture[str]) -> None:
    with LiveServer(seeded(secure_transfer=True)) as live:
        assert verify(live.base_url) == 0
    out = capsys.readouterr().out
    assert summary(out).endswith(" checks, 0 failed")
    assert "GET /submission?count=2&data=enc({}) 200" in out
    assert 'data=enc({"submission_id":' in out


def test_a_seedless_mock_skips_the_reads_it_cannot_make(capsys: pytest.CaptureFixture[str]) -> None:
    with LiveServer(Service(ServiceConfig(seed_count=0))) as live:
        assert verify(live.base_url) == 0
    out = capsys.readouterr().out
    assert "skip GET /submission?submission_id=...: no submission listed" in out
    assert "skip GET /projection/{projectionId}: no projection listed" in out


@pytest.mark.parametrize(
    ("options", "corrupt", "expected"),
    [
        ({}, on_items(kyc_maybe), "Items/0/kyc/result: 'maybe' is not one of"),
        (
            {"secure_transfer": True},
            on_items(kyc_maybe),
            "Items/0/kyc/result: 'maybe' is not one of",
        ),
        ({}, drop_items, "(root): 'Items' is a required property"),
        (
            {},
            lowercase_forbidden,
            'body is {"message":"forbidden"}, expected {"message":"Forbidden"}',
        ),
    ],
    ids=["kyc-result", "kyc-result-secure", "no-Items", "forbidden-text"],
)
def test_a_broken_stand_in_fails_and_names_the_field(
    capsys: pytest.CaptureFixture[str], options: dict[str, Any], corrupt: Corrupt, expected: str
) -> None:
    with stand_in(seeded(**options), corrupt) as (url, _):
        assert verify(url) == 1
    out = capsys.readouterr().out
    failures = [line for line in out.splitlines() if line.startswith("FAIL")]
    assert failures and all(expected in line for line in failures), out
    assert not summary(out).endswith(" 0 failed")


def test_json_report(capsys: pytest.CaptureFixture[str]) -> None:
    with stand_in(seeded(), on_items(kyc_maybe)) as (url, _):
        assert verify(url, "--json") == 1
    report = json.loads(capsys.readouterr().out)
    assert report["failed"] >= 1 and report["total"] == 24 and report["secure"] is False
    failed = [c for c in report["checks"] if c["result"] == "fail"]
    assert failed[0]["request"] == "GET /submission?count=2"
    assert failed[0]["problems"][0].startswith("Items/0/kyc/result: ")


def test_an_unreachable_server_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    url = f"http://127.0.0.1:{free_port()}/v3"
    assert verify(url, "--timeout", "2") == 2
    captured = capsys.readouterr()
    assert f"cannot reach {url}" in captured.err
    assert "ConnectError" in captured.err
    assert "checks" not in captured.out


def test_the_base_url_must_end_in_v3(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        verify("http://127.0.0.1:8080/")
    assert exc.value.code == 2
    assert "ending in /v3" in capsys.readouterr().err


@pytest.mark.parametrize("options", [{}, {"secure_transfer": True}], ids=["plain", "secure"])
def test_only_get_requests_are_sent(
    capsys: pytest.CaptureFixture[str], options: dict[str, Any]
) -> None:
    with stand_in(seeded(**options)) as (url, proxy):
        assert verify(url) == 0
    checks = int(summary(capsys.readouterr().out).split()[0])
    assert len(proxy.methods) == checks
    assert set(proxy.methods) == {"GET"}


def test_a_wrong_api_key_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    with LiveServer(seeded()) as live:
        assert main(["--base-url", live.base_url, "--api-key", "not-the-key"]) == 1
    assert "the server does not accept this --api-key" in capsys.readouterr().out


def test_statuses_come_from_api_json() -> None:
    assert listed_schemas("GET", "/v3/submission", 200) == [
        "get_submission_response.json",
        "encrypted_response.json",
    ]
    assert listed_schemas("GET", "/v3/projection/abc", 404) == ["error_message.json"]
    assert listed_schemas("GET", "/v3/projection", 400) is None
