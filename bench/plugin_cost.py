"""Part 8: what the pytest plugin costs per test, beside the tools it replaces (issue 26).

Each figure is a fresh ``python -m pytest`` process on a generated test file, the phases
of every test timed by a small plugin (``report.duration`` of setup, call and teardown):

- first use: the setup of a file's first test using ``idv_server`` / ``idv_client``,
  beside pytest-httpserver's ``httpserver``: warm, in a run after the suite's first
  (pytest's cache then holds the seeded start state; targets <= 0.25 s, <= 2x
  httpserver's), and cold, with no pytest cache (``-p no:cacheprovider``: every CI run on
  a fresh checkout; <= 3x httpserver's, issue 37);
- per test: 300 tests each making one GET with one shared ``httpx.Client``, the median
  of tests 2..300 (the session's start-up left out): ``idv_mocked`` beside respx's
  ``respx_mock`` (target <= 1.3x), ``idv_project`` beside ``httpserver`` (<= 1.1x).

- the whole process (information, no target): the wall time of ``python -m pytest`` on
  the one-test ``idv_server`` file and on the one-test ``httpserver`` file, each less that
  of a one-test file using neither (medians of the rounds), so what a first use costs a
  process (pytest's start-up, collection, teardown, exit included) shows beside the setup
  figure;
- the resilience report's overhead per profile: the wall time of ``pytest --idv-resilience``
  over two profiles on a one-test file, divided by two, minus the wall time of a plain run
  of the same file (target < 1 s).

Why these figures matter: ``pytest --idv-resilience`` runs a suite once per profile, so
the plugin's fixed and per-test costs are paid eight times.

The pytest processes run where a user's would: the plugin installed from a wheel (built
from this checkout into ``.venv-bench-wheel/``, beside pytest, pytest-httpserver and respx
at the versions of the running environment), not the editable install, where pytest
treats the package differently (it assert-rewrites every module of a wheel that ships a
plugin, not of an editable one).

``python bench/plugin_cost.py`` runs it alone; ``--editable`` in the running environment.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from report import Row, verdict

PART = "9 plugin cost"
FIRST_USE_S = 0.25
COLD_FACTOR = 3.0  # issue 37: no pytest cache (every CI run on a fresh checkout)
WARM_FACTOR = 2.0  # pytest's cache already holds the start (a developer's second run)
MOCKED_FACTOR = 1.3
PROJECT_FACTOR = 1.1
RESILIENCE_OVERHEAD_S = 1.0
TESTS = 300
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

TIMING_PLUGIN = """
import json, os

DURATIONS = {}


def pytest_runtest_logreport(report):
    DURATIONS.setdefault(report.nodeid, {})[report.when] = report.duration


def pytest_sessionfinish(session):
    with open(os.environ["BENCH_DURATIONS"], "w") as out:
        json.dump(DURATIONS, out)
"""

HEADER = "import httpx\nimport pytest\n\nCLIENT = httpx.Client()\nURL = 'https://rest-api.argosidentity.com/v3/submission'\n"

FILES = {
    "first_idv_server": (
        "def test_first(idv_server):\n"
        "    r = CLIENT.get(idv_server.base_url + '/submission', params={'count': 1},\n"
        "                   headers={'x-api-key': idv_server.api_key})\n"
        "    assert r.status_code == 200\n"
    ),
    "first_idv_client": (
        "def test_first(idv_client):\n"
        "    assert idv_client.get('/submission', params={'count': 1}).status_code == 200\n"
    ),
    "first_httpserver": (
        "def test_first(httpserver):\n"
        "    httpserver.expect_request('/v3/submission').respond_with_json({'Items': []})\n"
        "    assert CLIENT.get(httpserver.url_for('/v3/submission')).status_code == 200\n"
    ),
    "first_neither": (
        "def test_first():\n"
        "    assert CLIENT.get  # the same header: httpx imported, a client made\n"
    ),
    "each_idv_mocked": (
        "@pytest.mark.parametrize('n', range({tests}))\n"
        "def test_each(idv_mocked, n):\n"
        "    r = CLIENT.get(URL, params={{'count': 1}}, headers={{'x-api-key': 'mock-api-key'}})\n"
        "    assert r.status_code == 200\n"
    ),
    "each_respx": (
        "@pytest.mark.parametrize('n', range({tests}))\n"
        "def test_each(respx_mock, n):\n"
        "    respx_mock.get(URL).respond(json={{'Items': []}})\n"
        "    assert CLIENT.get(URL, params={{'count': 1}}).status_code == 200\n"
    ),
    "each_idv_project": (
        "@pytest.mark.parametrize('n', range({tests}))\n"
        "def test_each(idv_project, n):\n"
        "    r = CLIENT.get(idv_project.base_url + '/submission', params={{'count': 1}},\n"
        "                   headers={{'x-api-key': idv_project.api_key}})\n"
        "    assert r.status_code == 200\n"
    ),
    "each_httpserver": (
        "@pytest.mark.parametrize('n', range({tests}))\n"
        "def test_each(httpserver, n):\n"
        "    httpserver.expect_request('/v3/submission').respond_with_json({{'Items': []}})\n"
        "    assert CLIENT.get(httpserver.url_for('/v3/submission')).status_code == 200\n"
    ),
}


ROOT = Path(__file__).resolve().parents[1]
WHEEL_VENV = ROOT / ".venv-bench-wheel"
BESIDE = ("pytest", "pytest-httpserver", "respx", "httpx")  # at the running versions
PYTHON = [sys.executable]  # the interpreter of the measured runs (set by measure)


def wheel_python() -> str:
    """A venv with the plugin installed from a wheel of this checkout (made once, the
    wheel replaced on each call) and the tools it is compared with."""
    python = WHEEL_VENV / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(WHEEL_VENV)], check=True)
    with tempfile.TemporaryDirectory() as tmp:
        pip = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", tmp, str(ROOT)]
        subprocess.run(pip, check=True, capture_output=True)
        wheel = next(Path(tmp).glob("idv_mock-*.whl"))
        pins = [f"{n}=={importlib.metadata.version(n)}" for n in BESIDE]
        install = [str(python), "-m", "pip", "install", "-q", str(wheel), *pins]
        subprocess.run(install, check=True, capture_output=True)
        again = [str(python), "-m", "pip", "install", "-q", "--force-reinstall", "--no-deps"]
        subprocess.run([*again, str(wheel)], check=True, capture_output=True)
    return str(python)


def durations(folder: Path, name: str, tests: int) -> list[dict[str, float]]:
    """Each test's phases of one generated file, run in a fresh pytest process; a name
    ending in ``_cold`` runs its file with no pytest cache."""
    cold = name.endswith("_cold")
    name = name.removesuffix("_cold")
    body = FILES[name]
    test = folder / f"test_{name}.py"
    test.write_text(HEADER + "\n\n" + (body.format(tests=tests) if "{tests}" in body else body))
    out = folder / f"{name}.json"
    env = {**ENV, "BENCH_DURATIONS": str(out), "PYTHONPATH": str(folder)}
    command = [*PYTHON, "-m", "pytest", str(test), "-q", "-p", "timing_plugin"]
    command += ["-p", "no:randomly", "-p", "no:xdist", *(["-p", "no:cacheprovider"] * cold)]
    done = subprocess.run(command, env=env, cwd=folder, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{name}: pytest failed\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    found: dict[str, dict[str, float]] = json.loads(out.read_text())
    return list(found.values())


def wall(folder: Path, *args: str) -> float:
    """Seconds a ``python -m pytest`` run takes, from outside."""
    started = time.perf_counter()
    command = [*PYTHON, "-m", "pytest", "-q", "-p", "no:randomly", *args]
    subprocess.run(command, env=ENV, cwd=folder, capture_output=True, check=False)
    return time.perf_counter() - started


PROCESS_FILES = ("first_idv_server", "first_httpserver", "first_neither")


def process_costs(folder: Path) -> dict[str, float]:
    """Each one-test file's whole ``python -m pytest`` run (the files ``durations`` wrote;
    warm: pytest's cache kept, as in a suite's second run), in seconds: its wall time from
    outside (``process_<name>``) and the CPU time it used (``process_cpu_<name>``), which a
    shared machine's load moves far less."""
    found = {}
    for name in PROCESS_FILES:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        found[f"process_{name}"] = wall(folder, "-p", "no:xdist", f"test_{name}.py")
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        found[f"process_cpu_{name}"] = cpu
    return found


def resilience_overhead(folder: Path) -> float:
    """Per profile: a two-profile report's wall time over two, less a plain run's."""
    (folder / "test_resilience_one.py").write_text(HEADER + "\n\n" + FILES["first_idv_client"])
    wall(folder, "test_resilience_one.py")  # warm: bytecode, pytest's cache of the start
    plain = wall(folder, "test_resilience_one.py")
    report = wall(
        folder,
        "--idv-resilience",
        "--idv-resilience-profiles",
        "baseline,duplicates",
        "--idv-resilience-dir",
        str(folder / "report"),
        "test_resilience_one.py",
    )
    return report / 2 - plain


ROUNDS = 5  # medians of five (issue 37): each round runs every file once, interleaved
RESILIENCE_ROUNDS = {"quick": 1, "full": 3}  # its own target; three pytest runs a round


def measure(
    tests: int = TESTS, rounds: int = ROUNDS, editable: bool = False, resilience_rounds: int = 3
) -> dict[str, Any]:
    """Medians over ``rounds`` processes of each figure, in seconds; the load average
    (1 min) before and after, which moves these figures more than any change does."""
    PYTHON[:] = [sys.executable if editable else wheel_python()]
    figures: dict[str, list[float]] = {}
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "timing_plugin.py").write_text(TIMING_PLUGIN)
        durations(folder, "first_idv_server", 1)  # warm: bytecode, and pytest's cache holds
        # the session's start state, as in every run of a suite after its first
        for n in range(rounds):
            for name in [*FILES, "first_idv_server_cold", "first_httpserver_cold"]:
                each = durations(folder, name, tests)
                if name.startswith("first_"):
                    figures.setdefault(name, []).append(each[0]["setup"])
                else:
                    per_test = [sum(p.values()) for p in each[1:]]
                    figures.setdefault(name, []).append(statistics.median(per_test))
            for name, seconds in process_costs(folder).items():
                figures.setdefault(name, []).append(seconds)
            if n < resilience_rounds:
                figures.setdefault("resilience_overhead", []).append(resilience_overhead(folder))
    found: dict[str, Any] = {name: statistics.median(values) for name, values in figures.items()}
    found["rounds"] = rounds
    found["load_average"] = [round(load_before, 2), round(os.getloadavg()[0], 2)]
    return found


def rows(found: dict[str, Any]) -> list[Row]:
    out = []
    for name in ("first_idv_server", "first_idv_client", "first_idv_server_cold"):
        value = found[name]
        cold = name.endswith("_cold")
        base = found["first_httpserver_cold" if cold else "first_httpserver"]
        factor = COLD_FACTOR if cold else WARM_FACTOR
        ok = value <= factor * base and (cold or value <= FIRST_USE_S)
        what = name.removeprefix("first_").removesuffix("_cold")
        out.append(
            Row(
                PART,
                f"first use of {what} (setup), {'cold: no pytest cache' if cold else 'warm'}",
                f"{value * 1000:.0f} ms ({value / base:.2f}x httpserver's {base * 1000:.0f} ms)",
                f"<= {factor:.0f}x" + ("" if cold else f", <= {FIRST_USE_S * 1000:.0f} ms"),
                verdict(ok),
            )
        )
    pairs = (
        ("each_idv_mocked", "each_respx", MOCKED_FACTOR, "respx"),
        ("each_idv_project", "each_httpserver", PROJECT_FACTOR, "httpserver"),
    )
    for mine, theirs, factor, label in pairs:
        ratio = found[mine] / found[theirs]
        out.append(
            Row(
                PART,
                f"per test: {mine.removeprefix('each_')} vs {label}",
                f"{found[mine] * 1000:.2f} ms vs {found[theirs] * 1000:.2f} ms ({ratio:.2f}x)",
                f"<= {factor}x",
                verdict(ratio <= factor),
            )
        )
    if "process_first_neither" in found:  # information: the whole process, no target
        for kind, prefix in (("wall", "process_"), ("CPU", "process_cpu_")):
            neither = found[f"{prefix}first_neither"]
            mine = found[f"{prefix}first_idv_server"] - neither
            theirs = found[f"{prefix}first_httpserver"] - neither
            out.append(
                Row(
                    PART,
                    f"whole pytest process ({kind}), one-test file less one using neither: "
                    "idv_server vs httpserver, warm",
                    f"{mine * 1000:.0f} ms vs {theirs * 1000:.0f} ms "
                    f"(neither: {neither * 1000:.0f} ms)",
                    "(information)",
                    "info",
                )
            )
    before, after = found.get("load_average", ("?", "?"))
    out.append(
        Row(
            PART,
            "(the figures above: medians of rounds; load average 1 min, before / after)",
            f"{found.get('rounds', '?')} rounds; load {before} / {after}",
            "a quiet machine: load < 0.5",
            "info",
        )
    )
    overhead = found["resilience_overhead"]
    out.append(
        Row(
            PART,
            "resilience report: overhead per profile",
            f"{overhead:.2f} s",
            f"< {RESILIENCE_OVERHEAD_S:.0f} s",
            verdict(overhead < RESILIENCE_OVERHEAD_S),
        )
    )
    return out


def part(ctx: Any, mode: Any) -> tuple[list[Row], dict[str, Any]]:
    print("9. plugin cost (fresh pytest processes)", flush=True)
    data = measure(resilience_rounds=RESILIENCE_ROUNDS.get(getattr(mode, "name", ""), 3))
    return rows(data), data


if __name__ == "__main__":
    from report import render

    found = measure(editable="--editable" in sys.argv)
    print(render(rows(found)))
    print(json.dumps(found, indent=2))
