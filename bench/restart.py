"""Part 6: restarting from a large state file, and what an idle server writes (issue 14, 3).

Both times are what a user waits for, measured the same way: ``idv-mock serve`` from the
command to its first answer. Seeding runs ``--seed-count 20000`` (no state file); the
restart runs ``--state-file`` with the file a server seeded the same way saved at its
start (about 150 MB). Target: the
restart within 2x the seeding. Then the restarted server, saving every 0.2 s, stays idle
for 3 s: every save is a new file renamed into place, so the saves are counted as
changes of the file's inode (one save of this file takes far longer than the polling
step, so none is missed). Target: none. One write afterwards must be saved.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from report import Row, verdict

SIZE = 20_000
RESTART_FACTOR = 2.0
IDLE_SECONDS = 3.0
SAVE_INTERVAL = 0.2


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """``idv-mock serve`` in a child process; ``ready_s``: command to first answer."""

    def __init__(self, *args: str) -> None:
        self.base = f"http://127.0.0.1:{_free_port()}"
        port = self.base.rsplit(":", 1)[1]
        cmd = [sys.executable, "-m", "idv_mock.cli", "serve", "--port", port, *args]
        started = time.perf_counter()
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.ready_s = self._wait_ready(started)

    def _wait_ready(self, started: float) -> float:
        while True:
            try:
                httpx.get(self.base + "/__admin/projects", timeout=5)
                return time.perf_counter() - started
            except httpx.TransportError:
                if self.proc.poll() is not None or time.perf_counter() - started > 900:
                    raise RuntimeError(f"serve failed: {self.stop()[-800:]}") from None
                time.sleep(0.05)

    def stop(self) -> str:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        _, err = self.proc.communicate(timeout=300)
        return err.decode(errors="replace")


def _saves_while_idle(path: Path) -> int:
    """Saves (new inodes of ``path``) during ``IDLE_SECONDS`` without a request."""
    seen = {path.stat().st_ino}
    deadline = time.monotonic() + IDLE_SECONDS
    while time.monotonic() < deadline:
        seen.add(path.stat().st_ino)
        time.sleep(0.02)
    return len(seen) - 1


def _save_after_write(server: Server, path: Path) -> float:
    """Seconds from one write to its save (the file replaced), at most a minute."""
    before = path.stat().st_ino
    httpx.post(server.base + "/__admin/projects/default/submissions", json={}, timeout=30)
    started = time.monotonic()
    while path.stat().st_ino == before and time.monotonic() - started < 60:
        time.sleep(0.02)
    return time.monotonic() - started


def run(size: int = SIZE) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="idv-mock-restart-"))
    path = folder / "state.json"
    seeded = Server("--seed-count", str(size), "--no-start-cache")  # the reference: seeded
    seeded.stop()
    Server("--seed-count", str(size), "--state-file", str(path)).stop()  # saved at its start
    restarted = Server("--state-file", str(path), "--save-interval", str(SAVE_INTERVAL))
    try:
        idle = _saves_while_idle(path)
        after_write = _save_after_write(restarted, path)
    finally:
        restarted.stop()
    result = {
        "size": size,
        "seed_ready_s": seeded.ready_s,
        "restart_ready_s": restarted.ready_s,
        "file_bytes": path.stat().st_size,
        "idle_saves": idle,
        "idle_seconds": IDLE_SECONDS,
        "save_interval_s": SAVE_INTERVAL,
        "save_after_write_s": after_write,
    }
    for leftover in folder.iterdir():
        leftover.unlink()
    os.rmdir(folder)
    return result


def rows(r: dict[str, Any]) -> list[Row]:
    part, n = "6 restart", f"{r['size']:,}"
    ratio = r["restart_ready_s"] / r["seed_ready_s"]
    intervals = round(r["idle_seconds"] / r["save_interval_s"])
    return [
        Row(part, f"serve --seed-count {n}: ready", f"{r['seed_ready_s']:.1f} s", "-", "info"),
        Row(
            part,
            f"restart from {n} ({r['file_bytes'] / 1e6:,.0f} MB file): ready",
            f"{r['restart_ready_s']:.1f} s = {ratio:.2f}x seeding",
            f"<= {RESTART_FACTOR:.0f}x seeding",
            verdict(ratio <= RESTART_FACTOR),
        ),
        Row(
            part,
            f"saves while idle {r['idle_seconds']:.0f} s ({intervals} intervals)",
            str(r["idle_saves"]),
            "0",
            verdict(r["idle_saves"] == 0),
        ),
        Row(
            part,
            "one write: saved after",
            f"{r['save_after_write_s']:.1f} s",
            f"saved (interval {r['save_interval_s']} s)",
            verdict(r["save_after_write_s"] < 60),
        ),
    ]


def part(ctx: Any, mode: Any) -> tuple[list[Row], Any]:
    """The part as ``run.py`` calls it (the same size in quick and full mode: the target's)."""
    print(f"6. restart from a {SIZE:,}-submission state file (fresh processes)", flush=True)
    data = run()
    print(
        f"    seeded in {data['seed_ready_s']:.1f} s, restarted in {data['restart_ready_s']:.1f} s,"
        f" {data['idle_saves']} idle saves",
        flush=True,
    )
    return rows(data), data


if __name__ == "__main__":
    outcome = run(int(sys.argv[1]) if len(sys.argv) > 1 else SIZE)
    for row in rows(outcome):
        print(f"{row.figure}: {row.value}  (target {row.target}: {row.verdict})")
