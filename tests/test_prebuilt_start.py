"""The start built ahead reads exactly as a seeded one (issue 37: no seeding on a first use).

The default start ships with the package (``src/idv_mock/backend/starts/``); a service
made from it, or from a start kept in pytest's cache, must answer every call as a
freshly seeded service does, byte for byte: each submission's GET, every list page, the
reduced and typed reads, the state export, and what is created and reset afterwards.
"""

from __future__ import annotations

import gzip
import hashlib
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import orjson
import pytest

from conftest import HEADERS, LiveServer, walk_pages
from idv_mock import Service, ServiceConfig
from idv_mock.backend import prebuilt
from idv_mock.ground.compat import version_numbers


def _needs_the_faker_it_was_built_with() -> None:
    """With another Faker than the one it was built with (the compatibility cells' lowest,
    or a release newer than the shipped start) the shipped start is not used: its key names
    Faker's version, so the service seeds as before (the other tests here and test_cli.py's
    seeded bytes cover that). A new Faker release must not turn CI red by itself; the
    project's own environment, where `make starts` runs, checks the start."""
    built, installed = prebuilt.BUILT_WITH.read_text().strip(), prebuilt.faker_version()
    if version_numbers(installed) != version_numbers(built):
        pytest.skip(f"the shipped start is made with Faker {built}, this is {installed}")


def test_the_shipped_default_start_is_made_by_the_code_as_it_is() -> None:
    _needs_the_faker_it_was_built_with()
    path = prebuilt.path_for(ServiceConfig())
    assert path is not None
    shipped = sorted(p.name for p in prebuilt.STARTS.glob("start-*.json.gz"))
    assert shipped == [path.name], (
        "the prebuilt start is stale (seeding code, schemas or Faker changed): run `make starts`"
    )
    assert path.read_bytes() == prebuilt.build(ServiceConfig())


# sha256 of the default seeded state document (``export_state_json``) with the Faker the
# start is built with: what the shipped start has always decompressed to (issue 37)
SEEDED_DEFAULT_SHA256 = "9dd19ac1492e085a93194b6338edf8f53d62cd91c804a2221b94a4e4865b7ac9"


def test_the_shipped_start_is_the_seeded_state_document_on_lines() -> None:
    """The shipped file holds the seeded document as ``export_state_json`` writes it, each
    submission on a line of its own with the project's ``line_index``: decoded whole, less
    that index, it is the seeded document; each line is the stored submission's bytes; and
    the service made from it exports the seeded document byte for byte."""
    _needs_the_faker_it_was_built_with()
    path = prebuilt.path_for(ServiceConfig())
    assert path is not None
    raw = gzip.decompress(path.read_bytes())
    with prebuilt.disabled():
        seeded = Service(ServiceConfig())
    made = Service(ServiceConfig())
    try:
        assert made.started_prebuilt and not seeded.started_prebuilt
        exported = seeded.export_state_json()
        assert hashlib.sha256(exported).hexdigest() == SEEDED_DEFAULT_SHA256
        assert made.export_state_json() == exported
        doc = orjson.loads(raw)
        [project] = doc["projects"]
        store = seeded.project("default").store
        assert project.pop("line_index") == [[sid, *store.meta[sid]] for sid in store.blobs]
        assert doc == orjson.loads(exported)
        assert raw.split(b"\n")[1::2] == list(store.blobs.values())
        assert list(made.project("default").store.blobs.values()) == list(store.blobs.values())
    finally:
        made.close()
        seeded.close()


@pytest.mark.parametrize(
    "damage",
    [
        lambda raw: raw[: len(raw) // 2],  # cut short
        lambda raw: raw.replace(b"\n", b"", 1),  # a submission off its line
        lambda raw: raw.replace(b"\n,\n", b"\n,0,\n", 1),  # one more than its lines
        lambda raw: b"[]",  # not a state document
    ],
)
def test_a_damaged_start_is_seeded_instead(
    damage: Callable[[bytes], bytes], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A shipped start that does not read as ``build`` lays it out is not used: the
    service seeds, and reads as a seeded one."""
    _needs_the_faker_it_was_built_with()
    path = prebuilt.path_for(ServiceConfig())
    assert path is not None
    broken = tmp_path / path.name
    broken.write_bytes(gzip.compress(damage(gzip.decompress(path.read_bytes()))))
    monkeypatch.setattr(prebuilt, "STARTS", tmp_path)
    assert prebuilt.load(ServiceConfig()) is None
    service = Service(ServiceConfig())
    try:
        assert not service.started_prebuilt
        assert hashlib.sha256(service.export_state_json()).hexdigest() == SEEDED_DEFAULT_SHA256
    finally:
        service.close()


def test_a_first_service_loads_no_faker_and_seeds_nothing() -> None:
    _needs_the_faker_it_was_built_with()
    code = (
        "import sys\n"
        "from idv_mock import Service\n"
        "s = Service()\n"
        "assert len(s.project('default').store) == 50\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'faker'))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def _bodies(client: httpx.Client, service: Service) -> Iterator[tuple[str, bytes]]:
    """Every read a client can make of the seeded submissions, with its body."""
    store = service.project("default").store
    for sid in sorted(store.blobs):
        sub = store.get(sid)
        assert sub is not None
        yield from _get(client, {"submission_id": sid})
        for kind in ("kyc", "aml", "data", "others"):
            yield from _get(client, {"submission_id": sid, "request_type": kind})
        yield from _get(client, {"userid": sub["userid"]})
        yield from _get(client, {"email": sub["email"]})
    for count in (1, 7, 50):  # every page, followed by its nextpageKey
        for answer in walk_pages(client, {"count": str(count)}):
            params = sorted(answer.request.url.params.items())
            yield f"{answer.status_code} {params}", answer.content


def _get(client: httpx.Client, params: dict[str, str]) -> Iterator[tuple[str, bytes]]:
    answer = client.get("/v3/submission", params=params)
    yield f"{answer.status_code} {sorted(params.items())}", answer.content


def _same_reads(made: Service, seeded: Service) -> None:
    with ExitStack() as stack:
        clients = [
            stack.enter_context(
                httpx.Client(base_url=f"http://127.0.0.1:{live.port}", headers=HEADERS)
            )
            for live in (stack.enter_context(LiveServer(s)) for s in (made, seeded))
        ]
        reads = [list(_bodies(client, seeded)) for client in clients]
        assert len(reads[0]) > 200
        assert all(key.startswith("200 ") for key, _ in reads[0])
        assert reads[0] == reads[1]
    assert made.export_state_json() == seeded.export_state_json()
    after = [s.create_submission("default", {"userid": "u1"}) for s in (made, seeded)]
    assert after[0] == after[1]
    for service in (made, seeded):
        service.reset()
    assert made.export_state_json() == seeded.export_state_json()


def test_the_prebuilt_start_answers_every_read_as_a_seeded_one() -> None:
    _needs_the_faker_it_was_built_with()
    config = ServiceConfig()
    with prebuilt.disabled():
        seeded = Service(config)
    made = Service(config)
    assert prebuilt.load(config) is not None  # made from the shipped start, not seeded
    try:
        _same_reads(made, seeded)
    finally:
        made.close()
        seeded.close()


@pytest.mark.parametrize("random_seed", [1, 7, 12345])
def test_a_kept_start_answers_every_read_as_a_seeded_one(random_seed: int) -> None:
    """The pytest plugin's cached start (any seed): the same path, other data."""
    config = ServiceConfig(seed_count=30, random_seed=random_seed)
    seeded = Service(config)
    made = Service(config, start=seeded.export_state())
    try:
        _same_reads(made, seeded)
    finally:
        made.close()
        seeded.close()


def test_a_configuration_not_prebuilt_is_seeded() -> None:
    assert prebuilt.load(ServiceConfig(seed_count=7)) is None
    assert prebuilt.key(ServiceConfig(clock_mode="wall")) is None
    assert len(Service(ServiceConfig(seed_count=7)).project("default").store) == 7
