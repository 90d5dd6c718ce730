"""Webhooks over real HTTP (api-v3.md 4.3, 4.8, 6; gaps.md "Webhooks", "Loose ends").

Every test points a project at a :class:`WebhookReceiver` (a real HTTP server on a free
port) and checks what arrives, exactly, against the stored submission, plus the delivery
records of ``GET /__admin/projects/{project_id}/webhooks``.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import httpx
import orjson
import pytest
from starlette.testclient import TestClient

from conformance import check_response
from conftest import ADMIN, API_KEY, HEADERS, free_port, some_submission
from idv_mock import Service, ServiceConfig, create_app, crypto, schemas
from idv_mock.clock import iso
from idv_mock.receiver import Received, WebhookReceiver

WEBHOOK_SCHEMAS: dict[str, str] = schemas.load("api.json")["webhooks"]
CF_KEYS = ("cf1", "cf2", "cf3")
DATA_KEYS = (  # gaps.md "Webhooks": the submission fields of submit / approved / rejected
    "age_group",
    "gender",
    "date_of_birth",
    "nationality",
    "full_name",
    "full_name_en",
    "first_name",
    "last_name",
    "phoneNumber",
    "ssnNumber",
)
POLICY_FIELDS = ["full_name", "gender", "phoneNumber", "cf1", "identityNumber"]
CF_OVERRIDES = {"data": {"cf1": "CUST-000001", "cf2": "team-a", "cf3": "vip"}}
ACCEPTED_EVENTS = ("submission.submit", "submission.approved", "submission.rejected")


# --- fixtures ---
@pytest.fixture
def service() -> Iterator[Service]:
    """Overrides conftest's: few submissions, quick retries (also behind client/live/http)."""
    svc = Service(ServiceConfig(seed_count=5, webhook_backoff=(0.05, 0.1)))
    yield svc
    svc.close()


def stop_receiver(receiver: WebhookReceiver) -> None:
    """``receiver.stop()``, with bare connections waking its 0.5 s poll so it ends at once."""
    host, port = receiver.url.split("/")[2].split(":")
    stopper = threading.Thread(target=receiver.stop)
    stopper.start()
    while stopper.is_alive():
        try:
            with socket.create_connection((host, int(port)), timeout=1):
                pass
        except OSError:
            pass
        stopper.join(0.01)


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    r = WebhookReceiver().start()
    yield r
    stop_receiver(r)


@pytest.fixture
def hook(service: Service, receiver: WebhookReceiver) -> Iterator[WebhookReceiver]:
    """The receiver, set as the default project's webhook URL."""
    service.update_project("default", {"options": {"webhook_url": receiver.url}})
    yield receiver
    service.webhooks.wait_idle(5)


@pytest.fixture
def slow_service() -> Iterator[Service]:
    svc = Service(ServiceConfig(seed_count=5, webhook_backoff=(1.0, 1.0)))
    yield svc
    svc.webhooks.wait_idle(5)
    svc.close()


# --- helpers ---
def submission_payload(
    sub: dict[str, Any], trigger: str, hidden: Sequence[str] = (), style: str = "omit"
) -> dict[str, Any]:
    """The submit / approved / rejected payload of gaps.md, from the stored submission."""
    data, kyc = sub["data"], sub["kyc"]
    payload: dict[str, Any] = {
        "submission_id": sub["submission_id"],
        "email": sub["email"],
        "userid": sub["userid"],
        "cf": {k: data[k] for k in CF_KEYS},
        "applicant_id": sub["applicant_id"],
        "webhook_trigger": trigger,
        "kyc_result": {
            "status": kyc["result"],
            "updated_at": sub["updated_at"],
            "created_at": sub["created_at"],
            "kyc_result_at": sub["kyc_result_at"],
            "reviewer": sub["reviewer"],
        },
        **{k: data[k] for k in DATA_KEYS},
        "duplicated_information": sub["duplicated_information"],
        "additional_list": sub["additional_list"],
    }
    for name in hidden:
        for part in (payload, payload["cf"]):
            if name in part:
                if style == "null":
                    part[name] = None
                else:
                    del part[name]
    if "projection" in sub:
        payload["projection"] = sub["projection"]
    return payload


def stamp_to_iso(stamp: str) -> str:
    """YYYY-MM-DD-HH-MM-SS-ZZZ (2.1) -> the ISO 8601 form of the same instant."""
    return f"{stamp[:10]}T{stamp[11:13]}:{stamp[14:16]}:{stamp[17:19]}.{stamp[20:23]}Z"


def assert_valid(event: str, payload: Any) -> None:
    assert schemas.errors(WEBHOOK_SCHEMAS[event], payload) == []


def by_event(items: Sequence[Received]) -> dict[str, Received]:
    found = {item.event: item for item in items}
    assert len(found) == len(items), [item.event for item in items]
    return found


def deliveries(client: TestClient, project_id: str = "default") -> list[dict[str, Any]]:
    r = client.get(f"/__admin/projects/{project_id}/webhooks")
    assert r.status_code == 200
    found: list[dict[str, Any]] = r.json()["deliveries"]
    return found


def create_policy(client: TestClient, name: str, fields: list[str]) -> str:
    r = client.post("/v3/projection", json={"name": name, "mode": "exclude", "fields": fields})
    assert r.status_code == 200, r.text
    projection_id: str = r.json()["projection_id"]
    return projection_id


def hosted(
    client: TestClient,
    claims: dict[str, Any],
    outcome: str,
    *,
    project_id: str = "default",
    api_key: str = API_KEY,
    overrides: dict[str, Any] | None = None,
) -> dict[str, Any]:
    token = crypto.encrypt(claims, api_key)
    body = {"token": token, "outcome": outcome, "overrides": overrides or {}}
    r = client.post(f"/__admin/projects/{project_id}/hosted-submissions", json=body)
    assert r.status_code == 201, r.text
    sub: dict[str, Any] = r.json()
    return sub


def patch_name(client: TestClient | httpx.Client, sid: str) -> httpx.Response:
    body = {"submissionId": sid, "admin": ADMIN, "data": {"fullName": "Jane Roe"}}
    return client.patch("/v3/submission", json=body)


def assert_delivered_as(
    record: dict[str, Any], event: str, payload: dict[str, Any], url: str
) -> None:
    assert record["event"] == event
    assert record["webhook_trigger"] == payload["webhook_trigger"]
    assert record["url"] == url
    assert record["payload"] == payload
    assert record["encrypted"] is False
    assert record["status"] == "delivered"
    assert [(a["attempt"], a["status_code"]) for a in record["attempts"]] == [(1, 200)]


# --- hosted-form submissions ---
@pytest.mark.parametrize("outcome", ["approved", "rejected"])
def test_hosted_submission_sends_submit_and_outcome(
    service: Service, client: TestClient, hook: WebhookReceiver, outcome: str
) -> None:
    claims = {"userid": "applicant-7", "email": "applicant7@example.com"}
    sid = hosted(client, claims, outcome, overrides=CF_OVERRIDES)["submission_id"]
    stored = service.stored_submission("default", sid)
    assert stored["userid"] == "applicant-7"
    assert stored["email"] == "applicant7@example.com"
    assert stored["kyc"]["result"] == outcome
    got = by_event(hook.wait_for(2))
    assert set(got) == {"submission.submit", f"submission.{outcome}"}
    for event, trigger in (("submission.submit", "submit"), (f"submission.{outcome}", outcome)):
        item = got[event]
        expected = submission_payload(stored, trigger)
        assert item.body == expected
        assert "projection" not in item.body
        assert item.path == "/webhook"
        assert item.headers["x-idv-event"] == event
        assert item.headers["content-type"] == "application/json"
        assert_valid(event, item.body)
    service.webhooks.wait_idle()
    records = deliveries(client)
    assert [r["event"] for r in records] == ["submission.submit", f"submission.{outcome}"]
    for record in records:
        expected = submission_payload(stored, record["webhook_trigger"])
        assert_delivered_as(record, record["event"], expected, hook.url)


def test_hosted_submission_webhooks_arrive_submit_first(
    client: TestClient, hook: WebhookReceiver
) -> None:
    for n in range(20):
        hosted(client, {"userid": f"order-{n}", "email": f"o{n}@example.com"}, "approved")
        first, second = hook.wait_for(2 * n + 2)[-2:]
        assert (first.event, second.event) == ("submission.submit", "submission.approved")


@pytest.mark.parametrize("claim", ["projectionId", "projectionName"])
def test_projection_omits_excluded_fields_from_webhooks(
    service: Service, client: TestClient, hook: WebhookReceiver, claim: str
) -> None:
    projection_id = create_policy(client, "hide_pii", POLICY_FIELDS)
    claims = {"userid": "applicant-8", "email": "applicant8@example.com"}
    claims[claim] = projection_id if claim == "projectionId" else "hide_pii"
    sid = hosted(client, claims, "approved", overrides=CF_OVERRIDES)["submission_id"]
    stored = service.stored_submission("default", sid)
    assert stored["projection"] == {"projectionId": projection_id, "projectionName": "hide_pii"}
    for item in hook.wait_for(2):
        trigger = item.body["webhook_trigger"]
        assert item.body == submission_payload(stored, trigger, POLICY_FIELDS)
        for name in ("full_name", "gender", "phoneNumber", "identityNumber"):
            assert name not in item.body
        assert item.body["cf"] == {"cf2": "team-a", "cf3": "vip"}
        assert item.body["projection"] == {
            "projectionId": projection_id,
            "projectionName": "hide_pii",
        }
        assert_valid(item.event, item.body)
    assert {item.event for item in hook.received} == {"submission.submit", "submission.approved"}
    admin_view = client.get(f"/__admin/projects/default/submissions/{sid}").json()
    assert admin_view["data"]["full_name"] == stored["data"]["full_name"] != ""
    assert admin_view["data"]["cf1"] == "CUST-000001"


def test_projection_style_null_sends_excluded_fields_as_null(
    service: Service, client: TestClient, hook: WebhookReceiver
) -> None:
    service.update_project("default", {"options": {"projection_style": "null"}})
    projection_id = create_policy(client, "null_pii", POLICY_FIELDS)
    claims = {"userid": "applicant-9", "email": "a9@example.com", "projectionId": projection_id}
    sid = hosted(client, claims, "rejected", overrides=CF_OVERRIDES)["submission_id"]
    stored = service.stored_submission("default", sid)
    got = by_event(hook.wait_for(2))
    assert set(got) == {"submission.submit", "submission.rejected"}
    for event, item in got.items():
        trigger = item.body["webhook_trigger"]
        assert item.body == submission_payload(stored, trigger, POLICY_FIELDS, "null")
        assert item.body["full_name"] is None
        assert item.body["gender"] is None
        assert item.body["phoneNumber"] is None
        assert item.body["cf"] == {"cf1": None, "cf2": "team-a", "cf3": "vip"}
        assert item.body["projection"] == {
            "projectionId": projection_id,
            "projectionName": "null_pii",
        }
        assert_valid(event, item.body)


# --- control-API creation ---
@pytest.mark.parametrize("result", ["approved", "rejected"])
def test_control_api_creation_with_fire_webhooks_sends_submit_and_result(
    service: Service, client: TestClient, hook: WebhookReceiver, result: str
) -> None:
    r = client.post(
        "/__admin/projects/default/submissions?fire_webhooks=true",
        json={"kyc": {"result": result}},
    )
    assert r.status_code == 201
    stored = service.stored_submission("default", r.json()["submission_id"])
    got = by_event(hook.wait_for(2))
    assert set(got) == {"submission.submit", f"submission.{result}"}
    assert got["submission.submit"].body == submission_payload(stored, "submit")
    assert got[f"submission.{result}"].body == submission_payload(stored, result)
    for event, item in got.items():
        assert item.headers["x-idv-event"] == event
        assert_valid(event, item.body)
    service.webhooks.wait_idle()
    assert [d["event"] for d in deliveries(client)] == [
        "submission.submit",
        f"submission.{result}",
    ]


def test_control_api_creation_pending_sends_submit_only(
    service: Service, client: TestClient, hook: WebhookReceiver
) -> None:
    r = client.post(
        "/__admin/projects/default/submissions",
        params={"fire_webhooks": "true"},
        json={"kyc": {"result": "pending"}},
    )
    assert r.status_code == 201
    stored = service.stored_submission("default", r.json()["submission_id"])
    (item,) = hook.wait_for(1)
    assert service.webhooks.wait_idle()
    assert len(hook.received) == 1
    assert item.event == "submission.submit"
    assert item.body == submission_payload(stored, "submit")
    assert item.body["kyc_result"]["status"] == "pending"
    assert_valid(item.event, item.body)
    assert [d["event"] for d in deliveries(client)] == ["submission.submit"]


@pytest.mark.parametrize("query", ["", "?fire_webhooks=false"])
def test_control_api_creation_without_fire_webhooks_sends_nothing(
    service: Service, client: TestClient, hook: WebhookReceiver, query: str
) -> None:
    r = client.post(f"/__admin/projects/default/submissions{query}", json={})
    assert r.status_code == 201
    assert service.webhooks.wait_idle()
    assert deliveries(client) == []
    assert hook.received == []


# --- PATCH and DELETE ---
def test_patch_sends_updated_with_the_changed_properties(
    service: Service, client: TestClient, hook: WebhookReceiver
) -> None:
    sid = some_submission(service)["submission_id"]
    changes = {"fullName": "Jane Roe", "gender": "female", "memo": "re-checked"}
    r = client.patch("/v3/submission", json={"submissionId": sid, "admin": ADMIN, "data": changes})
    assert r.json() == {"message": "success to edit.", "statusCode": 200}
    stored = service.stored_submission("default", sid)
    (item,) = hook.wait_for(1)
    assert item.event == "submission.updated"
    assert item.headers["x-idv-event"] == "submission.updated"
    assert item.body == {
        "webhook_trigger": "updated",
        "submission_id": sid,
        "admin": ADMIN,
        "update_time": stamp_to_iso(stored["updated_at"]),
        "data": {"update": changes},
    }
    assert stored["updateHistory"] == {"updateAdmin": ADMIN, "updateTime": stored["updated_at"]}
    assert_valid(item.event, item.body)
    service.webhooks.wait_idle()
    (record,) = deliveries(client)
    assert_delivered_as(record, "submission.updated", item.body, hook.url)


@pytest.mark.parametrize("id_name", ["submission_id", "submissionId"])
def test_delete_with_admin_name_sends_delete(
    service: Service, client: TestClient, hook: WebhookReceiver, id_name: str
) -> None:
    sid = some_submission(service)["submission_id"]
    before = service.project("default").clock.peek()
    r = client.delete("/v3/submission", params={id_name: sid, "admin_name": "auditor@example.com"})
    assert r.status_code == 200
    when = service.project("default").clock.peek()
    assert when > before
    assert service.stored_submission("default", sid)["status"] == "Deleted Submission"
    (item,) = hook.wait_for(1)
    assert item.event == "submission.deleted"
    assert item.headers["x-idv-event"] == "submission.deleted"
    assert item.body == {
        "webhook_trigger": "delete",
        "submission_id": sid,
        "account_email": "auditor@example.com",
        "delete_time": iso(when),
        # gaps.md fixes no text for the comment; this is the mock's chosen one
        "comment": f"Submission {sid} deleted by auditor@example.com.",
    }
    assert_valid(item.event, item.body)


def test_delete_without_admin_name_sends_nothing(
    service: Service, client: TestClient, hook: WebhookReceiver
) -> None:
    sid = some_submission(service)["submission_id"]
    r = client.delete("/v3/submission", params={"submission_id": sid})
    assert r.status_code == 200
    assert service.webhooks.wait_idle()
    assert deliveries(client) == []
    assert hook.received == []


def test_no_webhook_url_sends_and_records_nothing(
    service: Service, client: TestClient, receiver: WebhookReceiver
) -> None:
    assert service.project("default").options["webhook_url"] is None
    hosted(client, {"userid": "u-none", "email": "none@example.com"}, "approved")
    created = client.post("/__admin/projects/default/submissions?fire_webhooks=true", json={})
    assert created.status_code == 201
    sid = created.json()["submission_id"]
    assert patch_name(client, sid).status_code == 200
    params = {"submission_id": sid, "admin_name": ADMIN}
    assert client.delete("/v3/submission", params=params).status_code == 200
    assert service.webhooks.wait_idle()
    assert deliveries(client) == []
    assert receiver.received == []


# --- secure transfer ---
def test_secure_project_sends_encrypted_bodies(
    service: Service, client: TestClient, receiver: WebhookReceiver
) -> None:
    spec = {
        "project_id": "secure",
        "api_key": "secure-key",
        "admins": [ADMIN],
        "options": {"secure_transfer": True, "webhook_url": receiver.url},
    }
    assert client.post("/__admin/projects", json=spec).status_code == 201
    claims = {"userid": "applicant-s", "email": "s@example.com"}
    sub = hosted(client, claims, "approved", project_id="secure", api_key="secure-key")
    stored = service.stored_submission("secure", sub["submission_id"])
    got = by_event(receiver.wait_for(2))
    assert set(got) == {"submission.submit", "submission.approved"}
    for event, item in got.items():
        assert set(item.body) == {"data", "isEncrypted"}
        assert item.body["isEncrypted"] is True
        plain = crypto.decrypt(item.body["data"], "secure-key")
        assert plain == submission_payload(stored, event.removeprefix("submission."))
        assert_valid(event, plain)
    service.webhooks.wait_idle()
    records = deliveries(client, "secure")
    assert [(r["event"], r["encrypted"], r["status"]) for r in records] == [
        ("submission.submit", True, "delivered"),
        ("submission.approved", True, "delivered"),
    ]
    assert [r["webhook_trigger"] for r in records] == ["submit", "approved"]
    # the record shows what went on the wire: the ciphertext, never the plaintext (issue 14)
    assert [r["payload"] for r in records] == [got[r["event"]].body for r in records]
    assert deliveries(client) == []


# --- delivery: retries, a receiver that is down, reset ---
def attempt_times(record: dict[str, Any]) -> list[datetime]:
    return [datetime.strptime(a["at"], "%Y-%m-%dT%H:%M:%S.%fZ") for a in record["attempts"]]


def test_two_500s_then_200_make_three_attempts(
    service: Service, client: TestClient, hook: WebhookReceiver
) -> None:
    hook.statuses = [500, 500]
    sid = some_submission(service)["submission_id"]
    assert patch_name(client, sid).status_code == 200
    items = hook.wait_for(3)
    assert service.webhooks.wait_idle()
    assert len(hook.received) == 3
    assert [i.event for i in items] == ["submission.updated"] * 3
    assert items[0].body == items[1].body == items[2].body
    (record,) = deliveries(client)
    assert record["status"] == "delivered"
    assert record["payload"] == items[0].body
    assert [(a["attempt"], a["status_code"]) for a in record["attempts"]] == [
        (1, 500),
        (2, 500),
        (3, 200),
    ]
    assert all("error" not in a for a in record["attempts"])
    first, second, third = attempt_times(record)
    assert (second - first).total_seconds() >= 0.049  # back-off 0.05 s
    assert (third - second).total_seconds() >= 0.099  # then 0.1 s


def test_three_500s_fail_the_delivery(
    service: Service, client: TestClient, hook: WebhookReceiver
) -> None:
    hook.statuses = [500, 500, 500]
    sid = some_submission(service)["submission_id"]
    assert patch_name(client, sid).status_code == 200
    hook.wait_for(3)
    assert service.webhooks.wait_idle()
    assert len(hook.received) == 3
    (record,) = deliveries(client)
    assert record["status"] == "failed"
    assert [(a["attempt"], a["status_code"]) for a in record["attempts"]] == [
        (1, 500),
        (2, 500),
        (3, 500),
    ]


def test_receiver_down_does_not_slow_or_fail_the_call(slow_service: Service) -> None:
    url = f"http://127.0.0.1:{free_port()}/webhook"
    slow_service.update_project("default", {"options": {"webhook_url": url}})
    sid = some_submission(slow_service)["submission_id"]
    with TestClient(create_app(slow_service), headers=HEADERS) as client:
        client.event_hooks["response"] = [check_response]
        started = time.monotonic()
        r = patch_name(client, sid)
        elapsed = time.monotonic() - started
        assert r.status_code == 200
        assert r.json() == {"message": "success to edit.", "statusCode": 200}
        assert elapsed < 1.0  # delivery would take >= 2 s (1 s + 1 s back-off)
        (record,) = deliveries(client)
        assert record["status"] == "pending"
        assert len(record["attempts"]) < 3
        assert slow_service.webhooks.wait_idle(10)
        (record,) = deliveries(client)
    assert record["status"] == "failed"
    assert record["url"] == url
    assert [a["attempt"] for a in record["attempts"]] == [1, 2, 3]
    for attempt in record["attempts"]:
        assert "status_code" not in attempt
        assert attempt["error"].startswith("ConnectError: ")


def test_reset_clears_delivery_records(
    service: Service, client: TestClient, hook: WebhookReceiver
) -> None:
    sid = some_submission(service)["submission_id"]
    assert patch_name(client, sid).status_code == 200
    hook.wait_for(1)
    assert service.webhooks.wait_idle()
    assert len(deliveries(client)) == 1
    assert client.post("/__admin/reset").status_code == 200
    assert deliveries(client) == []


# --- real HTTP: the live server and the command line ---
@pytest.mark.live
def test_live_server_patch_reaches_the_receiver(
    service: Service, http: httpx.Client, hook: WebhookReceiver
) -> None:
    sid = some_submission(service)["submission_id"]
    r = patch_name(http, sid)
    assert r.status_code == 200
    stored = service.stored_submission("default", sid)
    (item,) = hook.wait_for(1)
    assert item.event == "submission.updated"
    assert item.body == {
        "webhook_trigger": "updated",
        "submission_id": sid,
        "admin": ADMIN,
        "update_time": stamp_to_iso(stored["updated_at"]),
        "data": {"update": {"fullName": "Jane Roe"}},
    }
    assert_valid(item.event, item.body)


@contextmanager
def command(*args: str) -> Iterator[tuple[subprocess.Popen[str], list[str]]]:
    """``idv-mock ARGS`` as a process; its output is in the list after the block."""
    cmd = [sys.executable, "-m", "idv_mock.cli", *args]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output: list[str] = []
    try:
        yield proc, output
    finally:
        proc.terminate()
        output.append(proc.communicate(timeout=10)[0])


def wait_listening(proc: subprocess.Popen[str], port: int) -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"idv-mock did not listen on {port}") from None
            time.sleep(0.05)


@pytest.mark.live
def test_cli_serve_webhook_url_reaches_the_receiver(receiver: WebhookReceiver) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    args = ("serve", "--port", str(port), "--seed-count", "2", "--webhook-url", receiver.url)
    with command(*args) as (proc, _):
        wait_listening(proc, port)
        project = httpx.get(base + "/__admin/projects/default").json()
        assert project["options"]["webhook_url"] == receiver.url
        r = httpx.post(
            base + "/__admin/projects/default/submissions?fire_webhooks=true",
            json={"kyc": {"result": "rejected"}},
        )
        assert r.status_code == 201
        sid = r.json()["submission_id"]
        stored = httpx.get(f"{base}/__admin/projects/default/submissions/{sid}").json()
        got = by_event(receiver.wait_for(2))
    assert set(got) == {"submission.submit", "submission.rejected"}
    assert got["submission.submit"].body == submission_payload(stored, "submit")
    assert got["submission.rejected"].body == submission_payload(stored, "rejected")


def received_block(output: str, event: str) -> Any:
    """The JSON body ``idv-mock receive`` printed under ``--- EVENT /webhook``."""
    head = f"--- {event} /webhook\n"
    assert head in output, output
    return orjson.loads(output.split(head, 1)[1])


@pytest.mark.live
def test_cli_receive_prints_event_and_body() -> None:
    port = free_port()
    payload = {"webhook_trigger": "updated", "submission_id": "s-1", "data": {"update": {}}}
    with command("receive", "--port", str(port)) as (proc, output):
        wait_listening(proc, port)
        r = httpx.post(
            f"http://127.0.0.1:{port}/webhook",
            json=payload,
            headers={"X-Idv-Event": "submission.updated"},
        )
        assert r.status_code == 200
    text = output[0]
    assert f"idv-mock receiving webhooks at http://127.0.0.1:{port}/webhook\n" in text
    assert received_block(text, "submission.updated") == payload


@pytest.mark.live
def test_cli_receive_decrypts_with_api_key() -> None:
    port = free_port()
    payload = {"webhook_trigger": "delete", "submission_id": "s-2", "account_email": ADMIN}
    body = {"data": crypto.encrypt(payload, "k-9"), "isEncrypted": True}
    with command("receive", "--port", str(port), "--api-key", "k-9") as (proc, output):
        wait_listening(proc, port)
        r = httpx.post(
            f"http://127.0.0.1:{port}/webhook",
            json=body,
            headers={"X-Idv-Event": "submission.deleted"},
        )
        assert r.status_code == 200
    assert received_block(output[0], "submission.deleted") == payload
