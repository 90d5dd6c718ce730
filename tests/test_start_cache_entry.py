"""The start cache's entry (``tools/start_cache.py``): a state file whose body is one zstd
frame, written streaming behind the first answers and read back through a streaming
decompressor into the one-pass reader, exactly as seeded; a damaged one is refused."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from idv_mock import Service, ServiceConfig
from idv_mock.tools import persistence, start_cache

CONFIG = ServiceConfig(seed_count=300)
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


@pytest.fixture(scope="module")
def seeded() -> Iterator[Service]:
    service = Service(CONFIG)
    yield service
    service.close()


def _written(service: Service, path: Path) -> list[tuple[bool, str]]:
    told: list[tuple[bool, str]] = []
    thread = start_cache.save_behind(service, path, lambda ok, line: told.append((ok, line)))
    thread.start()
    thread.join()
    return told


def test_an_entry_is_compressed_and_reads_back_as_seeded(seeded: Service, tmp_path: Path) -> None:
    entry = tmp_path / "start-key.jsonz"
    assert _written(seeded, entry) == [(True, f"start cache: {entry} written")]
    plain = tmp_path / "plain.json"
    persistence.save(seeded, plain)
    raw = entry.read_bytes()
    header = persistence._HEADER.match(raw)
    assert header is not None and header[1] == b"0"
    assert raw[header.end() : header.end() + 4] == ZSTD_MAGIC  # the body: one zstd frame
    assert header[0] == persistence._HEADER.match(plain.read_bytes())[0]  # type: ignore[index]
    assert len(raw) < plain.stat().st_size / 4
    start = start_cache.load(entry)
    assert start is not None
    restored = Service(CONFIG, start=start)
    assert restored.export_state_json() == seeded.export_state_json()
    restored.close()


def test_a_failed_write_is_told_as_not_written(seeded: Service, tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    entry = blocked / "start-key.jsonz"  # its folder cannot be made
    ((ok, line),) = _written(seeded, entry)
    assert not ok and line.startswith(f"idv-mock serve: start cache {entry} not written (")


def test_a_damaged_entry_is_refused(seeded: Service, tmp_path: Path) -> None:
    entry = tmp_path / "start-key.jsonz"
    _written(seeded, entry)
    raw = entry.read_bytes()
    middle = len(raw) // 2
    entry.write_bytes(raw[:middle] + bytes([raw[middle] ^ 0xFF]) + raw[middle + 1 :])
    with pytest.raises(start_cache.Damaged, match=r"^its compressed body is damaged: "):
        start_cache.load(entry)
    entry.write_bytes(raw[:-1000])  # cut short, as by a full disk
    with pytest.raises(start_cache.Damaged, match=r"^its digest does not match$"):
        start_cache.load(entry)


def test_entries_are_named_apart_from_the_plain_ones_of_earlier_versions() -> None:
    path = start_cache.path_for(ServiceConfig(seed_count=start_cache.MIN_COUNT))
    assert path is not None and path.name.startswith("start-") and path.suffix == ".jsonz"
