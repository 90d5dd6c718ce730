"""Progress of seeding, loading and saving (issue 37): a user who runs ``idv-mock serve``
on a terminal sees how far it is; a pipe (CI's log, a script) and ``--quiet`` get none."""

from __future__ import annotations

import io
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import ServeProcess, free_port
from idv_mock.ground.progress import Progress


def _on_a_terminal(*args: str) -> str:
    """``idv-mock serve`` on a pseudo-terminal until its banner shows, then stopped
    (SIGINT: the final save runs); everything it wrote."""
    port = free_port()
    command = [sys.executable, "-m", "idv_mock.cli", "serve", "--port", str(port), *args]
    pid, fd = pty.fork()
    if pid == 0:  # the child: the server, with the terminal as its stdout and stderr
        os.execv(command[0], command)
    ready = b"saves:" if "--state-file" in args else b"idv-mock serving"
    out = b""
    deadline = time.monotonic() + 120
    try:
        while ready not in out:
            if time.monotonic() > deadline:
                raise AssertionError(f"no banner: {out!r}")
            if select.select([fd], [], [], 0.5)[0]:
                out += os.read(fd, 65536)
        os.kill(pid, signal.SIGINT)
        end = time.monotonic() + 60
        while time.monotonic() < end:
            if not select.select([fd], [], [], 0.5)[0]:
                if os.waitpid(pid, os.WNOHANG)[0]:
                    break
                continue
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            out += chunk
    finally:
        os.close(fd)
        if not os.waitpid(pid, os.WNOHANG)[0]:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    return out.decode(errors="replace")


def test_seeding_shows_count_rate_and_time_left_on_a_terminal() -> None:
    shown = _on_a_terminal("--seed-count", "3000", "--no-start-cache")
    # redrawn in place (a carriage return, the line cleared) as the count goes up
    assert re.search(r"\r\x1b\[2Kseeding: [\d,]+/3,000 submissions \([\d,]+/s, \d+ s left\)", shown)
    assert "seeding: 3,000/3,000 submissions in " in shown, shown
    assert shown.index("seeding: 3,000/3,000") < shown.index("idv-mock serving")


def test_loading_and_saving_a_state_file_show_on_a_terminal(tmp_path: Path) -> None:
    state = str(tmp_path / "state.json")
    first = _on_a_terminal("--seed-count", "600", "--state-file", state)
    assert "seeding: 600/600 submissions in " in first, first
    assert "saving: " in first and " MB in " in first, first
    again = _on_a_terminal("--seed-count", "600", "--state-file", state)
    assert "loading: 600/600 submissions in " in again, again
    assert "saving: " in again, again


def test_nothing_shows_with_quiet_on_a_terminal(tmp_path: Path) -> None:
    shown = _on_a_terminal("--seed-count", "600", "--quiet")
    assert "idv-mock serving" in shown
    assert "seeding" not in shown and "\r" not in shown.replace("\r\n", ""), shown


def test_nothing_shows_in_a_pipe(tmp_path: Path) -> None:
    state = str(tmp_path / "state.json")
    with ServeProcess("--seed-count", "600", "--state-file", state) as server:
        pass
    printed = server.output
    assert "idv-mock serving" in printed
    for word in ("seeding", "saving:", "loading:", "\r"):
        assert word not in printed, printed
    done = subprocess.run(  # and a load, in a pipe too
        [sys.executable, "-c", _LOAD, state], capture_output=True, text=True, check=True
    )
    assert done.stdout == "600\n" and done.stderr == ""


_LOAD = """
import sys
from pathlib import Path
from idv_mock import Service, ServiceConfig
from idv_mock.tools import persistence
from idv_mock.ground.progress import Progress
service = Service(ServiceConfig(seed_count=1), progress=Progress.on_terminal(sys.stderr))
persistence.load(service, Path(sys.argv[1]), Progress.on_terminal(sys.stderr))
print(len(service.project("default").store))
"""


def test_a_task_line_says_count_rate_and_time_left() -> None:
    out = io.StringIO()
    task = Progress(out).task("seeding", 100_000, "submissions")
    task.done = 40_000
    started = task._started
    assert task.line(started + 4.0, final=False) == (
        "seeding: 40,000/100,000 submissions (10,000/s, 6 s left)"
    )
    assert task.line(started + 4.0, final=True) == "seeding: 40,000/100,000 submissions in 4.0 s"
    assert Progress.on_terminal(out).out is None  # a StringIO is no terminal
