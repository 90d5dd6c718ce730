"""`make test-compat`: the declared versions, tested. Standard library only.

Four cells: Python 3.10 and 3.13, each with the lowest versions pyproject.toml allows for
the direct dependencies (uv's ``--resolution lowest-direct``) and with the newest. Each
cell is a venv of its own under ``.venv-compat/`` with ``-e '.[test]'``, running
``COMPAT_TESTS`` (the files where the mock meets its dependencies: docs/layout.md "Tested
versions"; less ``COMPAT_DESELECT``, slow repeats), or the whole suite with ``FULL=1``.
Prints and writes ``.venv-compat/results.md``: each cell's interpreter, versions, counts, time.

A fifth cell, ``py3.10-pytest-floor``, is the pytest plugin's own floor: the package with
pytest 7.0 (what a downstream project with an old pytest has; the test extra needs pytest 9)
running the files that use the fixtures (``PLUGIN_FLOOR_TESTS``), in about a minute.

Interpreters: uv-managed ones when ``uv python install`` can download them, else one
already on the machine (pyenv's versions, or ``pythonX.Y`` on PATH). Only wheels are
installed (``--only-binary :all:``): on a Python a floor release has no wheel for, the
lowest release with one is taken, and the table says which. ``CELLS="py3.10-highest ..."``
runs only those cells; ``TESTS="tests/test_x.py ..."`` only those files.

CI (``.ci/run``) gives it what is left of its time limit: ``BUDGET=seconds`` starts a cell
only while the time left covers what a cell takes (the longest cell of this run so far, a
quarter more; before the first, ``FIRST_GUESS_S``), reports the cells it did not start as
skipped for time, and stops a cell still running when the budget is spent. The cells run
in ``ORDER``: the ones ``make test`` (the machine's Python, newest versions) says least
about first. A cell whose tests failed runs its failed ones (up to ``RERUN_AT_MOST``) once
more: when they pass, the failure was the machine's timing, not the versions, and the cell
is green with the flaky tests named in its row and after the table (a falsifying example
Hypothesis found comes again: under CI it runs derandomized, elsewhere it replays its example
database, ``.hypothesis/``; so a bug a property test finds stays red). ``MISSING=skip``
reports a Python that cannot be found as skipped (a machine without pyenv) instead of
failing. A failed cell fails the run; a cell stopped at the
budget fails it only if a test had already failed.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from subprocess import STDOUT

ROOT = Path(__file__).resolve().parents[1]
HOME = ROOT / ".venv-compat"
UV = Path(sys.executable).with_name("uv")
PLUGIN_FLOOR = "pytest-floor"  # the cell of the plugin's lowest pytest (below)
# the lowest versions first, and 3.13 at the newest: what `make test` says least about
ORDER = (
    ("3.10", "lowest-direct"),
    ("3.13", "highest"),
    ("3.13", "lowest-direct"),
    ("3.10", "highest"),
    ("3.10", PLUGIN_FLOOR),
)
# the pytest plugin's own floor (pytest 7.0, docs/pytest.md "pytest versions"): what a
# downstream project with an old pytest has, the package and that pytest with the newest
# pytest-xdist and pytest-asyncio that accept it, not the test extra (which needs pytest 9);
# the files that run the fixtures without the test extra's other tools. A minute at most.
PLUGIN_FLOOR_PINS = ("pytest==7.0.*", "pytest-xdist", "pytest-asyncio")
PLUGIN_FLOOR_TESTS = (
    "tests/test_plugin.py",
    "tests/test_journal.py",
    *(f"tests/examples/test_howto_{name}.py" for name in (
        "clock", "fault", "idv_async_client", "idv_client", "idv_scenario", "idv_server",
        "idv_service", "idv_webhook_delivery", "idv_webhook_receiver",
    )),
)  # fmt: skip
PLUGIN_FLOOR_GUESS_S = 120.0  # what the floor cell takes, install included, at the most
# one cell (install and tests, -n 2) before any has run: the slowest seen on two shared cores
FIRST_GUESS_S = 480.0
# where the mock meets its dependencies: httpx (transport, interception, webhooks, verify),
# Starlette and uvicorn (fast lane, limits on the wire, request deadline, serve), pytest and
# pytest-asyncio (the plugin), respx/pytest-httpx/responses (coexistence), requests and
# urllib3, Hypothesis and schemathesis, jsonschema, openapi-spec-validator, Faker (seeded
# output), cryptography, rapidfuzz, fpdf2/pypdf, Jinja2 (the hosted form), orjson (state)
COMPAT_TESTS = (
    "tests/test_compat.py",
    "tests/test_layers.py",
    "tests/test_smoke.py",
    "tests/test_transport.py",
    "tests/test_intercept.py",
    "tests/test_intercept_coexist.py",
    "tests/test_fastlane.py",
    "tests/test_limits_wire.py",
    "tests/test_timeouts.py",
    "tests/test_plugin.py",
    "tests/test_get_submission.py",
    "tests/test_patch_submission.py",
    "tests/test_webhooks.py",
    "tests/test_verify.py",
    "tests/test_strategies.py",
    "tests/test_openapi.py",
    "tests/test_schemas.py",
    "tests/test_secure_transfer.py",
    "tests/test_screening.py",
    "tests/test_report_pdf.py",
    "tests/test_liveform.py",
    "tests/test_persistence.py",
    "tests/test_packing.py",
    "tests/test_cli.py",
    "tests/test_fuzz.py",
)
# the test extra's tools that only these files use, at their floors in the lowest-direct
# cells (the newest are `make test`'s): mkdocs and mkdocs-material (the docs site, strict),
# build (the package), Playwright (the browser tests, which skip without Chromium)
FLOOR_TOOL_TESTS = ("tests/test_docs.py", "tests/test_package.py", "tests/browser")
# slow pytester runs that repeat a path the kept ones take (each starts pytest in a
# subprocess; about 45 s of a cell's wall time): the plugin's options, clock and seed are read
# through the same hooks as in test_every_fixture_works_in_a_fresh_project and
# test_configured_like_the_anchors; Faker's seeded output stays in test_cli.py's
# byte-identical check, Secure Data Transfer in test_secure_transfer.py
COMPAT_DESELECT = (
    "tests/test_plugin.py::test_options_from_the_environment",
    "tests/test_plugin.py::test_a_bad_clock_option_is_a_usage_error",
    "tests/test_plugin.py::test_the_same_random_seed_gives_the_same_data",
    "tests/test_plugin.py::test_the_clock_option_and_marker",
    "tests/test_plugin.py::test_the_receiver_decrypts_with_the_projects_key_derivation",
)
FAILURES: list[str] = []  # red cells' failures, printed after the table
FLAKY: list[str] = []  # failures that passed when run again, printed after the table too
RERUN_AT_MOST = 3  # failed tests run once more (more failures than that are not timing)
SHOWN = (
    *("starlette", "uvicorn", "httpx", "anyio", "pytest", "pytest-asyncio", "hypothesis"),
    *("schemathesis", "faker", "requests", "urllib3", "mkdocs-material", "build", "playwright"),
)


def run(
    *args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in args], text=True, capture_output=True, cwd=cwd, env=env)


@dataclass(frozen=True)
class Python:
    path: str
    version: str  # e.g. 3.10.13
    source: str


def find_python(version: str) -> Python | None:
    """An interpreter for ``version``: uv-managed if uv can download one, else the machine's."""
    env = {**os.environ, "UV_HTTP_TIMEOUT": "10"}
    if run(UV, "python", "install", version, env=env).returncode == 0:
        found = run(UV, "python", "find", "--managed-python", version)
        if found.returncode == 0:
            return probe(found.stdout.strip(), version, "uv-managed (python-build-standalone)")
    candidates = sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{version}.*/bin/python")))
    pyenv_root = run("pyenv", "root") if shutil.which("pyenv") else None
    if pyenv_root is not None and pyenv_root.returncode == 0:
        candidates += sorted(
            glob.glob(f"{pyenv_root.stdout.strip()}/versions/{version}.*/bin/python")
        )
    on_path = shutil.which(f"python{version}")
    candidates += [on_path] if on_path else []
    for candidate in candidates:
        found_here = probe(candidate, version, "on the machine (uv could not download one)")
        if found_here is not None:
            return found_here
    return None


def probe(path: str, version: str, source: str) -> Python | None:
    done = run(path, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])")
    full = done.stdout.strip()
    if done.returncode != 0 or not full.startswith(f"{version}."):
        return None
    return Python(path, full, source)


def build(python: str, resolution: str, cell: Path) -> str:
    """The cell's venv with the project and its test extra; the pinned requirements."""
    env = {**os.environ, "VIRTUAL_ENV": str(cell), "UV_PYTHON_DOWNLOADS": "never"}
    if not (cell / "bin" / "python").exists():
        made = run(UV, "venv", "-q", "--python", python, cell)
        if made.returncode != 0:
            raise SystemExit(made.stderr)
    if resolution == PLUGIN_FLOOR:
        return build_plugin_floor(cell, env)
    pins = cell / "requirements.txt"
    compiled = run(
        UV, "pip", "compile", "-q", "pyproject.toml", "--extra", "test",
        "--resolution", resolution, "--only-binary", ":all:",
        "--python", cell / "bin" / "python", "-o", pins, cwd=ROOT, env=env,
    )  # fmt: skip
    if compiled.returncode != 0:
        raise SystemExit(compiled.stderr)
    for step in (
        ("-r", pins, "--only-binary", ":all:"),
        ("--no-deps", "-e", "."),
    ):
        done = run(UV, "pip", "install", "-q", *step, cwd=ROOT, env=env)
        if done.returncode != 0:
            raise SystemExit(done.stderr)
    return pins.read_text(encoding="utf-8")


def build_plugin_floor(cell: Path, env: dict[str, str]) -> str:
    """The plugin's floor cell: the package with the lowest pytest it supports; its freeze."""
    installed = run(
        UV, "pip", "install", "-q", "--only-binary", ":all:", "-e", ".", *PLUGIN_FLOOR_PINS,
        cwd=ROOT, env=env,
    )  # fmt: skip
    if installed.returncode != 0:
        raise SystemExit(installed.stderr)
    frozen = run(UV, "pip", "freeze", cwd=ROOT, env=env)
    if frozen.returncode != 0:
        raise SystemExit(frozen.stderr)
    (cell / "requirements.txt").write_text(frozen.stdout, encoding="utf-8")
    return frozen.stdout


def activated(cell: Path) -> dict[str, str]:
    """The environment of an activated venv: tools the tests start by name (ruff, called by
    datamodel-code-generator) are the cell's own, never the machine's."""
    path = f"{cell / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"
    return {**os.environ, "VIRTUAL_ENV": str(cell), "PATH": path}


def run_tests(
    cell: Path, tests: list[str], timeout: float | None, log_name: str = "pytest.log"
) -> int | None:
    """pytest's exit code, or None when it was stopped at ``timeout`` (with its workers)."""
    log = cell / log_name  # written as the tests run: `tail -f` it to follow
    with log.open("w", encoding="utf-8") as out:
        pytest = (cell / "bin" / "python", "-m", "pytest", "-q", "-n", "2")
        # an older pytest-asyncio does not know the repo's asyncio settings: a warning
        quiet = ("-W", "ignore::pytest.PytestConfigWarning") if PLUGIN_FLOOR in cell.name else ()
        options = ("-p", "no:cacheprovider", "-rfE", "--durations=25", *quiet, *tests)
        proc = subprocess.Popen(
            [str(a) for a in (*pytest, *options)], cwd=ROOT, stdout=out, stderr=STDOUT,
            env=activated(cell), start_new_session=True,
        )  # fmt: skip
        try:
            return proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            out.write("\ntest-compat: stopped at the time budget\n")
            return None


def failures(output: str, keep: int = 25) -> str:
    """What a red cell's log says of its failures, for CI's own output: the end of each
    traceback (its last ``keep`` lines) and pytest's one line a failure (``-rfE``)."""
    shown: list[str] = []
    block: list[str] = []
    inside = False
    for line in [*output.splitlines(), "=== end ==="]:
        if re.match(r"^=+ (FAILURES|ERRORS) =+$", line):
            inside = True
        elif inside and (line.startswith("=") or re.match(r"^_{3,} .* _{3,}$", line)):
            shown += block[:1] + block[1:][-keep:]
            block = [line] if line.startswith("_") else []
            inside = not line.startswith("=")
        elif inside:
            block.append(line)
    summary = [line for line in output.splitlines() if line.startswith(("FAILED ", "ERROR "))]
    return "\n".join([*shown, *summary])


def failed_tests(output: str) -> list[str]:
    """The node ids of pytest's ``-rfE`` lines (``FAILED tests/x.py::test_y[p] - why``).
    An error outside a test (a module that does not import) has no test to run again: then
    none is returned, and the cell stays red."""
    found: list[str] = []
    for line in output.splitlines():
        if line.startswith(("FAILED ", "ERROR ")):
            rest = line.split(" ", 1)[1]
            # a parametrized id may hold " - " itself: then it ends at its closing bracket
            cut = rest.find("] - ") + 1 if "[" in rest.split(" - ", 1)[0] else 0
            node = rest[:cut] if cut else rest.split(" - ", 1)[0].strip()
            if "::" not in node:
                return []
            if node not in found:
                found.append(node)
    return found


def versions(pins: str) -> str:
    found = dict(re.findall(r"^([a-z0-9-]+)==(\S+)", pins, re.MULTILINE))
    return ", ".join(f"{name} {found[name]}" for name in SHOWN if name in found)


def counts(output: str) -> str:
    lines = [line for line in output.splitlines() if re.search(r"\d+ (passed|failed)", line)]
    return lines[-1].strip("= ") if lines else "no result line"


def red_so_far(output: str) -> bool:
    """Whether a cell stopped before its end had already failed a test (pytest -q's dots)."""
    progress = re.compile(r"^[.sxXFE]+\s*(\[\s*\d+%\])?$")
    return any(progress.match(ln) and re.search("[FE]", ln) for ln in output.splitlines())


def deselected(tests: list[str]) -> list[str]:
    """``COMPAT_DESELECT`` as pytest options, for the default file list only."""
    return [f"--deselect={test}" for test in COMPAT_DESELECT] if tests == list(COMPAT_TESTS) else []


def cell_tests(cell: Cell, tests: list[str]) -> list[str]:
    """What a cell runs: the plugin's floor its own files; the others ``tests``, with the
    tools' files at their floors in the lowest-direct cells (the default list only)."""
    if cell.resolution == PLUGIN_FLOOR:
        return list(PLUGIN_FLOOR_TESTS)
    default = tests == list(COMPAT_TESTS)
    tools = FLOOR_TOOL_TESTS if default and cell.resolution == "lowest-direct" else ()
    return [*tests, *tools, *deselected(tests)]


def estimate(took: list[float], resolution: str = "") -> float:
    """What the next cell will take: the longest so far and a quarter, or the first guess
    (the plugin's floor cell, a few files, its own)."""
    if resolution == PLUGIN_FLOOR:
        return PLUGIN_FLOOR_GUESS_S
    return max(took) * 1.25 if took else FIRST_GUESS_S


@dataclass
class Cell:
    version: str
    resolution: str

    @property
    def name(self) -> str:
        return f"py{self.version}-{self.resolution}"


def skipped(cell: Cell, python: str, why: str) -> str:
    print(f"test-compat: {cell.name} skipped: {why}", flush=True)
    return f"| {python} | {cell.resolution} | - | skipped: {why} | - |"


def run_cell(
    cell: Cell, python: Python, tests: list[str], left: float | None
) -> tuple[str, bool, float]:
    """The cell's row, whether it is red, and the seconds it took (install and tests)."""
    home = HOME / cell.name
    started = time.monotonic()
    pins = build(python.path, cell.resolution, home)
    built = time.monotonic() - started
    timeout = None if left is None else max(left - built, 1.0)
    code = run_tests(home, tests, timeout)
    took = time.monotonic() - started - built
    output = (home / "pytest.log").read_text(encoding="utf-8")
    tested = counts(output)
    if code is None:
        red = red_so_far(output)
        so_far = "a test had failed" if red else "no failure so far"
        tested = f"stopped at the time budget after {took:.0f} s ({so_far})"
        print(f"test-compat: {cell.name} {tested}", flush=True)
    else:
        red = code != 0
    flaky = passed_run_again(home, output, code, None if timeout is None else timeout - took)
    if flaky:
        red = False
        tested += f"; {len(flaky)} failed, then passed run again: {' '.join(flaky)}"
        FLAKY.append(f"{cell.name}:\n{failures(output)}")
    if red:
        print(f"test-compat: {cell.name} failed ({home / 'pytest.log'}):", flush=True)
        FAILURES.append(f"{cell.name}:\n{failures(output)}")
    row = (
        f"| {python.version} ({python.source}) | {cell.resolution} | {versions(pins)} | {tested}"
        f" | {took:.0f} s (install {built:.0f} s) |"
    )
    print(row, flush=True)
    return row, red, took + built


def passed_run_again(home: Path, output: str, code: int | None, left: float | None) -> list[str]:
    """The failed tests (up to ``RERUN_AT_MOST``) when each passes run once more, else none:
    a test that fails once and then passes, on the same versions, is a timing flake of a
    loaded machine, not a version the mock does not work with."""
    failed = failed_tests(output)
    if code != 1 or not 0 < len(failed) <= RERUN_AT_MOST:
        return []
    left = None if left is None else max(left, 1.0)
    again = run_tests(home, failed, left, log_name="pytest-rerun.log")
    return failed if again == 0 else []


def reason_to_skip(
    cell: Cell, python: Python | None, left: float | None, budget: float | None, took: list[float]
) -> str | None:
    if python is None:
        return (
            f"no Python {cell.version} here (uv cannot download one; no pyenv"
            f" {cell.version}.x, no python{cell.version} on PATH)"
        )
    needs = estimate(took, cell.resolution)
    if left is not None and budget is not None and left < needs:
        return (
            f"for time ({left:.0f} s left of the {budget:.0f} s budget,"
            f" a cell takes about {needs:.0f} s)"
        )
    return None


def main() -> int:
    full = os.environ.get("FULL") == "1"
    tests = os.environ.get("TESTS", "").split() or ([] if full else list(COMPAT_TESTS))
    only = os.environ.get("CELLS", "").split()  # e.g. CELLS="py3.10-lowest-direct"
    budget = float(os.environ["BUDGET"]) if os.environ.get("BUDGET") else None
    deadline = None if budget is None else time.monotonic() + budget
    pythons: dict[str, Python | None] = {}
    rows: list[str] = []
    took: list[float] = []
    failed = False
    for cell in (Cell(*pair) for pair in ORDER):
        if only and cell.name not in only:
            continue
        if cell.version not in pythons:
            pythons[cell.version] = find_python(cell.version)
        python = pythons[cell.version]
        left = None if deadline is None else deadline - time.monotonic()
        why = reason_to_skip(cell, python, left, budget, took)
        if python is None and why and os.environ.get("MISSING") != "skip":
            raise SystemExit(f"test-compat: {why}")
        if why or python is None:
            rows.append(skipped(cell, python.version if python else cell.version, why or ""))
            continue
        row, red, seconds = run_cell(cell, python, cell_tests(cell, tests), left)
        if cell.resolution != PLUGIN_FLOOR:  # its minute says nothing of a full cell's time
            took.append(seconds)
        rows.append(row)
        failed = failed or red
    write_table(tests, rows)
    return 1 if failed else 0


def write_table(tests: list[str], rows: list[str]) -> None:
    header = "| Python | resolution | versions | tests | time |\n|---|---|---|---|---|\n"
    scope = " ".join(tests) if tests else "the whole suite"
    if tests == list(COMPAT_TESTS):
        scope = (
            f"{len(COMPAT_TESTS)} files less {len(COMPAT_DESELECT)} slow tests (.ci/compat.py),"
            f" and in the lowest-direct cells {' '.join(FLOOR_TOOL_TESTS)}"
        )
    floor = f"; the {PLUGIN_FLOOR} cell: {' '.join(PLUGIN_FLOOR_TESTS)}"
    table = f"Tests: {scope}{floor}\n\n{header}" + "\n".join(rows) + "\n"
    HOME.mkdir(exist_ok=True)
    (HOME / "results.md").write_text(table, encoding="utf-8")
    print(f"\n{table}", flush=True)
    for flaky in FLAKY:
        print(f"test-compat: failed, then passed run again, in {flaky}\n", flush=True)
    for failed in FAILURES:
        print(f"test-compat: failures in {failed}\n", flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
