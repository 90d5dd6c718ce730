"""Pages are found again by the identity of their stored items (``submission_page._Joined``):
a repeated read answers the same bytes without joining them again, and any change of an
item (which stores new bytes) or of the page's make-up answers the new page."""

from __future__ import annotations

from typing import Any

import orjson
from starlette.testclient import TestClient

from conftest import some_submission
from idv_mock import Service
from idv_mock.serving import submission_page

PATH = "/v3/submission"


def get(client: TestClient, query: str) -> bytes:
    response = client.get(f"{PATH}?{query}")
    assert response.status_code == 200
    return response.content


def items(body: bytes) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = orjson.loads(body)["Items"]
    return found


def test_a_repeated_read_is_the_same_page(client: TestClient, service: Service) -> None:
    sid = some_submission(service)["submission_id"]
    first, second = get(client, f"submission_id={sid}"), get(client, f"submission_id={sid}")
    assert first == second
    assert items(first) == [service.stored_submission("default", sid)]


def test_an_edit_answers_the_new_item(client: TestClient, service: Service) -> None:
    sid = some_submission(service)["submission_id"]
    before = get(client, f"submission_id={sid}")
    project = service.project("default")
    service.edit(project, sid, "admin@example.com", {"memo": "edited after a read"})
    after = get(client, f"submission_id={sid}")
    assert after != before
    assert items(after)[0]["memo"]["text"] == "edited after a read"
    assert items(after) == [service.stored_submission("default", sid)]


def test_a_new_submission_changes_the_newest_page(client: TestClient, service: Service) -> None:
    before = items(get(client, "count=3"))
    created = service.create_submission("default")
    after = items(get(client, "count=3"))
    assert after[0]["submission_id"] == created["submission_id"]
    assert after[1:] == before[:2]


def test_the_kept_pages_stay_within_their_budget(monkeypatch: Any, service: Service) -> None:
    joined = submission_page._Joined()
    monkeypatch.setattr(joined, "BUDGET", 64 * 1024)
    blobs = list(service.project("default").store.blobs.values())
    for blob in blobs:
        assert joined.page([blob], None) == b'{"Items":[' + blob + b"]}"
        assert joined.size <= joined.BUDGET
    assert joined.page([], None) == b'{"Items":[]}'


def test_a_reset_after_an_edit_answers_the_start_item(client: TestClient, service: Service) -> None:
    """A read by id alone is kept with its stored bytes (``submission_page._ONE``): after an
    edit and a reset (which brings back the start's bytes object) each read answers the
    state of its moment."""
    sid = some_submission(service)["submission_id"]
    start = get(client, f"submission_id={sid}")
    service.edit(service.project("default"), sid, "admin@example.com", {"memo": "edited"})
    edited = get(client, f"submission_id={sid}")
    assert items(edited)[0]["memo"]["text"] == "edited"
    service.reset()
    assert get(client, f"submission_id={sid}") == start
    assert items(start) == [service.stored_submission("default", sid)]


def test_a_filtered_read_by_id_is_not_the_plain_one(client: TestClient, service: Service) -> None:
    """An id with another parameter is a read of its own: a user id that does not match
    finds nothing, though the id alone was read (and kept) just before."""
    sid = some_submission(service)["submission_id"]
    assert items(get(client, f"submission_id={sid}"))[0]["submission_id"] == sid
    assert items(get(client, f"submission_id={sid}&userid=no-such-user")) == []
    assert items(get(client, f"submission_id={sid}&count=1"))[0]["submission_id"] == sid
