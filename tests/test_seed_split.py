"""A large seeding split over two processes (``backend/seed_split.py``) stores the very
bytes the one-process seeding stores (issue 37: 100k submissions in seconds).

Each case seeds in a fresh child process (a fork is only made where no other thread
runs, and a test process has some), with the split lowered to start at ``PACK_FROM``
(2,000) in stretches of 64, so a few thousand submissions take its path.
"""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

from test_seed_golden import GOLDEN

CHILD = """
import io, json, sys, threading
sys.path.insert(0, {tests!r})
from test_seed_golden import _digests, _large
from idv_mock import Service, ServiceConfig
from idv_mock.backend import seed_split
from idv_mock.fake import skim
from idv_mock.ground.progress import Progress

ran = []
run = seed_split.Split.run
def recorded(self, *args):
    ran.append(run(self, *args))
    return ran[-1]
seed_split.Split.run = recorded
seed_split.SPLIT_FROM, seed_split.BATCH = {split_from}, 64
mode = {mode!r}
if mode == "threaded":
    stop = threading.Event()
    threading.Thread(target=stop.wait, daemon=True).start()
if mode == "nofork":
    import multiprocessing.context
    def refused(self):
        raise OSError("Resource temporarily unavailable")
    multiprocessing.context.ForkProcess.start = refused
if mode == "diverged":
    skim.AFTER_ATTEMPTS += 2  # a skim that no longer follows the build's draws
    try:
        _digests(_large())  # a read of a submission built behind raises it
    except seed_split.Diverged as error:
        print(json.dumps({{"diverged": str(error)}}))
    sys.exit(0)

class Terminal(io.StringIO):
    def isatty(self):
        return True

shown = Terminal()
large = Service(ServiceConfig(seed_count=2_500), progress=Progress.on_terminal(shown))
options = {{"option_mask_documentNumber": True, "option_mask_idNumber": True}}
masked = Service(ServiceConfig(seed_count=2_300, random_seed=3, options=options))
out = {{"ran": ran, "large": _digests(large), "masked": _digests(masked)}}
print(json.dumps({{**out, "shown": shown.getvalue()}}))
"""


def _seed(mode: str, split_from: int = 0) -> dict[str, Any]:
    tests = str(Path(__file__).resolve().parent)
    code = CHILD.format(tests=tests, split_from=split_from, mode=mode)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tests
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


@pytest.fixture(scope="module")
def split() -> dict[str, Any]:
    return _seed("split")


def test_the_split_seeding_stores_the_one_process_bytes(split: dict[str, Any]) -> None:
    serial = _seed("serial", split_from=10**9)
    assert split["ran"] == [True, True]
    assert serial["ran"] == []
    assert split["large"] == serial["large"]
    assert split["masked"] == serial["masked"]  # masked numbers re-used as the serial ones


def test_the_split_seeding_gives_the_recorded_digests(split: dict[str, Any]) -> None:
    faker = version("faker")
    if faker not in GOLDEN:
        pytest.skip(f"digests recorded for Faker {', '.join(GOLDEN)}, not {faker}")
    assert split["large"] == GOLDEN[faker]["seed0-2500"]


def test_the_split_seeding_shows_its_progress(split: dict[str, Any]) -> None:
    last = split["shown"].rsplit("\r\x1b[2K", 1)[-1]
    assert last.startswith("seeding: 2,500/2,500 submissions in "), split["shown"][-300:]
    told = last.splitlines()[1]  # the count walked and indexed, then what is left to build
    assert told.startswith("seeding: all indexed; building the last "), last
    assert told.endswith(" in the background"), last


@pytest.mark.parametrize("mode", ["threaded", "nofork"])
def test_where_it_cannot_fork_seeding_stays_in_one_process(mode: str) -> None:
    """Another thread running (a fork would copy its held locks, not the thread), or no
    process to be had: no split, the same bytes."""
    found = _seed(mode)
    assert found["ran"] == [False, False]
    faker = version("faker")
    if faker in GOLDEN:
        assert found["large"] == GOLDEN[faker]["seed0-2500"]


def test_a_skim_that_draws_differently_is_caught() -> None:
    """Four more words skipped a submission: its build draws another id, or (were the
    ids right) leaves the stream elsewhere; either is an error, never other bytes."""
    found = _seed("diverged")
    message = found["diverged"]
    assert message.startswith("built ") or message == "the stream is not where the skim left it"


def test_a_factory_given_the_pools_builds_what_the_filling_one_built() -> None:
    """The worker gets the Faker pools the walk filled after the fork (none in the
    seedings measured: all are filled in the first 2,000) and may fill none itself."""
    from datetime import datetime, timezone

    from idv_mock.fake.factory import SubmissionFactory

    when = datetime(2026, 5, 4, 3, 2, 1, 123000, tzinfo=timezone.utc)
    filler, given, bare = SubmissionFactory(5), SubmissionFactory(5), SubmissionFactory(5)
    with filler.pooled(4_000), given.pooled(4_000), bare.pooled(4_000):
        state = filler.rng.getstate()
        built = filler.build(when)  # fills the pools it picks from
        given.pools_only()
        given.install_pools(filler.filled_pools())
        given.rng.setstate(state)
        assert given.build(when) == built
        bare.pools_only()
        with pytest.raises(LookupError, match="no Faker here"):
            bare.build(when)


HTTP_CHILD = """
import hashlib, json, sys, tempfile
from pathlib import Path
sys.path.insert(0, {tests!r})
import httpx
from test_seed_golden import _digests
from idv_mock import Service, ServiceConfig
from idv_mock.api.app import create_app
from idv_mock.backend import seed_split, seed_workers
from idv_mock.tools import persistence
from pytest_idv_mock.fixtures import serve_in_thread

seed_split.SPLIT_FROM, seed_split.BATCH = {split_from}, 64
seed_workers.AHEAD = 0  # no stretch is handed to a worker before a read asks for it
blob = seed_workers.Crew.blob
asks = []
def asking(self, sid):
    if sid in self._of:
        asks.append(sid)
    return blob(self, sid)
seed_workers.Crew.blob = asking

service = Service(ServiceConfig(seed_count=2_500))
store = service.project("default").store
out = {{"left": store.unbuilt.left if store.unbuilt else 0}}
oldest_first = [sid for _, sid in store.order]
newest, middle, plain = oldest_first[-1], oldest_first[2_200], oldest_first[100]
email = store.meta[oldest_first[2_300]][2]
seeded = service.export_state_parts()  # the state as seeded, saved after the changes below
bodies = []
with serve_in_thread(create_app(service)) as running:
    base = f"http://127.0.0.1:{{running.port}}"
    with httpx.Client(base_url=base, headers={{"x-api-key": "mock-api-key"}}, timeout=60) as c:
        def got(path, **params):
            r = c.get(path, params=params)
            bodies.append((r.status_code, hashlib.sha256(r.content).hexdigest()))
        got("/v3/submission", submission_id=newest)
        got("/v3/submission")
        got("/v3/submission", email=email)
        body = {{"submissionId": middle, "admin": "admin@example.com", "data": {{"memo": "seen"}}}}
        r = c.patch("/v3/submission", json=body)
        bodies.append((r.status_code, hashlib.sha256(r.content).hexdigest()))
        got("/v3/submission", submission_id=middle)
        got("/v3/submission", submission_id=plain)
        out["left_after_reads"] = store.unbuilt.left if store.unbuilt else 0
        path = Path(tempfile.mkdtemp()) / "state.json"
        persistence.save(service, path, parts=seeded)
        out["saved"] = hashlib.sha256(path.read_bytes()).hexdigest()
        got("/__admin/state")
out.update(bodies=bodies, asked=len(asks), digests=_digests(service))
print(json.dumps(out))
"""


def _served(split_from: int) -> dict[str, Any]:
    tests = str(Path(__file__).resolve().parent)
    code = HTTP_CHILD.format(tests=tests, split_from=split_from)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tests
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def test_reads_changes_and_saves_of_submissions_not_built_yet_give_the_seeded_bytes() -> None:
    """The service answers once every submission is indexed; its workers here build a
    stretch only when a read asks for it (none is handed on ahead). Over HTTP, a read by
    id, the newest page, a read by e-mail, a PATCH and its read, a save of the state as
    seeded and an export give the one-process seeding's bytes, and the stretches no read
    asked for are still unbuilt after them (the reads did not wait for the whole seeding)."""
    behind, serial = _served(0), _served(10**9)
    assert behind["left"] == 500  # 2,500 seeded, the first 2,000 in one process
    assert serial["left"] == 0
    assert behind["asked"] > 0
    assert 0 < behind["left_after_reads"] < 500
    assert [status for status, _ in behind["bodies"]] == [200] * 7
    assert behind["bodies"] == serial["bodies"]
    assert behind["saved"] == serial["saved"]
    assert behind["digests"] == serial["digests"]


ORPHANED = """
import os, pickle, sys, time
from multiprocessing import get_context
from idv_mock.backend import seed_workers

class Factory:
    def pools_only(self): pass
    def install_pools(self, pools): pass

class Build:
    factory = Factory()

    def __call__(self, stretch):
        return []

context = get_context("fork")
tasks, results = context.Queue(), context.Queue()
worker = context.Process(target=seed_workers._work, args=(0, Build(), tasks, results, os.getpid()))
worker.start()
tasks.put(((1, [], pickle.dumps("a stretch")), []))
assert results.get(timeout=30) == (0, 1, [])  # the worker is in its loop, building
print(worker.pid, flush=True)
time.sleep(600)
"""


def _running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie waiting for its reaper counts as gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return "\nState:\tZ" not in status


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc (Linux)")
def test_a_worker_whose_seeding_process_is_killed_outright_ends() -> None:
    """SIGKILL (or the OOM killer) runs no ``atexit`` and stops no worker: an idle worker
    notices its parent is gone and ends, instead of waiting for a task for ever."""
    import signal
    import time

    seeding = subprocess.Popen([sys.executable, "-c", ORPHANED], stdout=subprocess.PIPE, text=True)
    assert seeding.stdout is not None
    with seeding.stdout:
        worker = int(seeding.stdout.readline())
    assert _running(worker)
    seeding.send_signal(signal.SIGKILL)
    seeding.wait()
    deadline = time.monotonic() + 30  # the worker looks twice a second (PARENT_CHECK_S)
    while _running(worker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _running(worker)
