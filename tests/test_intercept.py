"""idv_mock.mock(): integrator code on the real base URL answered in-process (issue 18)."""

from __future__ import annotations

import asyncio
import io
import socket
import subprocess
import sys
import threading
import unittest
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
import requests

import idv_mock
from idv_mock import Service, ServiceConfig
from idv_mock.ground import crypto
from idv_mock.intercept import DEFAULT_BASE_URL, UnmockedRequestError
from idv_mock.transport import ASGITransport, MergedUrls
from integrator import httpx_client, requests_client

REAL = "https://rest-api.argosidentity.com/v3"
KEY = "mock-api-key"
ADMIN = "admin@example.com"
HEADERS = {"x-api-key": KEY}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any name lookup or outgoing connection fails, as on a machine with no network."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise OSError("network blocked by the test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def flagged_person(service: Service) -> str:
    """An approved submission of watchlist entry WL-0001 (a Red Flag at threshold 80)."""
    sub = service.screening.watchlist_submission(
        "default", "WL-0001", {"kyc": {"result": "approved"}}
    )
    return str(sub["submission_id"])


def report_id(service: Service, sid: str) -> str:
    return str(service.stored_submission("default", sid)["aml"]["matches"][0]["resourceId"])


# --- the integrator clients, every /v3 operation ---


def test_requests_client_drives_every_operation(tmp_path: Path, no_network: None) -> None:
    with idv_mock.mock() as service:
        client = requests_client.IdvClient(KEY)
        page = client.list_submissions(count=3)
        assert len(page["Items"]) == 3 and "nextpageKey" in page
        sid = page["Items"][0]["submission_id"]
        assert client.get_submission(sid)["Items"][0]["submission_id"] == sid

        edited = client.edit_submission(sid, ADMIN, {"memo": "checked"})
        assert edited == {"message": "success to edit.", "statusCode": 200}
        assert service.stored_submission("default", sid)["memo"]["text"] == "checked"
        parts = client.delete_fields(sid, ["email"])
        content = f"Submission {sid} fields deleted: email"
        assert parts == {"message": "success", "content": content, "statusCode": 200}
        assert "email" not in service.stored_submission("default", sid)

        person = flagged_person(service)
        screened = client.screen_aml(person, 80)
        assert (screened["message"], screened["result"]) == ("complete to search AML.", "Red Flag")
        written = client.download_aml_report(report_id(service, person), str(tmp_path / "r.pdf"))
        assert written > 1000 and (tmp_path / "r.pdf").read_bytes()[:5] == b"%PDF-"

        service.screening.create_worklist("default", {"id": "wl-1", "name": "watch"})
        registered = client.monitor("wl-1", [person], ADMIN)
        assert (registered["successCount"], registered["failedCount"]) == (1, 0)
        record = registered["successResults"][0]["recordIds"][0]
        assert client.monitoring_record("wl-1", record)["status"] == "screenedWithMatches"
        stopped = client.stop_monitoring("wl-1", [record], ADMIN)
        assert stopped == {"message": "records deleted successfully"}

        assert client.projections() == {"items": [], "message": "Get projection list success"}
        created = client.create_projection("no_birth", ["date_of_birth"])
        assert created["message"] == "Create projection success"
        pid = created["projection_id"]
        assert client.projection(pid)["item"]["fields"] == ["date_of_birth"]
        assert [p["projection_id"] for p in client.projections()["items"]] == [pid]
        assert client.delete_projection(pid) == {"message": "Delete projection success"}

        deleted = client.delete_submission(sid)
        assert deleted["content"] == f"Submission {sid} deleted successfully."
        assert service.stored_submission("default", sid)["status"] == "Deleted Submission"


def test_httpx_client_drives_every_operation(no_network: None) -> None:
    with idv_mock.mock() as service:
        page = httpx_client.list_submissions(KEY, count=2)
        sid = page["Items"][1]["submission_id"]
        assert httpx_client.get_submission(KEY, sid)["Items"][0]["submission_id"] == sid
        edited = httpx_client.edit_submission(KEY, sid, ADMIN, {"memo": "ok"})
        assert edited == {"message": "success to edit.", "statusCode": 200}
        parts = httpx_client.delete_fields(KEY, sid, ["email", "ocr"])
        assert parts["content"] == f"Submission {sid} fields deleted: email,ocr"

        person = flagged_person(service)
        assert httpx_client.screen_aml(KEY, person, 80)["result"] == "Red Flag"
        kind, pdf = httpx_client.download_aml_report(KEY, report_id(service, person))
        assert kind == "application/pdf" and pdf.startswith(b"%PDF-")

        service.screening.create_worklist("default", {"id": "wl-2", "name": "watch"})
        registered = httpx_client.monitor(KEY, "wl-2", [person], ADMIN)
        record = registered["successResults"][0]["recordIds"][0]
        read = httpx_client.monitoring_record(KEY, "wl-2", record)
        assert (read["id"], read["submissionId"]) == (record, person)
        stopped = httpx_client.stop_monitoring(KEY, "wl-2", [record], ADMIN)
        assert stopped == {"message": "records deleted successfully"}

        pid = httpx_client.create_projection(KEY, "hide_dob", ["date_of_birth"])["projection_id"]
        assert httpx_client.projection(KEY, pid)["item"]["name"] == "hide_dob"
        assert len(httpx_client.projections(KEY)["items"]) == 1
        assert httpx_client.delete_projection(KEY, pid) == {"message": "Delete projection success"}
        assert httpx_client.delete_submission(KEY, sid)["statusCode"] == 200
        paths = [call["path"] for call in service.project("default").journal.find(None, None)]
        assert paths[0] == "/v3/submission" and "/v3/report/aml" in paths


@pytest.mark.anyio
async def test_async_httpx_client_is_answered(no_network: None) -> None:
    async with idv_mock.mock(seed_count=4):
        page = await httpx_client.list_submissions_async(KEY, count=10)
    assert len(page["Items"]) == 4


def test_the_guard_really_blocks_the_network(no_network: None) -> None:
    with pytest.raises(httpx.ConnectError):
        httpx_client.list_submissions(KEY)
    with pytest.raises(requests.ConnectionError):
        requests_client.IdvClient(KEY).list_submissions()


# --- forms: context manager, decorator, classes ---


def test_default_project_is_the_one_serve_starts_with() -> None:
    with idv_mock.mock() as service:
        project = service.project("default")
        assert (project.api_key, project.admins) == (KEY, [ADMIN])
        mocked = httpx.get(f"{DEFAULT_BASE_URL}/submission?count=100", headers=HEADERS)
    serve = ASGITransport(idv_mock.create_app(Service(ServiceConfig())))
    with httpx.Client(transport=serve, base_url="http://serve/v3", headers=HEADERS) as client:
        served = client.get("/submission?count=100")
    assert len(mocked.json()["Items"]) == 50
    assert mocked.content == served.content


def test_project_options_change_the_default_project() -> None:
    with idv_mock.mock(api_key="k2", admin="ops@example.com", seed_count=3, random_seed=9) as s:
        assert s.project("default").admins == ["ops@example.com"]
        assert httpx.get(f"{REAL}/submission", headers=HEADERS).status_code in (400, 403)
        page = httpx.get(f"{REAL}/submission", headers={"x-api-key": "k2"}).json()
    assert len(page["Items"]) == 3


def test_service_and_project_options_exclude_each_other() -> None:
    with pytest.raises(TypeError, match="either service= or project options"):
        idv_mock.mock(service=Service(ServiceConfig(seed_count=0)), seed_count=3)


def test_given_service_is_served_and_left_open() -> None:
    service = Service(ServiceConfig(seed_count=0))
    service.create_submission("default", {"userid": "u-given"})
    with idv_mock.mock(service=service) as served:
        assert served is service
        page = requests.get(f"{REAL}/submission", params={"userid": "u-given"}, headers=HEADERS)
    assert page.json()["Items"][0]["userid"] == "u-given"
    service.create_submission("default")  # still usable: the mock did not close it


shared = idv_mock.mock(seed_count=2)


@shared
def test_decorated_function() -> None:
    assert len(requests_client.IdvClient(KEY).list_submissions()["Items"]) == 2
    assert len(shared.service.project("default").store) == 2


@pytest.mark.anyio
@idv_mock.mock(seed_count=1)
async def test_decorated_coroutine() -> None:
    async with httpx.AsyncClient(base_url=REAL, headers=HEADERS) as client:
        page = (await client.get("/submission")).json()
    assert len(page["Items"]) == 1


@idv_mock.mock(seed_count=5)
class TestDecoratedClass:
    """Each test creates one policy and sees one: no state leaks from the other test."""

    def test_one(self) -> None:
        httpx_client.create_projection(KEY, "first", ["gender"])
        assert [p["name"] for p in httpx_client.projections(KEY)["items"]] == ["first"]

    def test_two(self) -> None:
        httpx_client.create_projection(KEY, "second", ["gender"])
        assert [p["name"] for p in httpx_client.projections(KEY)["items"]] == ["second"]


@idv_mock.mock(seed_count=0)
class DecoratedTestCase(unittest.TestCase):
    def setUp(self) -> None:
        self.client = requests_client.IdvClient(KEY)
        self.created = self.client.create_projection("from_setup", ["gender"])

    def test_state_from_set_up_is_seen_by_the_test(self) -> None:
        listed = self.client.projections()["items"]
        self.assertEqual([p["name"] for p in listed], ["from_setup"])


def test_the_patches_are_undone_on_exit() -> None:
    before = (
        httpx.HTTPTransport.handle_request,
        requests.adapters.HTTPAdapter.send,
        httpx.Client._merge_url,
    )
    with idv_mock.mock():
        assert httpx.HTTPTransport.handle_request is not before[0]
        assert httpx.Client._merge_url is not before[2]
    after = (
        httpx.HTTPTransport.handle_request,
        requests.adapters.HTTPAdapter.send,
        httpx.Client._merge_url,
    )
    assert after == before


def test_a_base_url_client_merges_as_httpx_does(no_network: None) -> None:
    """The merge layer keeps a client's merged URLs: the same URLs as httpx's own merge,
    merged again when the client's base URL changes, for mocked and other hosts alike."""
    plain = httpx.Client(base_url=REAL)
    expected = [plain.build_request("GET", u).url for u in ("/submission", "projection", "")]
    with idv_mock.mock(seed_count=1), httpx.Client(base_url=REAL, headers=HEADERS) as client:
        merged = [client.build_request("GET", u).url for u in ("/submission", "projection", "")]
        assert merged == expected
        again = client._merge_url("/submission")
        assert again is client._merge_url("/submission")  # kept, not parsed again
        assert client.get("/submission").json()["Items"]
        client.base_url = httpx.URL("https://elsewhere.example/v9")
        assert str(client.build_request("GET", "/x").url) == "https://elsewhere.example/v9/x"
        with pytest.raises(httpx.ConnectError):
            client.get("/x")  # passed through to the network, which this test has not


def test_a_merge_that_outlives_its_base_url_is_not_kept() -> None:
    """Another thread replaces the client's base URL (and calls) while a merge runs: the
    merge made with the old base must not answer later calls on the new one."""
    cache = MergedUrls()
    one, two = httpx.URL("https://one.example/v3/"), httpx.URL("https://two.example/v3/")

    def merge_meanwhile_replaced(url: str) -> httpx.URL:
        cache.merge(two, "other", two.join)  # the other thread's call, on the new base
        return one.join(url)

    assert cache.merge(one, "submission", merge_meanwhile_replaced) == one.join("submission")
    assert cache.merge(two, "submission", two.join) == two.join("submission")


def test_a_mock_cannot_be_entered_twice_at_once() -> None:
    m = idv_mock.mock(seed_count=0)
    with m, pytest.raises(RuntimeError, match="already active"):
        m.start()
    with pytest.raises(RuntimeError, match="not active"):
        _ = m.service


def test_clients_made_before_the_mock_are_covered() -> None:
    client = httpx.Client(base_url=REAL, headers=HEADERS)
    session = requests.Session()
    with idv_mock.mock(seed_count=1):
        assert client.get("/submission").status_code == 200
        assert session.get(f"{REAL}/submission", headers=HEADERS).status_code == 200
    client.close()


# --- pass-through ---


def test_other_urls_pass_through(no_network: None) -> None:
    with idv_mock.mock(seed_count=0):
        with pytest.raises(httpx.ConnectError):
            httpx.get("https://example.org/")
        with pytest.raises(requests.ConnectionError):
            requests.get("https://rest-api.argosidentity.com/v2/submission")


def test_passthrough_false_names_the_url() -> None:
    url = "https://example.org/health"
    with idv_mock.mock(seed_count=0, passthrough=False):
        with pytest.raises(UnmockedRequestError, match=r"https://example\.org/health"):
            httpx.get(url)
        with pytest.raises(UnmockedRequestError, match=r"passthrough=False"):
            requests.get(url)

        async def call() -> None:
            async with httpx.AsyncClient() as client:
                await client.get(url)

        with pytest.raises(UnmockedRequestError, match=r"example\.org"):
            asyncio.run(call())
        assert httpx.get(f"{REAL}/submission", headers=HEADERS).status_code == 200


# --- bodies, secure transfer, redirects, errors ---


def test_secure_data_transfer_round_trip() -> None:
    with idv_mock.mock(seed_count=0) as service:
        spec = {"project_id": "sec", "api_key": "sec-key", "admins": [ADMIN]}
        service.create_project({**spec, "options": {"secure_transfer": True}})
        sid = service.create_submission("sec")["submission_id"]
        query = {"data": crypto.encrypt({"submission_id": sid}, "sec-key")}
        answer = requests.get(f"{REAL}/submission", params=query, headers={"x-api-key": "sec-key"})
        assert answer.json()["isEncrypted"] is True
        assert crypto.decrypt(answer.json()["data"], "sec-key")["Items"][0]["submission_id"] == sid
        body = {"submissionId": sid, "admin": ADMIN, "data": {"memo": "secret"}}
        edit = httpx.patch(
            f"{REAL}/submission",
            data={"data": crypto.encrypt(body, "sec-key")},
            headers={"x-api-key": "sec-key"},
        )
        assert crypto.decrypt(edit.json()["data"], "sec-key") == {
            "message": "success to edit.",
            "statusCode": 200,
        }


def test_streamed_and_file_uploads_reach_the_app() -> None:
    def body(name: str) -> bytes:
        return f'{{"name": "{name}", "mode": "exclude", "fields": ["gender"]}}'.encode()

    headers = {**HEADERS, "content-type": "application/json"}
    with idv_mock.mock(seed_count=0):
        requests.post(f"{REAL}/projection", data=iter([body("chunked")]), headers=headers)
        requests.post(f"{REAL}/projection", data=io.BytesIO(body("from_file")), headers=headers)
        httpx.post(f"{REAL}/projection", content=iter([body("httpx_stream")]), headers=headers)
        listed = httpx.get(f"{REAL}/projection", headers=HEADERS).json()["items"]
    assert [p["name"] for p in listed] == ["chunked", "from_file", "httpx_stream"]


def redirect_rule(service: Service) -> None:
    """A GET with ``count=1`` answers 307 to the same call with ``count=2``."""
    target = f"{REAL}/submission?count=2"
    rule = {
        "match": {"method": "GET", "path": "/v3/submission", "query": {"count": "1"}},
        "respond": {"status": 307, "body": {}, "headers": {"location": target}},
    }
    service.calls.add_fault("default", rule)


def test_redirects_are_followed_through_the_mock() -> None:
    with idv_mock.mock() as service:
        redirect_rule(service)
        url = f"{REAL}/submission?count=1"
        followed = httpx.get(url, headers=HEADERS, follow_redirects=True)
        assert len(followed.json()["Items"]) == 2
        assert [r.status_code for r in followed.history] == [307]
        answer = requests.get(url, headers=HEADERS)
        assert len(answer.json()["Items"]) == 2 and answer.history[0].status_code == 307
        assert httpx.get(url, headers=HEADERS).headers["location"].endswith("count=2")


def reset_rule(service: Service) -> None:
    rule = {"match": {"path": "/v3/submission"}, "fault": "connection_reset"}
    service.calls.add_fault("default", rule)


def test_connection_reset_is_each_clients_own_error() -> None:
    with idv_mock.mock() as service:
        reset_rule(service)
        with pytest.raises(httpx.RemoteProtocolError) as raised:
            httpx.get(f"{REAL}/submission", headers=HEADERS)
        assert str(raised.value.request.url) == f"{REAL}/submission"
        with pytest.raises(requests.ConnectionError):
            requests.get(f"{REAL}/submission", headers=HEADERS)
        with pytest.raises(requests.exceptions.ChunkedEncodingError):  # what a socket gives
            requests.get(f"{REAL}/submission", headers=HEADERS)

        async def call() -> None:
            async with httpx.AsyncClient(headers=HEADERS) as client:
                await client.get(f"{REAL}/submission")

        with pytest.raises(httpx.RemoteProtocolError):
            asyncio.run(call())


def broken_projections(service: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args: Any, **kwargs: Any) -> Any:
        raise ZeroDivisionError("a bug inside the app")

    monkeypatch.setattr(service, "create_projection", boom)


def test_app_exceptions_reach_the_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    body = {"name": "p", "mode": "exclude", "fields": ["gender"]}
    with idv_mock.mock(seed_count=0) as service:
        broken_projections(service, monkeypatch)
        with pytest.raises(ZeroDivisionError):
            httpx.post(f"{REAL}/projection", json=body, headers=HEADERS)
        with pytest.raises(ZeroDivisionError):
            requests.post(f"{REAL}/projection", json=body, headers=HEADERS)


def test_app_exceptions_as_500_on_request(monkeypatch: pytest.MonkeyPatch) -> None:
    body = {"name": "p", "mode": "exclude", "fields": ["gender"]}
    with idv_mock.mock(seed_count=0, raise_app_exceptions=False) as service:
        broken_projections(service, monkeypatch)
        assert httpx.post(f"{REAL}/projection", json=body, headers=HEADERS).status_code == 500
        assert requests.post(f"{REAL}/projection", json=body, headers=HEADERS).status_code == 500


# --- other base URLs, nesting, threads ---


def test_a_base_url_with_another_path_is_served_under_v3() -> None:
    base = "http://idv.internal:8000/kyc/api"
    with idv_mock.mock(base, seed_count=2) as service:
        answer = httpx.get(f"{base}/submission", headers=HEADERS)
        assert len(answer.json()["Items"]) == 2
        assert str(answer.request.url) == f"{base}/submission"
        assert requests.get(f"{base}/submission?count=1", headers=HEADERS).status_code == 200
        journal = service.project("default").journal.find("GET", None)
        assert {call["path"] for call in journal} == {"/v3/submission"}


def test_nested_mocks_with_different_base_urls(no_network: None) -> None:
    other = "https://staging.example.com/v3"
    with idv_mock.mock(seed_count=1) as outer:
        with idv_mock.mock(other, seed_count=2) as inner:
            assert inner is not outer
            assert len(httpx.get(f"{REAL}/submission", headers=HEADERS).json()["Items"]) == 1
            assert len(requests.get(f"{other}/submission", headers=HEADERS).json()["Items"]) == 2
        with pytest.raises(httpx.ConnectError):
            httpx.get(f"{other}/submission", headers=HEADERS)
        assert len(httpx.get(f"{REAL}/submission", headers=HEADERS).json()["Items"]) == 1


def test_the_innermost_mock_of_a_url_answers() -> None:
    with idv_mock.mock(seed_count=1), idv_mock.mock(seed_count=3):
        assert len(httpx.get(f"{REAL}/submission", headers=HEADERS).json()["Items"]) == 3


def test_a_mock_stopped_out_of_order_stops_answering() -> None:
    first, second = idv_mock.mock(seed_count=1), idv_mock.mock("https://b.example/v3")
    first.start()
    second.start()
    first.stop()  # its layer stays under the second's, inert
    strict = idv_mock.mock("https://c.example/v3", passthrough=False)
    with strict, pytest.raises(UnmockedRequestError):
        httpx.get(f"{REAL}/submission", headers=HEADERS)
    assert httpx.get("https://b.example/v3/submission", headers=HEADERS).status_code == 200
    second.stop()


def test_calls_from_a_thread_pool_reach_the_mock() -> None:
    with idv_mock.mock(seed_count=6), ThreadPoolExecutor(4) as pool:
        pages = list(pool.map(lambda _: httpx_client.list_submissions(KEY), range(8)))
        sessions = list(pool.map(lambda _: requests_client.IdvClient(KEY).projections(), range(4)))
    assert [len(p["Items"]) for p in pages] == [6] * 8
    assert all(s["items"] == [] for s in sessions)


def test_mocks_started_in_pool_threads_answer_their_own_thread() -> None:
    started = threading.Barrier(3)

    def worker(count: int) -> int:
        with idv_mock.mock(seed_count=count):
            started.wait(timeout=30)  # all three mocks active at once
            page = requests_client.IdvClient(KEY).list_submissions(count=50)
            started.wait(timeout=30)
            return len(page["Items"])

    with ThreadPoolExecutor(3) as pool:
        assert list(pool.map(worker, [1, 2, 3])) == [1, 2, 3]


# --- optional requests, light import ---


def test_without_requests_httpx_is_still_mocked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "requests", None)
    monkeypatch.delitem(sys.modules, "idv_mock.intercept._requests", raising=False)
    monkeypatch.delattr(idv_mock.intercept, "_requests", raising=False)
    send = sys.modules["requests.adapters"].HTTPAdapter.send
    with idv_mock.mock(seed_count=1):
        assert sys.modules["requests.adapters"].HTTPAdapter.send is send
        assert httpx.get(f"{REAL}/submission", headers=HEADERS).status_code == 200


def test_importing_idv_mock_does_not_import_the_interception() -> None:
    code = (
        "import sys, idv_mock\n"
        "assert 'idv_mock.intercept' not in sys.modules and 'requests' not in sys.modules\n"
        "assert callable(idv_mock.mock) and 'idv_mock.intercept' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
