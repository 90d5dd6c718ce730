"""A large store keeps its submissions compressed (``backend/packing.py``, issue 37): every
read must be byte for byte what the plain store gives (each submission by id and by each
request type, by user id and e-mail, every page, the state export, the applicant search)
and so must everything after a change, a creation, a reset and a state import.

The plain side is the same seeded service with packing switched off; 2,500 submissions
put 500 of them past ``PACK_FROM``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import pytest

from conftest import HEADERS, walk_pages
from idv_mock import Service, ServiceConfig
from idv_mock.api.app import create_app
from idv_mock.backend import store as store_module
from idv_mock.backend.bulk_store import BulkStore
from idv_mock.backend.packing import PACK_FROM, Behind, is_packed
from idv_mock.backend.store import Selection
from idv_mock.tools import persistence
from idv_mock.transport import ASGITransport, InProcessClient

SIZE = 2_500
CONFIG = ServiceConfig(seed_count=SIZE)
ADMIN = "admin@example.com"


def _service(pack_from: int = PACK_FROM, start: dict[str, object] | None = None) -> Service:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(store_module, "PACK_FROM", pack_from)
        return Service(CONFIG, start=start)


@pytest.fixture(scope="module")
def pair() -> Iterator[tuple[Service, Service]]:
    """(packed, plain): the same seed, packed from ``PACK_FROM`` submissions on and never."""
    packed, plain = _service(), _service(10**9)
    yield packed, plain
    packed.close()
    plain.close()


def _client(service: Service) -> InProcessClient:
    return InProcessClient(
        transport=ASGITransport(create_app(service)), base_url="http://idv-mock", headers=HEADERS
    )


def _pages(client: httpx.Client, count: int) -> Iterator[bytes]:
    for answer in walk_pages(client, {"count": str(count)}):
        assert answer.status_code == 200
        yield answer.content


def _reads(service: Service, every: int = 1) -> Iterator[tuple[str, bytes]]:
    """Every submission (or every ``every``-th) as each read answers it, every page, the
    export."""
    project = service.project("default")
    sids = sorted(project.store.blobs)
    for sid in sids[::every]:
        yield (
            f"{sid}",
            b"".join(
                service.read(
                    project, Selection(submission_id=sid), reduced=False, request_type=None
                )[0]
            ),
        )
    for sid in sids[:: every * 5]:
        for request_type in ("kyc", "aml", "data", "others"):
            items, _ = service.read(
                project, Selection(submission_id=sid), reduced=False, request_type=request_type
            )
            yield f"{sid} {request_type}", b"".join(items)
        sub = project.store.get(sid) or {}
        for sel in (Selection(userid=sub.get("userid")), Selection(email=sub.get("email"))):
            if sel.userid or sel.email:
                items, _ = service.read(project, sel, reduced=True, request_type=None)
                yield f"{sel}", b",".join(items)
    with _client(service) as client:
        for count in (7, 50):
            for i, page in enumerate(_pages(client, count)):
                yield f"page {count} {i}", page
        for sid in sids[:: every * 50]:  # the HTTP path of single reads too
            for params in ({"submission_id": sid}, {"submission_id": sid, "request_type": "kyc"}):
                yield f"GET {params}", client.get("/v3/submission", params=params).content
    yield "export", service.export_state_json()


def _same(packed: Service, plain: Service, every: int = 1) -> None:
    got, want = dict(_reads(packed, every)), dict(_reads(plain, every))
    assert got.keys() == want.keys()
    differ = [key for key in want if got[key] != want[key]]
    assert differ == []


def test_a_large_store_keeps_its_submissions_packed(pair: tuple[Service, Service]) -> None:
    packed, plain = (s.project("default").store for s in pair)
    past = [sid for sid, blob in packed.blobs.items() if is_packed(blob)]
    assert len(past) == SIZE - PACK_FROM
    assert not any(map(is_packed, plain.blobs.values()))
    size = sum(len(packed.blobs[sid]) for sid in past)
    assert size < 0.2 * sum(len(plain.blobs[sid]) for sid in past)


def test_seeding_packs_in_batches_on_a_second_thread_to_the_same_bytes(
    pair: tuple[Service, Service],
) -> None:
    """Seeding hands packing to a worker in batches (``packing.Behind``): with batches of
    64, several come back while seeding goes on; every one ends packed, reading the same."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Behind, "BATCH", 64)
        service = Service(CONFIG)
    store, packed = service.project("default").store, pair[0].project("default").store
    assert store.behind is None and not store.pack_behind
    assert sum(map(is_packed, store.blobs.values())) == SIZE - PACK_FROM
    assert list(store.all_json()) == list(packed.all_json())
    service.close()


def test_a_batch_leaves_a_submission_replaced_meanwhile_as_replaced(
    pair: tuple[Service, Service],
) -> None:
    store = pair[0].project("default").store
    assert store.packer is not None
    blobs = {"a": b'{"a":1}', "b": b'{"b":2}'}
    behind = Behind(store.packer, blobs)
    for sid, blob in list(blobs.items()):
        behind.add(sid, blob)
    blobs["b"] = b'{"b":3}'  # an edit while its batch was out
    behind.close()
    assert is_packed(blobs["a"]) and store.packer.unpack(blobs["a"]) == b'{"a":1}'
    assert blobs["b"] == b'{"b":3}'


def test_every_read_of_a_packed_store_is_the_plain_stores(pair: tuple[Service, Service]) -> None:
    _same(*pair)


def test_a_packed_page_read_again_gives_the_same_items(pair: tuple[Service, Service]) -> None:
    """A page of packed submissions is decompressed once: read again, it is the same item
    objects (what the page memo finds it by), and the plain store's bytes."""
    packed, plain = pair
    project, store = packed.project("default"), packed.project("default").store
    sel = Selection(after=store.order[-60], count=50)
    ids, _ = store.select(sel)
    assert len(ids) == 50 and all(is_packed(store.blobs[sid]) for sid in ids)
    first, key = packed.read(project, sel, reduced=False, request_type=None)
    again, _ = packed.read(project, sel, reduced=False, request_type=None)
    assert all(a is b for a, b in zip(first, again, strict=True))
    plain_page = plain.read(plain.project("default"), sel, reduced=False, request_type=None)
    assert (first, key) == plain_page


def test_after_changes_a_reset_and_an_import_reads_are_the_plain_stores(
    pair: tuple[Service, Service],
) -> None:
    start = pair[1].export_state()
    packed, plain = _service(300, start), _service(10**9, start)  # imported, then packed
    try:
        assert sum(map(is_packed, packed.project("default").store.blobs.values())) == SIZE - 300
        project_sids = sorted(plain.project("default").store.blobs)
        oldest = min(plain.project("default").store.order)[1]  # packed on the packed side
        for service in (packed, plain):
            project = service.project("default")
            with _client(service) as client:
                body = {"submissionId": oldest, "admin": ADMIN, "data": {"memo": "seen"}}
                assert client.patch("/v3/submission", json=body).status_code == 200
                body["data"] = {"kycStatus": "rejected"}
                assert client.patch("/v3/submission", json=body).status_code == 200
            service.delete_parts(project, project_sids[7], ["email"], None)
            service.create_submission("default", {"userid": "u1"})
        store = plain.project("default").store
        approved = (orjson.loads(store.json(sid)) for _, sid in store.order[: SIZE // 2])
        applicant = next(s for s in approved if s["kyc"]["result"] == "approved")["applicant_id"]
        found = [s.applicants(s.project("default"), applicant) for s in (packed, plain)]
        assert found[0] == found[1] != []
        _same(packed, plain, every=5)
        for service in (packed, plain):
            service.reset()
        assert packed.export_state_json() == plain.export_state_json()
    finally:
        packed.close()
        plain.close()


def test_a_state_file_of_a_packed_store_loads_as_it_was_saved(
    pair: tuple[Service, Service], tmp_path: Path
) -> None:
    packed, plain = pair
    path = tmp_path / "state.json"
    persistence.save(packed, path, epoch=3)
    assert path.read_bytes().count(b"\n{") == SIZE  # each submission on a line of its own
    read = persistence.read(path)
    lines = read.doc["projects"][0]["submissions"]
    assert isinstance(lines, BulkStore) and len(lines) == SIZE  # stored as read, not decoded
    whole = orjson.loads(path.read_bytes())
    del whole["state_file"]
    index = whole["projects"][0].pop("line_index")  # what the reader builds the indexes from
    assert index == [[s["submission_id"], s["created_at"], s.get("userid"), s.get("email")]
                     for s in whole["projects"][0]["submissions"]]  # fmt: skip
    assert whole == orjson.loads(plain.export_state_json())  # the same JSON as the export
    restarted = Service(ServiceConfig(seed_count=0))
    try:
        assert persistence.load(restarted, path)
        assert restarted.export_state_json() == plain.export_state_json()
        assert sum(map(is_packed, restarted.project("default").store.blobs.values())) > 0
    finally:
        restarted.close()


def test_a_state_file_saved_before_the_line_layout_loads_too(
    pair: tuple[Service, Service], tmp_path: Path
) -> None:
    body = memoryview(pair[1].export_state_json())[1:]  # as saves wrote it: no lines
    header = b'{"state_file":{"epoch":2,"sha256":"%s"},' % persistence._digest(2, body).encode()
    path = tmp_path / "state.json"
    path.write_bytes(header + body)
    restarted = Service(ServiceConfig(seed_count=0))
    try:
        assert persistence.load(restarted, path)
        assert restarted.export_state_json() == pair[1].export_state_json()
    finally:
        restarted.close()
