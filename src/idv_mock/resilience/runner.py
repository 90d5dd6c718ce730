"""Running a pytest suite once per profile, each in a subprocess of its own.

Each run is ``python -m pytest ARGS`` with ``IDV_MOCK_PROFILE`` naming the profile (the
plugin applies it to every project it hands out) and ``IDV_MOCK_RESILIENCE_OUT`` naming a
file where the plugin writes each test's outcome and the first line of its failure. A
subprocess per profile keeps the runs apart (a session-scoped fixture, a module-level
client) and lets ``-n N`` (xdist) work as in the suite's own runs. The suite's output goes
to a log file per profile; the terminal shows one progress line per profile.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from idv_mock.resilience import report
from idv_mock.resilience.profiles import ENV, Profile, builtins, load
from idv_mock.resilience.report import RAN

OUT_ENV = "IDV_MOCK_RESILIENCE_OUT"
RESILIENCE_HTML_ENV = "IDV_MOCK_RESILIENCE_HTML"  # the coverage report links to this page
COVERAGE_FLAG = "--idv-coverage"
EXCERPT_CHARS = 6000  # of a failing test's part of a profile's log, shown in the HTML


@dataclass
class Run:
    """One profile's run: its outcomes by test id, exit code and duration."""

    profile: Profile
    outcomes: dict[str, dict[str, str]]
    exit_code: int
    seconds: float
    log: str


def profiles_named(names: Sequence[str] | None) -> list[Profile]:
    """The profiles to run: those named (built-in names or paths), else every built-in;
    ``baseline`` always, first."""
    wanted = list(names) if names else builtins()
    if "baseline" not in wanted:
        wanted.insert(0, "baseline")
    wanted.remove("baseline")
    return [load("baseline"), *[load(n) for n in wanted]]


def run_profile(
    profile: Profile, pytest_args: Sequence[str], out_dir: Path, cwd: str | None = None
) -> Run:
    """The suite once under ``profile``."""
    log = out_dir / "logs" / f"{profile.name}.txt"
    log.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        results = Path(tmp) / "results.json"
        page = str((out_dir / "resilience.html").resolve())
        env = {**os.environ, ENV: profile.path, OUT_ENV: str(results), RESILIENCE_HTML_ENV: page}
        command = [sys.executable, "-m", "pytest", *pytest_args]
        started = time.perf_counter()
        with log.open("w", encoding="utf-8") as out:
            done = subprocess.run(
                command, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=cwd, check=False
            )
        seconds = time.perf_counter() - started
        outcomes = json.loads(results.read_text()) if results.is_file() else {}
    return Run(profile, outcomes, done.returncode, seconds, str(log))


def run_all(
    pytest_args: Sequence[str],
    profile_names: Sequence[str] | None = None,
    out_dir: str | Path = "idv-resilience",
    stream: TextIO = sys.stdout,
    cwd: str | None = None,
    jobs: int = 1,
) -> int:
    """Run the suite per profile (``jobs`` profiles at a time), print the grid, write JSON
    and HTML; the exit code: 0, 1 when a test passing under baseline fails under a profile,
    2 when a run broke (a collection error, a bad argument: pytest's own exit code >= 2)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    profiles = profiles_named(profile_names)
    stream.write(f"idv-mock resilience: {len(profiles)} profiles, pytest {' '.join(pytest_args)}\n")
    runs = _runs(profiles, pytest_args, out, stream, cwd, max(1, jobs))
    grid = report.grid(runs_as_json(runs))
    stream.write("\n" + report.text(grid))
    coverage = coverage_dir(pytest_args, cwd)
    link = None
    if coverage is not None and (coverage / "coverage.html").is_file():
        link = os.path.relpath((coverage / "coverage.html").resolve(), out.resolve())
        doc = json.loads((coverage / "coverage.json").read_text(encoding="utf-8"))
        from idv_mock.coverage import report as coverage_report

        stream.write("\n(baseline's run) " + coverage_report.text(doc))
    (out / "resilience.json").write_text(json.dumps(grid, indent=2) + "\n", encoding="utf-8")
    (out / "resilience.html").write_text(report.html(grid, link), encoding="utf-8")
    stream.write(f"\nwritten: {out / 'resilience.json'}, {out / 'resilience.html'}\n")
    return int(grid["exit_code"])


def coverage_dir(pytest_args: Sequence[str], cwd: str | None = None) -> Path | None:
    """Where the runs' ``--idv-coverage[=DIR]`` writes (None: the flag is not given)."""
    args = list(pytest_args)
    for n, arg in enumerate(args):
        if arg.startswith(COVERAGE_FLAG + "="):
            found = arg.split("=", 1)[1]
        elif arg == COVERAGE_FLAG:
            after = args[n + 1] if n + 1 < len(args) else ""  # argparse's optional value
            found = after if after and not after.startswith("-") else ".idv-coverage"
        else:
            continue
        return Path(cwd or ".") / found
    return None


def _runs(
    profiles: list[Profile],
    pytest_args: Sequence[str],
    out: Path,
    stream: TextIO,
    cwd: str | None,
    jobs: int,
) -> list[Run]:
    """Each profile's run, in the profiles' order; a progress line as each one ends."""
    total = len(profiles)

    def one(n: int, profile: Profile) -> Run:
        if jobs == 1:
            stream.write(f"[{n}/{total}] {profile.name:<14} ")
            stream.flush()
        run = run_profile(profile, pytest_args, out, cwd)
        prefix = "" if jobs == 1 else f"[{n}/{total}] {profile.name:<14} "
        stream.write(prefix + _progress(run) + "\n")
        stream.flush()
        return run

    if jobs == 1:
        return [one(n, p) for n, p in enumerate(profiles, 1)]
    with ThreadPoolExecutor(jobs) as pool:
        futures = [pool.submit(one, n, p) for n, p in enumerate(profiles, 1)]
        return [f.result() for f in futures]


def _progress(run: Run) -> str:
    counts: dict[str, int] = {}
    for found in run.outcomes.values():
        counts[found["outcome"]] = counts.get(found["outcome"], 0) + 1
    told = ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) or "no tests"
    broke = "" if run.exit_code in RAN else f" (pytest exit code {run.exit_code}; see {run.log})"
    return f"{told} in {run.seconds:.1f} s{broke}"


def runs_as_json(runs: Sequence[Run]) -> list[dict[str, Any]]:
    """The runs as the grid reads them; a test that did not pass carries its part of the
    profile's log (``log_excerpt``), which the HTML page shows."""
    found = []
    for r in runs:
        outcomes = {}
        log = _read(r.log)
        for test, outcome in r.outcomes.items():
            if outcome.get("outcome") in ("failed", "error"):
                outcome = {**outcome, "log_excerpt": excerpt(log, test)}
            outcomes[test] = outcome
        found.append(
            {
                "profile": r.profile.to_json(),
                "outcomes": outcomes,
                "exit_code": r.exit_code,
                "seconds": round(r.seconds, 2),
                "log": r.log,
            }
        )
    return found


def _read(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def excerpt(log: str, test: str) -> str:
    """A test's failure section of pytest's output (from its ``____ name ____`` header to
    the next header), or the log's end when there is none."""
    name = ".".join(test.split("::")[1:]) or test
    lines = log.splitlines()
    start = next(
        (n for n, line in enumerate(lines) if _header(line) == name),
        None,
    )
    if start is None:
        return "\n".join(lines[-40:])[-EXCERPT_CHARS:]
    end = next(
        (
            n
            for n in range(start + 1, len(lines))
            if _header(lines[n]) or lines[n].startswith("===")
        ),
        len(lines),
    )
    return "\n".join(lines[start:end])[:EXCERPT_CHARS]


def _header(line: str) -> str:
    """The test a ``____ test_name ____`` line of pytest's failures heads, else ""."""
    if line.startswith("___") and line.endswith("___"):
        return line.strip("_ ")
    return ""
