"""Property tests of the strategies for the token pool, client review, PUT image and
migration (issue 30) against the in-process app.

Valid draws succeed and change what they say; invalid draws get exactly the drawn status
and body, and leave the state as it was. The drawn texts are compared with the literal
texts of endpoints.md and api-v3.md 7.2 written below, never with ``idv_mock.ground.errors``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import orjson
from hypothesis import HealthCheck, event, given, settings
from hypothesis.strategies import SearchStrategy
from starlette.testclient import TestClient

from conformance import check_response
from conftest import assert_refused, snapshot
from idv_mock import Service, ServiceConfig, create_app
from idv_mock.strategies import (
    Invalid,
    invalid_migration_requests,
    invalid_put_image_requests,
    invalid_review_requests,
    invalid_token_requests,
    migration_requests,
    put_image_requests,
    review_requests,
    send,
    token_requests,
)

EXAMPLES = 25 if os.environ.get("CI") else 40
SETTINGS = settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
ADMINS = ["admin@example.com", "second@example.com"]
TEXTS = {  # endpoints.md and api-v3.md 7.2, verbatim (the mock's own token texts: README)
    "Project not found.",
    "admin is required.",
    "Access denied. The admin is not registered in the project.",
    "Submission Id is required.",
    "Invalid Submission Id.",
    "Invalid status",
    "Invalid data format.",
    "Reject comment is required",
    "Fail to parse the input data.",
    "Required input data is missing.",
    "Cannot find project info.",
    "Invalid admin.",
    "Invalid submission.",
    "At least one image parameter is required.",
    "The idType is required when submit idImage or idBackImage.",
    "Invalid IdType.",
    "Invalid payload",
    "Required input data is missing",
    "Invalid project",
    "Invalid admin",
    "invalid parameter: ",
    "invalid format: ",
    "tokenId must be a non-empty array of strings",
    "tokenId must be 8 to 64 characters long: ",
    "Invalid tokenId format: ",
    "Too many tokenIds in one request (limit 500)",
}


@contextmanager
def app() -> Iterator[tuple[Service, TestClient]]:
    service = Service(ServiceConfig(seed_count=6, admins=tuple(ADMINS)))
    with TestClient(create_app(service), headers={"x-api-key": "mock-api-key"}) as client:
        client.event_hooks["response"] = [check_response]
        yield service, client
    service.close()


def _text(body: dict[str, Any]) -> str:
    return str(body.get("message", body.get("errorMessage", "")))


def run_invalid(strategy: SearchStrategy[Invalid], service: Service, client: TestClient) -> None:
    @SETTINGS
    @given(strategy)
    def check(invalid: Invalid) -> None:
        event(invalid.kind)
        text = _text(invalid.body)
        assert any(text == t or (t.endswith(" ") and text.startswith(t)) for t in TEXTS), text
        before = snapshot(service)
        assert_refused(send(client, invalid), invalid.status, invalid.body, note=invalid.kind)
        assert snapshot(service) == before, invalid.kind

    check()


def pending_ids(service: Service, count: int = 3) -> list[str]:
    made = [
        service.create_submission("default", {"kyc": {"result": "pending"}}) for _ in range(count)
    ]
    return [str(s["submission_id"]) for s in made]


def test_invalid_token_requests() -> None:
    with app() as (service, client):
        run_invalid(invalid_token_requests(), service, client)
        service.tokens.register(service.project("default"), ["keep-token-1"])
        run_invalid(invalid_token_requests(method="DELETE"), service, client)


def test_valid_token_requests_fill_the_pool() -> None:
    with app() as (service, client):

        @SETTINGS
        @given(token_requests())
        def check(body: dict[str, Any]) -> None:
            service.reset()
            r = client.post("/v3/submission/tokens", content=orjson.dumps(body))
            assert r.status_code == 200, r.text
            assert set(service.project("default").tokens.entries) == set(body["tokenId"])

        check()


def test_invalid_review_requests() -> None:
    with app() as (service, client):
        run_invalid(invalid_review_requests(pending_ids(service), ADMINS), service, client)


def test_valid_review_requests_decide() -> None:
    with app() as (service, client):
        ids = pending_ids(service, 1)

        @SETTINGS
        @given(review_requests(ids, ADMINS))
        def check(body: dict[str, Any]) -> None:
            service.reset()
            service.create_submission(
                "default", {"submission_id": ids[0], "kyc": {"result": "pending"}}
            )
            r = client.post("/v3/submission/review", json=body)
            assert r.status_code == 200, r.text
            stored = service.stored_submission("default", ids[0])
            assert stored["kyc"]["result"] == body["status"] == r.json()["finalStatus"]

        check()


def test_invalid_put_image_requests() -> None:
    with app() as (service, client):
        sids = [s["submission_id"] for s in service.project("default").store]
        run_invalid(invalid_put_image_requests(sids, ADMINS), service, client)


def test_valid_put_image_requests() -> None:
    with app() as (service, client):
        sids = [s["submission_id"] for s in service.project("default").store]

        @SETTINGS
        @given(put_image_requests(sids, ADMINS))
        def check(files: dict[str, Any]) -> None:
            r = client.put("/v3/submission/image", files=files)
            assert r.status_code == 200, r.text
            sid = files["submissionId"][1]
            for slot in ("idImage", "idBackImage", "selfieImage", "addressImage"):
                if slot in files:
                    got = client.get("/v3/image", params={"submissionId": sid, "type": slot})
                    assert got.status_code == 200

        check()


def test_invalid_migration_requests() -> None:
    with app() as (service, client):
        run_invalid(invalid_migration_requests(ADMINS), service, client)


def test_valid_migration_requests_create() -> None:
    with app() as (service, client):

        @SETTINGS
        @given(migration_requests(ADMINS))
        def check(body: dict[str, Any]) -> None:
            r = client.post("/v3/submission/migration", json=body)
            assert r.status_code == 200, r.text
            stored = service.stored_submission("default", r.json()["submissionId"])
            assert (stored["email"], stored["kyc"]["result"]) == (body["email"], body["kycStatus"])
            assert stored["data"]["full_name"] == body["fullName"]

        check()
