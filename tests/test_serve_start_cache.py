"""``idv-mock serve``'s start cache (issue 37): a large seeding kept under
``$XDG_CACHE_HOME/idv-mock`` is read back instead of seeded again, exactly as seeded."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from conftest import ServeProcess

COUNT = "2000"  # the smallest count cached
ADMIN_ADD = "/__admin/projects/default/submissions"

pytestmark = pytest.mark.live


@pytest.fixture(autouse=True)
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path / "idv-mock"


def _served(*extra: str) -> tuple[list[bytes], str]:
    """What a server seeded (or started from the cache) answers: the whole state, every
    page of the submission list, and the next submission it creates; what it printed."""
    with ServeProcess("--seed-count", COUNT, *extra) as server:
        reads = [httpx.get(server.base + "/__admin/state", timeout=60).content]
        params = {"count": "50"}
        while True:
            page = httpx.get(
                server.base + "/v3/submission",
                params=params,
                headers={"x-api-key": "mock-api-key"},
                timeout=60,
            )
            reads.append(page.content)
            after = page.json().get("nextpageKey")
            if after is None:
                break
            params = {"count": "50", "nextpage_id": after["id"]}
            params["nextpage_date"] = after["created_at"]
        made = httpx.post(server.base + ADMIN_ADD, json={"userid": "after-start"}, timeout=60)
        reads.append(made.content)
    return reads, server.output


def _cache_lines(printed: str) -> list[str]:
    return [line.strip() for line in printed.splitlines() if "start cache" in line]


def test_a_cached_start_reads_exactly_as_a_seeded_one(cache_home: Path) -> None:
    seeded, printed = _served()
    (entry,) = cache_home.glob("start-*.jsonz")
    # written behind the first answers (done before or after the banner: either order),
    # and finished before the server exits
    assert sorted(_cache_lines(printed)) == [
        f"start cache: {entry} (writing)",
        f"start cache: {entry} written",
    ]
    cached, printed = _served()
    assert _cache_lines(printed) == [f"start cache: {entry} (read)"]
    assert cached == seeded
    plain, printed = _served("--no-start-cache")
    assert _cache_lines(printed) == []
    assert plain == seeded


def test_a_damaged_entry_is_ignored_with_a_warning_and_rewritten(cache_home: Path) -> None:
    seeded, _ = _served()
    (entry,) = cache_home.glob("start-*.jsonz")
    entry.write_bytes(entry.read_bytes()[:-1000])  # cut short, as by a full disk
    again, printed = _served()
    damaged, *written = _cache_lines(printed)
    assert damaged == (
        f"idv-mock serve: start cache {entry} is damaged (its digest does not match); "
        "seeding again and rewriting it"
    )
    assert sorted(written) == [f"start cache: {entry} (writing)", f"start cache: {entry} written"]
    assert again == seeded
    third, printed = _served()
    assert _cache_lines(printed) == [f"start cache: {entry} (read)"]
    assert third == seeded


def test_smaller_seedings_and_the_flag_write_no_entry(cache_home: Path) -> None:
    with ServeProcess("--seed-count", "1999") as server:
        pass
    with ServeProcess("--seed-count", COUNT, "--no-start-cache") as flagged:
        pass
    assert _cache_lines(server.output + flagged.output) == []
    assert not cache_home.exists()
