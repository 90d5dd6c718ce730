"""``idv-mock trigger EVENT`` against a live server, with a real receiver in the test.

Each of the vendor's twelve triggers is caused through the mock's own paths (the form over
HTTP, the API, the control API, the clock); what arrives at the receiver is what the
command prints, and the exit code follows the receiver's answer. ``--forward-to`` sends
that one event elsewhere and nothing else; the one-shot routes it uses are a control call.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from conftest import LiveServer
from idv_mock import Service, ServiceConfig, cli
from idv_mock.delivery.receiver import shape_problems
from idv_mock.tools.trigger import TRIGGERS

pytestmark = pytest.mark.live


class Receiver:
    """An integrator's webhook endpoint: records each body, answers ``status``."""

    def __init__(self, status: int = 200) -> None:
        self.status = status
        self.bodies: list[dict[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                outer.bodies.append(json.loads(self.rfile.read(length)))
                self.send_response(outer.status)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def triggers(self) -> list[str]:
        return [str(b.get("webhook_trigger")) for b in self.bodies]


@pytest.fixture
def service() -> Service:
    return Service(ServiceConfig(seed_count=5, random_seed=3, webhook_backoff=(0.0, 0.0)))


@pytest.fixture
def receiver(service: Service) -> Iterator[Receiver]:
    with Receiver() as found:
        service.update_project("default", {"options": {"webhook_url": found.url}})
        yield found


def root(live: LiveServer) -> str:
    return f"http://127.0.0.1:{live.port}"


def trigger(live: LiveServer, *args: str) -> int:
    return cli.main(["trigger", *args, "--url", root(live)])


def printed_payload(out: str) -> dict[str, Any]:
    """The JSON document the command prints after its two status lines."""
    return dict(json.loads(out[out.index("{") :]))


@pytest.mark.parametrize("event", TRIGGERS)
def test_each_trigger_reaches_the_receiver_and_prints_it(
    event: str, live: LiveServer, receiver: Receiver, capsys: pytest.CaptureFixture[str]
) -> None:
    assert trigger(live, event) == 0
    out = capsys.readouterr().out
    payload = printed_payload(out)
    assert payload["webhook_trigger"] == event
    assert payload in receiver.bodies  # what the command prints is what arrived
    assert shape_problems(payload) == []  # the vendor's shape of that trigger
    assert "receiver answered: 200" in out
    assert receiver.triggers().count(event) == 1


def test_forward_to_sends_that_one_event_elsewhere(
    live: LiveServer, receiver: Receiver, capsys: pytest.CaptureFixture[str]
) -> None:
    with Receiver() as other:
        assert trigger(live, "updated", "--forward-to", other.url) == 0
    live.service.webhooks.wait_idle()
    assert other.triggers() == ["updated"]
    # the form's events before the update went to the project's own URL, as always
    assert receiver.triggers() == ["created", "approved"]
    assert f"to {other.url}: delivered" in capsys.readouterr().out


def test_forward_to_works_without_a_project_webhook_url(
    live: LiveServer, capsys: pytest.CaptureFixture[str]
) -> None:
    with Receiver() as other:
        assert trigger(live, "approved", "--forward-to", other.url) == 0
        live.service.webhooks.wait_idle()
    assert other.triggers() == ["approved"]  # the form's created went nowhere: no URL


def test_no_webhook_url_and_no_forward_to_is_exit_1(
    live: LiveServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert trigger(live, "approved") == 1
    assert "has no webhook_url: give --forward-to URL" in capsys.readouterr().err


def test_a_failing_receiver_is_exit_1(
    live: LiveServer, service: Service, capsys: pytest.CaptureFixture[str]
) -> None:
    with Receiver(status=500) as failing:
        service.update_project("default", {"options": {"webhook_url": failing.url}})
        assert trigger(live, "submit") == 1
        live.service.webhooks.wait_idle()
    out = capsys.readouterr().out
    assert "receiver answered: 500 (attempts: 3)" in out
    assert failing.triggers() == ["created"] * 3 + ["submit"] * 3


def test_rejected_with_a_reason_the_form_offers(
    live: LiveServer, receiver: Receiver, capsys: pytest.CaptureFixture[str]
) -> None:
    assert trigger(live, "rejected", "--reason", "expired_id") == 0
    payload = printed_payload(capsys.readouterr().out)
    assert payload["kyc_result"]["commentCode"] == "expired_id"


def test_bad_use_is_exit_2(
    live: LiveServer, receiver: Receiver, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        trigger(live, "payment_intent.succeeded")
    assert exc.value.code == 2
    assert trigger(live, "rejected", "--reason", "no-such-reason") == 2
    assert "the form offers reason" in capsys.readouterr().err
    assert trigger(live, "approved", "--reason", "expired_id") == 2
    assert "--reason goes with retry, rejected, injectionFail, not approved" in (
        capsys.readouterr().err
    )
    live.service.webhooks.wait_idle()
    assert "rejected" not in receiver.triggers() and "approved" not in receiver.triggers()


def test_unreachable_server_is_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    from conftest import free_port

    assert cli.main(["trigger", "approved", "--url", f"http://127.0.0.1:{free_port()}"]) == 1
    assert capsys.readouterr().err.startswith("idv-mock trigger: ")


def test_a_route_takes_only_the_event_it_names(
    live: LiveServer, receiver: Receiver, http: httpx.Client
) -> None:
    """Another user's approval in the same project goes to the project's URL, untouched."""
    base = "/__admin/projects/default/webhook-routes"
    with Receiver() as other:
        made = http.post(
            base,
            json={"webhook_trigger": "approved", "match": {"userid": "u-2"}, "url": other.url},
        )
        assert made.status_code == 201
        route = made.json()
        assert route == {
            "route_id": route["route_id"],
            "webhook_trigger": "approved",
            "match": {"userid": "u-2"},
            "url": other.url,
            "delivery_id": None,
        }
        for user in ("u-1", "u-2", "u-2"):
            cli.main(["form", "walk", f"{root(live)}/?pid=default&userid={user}"])
        live.service.webhooks.wait_idle()
        found = http.get(f"{base}/{route['route_id']}").json()
    assert [b["userid"] for b in other.bodies] == ["u-2"]  # once: the route is used up
    approvals = [b["userid"] for b in receiver.bodies if b["webhook_trigger"] == "approved"]
    assert approvals == ["u-1", "u-2"]
    assert found["delivery"]["id"] == found["delivery_id"]
    assert found["delivery"]["url"] == other.url
    assert http.delete(f"{base}/{route['route_id']}").status_code == 200
    assert http.get(f"{base}/{route['route_id']}").status_code == 404


@pytest.mark.parametrize(
    ("doc", "problem"),
    [
        ({"webhook_trigger": "nope", "match": {"userid": "u"}}, "webhook_trigger must be one of"),
        ({"webhook_trigger": "approved", "match": {}}, "match"),
        ({"webhook_trigger": "approved", "match": {"u": 1}}, "match"),
        ({"webhook_trigger": "approved", "match": {"u": "1"}, "url": "ftp://x"}, "url"),
        ({"webhook_trigger": "approved", "match": {"u": "1"}, "extra": 1}, "extra"),
    ],
)
def test_a_bad_route_is_400_and_adds_nothing(
    doc: dict[str, Any], problem: str, http: httpx.Client
) -> None:
    answer = http.post("/__admin/projects/default/webhook-routes", json=doc)
    assert answer.status_code == 400
    assert answer.json()["message"] == "invalid webhook route"
    assert any(problem in p for p in answer.json()["errors"])
    assert http.get("/__admin/projects/default/webhook-routes/rt-1").status_code == 404


def test_a_route_to_a_link_local_address_is_refused(http: httpx.Client) -> None:
    """The host rule of every webhook URL (a cloud metadata address here)."""
    doc = {"webhook_trigger": "approved", "match": {"u": "1"}, "url": "http://169.254.169.254/x"}
    answer = http.post("/__admin/projects/default/webhook-routes", json=doc)
    assert answer.status_code == 400
    assert answer.json()["errors"][0].startswith("url refused: ")


def test_a_secure_private_project(
    live: LiveServer, service: Service, capsys: pytest.CaptureFixture[str]
) -> None:
    """Secure Data Transfer (encrypted API calls and webhooks) and a private-mode form (a
    token in every link): the command speaks both; it prints the payload decrypted."""
    options = {"secure_transfer": True, "liveform_private_mode": True}
    with Receiver() as found:
        options["webhook_url"] = found.url
        spec = {"project_id": "vault", "api_key": "vault-key", "options": options}
        service.create_project({**spec, "admins": ["a@vault.io"]})
        assert trigger(live, "updated", "--project", "vault") == 0
        live.service.webhooks.wait_idle()
    payload = printed_payload(capsys.readouterr().out)
    assert payload["webhook_trigger"] == "updated" and payload["admin"] == "a@vault.io"
    assert payload["tokenId"].startswith("trigger-token-")
    assert all(set(body) == {"data", "isEncrypted"} for body in found.bodies)
