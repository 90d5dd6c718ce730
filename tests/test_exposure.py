"""Issue 14, defect 7: the control API beyond loopback needs a token, credentials are
masked, and webhooks cannot be aimed at the server itself or at link-local addresses."""

from __future__ import annotations

import time

import httpx
import pytest
from starlette.testclient import TestClient

from conftest import ServeProcess
from idv_mock import Service, ServiceConfig
from idv_mock.api.app import create_app
from idv_mock.delivery.webhooks import SETTLED, HostRule

REFUSED = {
    "message": "The control API needs the admin token: send the header "
    "x-idv-mock-admin-token (the server listens beyond loopback; see --admin-token and "
    "--admin-open)",
    "errors": [],  # the control API's one error shape
}
KEY = {"x-api-key": "mock-api-key"}


def client_of(**exposure: object) -> TestClient:
    service = Service(ServiceConfig(seed_count=2))
    return TestClient(create_app(service, **exposure))  # type: ignore[arg-type]


def test_exposed_with_a_token_the_control_api_needs_it() -> None:
    with client_of(exposed=True, admin_token="T0ken") as client:
        r = client.get("/__admin/projects")
        assert (r.status_code, r.json()) == (403, REFUSED)
        r = client.post("/__admin/reset", headers={"x-idv-mock-admin-token": "wrong"})
        assert (r.status_code, r.json()) == (403, REFUSED)
        ok = client.get("/__admin/projects", headers={"x-idv-mock-admin-token": "T0ken"})
        assert ok.status_code == 200
        by_cookie = client.get(
            "/__admin/projects", headers={"cookie": "idv_mock_admin_token=T0ken"}
        )
        assert by_cookie.status_code == 200
        assert client.get("/v3/submission", headers=KEY).status_code == 200  # the API is not
        assert client.get("/__admin/ui/login").status_code != 403  # where a person types it


def test_exposed_without_a_token_refuses_everyone_and_open_opts_out() -> None:
    with client_of(exposed=True) as client:
        r = client.get("/__admin/projects", headers={"x-idv-mock-admin-token": ""})
        assert r.status_code == 403
    with client_of(exposed=True, admin_open=True) as client:
        assert client.get("/__admin/projects").status_code == 200
    with client_of() as client:  # loopback: as it always was
        assert client.get("/__admin/projects").status_code == 200


@pytest.mark.live
def test_serve_on_all_addresses_guards_admin_and_says_so() -> None:
    with ServeProcess("--host", "0.0.0.0", "--seed-count", "1", "--admin-token", "s3") as server:
        refused = httpx.get(server.base + "/__admin/projects")
        allowed = httpx.get(
            server.base + "/__admin/projects", headers={"x-idv-mock-admin-token": "s3"}
        )
        output = server.stop()
    assert (refused.status_code, refused.json()) == (403, REFUSED)
    assert allowed.status_code == 200
    assert "control API: needs the admin token" in output


def test_credentials_are_masked_in_the_journal() -> None:
    with client_of() as client:
        headers = {**KEY, "authorization": "Bearer secret", "cookie": "session=abc"}
        client.get("/v3/submission", params={"count": "1"}, headers=headers)
        [entry] = client.get("/__admin/projects/default/requests").json()["requests"]
    for name in ("x-api-key", "authorization", "cookie"):
        assert entry["headers"][name] == "****"


def test_project_reads_mask_keys_unless_asked() -> None:
    with client_of() as client:
        [listed] = client.get("/__admin/projects").json()["projects"]
        shown = client.get("/__admin/projects", params={"show_keys": "true"}).json()
    assert listed["api_key"] == "mock****"
    assert shown["projects"][0]["api_key"] == "mock-api-key"


@pytest.mark.parametrize(
    ("url", "refused"),
    [
        ("http://169.254.169.254/latest/meta-data", True),
        ("http://[fe80::1]:8000/x", True),
        ("http://127.0.0.1:8080/__admin/reset", True),
        ("http://localhost:8080/hook", True),
        ("http://127.0.0.1:9000/hook", False),  # another local port: an integrator's receiver
        ("http://10.1.2.3:8080/hook", False),  # private addresses stay allowed
        ("https://example.com/hook", False),
    ],
)
def test_the_webhook_host_rule(url: str, refused: bool) -> None:
    rule = HostRule(own_port=8080)
    assert (rule.refusal(url) is not None) is refused
    allowed = HostRule(own_port=8080, allowed=frozenset({"169.254.169.254", "localhost:8080"}))
    assert allowed.refusal("http://169.254.169.254/x") is None
    assert allowed.refusal("http://localhost:8080/hook") is None


@pytest.mark.parametrize("url", ["http://[::1/hook", "http://xn--/hook", "http://ü.com:1a/"])
def test_a_webhook_url_httpx_cannot_parse_is_refused_as_not_a_url(url: str) -> None:
    """httpx refuses these with its InvalidURL, or idna's error (a ValueError) for xn--."""
    assert HostRule(own_port=8080).refusal(url) == "not a URL"


def test_a_malformed_cookie_header_carries_no_admin_token() -> None:
    with client_of(exposed=True, admin_token="T0ken") as client:
        cookie = "idv_mock_admin_token=T0ken; $Unknown=x"  # http.cookies refuses the whole
        r = client.get("/__admin/projects", headers={"cookie": cookie})
        assert (r.status_code, r.json()) == (403, REFUSED)


@pytest.mark.live
def test_a_webhook_aimed_at_the_servers_own_reset_is_refused() -> None:
    """The probe: a webhook pointed at the server's own /__admin/reset wiped it."""
    with ServeProcess("--seed-count", "1") as server:
        hook = f"http://127.0.0.1:{server.port}/__admin/reset"
        admin = server.base + "/__admin/projects/default"
        assert httpx.patch(admin, json={"options": {"webhook_url": hook}}).status_code == 200
        r = httpx.post(
            admin + "/submissions?fire_webhooks=true", json={"kyc": {"result": "approved"}}
        )
        assert r.status_code == 201
        for _ in range(100):
            records = httpx.get(admin + "/webhooks").json()["deliveries"]
            if records and all(d["status"] in SETTLED for d in records):
                break
            time.sleep(0.02)
        count = httpx.get(server.base + "/__admin/state?summary=true").json()["projects"]
    assert count == {"default": 2}  # not reset
    assert {d["status"] for d in records} == {"failed"}
    assert all(d["attempts"][0]["error"].startswith("refused: ") for d in records)


def test_a_token_of_any_bytes_is_refused_not_a_500() -> None:
    with client_of(exposed=True, admin_token="T0ken") as client:
        r = client.get("/__admin/projects", headers={"x-idv-mock-admin-token": b"\xe9t\xe9"})
        assert r.status_code == 403
