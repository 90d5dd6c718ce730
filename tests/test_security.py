"""Issue 27, over HTTP: no webhook reaches the server itself or the metadata address, no
foreign page drives the control API, and every limit holds end to end."""

from __future__ import annotations

import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from pytest_idv_mock.fixtures import serve_in_thread

from conftest import ServeProcess, free_port
from idv_mock import Service, ServiceConfig, create_app
from idv_mock.api import limits
from idv_mock.delivery.webhooks import SETTLED, HostRule

KEY = {"x-api-key": "mock-api-key"}
JSON_TYPE = {"content-type": "application/json"}
EVIL = "http://evil.example"
REAL_GETADDRINFO = socket.getaddrinfo


class Live:
    """The mock served on a known port, its service knowing that port (as ``serve`` does)."""

    def __init__(self, host: str = "127.0.0.1", **app: Any) -> None:
        self.port = free_port()
        self.service = Service(
            ServiceConfig(
                seed_count=3,
                webhook_backoff=(0.01, 0.01),
                server_port=self.port,
                server_host=host,
            )
        )
        self.app = create_app(self.service, bound_host=host, **app)
        self.base = f"http://127.0.0.1:{self.port}"
        self._serving = serve_in_thread(self.app, host=host, port=self.port)

    def __enter__(self) -> Live:
        self._serving.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._serving.__exit__(None, None, None)
        self.service.close()


@pytest.fixture
def live() -> Iterator[Live]:
    with Live() as server:
        yield server


def fake_names(monkeypatch: pytest.MonkeyPatch, names: dict[str, Callable[[], str]]) -> None:
    """Names a resolver answers (each call asks its function: a rebinding name changes)."""

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(host, bytes):
            host = host.decode()
        if host in names:
            return REAL_GETADDRINFO(names[host](), port, *args, **kwargs)
        return REAL_GETADDRINFO(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


def fire(base: str, url: str, headers: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Point the default project's webhook at ``url``, make an event, and return its
    deliveries once settled."""
    admin = f"{base}/__admin/projects/default"
    extra = headers or {}
    r = httpx.patch(admin, json={"options": {"webhook_url": url}}, headers=extra)
    assert r.status_code == 200, r.text
    r = httpx.post(
        admin + "/submissions?fire_webhooks=true",
        json={"kyc": {"result": "approved"}},
        headers=extra,
    )
    assert r.status_code == 201, r.text
    for _ in range(300):
        records = httpx.get(admin + "/webhooks", headers=extra).json()["deliveries"]
        if records and all(d["status"] in SETTLED for d in records):
            return list(records)
        time.sleep(0.02)
    raise AssertionError("the deliveries did not settle")


def refused_all(records: list[dict[str, Any]], why: str) -> None:
    assert {d["status"] for d in records} == {"failed"}
    for delivery in records:
        [attempt] = delivery["attempts"]  # refused: never sent, not retried
        assert attempt["error"].startswith("refused: ") and why in attempt["error"], attempt


# --- 1. a webhook can no longer reach its own server by another spelling ---


@pytest.mark.parametrize("host", ["127.1", "2130706433", "0x7f000001", "self.test"])
def test_a_webhook_at_the_servers_own_reset_is_refused_in_every_spelling(
    live: Live, host: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_names(monkeypatch, {"self.test": lambda: "127.0.0.1"})
    records = fire(live.base, f"http://{host}:{live.port}/__admin/reset")
    refused_all(records, "is this server")
    assert live.service.submission_counts() == {"default": 4}  # not reset


def lan_address() -> str | None:
    """This machine's address on its network, if it has one beyond loopback."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("192.0.2.1", 9))  # no packet is sent: the route is looked up
            address = str(probe.getsockname()[0])
    except OSError:
        return None
    return None if address.startswith("127.") or address == "0.0.0.0" else address


def test_bound_to_every_address_the_machines_own_address_is_the_server_too() -> None:
    address = lan_address()
    if address is None:
        pytest.skip("this machine has no address beyond loopback")
    token = {"x-idv-mock-admin-token": "t0ken"}
    with Live("0.0.0.0", exposed=True, admin_token="t0ken") as server:
        records = fire(server.base, f"http://{address}:{server.port}/__admin/reset", token)
        refused_all(records, "is this server")
        assert server.service.submission_counts() == {"default": 4}


# --- 2. link-local (cloud metadata) addresses in every spelling ---


@pytest.mark.parametrize(
    "host",
    [
        "169.254.169.254",
        "2852039166",
        "0xa9fea9fe",
        "169.254.43518",
        "0xa9.0xfe.0xa9.0xfe",
        "metadata.test",
    ],
)
def test_link_local_addresses_are_refused_in_every_spelling(
    live: Live, host: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_names(monkeypatch, {"metadata.test": lambda: "169.254.169.254"})
    refused_all(fire(live.base, f"http://{host}/latest/meta-data"), "link-local")


@pytest.mark.parametrize("host", ["0.0.0.0", "0"])
def test_unspecified_addresses_are_refused(live: Live, host: str) -> None:
    refused_all(fire(live.base, f"http://{host}:9/hook"), "unspecified")


def test_ipv6_spellings_are_refused_by_the_rule_and_by_the_option(live: Live) -> None:
    """Webhook URLs with an IPv6 literal are refused by the rule at each attempt, in every
    spelling; since issue 39 the option takes them (a receiver on [::1] is a receiver)."""
    rule = HostRule(own_port=8080)
    for url, why in [
        ("http://[::ffff:127.0.0.1]:8080/", "is this server"),
        ("http://[::1]:8080/", "is this server"),
        ("http://[fe80::1]/", "link-local"),
        ("http://[::ffff:169.254.169.254]/", "link-local"),
        ("http://[::]:9/", "unspecified"),
    ]:
        assert why in (rule.refusal(url) or ""), url
    assert rule.refusal("http://[::1]:9000/hook") is None
    r = httpx.patch(
        f"{live.base}/__admin/projects/default",
        json={"options": {"webhook_url": "http://[fe80::1]/"}},
    )
    assert r.status_code == 200  # set, and refused at each attempt by the rule above


class Receiver:
    """A webhook receiver on loopback (another port): what integrators run."""

    def __init__(self) -> None:
        self.hosts: list[str] = []
        received = self.hosts

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["content-length"]))
                received.append(self.headers["host"])
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    yield found
    found.close()


def test_receivers_on_loopback_keep_working_and_keep_their_host_header(
    live: Live, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_names(monkeypatch, {"hooks.test": lambda: "127.0.0.1"})
    for host in ("127.0.0.1", "localhost", "hooks.test"):
        records = fire(live.base, f"http://{host}:{receiver.port}/hook")
        assert records[-1]["status"] == "delivered", records[-1]
        assert receiver.hosts[-1] == f"{host}:{receiver.port}"


def test_the_delivery_connects_to_the_address_that_was_checked(
    live: Live, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One look-up per attempt, the check's: the connection goes to the address checked
    (a rebinding name gets no second look-up to answer differently)."""
    lookups: list[str] = []

    def answer() -> str:
        lookups.append("rebind.test")
        return "127.0.0.1"

    fake_names(monkeypatch, {"rebind.test": answer})
    records = fire(live.base, f"http://rebind.test:{receiver.port}/hook")
    assert [d["status"] for d in records] == ["delivered"]  # approved (no submit before it)
    assert len(lookups) == 1
    assert receiver.hosts == [f"rebind.test:{receiver.port}"]


def test_allow_webhook_host_lets_a_refused_host_through(
    receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Live() as server:
        server.service.webhooks.host_rule = type(server.service.webhooks.host_rule)(
            receiver.port, allowed=frozenset({f"127.1:{receiver.port}"})
        )  # as --allow-webhook-host 127.1:PORT with the receiver's port as the server's
        records = fire(server.base, f"http://127.1:{receiver.port}/hook")
    assert records[-1]["status"] == "delivered"


# --- 3. cross-site requests and DNS rebinding ---


def test_a_foreign_origin_cannot_reset_the_server(live: Live) -> None:
    headers = {"Origin": EVIL, "Content-Type": "text/plain"}
    r = httpx.post(f"{live.base}/__admin/reset", headers=headers)
    assert r.status_code == 403
    assert r.json()["message"].startswith(
        "Cross-site request refused: a page of origin http://evil.example"
    )
    live.service.create_project({"project_id": "kept", "api_key": "kept-key"})
    assert httpx.post(f"{live.base}/__admin/reset", headers=headers).status_code == 403
    assert "kept" in live.service.project_ids()  # not reset
    own = {"Origin": f"http://localhost:{live.port}"}  # the hosted form's origin (issue 39)
    assert httpx.post(f"{live.base}/__admin/reset", headers=own).status_code == 403
    assert httpx.post(f"{live.base}/__admin/reset").status_code == 200  # curl, a script


def test_a_write_the_browser_marks_cross_site_is_refused_without_origin(live: Live) -> None:
    r = httpx.post(f"{live.base}/__admin/reset", headers={"Sec-Fetch-Site": "cross-site"})
    assert r.status_code == 403
    same = httpx.post(f"{live.base}/__admin/reset", headers={"Sec-Fetch-Site": "same-origin"})
    assert same.status_code == 200


def test_a_client_sending_no_host_is_no_browser_and_passes(live: Live) -> None:
    with socket.create_connection(("127.0.0.1", live.port)) as sock:
        sock.sendall(b"GET /__admin/projects HTTP/1.0\r\n\r\n")
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 200 ")


def test_json_sent_as_text_plain_is_refused(live: Live) -> None:
    body = b'{"project_id": "p", "api_key": "k"}'
    r = httpx.post(
        f"{live.base}/__admin/projects", content=body, headers={"Content-Type": "text/plain"}
    )
    assert (r.status_code, r.json()) == (
        415,
        {
            "message": "The control API takes JSON bodies: send Content-Type: application/json",
            "errors": [],
        },
    )
    assert "p" not in live.service.project_ids()
    r = httpx.post(f"{live.base}/__admin/projects", content=body, headers=JSON_TYPE)
    assert r.status_code == 201


def test_a_rebinding_page_cannot_read_the_keys(live: Live) -> None:
    url = f"{live.base}/__admin/projects?show_keys=true"
    r = httpx.get(url, headers={"Host": "evil.example"})
    assert r.status_code == 403
    assert "mock-api-key" not in r.text
    assert r.json()["message"].startswith("Host evil.example is not allowed here")
    for host in ("localhost", f"localhost:{live.port}", "127.0.0.1", "[::1]", "127.1"):
        r = httpx.get(url, headers={"Host": host})
        assert r.status_code == 200, host
    assert httpx.get(f"{live.base}/__admin/ui/", headers={"Host": "evil.example"}).status_code == (
        403
    )
    # the API itself is not the control API's: its key guards it
    r = httpx.get(f"{live.base}/v3/submission", headers={**KEY, "Host": "evil.example"})
    assert r.status_code == 200


def test_allowed_host_adds_a_name() -> None:
    with Live(allowed_hosts=["mock.internal"]) as server:
        url = f"{server.base}/__admin/projects"
        assert httpx.get(url, headers={"Host": "mock.internal:80"}).status_code == 200
        assert httpx.get(url, headers={"Host": "other.internal"}).status_code == 403


def test_the_dashboards_project_reset_needs_the_pages_token(live: Live) -> None:
    url = f"{live.base}/__admin/ui/projects/default/reset"
    live.service.create_submission("default", {})
    r = httpx.post(url, headers={"Origin": EVIL})
    assert r.status_code == 403
    r = httpx.post(url, data={"form_token": "x" * 32})  # no Origin (an old browser): no cookie
    assert r.status_code == 403
    assert "anti-forgery token" in r.text
    assert live.service.submission_counts() == {"default": 4}  # not reset
    with httpx.Client(base_url=live.base) as browser:
        page = browser.get("/__admin/ui/")
        token = re.search(r'name="form_token" value="([^"]+)"', page.text)
        assert token is not None
        r = browser.post(url, data={"form_token": token.group(1)})
    assert r.status_code == 303
    assert live.service.submission_counts() == {"default": 3}


def test_the_hosted_form_keeps_working_cross_site(live: Live) -> None:
    with httpx.Client(base_url=live.base, headers={"Origin": EVIL}) as browser:
        start = browser.get("/?pid=default&userid=u1")
        assert start.status_code == 303
        r = browser.post(start.headers["location"], data={"agree": "on"})
    assert r.status_code == 303
    assert r.headers["location"].endswith("/country")


def test_serve_takes_allowed_host() -> None:
    with ServeProcess("--seed-count", "1", "--allowed-host", "mock.internal") as server:
        url = server.base + "/__admin/projects"
        assert httpx.get(url, headers={"Host": "mock.internal"}).status_code == 200
        assert httpx.get(url, headers={"Host": "evil.example"}).status_code == 403


# --- 4. the write guard on the pages ---


def test_pages_refuse_writes_while_saves_fail(live: Live) -> None:
    live.service.save_health.failed("No space left on device (ENOSPC)")
    with httpx.Client(base_url=live.base) as browser:
        page = browser.get("/__admin/ui/submissions")
        token = re.search(r'name="form_token" value="([^"]+)"', page.text)
        assert token is not None
        r = browser.post("/__admin/ui/submissions", data={"form_token": token.group(1)})
        assert r.status_code == 503
        assert r.json()["message"].startswith("Writes are refused")
        start = browser.get("/?pid=default&userid=u1")
        r = browser.post(start.headers["location"], data={"agree": "on"})
        assert r.status_code == 503
    assert live.service.submission_counts() == {"default": 3}


# --- 5. export -> import -> export ---


def nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = {"n": value}
    return value


def test_every_stored_state_comes_back(live: Live) -> None:
    """A value stored as deep as a call may send it survives the state's own envelope."""
    url = f"{live.base}/__admin/projects/default/submissions"
    assert httpx.post(url, json={"aml": {"raw_data": nested(62)}}).status_code == 201
    first = httpx.get(f"{live.base}/__admin/state")
    r = httpx.put(f"{live.base}/__admin/state", content=first.content, headers=JSON_TYPE)
    assert r.status_code == 200, r.text
    assert httpx.get(f"{live.base}/__admin/state").content == first.content


# --- 6. the state file's epoch ---


@pytest.mark.parametrize("epoch", [None, "-5", str(10**40), '"7"', "true", "1.5"])
def test_a_state_file_with_a_bad_epoch_is_refused(tmp_path: Path, epoch: str | None) -> None:
    state = orjson.dumps(Service(ServiceConfig(seed_count=1)).export_state()).decode()
    given = "" if epoch is None else f', "epoch": {epoch}'
    header = '{"sha256": "' + "0" * 64 + '"' + given + "}"
    text = '{"state_file": ' + header + ", " + state[1:]
    path = tmp_path / "state.json"
    path.write_text(text)
    with pytest.raises(RuntimeError) as found, ServeProcess("--state-file", str(path)):
        pass
    assert "state_file.epoch must be a whole number" in str(found.value)
    assert path.read_text() == text  # not rewritten


# --- 7. each control call's body limit, enforced while reading ---


def chunks(total: int, size: int = 256 * 1024) -> Iterator[bytes]:
    yield b"["
    sent = 1
    while sent < total:
        yield b"1," * (size // 2)
        sent += size


def test_a_chunked_admin_body_stops_at_the_calls_limit(live: Live) -> None:
    r = httpx.post(
        f"{live.base}/__admin/projects", content=chunks(8 * 1024 * 1024), headers=JSON_TYPE
    )
    assert (r.status_code, r.json()) == (
        413,
        {"message": "Request body too large (limit 1 MiB)", "errors": []},
    )
    assert limits.body_limit("/__admin/state") == 512 * 1024 * 1024
    assert limits.body_limit("/__admin/projects") == 1024 * 1024


# --- 8. the journal bounded by bytes ---


def test_the_journal_keeps_large_bodies_cut_and_marked(live: Live) -> None:
    sid = live.service.export_state()["projects"][0]["submissions"][0]["submission_id"]
    memo = "m" * 60_000
    body = {"submissionId": sid, "admin": "admin@example.com", "data": {"memo": memo}}
    r = httpx.patch(f"{live.base}/v3/submission", json=body, headers=KEY)
    assert r.status_code == 200, r.text
    [call] = httpx.get(f"{live.base}/__admin/projects/default/requests").json()["requests"]
    assert call["truncated"] == {"kept_bytes": 16 * 1024, "body_bytes": len(r.request.content)}
    assert call["body"] == r.request.content[: 16 * 1024].decode()


def test_the_journal_is_bounded_by_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    from idv_mock.backend import journal
    from idv_mock.backend.parts import calls

    monkeypatch.setattr(journal, "MAX_PROJECT_BYTES", 200_000)
    monkeypatch.setattr(calls, "MAX_TOTAL_BYTES", 300_000)
    with Live() as server:
        server.service.create_project({"project_id": "p2", "api_key": "k2"})
        sid = server.service.export_state()["projects"][0]["submissions"][0]["submission_id"]
        body = {"submissionId": sid, "admin": "admin@example.com", "data": {"memo": "m" * 15_000}}
        with httpx.Client(base_url=server.base) as client:
            for key in ("mock-api-key", "k2"):
                for _ in range(30):
                    client.patch("/v3/submission", json=body, headers={"x-api-key": key})
            kept = {
                pid: client.get(f"/__admin/projects/{pid}/requests").json()["requests"]
                for pid in ("default", "p2")
            }
        sizes = {p.project_id: p.journal.bytes for p in server.service.projects.values()}
    assert all(size <= 200_000 for size in sizes.values())
    assert sum(sizes.values()) <= 300_000
    assert 0 < len(kept["default"]) < 30 and 0 < len(kept["p2"]) < 30
    assert kept["p2"][-1]["id"] == 30  # the newest calls are the ones kept


# --- 9. no traceback for a client that went away ---


def test_pipelined_calls_on_a_socket_closed_unread_log_no_traceback() -> None:
    with ServeProcess("--seed-count", "1500") as server:
        request = f"GET /__admin/state HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n"
        for _ in range(5):
            with socket.create_connection(("127.0.0.1", server.port)) as sock:
                sock.sendall(request.encode() * 10)
                time.sleep(0.05)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00" * 2)
        time.sleep(1)
        assert httpx.get(server.base + "/__admin/state?summary=true").status_code == 200
        output = server.stop()
    assert "Traceback" not in output and "Exception in ASGI application" not in output


# --- 10. hints on Secure Data Transfer projects ---


def test_no_encrypt_hint_for_the_screening_call_of_a_secure_project(live: Live) -> None:
    live.service.update_project("default", {"options": {"secure_transfer": True}})
    r = httpx.post(f"{live.base}/v3/submission/aml", json={"submissionId": "nope"}, headers=KEY)
    assert r.status_code in (400, 404)
    assert "encrypt" not in r.headers.get("x-idv-mock-hint", "")
    encrypted = httpx.post(f"{live.base}/v3/submission/aml", json={"data": "AAAA"}, headers=KEY)
    assert encrypted.status_code == 400
    assert encrypted.headers["x-idv-mock-hint"] == (
        "Secure Data Transfer is on for this project, but this call takes its body plain: "
        "only PATCH /v3/submission, POST /v3/projection, POST /v3/submission/tokens, "
        "DELETE /v3/submission/tokens and POST /v3/submission/migration are encrypted"
    )
    patch = httpx.patch(f"{live.base}/v3/submission", json={"x": 1}, headers=KEY)
    assert "encrypt the whole body" in patch.headers["x-idv-mock-hint"]
