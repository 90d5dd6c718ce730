"""The API's PATCH keeps the edited submission decoded for the next edit
(``SubmissionStore.shared``): what is stored and read back must be exactly what decoding
afresh each time gives, and nothing a caller holds may reach the kept copy."""

from __future__ import annotations

import orjson
from starlette.testclient import TestClient

from idv_mock import Service, ServiceConfig, create_app

ADMIN = "admin@example.com"


def patch(client: TestClient, sid: str, data: dict[str, str]) -> None:
    body = {"submissionId": sid, "admin": ADMIN, "data": data}
    r = client.patch("/v3/submission", json=body, headers={"x-api-key": "mock-api-key"})
    assert r.status_code == 200, r.text


def read(client: TestClient, sid: str) -> dict[str, object]:
    r = client.get(
        "/v3/submission", params={"submission_id": sid}, headers={"x-api-key": "mock-api-key"}
    )
    item: dict[str, object] = r.json()["Items"][0]
    return item


def test_repeated_patches_store_what_fresh_decoding_would() -> None:
    kept, fresh = Service(ServiceConfig(seed_count=3)), Service(ServiceConfig(seed_count=3))
    sid = kept.project("default").store.order[-1][1]
    edits = [{"memo": "one"}, {"kycStatus": "approved"}, {"memo": "two"}, {"fullName": "A B"}]
    with TestClient(create_app(kept)) as client:
        for data in edits:
            patch(client, sid, data)
        shown = read(client, sid)
    for data in edits:  # the public edit: keeps no new version decoded for the next one
        fresh.edit(fresh.project("default"), sid, ADMIN, data)
    assert kept.project("default").store.blobs[sid] == fresh.project("default").store.blobs[sid]
    assert shown["memo"]["text"] == "two"  # type: ignore[index]
    store = kept.project("default").store
    blob, doc = store.decoded[sid]
    assert blob is store.blobs[sid] and orjson.loads(blob) == doc


def test_a_change_by_another_path_is_not_hidden_by_the_kept_copy() -> None:
    service = Service(ServiceConfig(seed_count=3))
    project = service.project("default")
    sid = project.store.order[-1][1]
    with TestClient(create_app(service)) as client:
        patch(client, sid, {"memo": "kept"})
        service.delete_parts(project, sid, ["email"], None)  # a new blob, not via patch
        patch(client, sid, {"memo": "after"})
        shown = read(client, sid)
    assert "email" not in shown or shown["email"] in (None, "")
    assert shown["memo"]["text"] == "after"  # type: ignore[index]


def test_changing_what_edit_answers_changes_nothing_stored() -> None:
    service = Service(ServiceConfig(seed_count=3))
    project = service.project("default")
    sid = project.store.order[-1][1]
    with TestClient(create_app(service)) as client:
        patch(client, sid, {"memo": "first"})  # kept decoded
        answered = service.edit(project, sid, ADMIN, {"memo": "second"})
        answered["data"]["full_name"] = "Changed By Caller"
        answered["memo"]["text"] = "changed by caller"
        patch(client, sid, {"kycStatus": "approved"})
        shown = read(client, sid)
    assert shown["memo"]["text"] == "second"  # type: ignore[index]
    assert shown["data"]["full_name"] != "Changed By Caller"  # type: ignore[index]
