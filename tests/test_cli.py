"""``idv-mock serve`` as a user runs it: a real process on a free port."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest

from conftest import ServeProcess

pytestmark = pytest.mark.live


class Output:
    text = ""


@contextmanager
def serve(*args: str) -> Iterator[tuple[str, Output]]:
    output = Output()
    with ServeProcess(*args) as server:
        yield server.base, output
    output.text = server.output


def test_serve_prints_where_and_how_to_call_it() -> None:
    with serve("--seed-count", "3", "--admin", "a@x.io", "--admin", "b@x.io") as (base, output):
        pass
    out = output.text
    assert f"{base}/v3" in out
    assert "api key: mock-api-key" in out
    assert "a@x.io, b@x.io" in out


def test_serve_answers_the_quick_start_call() -> None:
    with serve("--api-key", "k-1", "--seed-count", "5") as (base, _):
        r = httpx.get(base + "/v3/submission", params={"count": "2"}, headers={"x-api-key": "k-1"})
    assert r.status_code == 200
    assert len(r.json()["Items"]) == 2
    assert "nextpageKey" in r.json()


def test_same_random_seed_gives_byte_identical_responses() -> None:
    bodies = []
    for _ in range(2):
        with serve("--seed-count", "8", "--random-seed", "42") as (base, _):
            h = {"x-api-key": "mock-api-key"}
            page = httpx.get(base + "/v3/submission", headers=h)
            state = httpx.get(base + "/__admin/state")
        bodies.append((page.content, state.content))
    assert bodies[0] == bodies[1]


def test_secure_transfer_flag_encrypts_responses() -> None:
    with serve("--seed-count", "2", "--secure-transfer") as (base, _):
        r = httpx.get(
            base + "/v3/submission", params={"data": "x"}, headers={"x-api-key": "mock-api-key"}
        )
        project = httpx.get(base + "/__admin/projects/default").json()
    assert r.json() == {"errorCode": "invalid_payload", "message": "Invalid payload"}
    assert project["options"]["secure_transfer"] is True


def test_serve_exits_0_on_sigterm_after_a_clean_shutdown() -> None:
    """uvicorn shuts down on SIGTERM, then raises it again: ``serve`` turns that into exit
    0 (a process manager sees a clean stop), not a death by the signal."""
    import signal

    with ServeProcess("--seed-count", "3", "--log-level", "info") as server:
        assert httpx.get(server.base + "/__admin/projects").status_code == 200
        output = server.stop(signal.SIGTERM)
    assert server.proc.returncode == 0, output
    assert "Shutting down" in output and "Finished server process" in output
    assert "Traceback" not in output
