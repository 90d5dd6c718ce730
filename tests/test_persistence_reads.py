"""A state file loaded reads exactly as the server that saved it (issue 37).

A file this server wrote is loaded in one pass (``tools/state_reader.py``): each line
stored as the blob it is, its store's indexes built from the file's ``line_index``. These
tests compare, over HTTP, every read of the saved server with the loaded one's (each
submission, every page, by user id and e-mail, a duplicate check), for a file as saved,
one without a line index (saved before it), one edited by hand (the careful path, which
must not trust a stale index), and refuse a damaged one with its clear error.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import pytest

from conftest import HEADERS
from idv_mock import Service, ServiceConfig
from idv_mock.api.app import create_app
from idv_mock.backend import bulk_store
from idv_mock.backend import store as store_module
from idv_mock.backend.packing import is_packed
from idv_mock.ground.progress import SILENT
from idv_mock.tools import persistence, state_reader
from idv_mock.transport import ASGITransport, InProcessClient

PACK_FROM = 30  # packed from here on, as a 100k store is from 2,000
ADMIN = "admin@example.com"
SHARED = {"userid": "shared-user", "email": "shared@example.com"}


@pytest.fixture(autouse=True)
def small_packing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_module, "PACK_FROM", PACK_FROM)
    monkeypatch.setattr(bulk_store, "PACK_FROM", PACK_FROM)


@pytest.fixture
def saved(tmp_path: Path) -> Iterator[tuple[Service, Path]]:
    """A server with two projects (one packed), shared user ids and e-mails, duplicates, an
    edit and a deleted part, saved to a state file."""
    service = Service(ServiceConfig(seed_count=60))
    service.create_project({"project_id": "second", "api_key": "second-key", "admins": [ADMIN]})
    service.create_project({"project_id": "empty", "api_key": "empty-key", "admins": [ADMIN]})
    for _ in range(3):
        service.create_submission("default", dict(SHARED))
        service.create_submission("second", dict(SHARED))
    project = service.project("default")
    sids = list(project.store.blobs)
    with _client(service) as client:
        body = {"submissionId": sids[0], "admin": ADMIN, "data": {"memo": "seen"}}
        assert client.patch("/v3/submission", json=body).status_code == 200
    service.delete_parts(project, sids[5], ["email"], None)
    path = tmp_path / "state.json"
    persistence.save(service, path, epoch=4)
    yield service, path
    service.close()


def _client(service: Service, key: str = HEADERS["x-api-key"]) -> InProcessClient:
    return InProcessClient(
        transport=ASGITransport(create_app(service)),
        base_url="http://idv-mock",
        headers={"x-api-key": key},
    )


def _pages(client: httpx.Client, count: int) -> Iterator[bytes]:
    params = {"count": str(count)}
    while True:
        answer = client.get("/v3/submission", params=params)
        assert answer.status_code == 200
        yield answer.content
        after = answer.json().get("nextpageKey")
        if after is None:
            return
        params = {"count": str(count), "nextpage_id": after["id"]}
        params["nextpage_date"] = after["created_at"]


def _reads(service: Service) -> dict[str, bytes]:
    """What every read answers, over HTTP: each submission, every page, by user id and
    e-mail, and a new submission's duplicate findings (the duplicate index)."""
    found: dict[str, bytes] = {}
    for project_id, key in (("default", "mock-api-key"), ("second", "second-key")):
        store = service.project(project_id).store
        with _client(service, key) as client:
            for sid in store.blobs:
                found[sid] = client.get("/v3/submission", params={"submission_id": sid}).content
            for count in (7, 50):
                for i, page in enumerate(_pages(client, count)):
                    found[f"{project_id} page {count} {i}"] = page
            users = {m[1] for m in store.meta.values()} | {SHARED["userid"]}
            for userid in sorted(u for u in users if u):
                answer = client.get("/v3/submission", params={"userid": userid}).content
                found[f"{project_id} user {userid}"] = answer
            emails = {m[2] for m in store.meta.values() if m[2]}
            for email in sorted(emails):
                answer = client.get("/v3/submission", params={"email": email}).content
                found[f"{project_id} email {email}"] = answer
    first = next(iter(service.project("default").store))
    again = service.create_submission("default", {"data": first["data"]})  # a duplicate
    found["duplicate"] = orjson.dumps(
        {k: again[k] for k in ("duplicated_users", "duplicated_selfie_users")}
    )
    return found


def _loaded(path: Path) -> Service:
    service = Service(ServiceConfig(seed_count=0))
    assert persistence.load(service, path)
    return service


def _rewritten(path: Path, body: bytes, epoch: int = 4) -> None:
    """``body`` (the document after its ``{``) under a header with a matching digest."""
    digest = persistence._digest(epoch, memoryview(body))
    path.write_bytes(persistence._header(epoch, digest) + body)


def _body(path: Path) -> bytes:
    raw = path.read_bytes()
    return raw[persistence._HEADER.match(raw).end() :]  # type: ignore[union-attr]


def test_a_loaded_state_reads_exactly_as_the_saved_one(saved: tuple[Service, Path]) -> None:
    source, path = saved
    loaded = _loaded(path)
    store = loaded.project("default").store
    assert sum(map(is_packed, store.blobs.values())) > 0  # the large store's way
    assert loaded.export_state_json() == source.export_state_json()
    assert _reads(loaded) == _reads(source)
    loaded.close()


def test_a_file_saved_without_a_line_index_reads_the_same(saved: tuple[Service, Path]) -> None:
    source, path = saved
    body = re.sub(rb',"line_index":(\[\]|\[[^\n]*?\]\])', b"", _body(path))
    assert b"line_index" not in body
    _rewritten(path, body)
    loaded = _loaded(path)
    assert _reads(loaded) == _reads(source)
    loaded.close()


def test_an_edited_file_is_read_from_its_submissions_not_its_index(
    saved: tuple[Service, Path],
) -> None:
    source, path = saved
    raw = path.read_bytes()
    sid = next(iter(source.project("default").store.blobs))
    at = raw.index(b'"submission_id":"%s"' % sid.encode())
    line_end = raw.index(b"\n", at)
    line_start = raw.rindex(b"\n", 0, at)
    line = raw[line_start:line_end]
    userid = orjson.loads(line)["userid"].encode()
    edited = line.replace(b'"userid":"%s"' % userid, b'"userid":"edited-by-hand"')
    path.write_bytes(raw[:line_start] + edited + raw[line_end:])  # the digest no longer matches
    loaded = _loaded(path)
    with _client(loaded) as client:
        items = client.get("/v3/submission", params={"userid": "edited-by-hand"}).json()["Items"]
        assert [i["submission_id"] for i in items] == [sid]
        before = client.get("/v3/submission", params={"userid": userid.decode()}).json()
        assert sid not in {i["submission_id"] for i in before.get("Items", [])}
    loaded.close()


def test_a_file_with_a_submission_twice_is_refused_with_its_error(
    saved: tuple[Service, Path],
) -> None:
    _, path = saved
    body = _body(path)
    first = body.index(b"\n{")
    line = body[first : body.index(b"\n", first + 1)]
    _rewritten(path, body.replace(line, line + b"\n," + line, 1))  # the digest matches
    with pytest.raises(persistence.StateFileError, match=r"duplicate submission_id .*; not ov"):
        persistence.load(Service(ServiceConfig(seed_count=0)), path)


def test_files_the_reader_did_not_write_go_to_the_careful_reader(
    saved: tuple[Service, Path],
) -> None:
    """The one-pass reader gives up (None) on what is not its own: a file whose digest no
    longer matches (edited by hand), which the careful reader then loads; a signed one
    whose text is not JSON, which the careful reader refuses with its clear error."""
    _, path = saved
    raw = path.read_bytes()
    edited = raw.replace(b'"userid":"shared-user"', b'"userid":"edited-user"', 1)
    assert edited != raw
    path.write_bytes(edited)
    assert state_reader.read_lined(path, persistence._HEADER, SILENT) is None
    loaded = _loaded(path)
    with _client(loaded) as client:
        items = client.get("/v3/submission", params={"userid": "edited-user"}).json()["Items"]
    assert len(items) == 1
    loaded.close()
    body = _body(path)
    _rewritten(path, body.replace(b'"projects":', b'"projects"', 1))  # the digest matches
    assert state_reader.read_lined(path, persistence._HEADER, SILENT) is None
    with pytest.raises(persistence.StateFileError, match="not a readable JSON file"):
        persistence.read(path)


def test_a_signed_file_with_a_submission_off_its_line_loads_every_submission(
    saved: tuple[Service, Path],
) -> None:
    """One submission joined to the document's text instead of on a line of its own (the
    same JSON, signed again): not the one-pass reader's (a project mixing lines and
    objects), and the careful reader takes each submission where it is, not by count."""
    source, path = saved
    body = _body(path)
    first = body.index(b"\n{")
    _rewritten(path, body[:first] + body[first + 1 :])  # the digest matches
    assert state_reader.read_lined(path, persistence._HEADER, SILENT) is None
    loaded = _loaded(path)
    assert _reads(loaded) == _reads(source)
    loaded.close()


def test_a_bug_in_the_one_pass_reader_surfaces_instead_of_falling_back(
    saved: tuple[Service, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self: bulk_store.BulkStore, line: bytes) -> None:
        raise KeyError("a bug")

    monkeypatch.setattr(bulk_store.BulkStore, "add", broken)
    with pytest.raises(KeyError, match="a bug"):
        persistence.read(saved[1])
