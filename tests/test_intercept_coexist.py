"""idv_mock.mock() beside what users already run: respx, pytest-httpx, responses,
Starlette's TestClient, and the plugin's own fixtures (issue 18)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
import requests
import responses
import respx
from pytest_httpx import HTTPXMock
from starlette.testclient import TestClient

import idv_mock
from idv_mock import Service, ServiceConfig
from integrator import httpx_client, requests_client

REAL = "https://rest-api.argosidentity.com/v3"
OTHER = "https://payments.example.com/api"
KEY = "mock-api-key"
HEADERS = {"x-api-key": KEY}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def count(page: Any) -> int:
    return len(page["Items"])


# --- respx ---


def test_respx_inside_a_mock_block() -> None:
    with idv_mock.mock(seed_count=2), respx.mock(base_url=OTHER) as router:
        route = router.get("/charge").respond(201, json={"charged": True})
        assert httpx.get(f"{OTHER}/charge").json() == {"charged": True}
        assert count(httpx_client.list_submissions(KEY)) == 2
        assert route.call_count == 1


def test_a_mock_inside_a_respx_block() -> None:
    with respx.mock(base_url=OTHER) as router, idv_mock.mock(seed_count=2):
        router.get("/charge").respond(200, json={"charged": False})
        assert httpx.get(f"{OTHER}/charge").json() == {"charged": False}
        assert count(httpx_client.list_submissions(KEY)) == 2


@pytest.mark.anyio
async def test_respx_and_the_mock_with_an_async_client() -> None:
    async with idv_mock.mock(seed_count=3):
        with respx.mock(base_url=OTHER) as router:
            router.get("/charge").respond(200, json={"async": True})
            async with httpx.AsyncClient() as client:
                assert (await client.get(f"{OTHER}/charge")).json() == {"async": True}
                assert count((await client.get(f"{REAL}/submission", headers=HEADERS)).json()) == 3


# --- pytest-httpx ---


def test_pytest_httpx_inside_a_mock_block(httpx_mock: HTTPXMock) -> None:
    httpx_mock.add_response(url=f"{OTHER}/charge", json={"charged": True})
    with idv_mock.mock(seed_count=2):
        assert httpx.get(f"{OTHER}/charge").json() == {"charged": True}
        assert count(httpx_client.list_submissions(KEY)) == 2


@pytest.mark.httpx_mock(
    should_mock=lambda request: request.url.host != "rest-api.argosidentity.com"
)
def test_pytest_httpx_set_up_after_the_fixture(idv_mocked: Service, httpx_mock: HTTPXMock) -> None:
    """pytest-httpx on top answers everything unless ``should_mock`` lets the API through."""
    httpx_mock.add_response(url=f"{OTHER}/charge", json={"charged": True})
    assert httpx.get(f"{OTHER}/charge").json() == {"charged": True}
    assert count(httpx_client.list_submissions(KEY, count=5)) == 5


# --- responses ---


def test_responses_inside_a_mock_block() -> None:
    """responses answers its URLs; httpx still reaches the mock. Calls requests makes to the
    API inside a responses block are refused by responses (it refuses any unregistered URL)."""
    with idv_mock.mock(seed_count=2), responses.RequestsMock() as rsps:
        rsps.get(f"{OTHER}/charge", json={"charged": True})
        assert requests.get(f"{OTHER}/charge").json() == {"charged": True}
        assert count(httpx_client.list_submissions(KEY)) == 2
        with pytest.raises(requests.ConnectionError, match="Connection refused by Responses"):
            requests.get(f"{REAL}/submission", headers=HEADERS)


@responses.activate
def test_a_mock_inside_responses_serves_requests_too() -> None:
    responses.get(f"{OTHER}/charge", json={"charged": True})
    with idv_mock.mock(seed_count=4):
        assert requests.get(f"{OTHER}/charge").json() == {"charged": True}
        assert count(requests_client.IdvClient(KEY).list_submissions()) == 4


# --- Starlette TestClient and the plugin's fixtures ---


def test_starlette_testclient_inside_a_mock_block() -> None:
    own = Service(ServiceConfig(seed_count=1))
    with idv_mock.mock(seed_count=3), TestClient(idv_mock.create_app(own)) as client:
        assert count(client.get("/v3/submission", headers=HEADERS).json()) == 1
        assert count(httpx_client.list_submissions(KEY)) == 3
        real_host = TestClient(idv_mock.create_app(own), base_url=REAL.removesuffix("/v3"))
        assert count(real_host.get("/v3/submission", headers=HEADERS).json()) == 1


def test_idv_client_inside_a_mock_block(idv_client: httpx.Client) -> None:
    with idv_mock.mock(seed_count=2):
        assert count(idv_client.get("/submission", params={"count": 100}).json()) == 50
        assert count(httpx_client.list_submissions(KEY, count=100)) == 2


def test_idv_mocked_serves_the_fixture_service(
    idv_mocked: Service, idv_client: httpx.Client
) -> None:
    sub = idv_mocked.create_submission("default", {"userid": "u-fixture"})
    page = requests_client.IdvClient(KEY).list_submissions(userid="u-fixture")
    assert page["Items"][0]["userid"] == "u-fixture"
    httpx_client.edit_submission(KEY, sub["submission_id"], "admin@example.com", {"memo": "m"})
    seen = idv_client.get("/submission", params={"submission_id": sub["submission_id"]})
    assert seen.json()["Items"][0]["memo"]["text"] == "m"


def test_idv_mocked_starts_from_the_seeded_state(idv_mocked: Service) -> None:
    assert count(httpx_client.list_submissions(KEY, count=100)) == 50
    calls = idv_mocked.project("default").journal.find("GET", "/v3/submission")
    assert len(calls) == 1


@pytest.mark.anyio
async def test_idv_mocked_with_an_async_client(
    idv_mocked: Service, idv_async_client: httpx.AsyncClient
) -> None:
    assert count(await httpx_client.list_submissions_async(KEY, count=3)) == 3
    assert (await idv_async_client.get("/projection")).json()["items"] == []
