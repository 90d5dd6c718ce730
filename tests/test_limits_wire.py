"""Size limits on what actually arrives (issue 14, defect 5): chunked bodies are counted,
headers are capped, the control API has a limit of its own, the journal keeps no giant."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from starlette.testclient import TestClient

from conftest import LiveServer, snapshot
from idv_mock import Service
from idv_mock.api import limits

TOO_LARGE = {"message": "Request body too large (limit 1 MiB)"}
HEADERS_TOO_LARGE = {"message": "Request header fields too large (limit 16 KiB)"}


def chunks(total: int, size: int = 64 * 1024) -> Iterator[bytes]:
    sent = 0
    while sent < total:
        part = min(size, total - sent)
        sent += part
        yield b"x" * part


@pytest.mark.live
def test_a_chunked_body_over_the_limit_is_413_and_changes_nothing(
    live: LiveServer, service: Service
) -> None:
    """The probe: the same 3 MiB PATCH was 413 with Content-Length and 200 chunked."""
    before = snapshot(service)
    with httpx.Client(timeout=20) as client:
        r = client.patch(
            f"{live.base_url}/submission",
            content=chunks(3 * 1024 * 1024),
            headers={"x-api-key": "mock-api-key", "content-type": "application/json"},
        )
    assert (r.status_code, r.json()) == (413, TOO_LARGE)
    assert snapshot(service) == before
    [entry] = service.calls.journal("default")
    assert entry["status"] == 413


@pytest.mark.live
def test_a_chunked_body_under_the_limit_is_read_whole(live: LiveServer, service: Service) -> None:
    sid = service.create_submission("default")["submission_id"]
    body = b'{"submissionId": "%s", "admin": "admin@example.com", "data": {"memo": "hi"}}' % (
        sid.encode()
    )
    with httpx.Client(timeout=20) as client:
        r = client.patch(
            f"{live.base_url}/submission",
            content=iter([body[:10], body[10:]]),
            headers={"x-api-key": "mock-api-key", "content-type": "application/json"},
        )
    assert (r.status_code, r.json()) == (200, {"message": "success to edit.", "statusCode": 200})
    assert service.stored_submission("default", sid)["memo"]["text"] == "hi"


@pytest.mark.live
def test_headers_over_sixteen_kib_are_431_and_not_journaled(
    live: LiveServer, service: Service
) -> None:
    with httpx.Client(timeout=20) as client:
        url = f"{live.base_url}/submission"
        big = client.get(url, headers={"x-api-key": "mock-api-key", "x-big": "a" * 17_000})
        small = client.get(url, headers={"x-api-key": "mock-api-key", "x-big": "a" * 15_000})
    assert (big.status_code, big.json()) == (431, HEADERS_TOO_LARGE)
    assert small.status_code == 200
    assert [e["status"] for e in service.calls.journal("default")] == [200]


def test_the_control_api_has_a_limit_of_its_own(
    client: TestClient, service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The state import's: 512 MiB in truth (it carries whole states); 1 KiB here."""
    monkeypatch.setattr(limits, "MAX_STATE_BODY", 1024)
    before = snapshot(service)
    r = client.put("/__admin/state", content=b"{" + b" " * 2000 + b"}")
    too_large = {"message": "Request body too large (limit 1 KiB)", "errors": []}
    assert (r.status_code, r.json()) == (413, too_large)
    assert snapshot(service) == before
    assert (
        client.post("/__admin/projects", json={"project_id": "p", "api_key": "k"}).status_code
        == 201
    )


def test_in_process_bodies_are_counted_too(client: TestClient, service: Service) -> None:
    """A body whose content-length is absent (a generator) is still counted."""
    before = snapshot(service)
    r = client.patch("/v3/submission", content=chunks(2 * 1024 * 1024))
    assert (r.status_code, r.json()) == (413, TOO_LARGE)
    assert snapshot(service) == before
