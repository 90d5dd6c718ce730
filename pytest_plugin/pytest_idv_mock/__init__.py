"""pytest plugin of idv-mock: a running, isolated, seeded fake of the service per test.

Installed with the package (``pytest11`` entry point ``idv_mock``), so ``pip install
idv-mock`` is all a test suite needs. This module is what pytest loads at start-up in
every run of a downstream project, idv fixtures used or not: it imports nothing beyond
the standard library (``python -c "import pytest_idv_mock"`` costs about what bare Python
does). The fixtures live in ``pytest_idv_mock.fixtures``, registered in
``pytest_configure``; they import the server, Faker and the rest only when a test uses one.
``pytest_addoption`` loads ``idv_mock.ground.compat`` (standard library only) to keep pytest from
rewriting the asserts of every ``idv_mock`` module, as it would for a wheel shipping a plugin.

Options (command line > environment > ini > default): ``--idv-mock-seed-count``
(``IDV_MOCK_SEED_COUNT``, ini ``idv_mock_seed_count``, 50), ``--idv-mock-random-seed``
(``IDV_MOCK_RANDOM_SEED``, ``idv_mock_random_seed``, 0), ``--idv-mock-host``
(``IDV_MOCK_HOST``, ``idv_mock_host``, 127.0.0.1), ``--idv-mock-port``
(``IDV_MOCK_PORT``, ``idv_mock_port``, 0 = a free port), ``--idv-mock-clock``
(``IDV_MOCK_CLOCK``, ``idv_mock_clock``, tick: the clock mode of every project),
``--idv-mock-auth-errors`` (``IDV_MOCK_AUTH_ERRORS``, ``idv_mock_auth_errors``, api-v3; or
gateway: a missing or wrong key answers 403 ``{"message": "Forbidden"}``).

``--idv-resilience`` runs the selected tests once per resilience profile instead (each in a
subprocess with ``IDV_MOCK_PROFILE`` set, which the fixtures apply to every project they
hand out) and reports the grid; ``--idv-resilience-profiles a,b`` picks profiles (names or
files), ``--idv-resilience-dir`` where the JSON and HTML go, ``--idv-resilience-jobs N``
how many profiles run at once. In such a subprocess,
``IDV_MOCK_RESILIENCE_OUT`` names the file where each test's outcome is written.

pytest 7.0 or later (``PYTEST_FLOOR``; docs/pytest.md "pytest versions"): idv-mock does not
depend on pytest, so a project may have an older one, which ``pytest_configure`` refuses
with a usage error naming the floor rather than letting each fixture fail at its first use.
"""

from __future__ import annotations

import importlib
import os

TYPE_CHECKING = False  # not typing's: importing typing (and re) would double the import cost
if TYPE_CHECKING:
    from typing import Any

OPTIONS = {
    # name: (default, help)
    "seed_count": ("50", "submissions seeded into the default project"),
    "random_seed": ("0", "seed of the fake data"),
    "host": ("127.0.0.1", "address of the idv_server fixture's server"),
    "port": ("0", "port of the idv_server fixture's server (0: a free port)"),
    "clock": ("tick", "the projects' clock mode: tick, wall or frozen (docs/time.md)"),
    "auth_errors": ("api-v3", "a missing or wrong key: api-v3 (its error) or gateway (403)"),
}
MARKERS = (
    "idv_scenario(name_or_path): load a scenario's `given` state before the test "
    "(a file, or a built-in name, as `idv-mock serve --scenario` reads it)",
    "idv_mock(seed_count=None, random_seed=None, api_key=None, admins=None, options=None, "
    "clock=None): this test's default project, different from the session's "
    "(clock: tick, wall or frozen)",
    "idv_webhook_delivery(**levers): webhook delivery levers of this test's default project "
    "(duplicate, delay_seconds, hold, drop, fail_first, events, auto_release)",
)
RESILIENCE_FLAGS = (  # take a value
    "--idv-resilience-profiles",
    "--idv-resilience-dir",
    "--idv-resilience-jobs",
)
OUT_ENV = "IDV_MOCK_RESILIENCE_OUT"
WEBHOOKS_PROPERTY = "idv_mock_webhooks"  # a test's webhooks, in a resilience run's report
DETAIL_CHARS = 2000
# the lowest pytest the fixtures work with (tried: 6.2.5, 7.0.0, 7.0.1, 7.4.4, 8.0.2, 8.3.5,
# 8.4.2, 9.x): 6.2's cache has no mkdir, where the session's start state is kept
PYTEST_FLOOR = (7, 0)


def pytest_addoption(parser: Any, pluginmanager: Any) -> None:
    # before any test or conftest imports idv_mock: pytest would rewrite the asserts of
    # all its modules, as it does for every package shipping a plugin (idv_mock.ground.compat)
    compat = importlib.import_module("idv_mock.ground.compat")
    compat.skip_assert_rewriting(getattr(pluginmanager, "rewrite_hook", None))
    group = parser.getgroup("idv-mock")
    for name, (default, help_text) in OPTIONS.items():
        flag = "--idv-mock-" + name.replace("_", "-")
        group.addoption(flag, dest=f"idv_mock_{name}", default=None, help=help_text)
        parser.addini(f"idv_mock_{name}", help_text, default=default)
    group.addoption(
        "--idv-resilience",
        action="store_true",
        default=False,
        help="run the selected tests once per resilience profile and report the grid",
    )
    group.addoption(
        "--idv-resilience-profiles",
        default=None,
        help="comma-separated profiles (built-in names or files; default: all built-in)",
    )
    group.addoption(
        "--idv-resilience-dir",
        default="idv-resilience",
        help="where resilience.json and resilience.html are written",
    )
    group.addoption(
        "--idv-coverage",
        nargs="?",
        const=".idv-coverage",
        default=None,
        metavar="DIR",
        help="report the contract coverage (what the suite made the mock do) in DIR "
        "(default .idv-coverage): coverage.json, coverage.html and a terminal summary",
    )
    group.addoption(
        "--idv-resilience-jobs",
        type=int,
        default=1,
        help="profiles run at the same time (each its own pytest process)",
    )


def pytest_configure(config: Any) -> None:
    import pytest  # loaded already: pytest is running this hook

    check_pytest_version(pytest.__version__)
    for line in MARKERS:
        config.addinivalue_line("markers", line)
    fixtures = importlib.import_module("pytest_idv_mock.fixtures")
    config.pluginmanager.register(fixtures, "idv_mock.fixtures")
    coverage_dir = config.getoption("idv_coverage", None)
    if coverage_dir is not None:
        check_coverage_dir(config, coverage_dir)
        session = importlib.import_module("idv_mock.coverage.session")
        recorder = session.SessionCoverage(coverage_dir, hasattr(config, "workerinput"))
        config.pluginmanager.register(recorder, session.PLUGIN_NAME)
    out = os.environ.get(OUT_ENV)
    if out and not hasattr(config, "workerinput"):  # xdist's workers relay their reports
        config.pluginmanager.register(OutcomeRecorder(out), "idv_mock.resilience_outcomes")


def check_coverage_dir(config: Any, value: str) -> None:
    """``--idv-coverage tests/`` takes ``tests/`` as its directory (an optional value, as
    pytest-cov's ``--cov``): refused when that is a test file or folder, with the way out."""
    args = list(config.invocation_params.args)
    spaced = any(args[n] == "--idv-coverage" and args[n + 1] == value for n in range(len(args) - 1))
    if spaced and (value.endswith(".py") or (os.path.isdir(value) and _has_tests(value))):
        import pytest

        raise pytest.UsageError(
            f"--idv-coverage took {value} as the report's directory: write "
            f"--idv-coverage=DIR, or put --idv-coverage after the test paths"
        )


def _has_tests(folder: str) -> bool:
    return any(name.endswith(".py") for name in os.listdir(folder))


def check_pytest_version(version: str) -> None:
    """A pytest below ``PYTEST_FLOOR`` is a usage error that says what to do, before any
    test runs (below it, every fixture failed in its setup with an AttributeError)."""
    if importlib.import_module("idv_mock.ground.compat").version_numbers(version) >= PYTEST_FLOOR:
        return
    import pytest

    floor = ".".join(map(str, PYTEST_FLOOR))
    raise pytest.UsageError(
        f"idv-mock's pytest plugin needs pytest {floor} or later, not {version}: "
        f"pip install 'idv-mock[pytest]' upgrades it; -p no:idv_mock runs without the plugin"
    )


def pytest_cmdline_main(config: Any) -> int | None:
    """``--idv-resilience``: the suite once per profile, in subprocesses, then the grid."""
    if not config.getoption("idv_resilience", False) or os.environ.get(OUT_ENV):
        return None
    runner = importlib.import_module("idv_mock.resilience.runner")
    names = config.getoption("idv_resilience_profiles")
    profiles = [n.strip() for n in names.split(",") if n.strip()] if names else None
    args = without_resilience_flags(list(config.invocation_params.args))
    try:
        where, jobs = (
            config.getoption("idv_resilience_dir"),
            config.getoption("idv_resilience_jobs"),
        )
        code: int = runner.run_all(args, profiles, where, jobs=jobs)
    except ValueError as exc:  # a profile that cannot be found or read
        import pytest

        raise pytest.UsageError(str(exc)) from None
    return code


def without_resilience_flags(args: list[str]) -> list[str]:
    """The command line a profile's run gets: ours removed, the rest as given."""
    kept: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg == "--idv-resilience" or arg.startswith(tuple(f + "=" for f in RESILIENCE_FLAGS)):
            continue
        elif arg in RESILIENCE_FLAGS:
            skip = True
        else:
            kept.append(arg)
    return kept


class OutcomeRecorder:
    """Each test's outcome and the first line of its failure, written as JSON at the end
    of the session (the resilience runner reads it)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.outcomes: dict[str, dict[str, Any]] = {}

    def pytest_runtest_logreport(self, report: Any) -> None:
        found: dict[str, Any] = self.outcomes.setdefault(
            report.nodeid, {"outcome": "passed", "message": ""}
        )
        if report.failed:
            first = found["outcome"] == "passed"
            found["outcome"] = "failed" if report.when == "call" else "error"
            if first:
                found["message"] = first_line(report)
                found["detail"] = failure_text(report)
        elif report.skipped and found["outcome"] == "passed":
            found["outcome"] = "skipped"
        for name, value in getattr(report, "user_properties", ()):
            if name == WEBHOOKS_PROPERTY:  # set by the fixtures at teardown (xdist relays it)
                found["webhooks"] = value

    def pytest_sessionfinish(self) -> None:
        import json  # only in a profile's run: json imports re, which this module avoids

        with open(self.path, "w", encoding="utf-8") as out:
            json.dump(self.outcomes, out)


def failure_text(report: Any) -> str:
    """The failure as pytest explains it: the assertion's message and its ``where`` lines
    (``assert 2 == 1`` alone does not say what was compared), up to ``DETAIL_CHARS``."""
    crash = getattr(report.longrepr, "reprcrash", None)
    text = str(crash.message) if crash is not None else str(report.longrepr).strip()
    return text[:DETAIL_CHARS]


def first_line(report: Any) -> str:
    """The failing assertion's first line (``AssertionError: assert 'a' == 'b'``)."""
    crash = getattr(report.longrepr, "reprcrash", None)
    text = str(crash.message) if crash is not None else str(report.longrepr).strip()
    lines = text.splitlines() or [""]
    return (lines[0] if crash is not None else lines[-1])[:300]


def __getattr__(name: str) -> Any:
    """The fixtures module's public names (``IdvServer``, ``serve_in_thread``, ...), for
    code that imported them from here."""
    return getattr(importlib.import_module("pytest_idv_mock.fixtures"), name)
