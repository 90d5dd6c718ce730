"""``idv-mock serve`` loads Faker on a background thread once it accepts, so the first
submission it creates does not load it inside the request (docs/cli.md)."""

from __future__ import annotations

import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import httpx
import pytest

from conftest import ServeProcess
from idv_mock.fake import factory
from idv_mock.fake.factory import SubmissionFactory

# ``idv-mock serve``, with each build of the Faker prototype written to a file, by the name
# of the thread that asked for it (a request's thread is uvicorn's loop or a worker's)
SPIED_SERVE = """
import sys, threading
from idv_mock.fake import factory
from idv_mock.cli import main

made, record = factory._prototype, sys.argv.pop(1)

def spied():
    with open(record, "a") as out:
        out.write(threading.current_thread().name + "\\n")
    return made()

factory._prototype = spied
sys.exit(main(sys.argv[1:]))
"""

WHEN = datetime(2026, 1, 1, 9, tzinfo=timezone.utc)


def _builds(record: Path, server: ServeProcess) -> list[str]:
    """The threads that built the prototype, once one has (the warm-up's deadline is a
    server's start's, as ServeProcess waits for it)."""
    deadline = time.monotonic() + 30
    while not record.exists():
        assert server.proc.poll() is None, server.stop()
        assert time.monotonic() < deadline, "no Faker was built after the server started"
        time.sleep(0.05)
    return record.read_text().splitlines()


@pytest.mark.live
def test_serve_builds_faker_on_its_warm_up_thread_not_in_the_first_creation(
    tmp_path: Path,
) -> None:
    record = tmp_path / "builds.txt"
    server = ServeProcess("--seed-count", "0")  # seeding nothing: no Faker at the start
    server.cmd = [sys.executable, "-c", SPIED_SERVE, str(record), *server.cmd[3:]]
    with server:
        assert _builds(record, server) == ["idv-mock-warm-up"]
        created = httpx.post(
            server.base + "/__admin/projects/default/submissions",
            json={"userid": "first-after-warm-up"},
            timeout=10,
        )
        assert created.status_code == 201, created.text
        assert created.json()["userid"] == "first-after-warm-up"
        assert created.json()["data"]["full_name"]  # a Faker name: the warmed Faker drew it
    assert record.read_text().splitlines() == ["idv-mock-warm-up"]


def test_a_warmed_factory_draws_what_an_unwarmed_one_draws() -> None:
    """Warmed before a reseed (as a server's start may reseed after it began): the same
    submissions, byte for byte, as a factory that built its Faker on first use."""
    warmed, lazy = SubmissionFactory(5), SubmissionFactory(5)
    warm_up = threading.Thread(target=warmed.warm)
    warm_up.start()
    warm_up.join()
    for made in (warmed, lazy):
        made.reseed(11)
    assert [warmed.build(WHEN) for _ in range(3)] == [lazy.build(WHEN) for _ in range(3)]


def test_threads_asking_at_once_share_one_faker(monkeypatch: pytest.MonkeyPatch) -> None:
    """The warm-up thread and a request asking together: one copy, one seeding."""
    made = factory._prototype
    calls: list[str] = []

    def slow() -> object:  # widen the window two unguarded builds would both enter
        calls.append(threading.current_thread().name)
        time.sleep(0.05)
        return made()

    monkeypatch.setattr(factory, "_prototype", slow)
    shared = SubmissionFactory(3)
    seen: list[object] = []
    start = threading.Barrier(4)

    def ask() -> None:
        start.wait()
        seen.append(shared.faker)

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1
    assert len(seen) == 4 and all(found is seen[0] for found in seen)
