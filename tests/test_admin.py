"""The control API under /__admin."""

from __future__ import annotations

from starlette.testclient import TestClient

from conftest import snapshot, some_submission
from idv_mock import Service

JSON_TYPE = {"content-type": "application/json"}


def test_create_and_read_a_project(raw_client: TestClient) -> None:
    spec = {
        "project_id": "acme",
        "api_key": "acme-key",
        "admins": ["ops@acme.io"],
        "options": {"secure_transfer": True, "aml_threshold": 70},
    }
    r = raw_client.post("/__admin/projects", json=spec)
    assert r.status_code == 201
    assert r.json()["options"]["secure_transfer"] is True
    assert r.json()["options"]["aml_threshold"] == 70
    assert r.json()["options"]["monitoring_enabled"] is True  # default filled in
    shown = raw_client.get("/__admin/projects/acme", params={"show_keys": "true"})
    assert shown.json() == r.json()
    # reads mask the key unless asked (issue 14: a listing leaks no key)
    assert raw_client.get("/__admin/projects/acme").json() == {**r.json(), "api_key": "****"}
    listed = raw_client.get("/__admin/projects").json()["projects"]
    assert [p["api_key"] for p in listed] == ["mock****", "****"]


def test_project_conflicts_and_bad_input(raw_client: TestClient, service: Service) -> None:
    before = snapshot(service)
    r = raw_client.post("/__admin/projects", json={"project_id": "default", "api_key": "z"})
    assert r.status_code == 409
    r = raw_client.post("/__admin/projects", json={"project_id": "n", "api_key": "mock-api-key"})
    assert r.status_code == 409
    r = raw_client.post("/__admin/projects", json={"project_id": "n", "api_key": "k", "x": 1})
    assert r.status_code == 400
    r = raw_client.post(
        "/__admin/projects",
        json={"project_id": "n", "api_key": "k", "options": {"secure_transfer": "yes"}},
    )
    assert r.status_code == 400
    assert r.json()["errors"]
    r = raw_client.post(
        "/__admin/projects", content=b"{nope", headers={"content-type": "application/json"}
    )
    assert r.status_code == 400
    assert raw_client.get("/__admin/projects/nope").status_code == 404
    assert snapshot(service) == before


def test_update_project_options(raw_client: TestClient) -> None:
    r = raw_client.patch("/__admin/projects/default", json={"options": {"secure_transfer": True}})
    assert r.status_code == 200
    assert r.json()["options"]["secure_transfer"] is True
    assert r.json()["options"]["key_derivation"] == "sha256"
    r = raw_client.patch("/__admin/projects/default", json={"options": {"nope": 1}})
    assert r.status_code == 400


def test_create_submission_merges_over_faker(raw_client: TestClient, service: Service) -> None:
    body = {
        "userid": "u1",
        "email": "a@b.co",
        "data": {"full_name": "Ann Lee", "date_of_birth": "1990-01-02"},
        "kyc": {"result": "approved"},
    }
    r = raw_client.post("/__admin/projects/default/submissions", json=body)
    assert r.status_code == 201
    sub = r.json()
    assert (sub["userid"], sub["email"], sub["kyc"]["result"]) == ("u1", "a@b.co", "approved")
    assert sub["data"]["full_name"] == "Ann Lee"
    assert sub["kyc"]["attempts"]  # the rest is Faker's
    stored = raw_client.get(f"/__admin/projects/default/submissions/{sub['submission_id']}")
    assert stored.json() == sub
    assert service.stored_submission("default", sub["submission_id"]) == sub


def test_create_submission_refuses_bad_input(raw_client: TestClient, service: Service) -> None:
    before = snapshot(service)
    url = "/__admin/projects/default/submissions"
    assert raw_client.post(url, json={"data": "not an object"}).status_code == 400
    assert raw_client.post(url, json={"data": {"gender": "other"}}).status_code == 400
    assert raw_client.post(url, json={"unknown_top_level": 1}).status_code == 400
    assert raw_client.post(url, json=[1, 2]).status_code == 400
    taken = some_submission(service)["submission_id"]
    assert raw_client.post(url, json={"submission_id": taken}).status_code == 409
    assert raw_client.post("/__admin/projects/nope/submissions", json={}).status_code == 404
    assert snapshot(service) == before


def test_stored_submission_keeps_fields_a_read_hides(
    raw_client: TestClient, service: Service
) -> None:
    sid = some_submission(service)["submission_id"]
    r = raw_client.get(f"/__admin/projects/default/submissions/{sid}")
    assert r.json()["submission_id"] == sid
    assert raw_client.get("/__admin/projects/default/submissions/nope").status_code == 404


def test_reset_restores_the_seeded_state(raw_client: TestClient, service: Service) -> None:
    before = snapshot(service)
    raw_client.post("/__admin/projects", json={"project_id": "p", "api_key": "pk"})
    raw_client.post("/__admin/projects/default/submissions", json={})
    r = raw_client.post("/__admin/reset")
    assert r.status_code == 200
    assert r.json() == {"message": "reset to the seeded start state", "projects": {"default": 30}}
    assert snapshot(service) == before


def test_state_export_import_export_is_identical(raw_client: TestClient) -> None:
    raw_client.post("/__admin/projects", json={"project_id": "p", "api_key": "pk"})
    raw_client.post("/__admin/projects/p/submissions", json={"userid": "u"})
    first = raw_client.get("/__admin/state")
    r = raw_client.put(
        "/__admin/state", content=first.content, headers={"content-type": "application/json"}
    )
    assert r.status_code == 200
    assert r.json()["projects"] == {"default": 30, "p": 1}
    assert raw_client.get("/__admin/state").content == first.content


def test_imported_state_is_served(raw_client: TestClient) -> None:
    state = raw_client.get("/__admin/state").json()
    state["projects"][0]["submissions"] = state["projects"][0]["submissions"][:3]
    raw_client.put("/__admin/state", json=state)
    r = raw_client.get("/v3/submission", headers={"x-api-key": "mock-api-key"})
    assert len(r.json()["Items"]) == 3


def test_invalid_state_changes_nothing(raw_client: TestClient, service: Service) -> None:
    before = snapshot(service)
    assert raw_client.put("/__admin/state", json={"version": 2}).status_code == 400
    state = raw_client.get("/__admin/state").json()
    state["projects"].append(state["projects"][0])
    assert raw_client.put("/__admin/state", json=state).status_code == 400
    assert snapshot(service) == before


def test_import_refuses_incomplete_documents(raw_client: TestClient, service: Service) -> None:
    before = snapshot(service)
    state = raw_client.get("/__admin/state").json()
    state["projects"][0]["submissions"].append({"submission_id": "zz"})
    assert raw_client.put("/__admin/state", json=state).status_code == 400
    state = raw_client.get("/__admin/state").json()
    del state["projects"][0]["project"]["created_at"]
    assert raw_client.put("/__admin/state", json=state).status_code == 400
    assert snapshot(service) == before


def test_raw_key_derivation_needs_a_32_byte_key(raw_client: TestClient) -> None:
    spec = {"project_id": "r", "api_key": "short", "options": {"key_derivation": "raw"}}
    assert raw_client.post("/__admin/projects", json=spec).status_code == 400
    spec["api_key"] = "k" * 32
    assert raw_client.post("/__admin/projects", json=spec).status_code == 201


def test_status_cannot_be_set_on_creation(raw_client: TestClient) -> None:
    r = raw_client.post(
        "/__admin/projects/default/submissions", json={"status": "Deleted Submission"}
    )
    assert r.status_code == 400


def test_bad_webhook_url_and_watchlist_overrides_are_400(raw_client: TestClient) -> None:
    r = raw_client.patch(
        "/__admin/projects/default", json={"options": {"webhook_url": "http://[::1/"}}
    )
    assert r.status_code == 400
    body = {"entry_id": "WL-0001", "overrides": {"data": "x"}}
    assert (
        raw_client.post("/__admin/projects/default/watchlist-submissions", json=body).status_code
        == 400
    )
