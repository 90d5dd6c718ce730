"""`make test-compat`: the declared versions, tested. Standard library only.

Four cells: Python 3.10 and 3.13, each with the lowest versions pyproject.toml allows for
the direct dependencies (uv's ``--resolution lowest-direct``) and with the newest. Each
cell is a venv of its own under ``.venv-compat/`` with ``-e '.[test]'``, running
``COMPAT_TESTS`` (the files where the mock meets its dependencies: see README "Tested
versions"), or the whole suite with ``FULL=1``. Prints and writes
``.venv-compat/results.md``: each cell's interpreter, chosen versions, counts and time.

Interpreters: uv-managed ones when ``uv python install`` can download them, else one
already on the machine (pyenv's versions, or ``pythonX.Y`` on PATH). Only wheels are
installed (``--only-binary :all:``): on a Python a floor release has no wheel for, the
lowest release with one is taken, and the table says which. ``CELLS="py3.10-highest ..."``
runs only those cells; ``TESTS="tests/test_x.py ..."`` only those files.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from subprocess import STDOUT

ROOT = Path(__file__).resolve().parents[1]
HOME = ROOT / ".venv-compat"
UV = Path(sys.executable).with_name("uv")
PYTHONS = ("3.10", "3.13")
RESOLUTIONS = ("lowest-direct", "highest")
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
    "tests/test_cli.py",
    "tests/test_fuzz.py",
)
SHOWN = (
    *("starlette", "uvicorn", "httpx", "anyio", "pytest", "pytest-asyncio", "hypothesis"),
    *("schemathesis", "faker", "requests", "urllib3"),
)


def run(
    *args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in args], text=True, capture_output=True, cwd=cwd, env=env)


def find_python(version: str) -> tuple[str, str]:
    """An interpreter for ``version`` and where it came from."""
    installed = run(UV, "python", "install", version)
    if installed.returncode == 0:
        found = run(UV, "python", "find", "--managed-python", version)
        if found.returncode == 0:
            return found.stdout.strip(), "uv-managed (python-build-standalone)"
    candidates = sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{version}.*/bin/python")))
    pyenv_root = run("pyenv", "root") if shutil.which("pyenv") else None
    if pyenv_root is not None and pyenv_root.returncode == 0:
        candidates += sorted(
            glob.glob(f"{pyenv_root.stdout.strip()}/versions/{version}.*/bin/python")
        )
    on_path = shutil.which(f"python{version}")
    candidates += [on_path] if on_path else []
    for candidate in candidates:
        probe = run(candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2])")
        if probe.returncode == 0 and probe.stdout.strip() == version:
            return candidate, "on the machine (uv could not download one)"
    raise SystemExit(f"test-compat: no Python {version}: uv could not install one and none is here")


def build(python: str, resolution: str, cell: Path) -> str:
    """The cell's venv with the project and its test extra; the pinned requirements."""
    env = {**os.environ, "VIRTUAL_ENV": str(cell), "UV_PYTHON_DOWNLOADS": "never"}
    if not (cell / "bin" / "python").exists():
        made = run(UV, "venv", "-q", "--python", python, cell)
        if made.returncode != 0:
            raise SystemExit(made.stderr)
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


def versions(pins: str) -> str:
    found = dict(re.findall(r"^([a-z0-9-]+)==(\S+)", pins, re.MULTILINE))
    return ", ".join(f"{name} {found[name]}" for name in SHOWN if name in found)


def counts(output: str) -> str:
    lines = [line for line in output.splitlines() if re.search(r"\d+ (passed|failed)", line)]
    return lines[-1].strip("= ") if lines else "no result line"


def main() -> int:
    full = os.environ.get("FULL") == "1"
    tests = os.environ.get("TESTS", "").split() or ([] if full else list(COMPAT_TESTS))
    only = os.environ.get("CELLS", "").split()  # e.g. CELLS="py3.10-lowest-direct"
    rows, failed = [], False
    for version in PYTHONS:
        if only and not any(name.startswith(f"py{version}-") for name in only):
            continue
        python, source = find_python(version)
        for resolution in RESOLUTIONS:
            cell = HOME / f"py{version}-{resolution}"
            if only and cell.name not in only:
                continue
            started = time.monotonic()
            pins = build(python, resolution, cell)
            built = time.monotonic() - started
            started = time.monotonic()
            log = cell / "pytest.log"  # written as the tests run: `tail -f` it to follow
            with log.open("w", encoding="utf-8") as out:
                pytest = (cell / "bin" / "python", "-m", "pytest", "-q", "-n", "2")
                options = ("-p", "no:cacheprovider", *tests)
                code = subprocess.call([*pytest, *options], cwd=ROOT, stdout=out, stderr=STDOUT)
            took = time.monotonic() - started
            failed = failed or code != 0
            tested = counts(log.read_text(encoding="utf-8"))
            row = (
                f"| {version} ({source}) | {resolution} | {versions(pins)} | {tested}"
                f" | {took:.0f} s (install {built:.0f} s) |"
            )
            print(row, flush=True)
            rows.append(row)
    header = "| Python | resolution | versions | tests | time |\n|---|---|---|---|---|\n"
    scope = " ".join(tests) if tests else "the whole suite"
    scope = f"{len(COMPAT_TESTS)} files (.ci/compat.py)" if tests == list(COMPAT_TESTS) else scope
    table = f"Tests: {scope}\n\n{header}" + "\n".join(rows) + "\n"
    (HOME / "results.md").write_text(table, encoding="utf-8")
    print(f"\n{table}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
