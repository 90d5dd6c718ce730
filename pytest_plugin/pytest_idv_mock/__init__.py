"""pytest plugin of idv-mock: a running, isolated, seeded fake of the service per test.

Installed with the package (``pytest11`` entry point ``idv_mock``), so ``pip install
idv-mock`` is all a test suite needs. This module is what pytest loads at start-up in
every run of a downstream project, idv fixtures used or not: it imports nothing beyond
the standard library (``python -c "import pytest_idv_mock"`` costs about what bare Python
does). The fixtures live in ``pytest_idv_mock.fixtures``, registered in
``pytest_configure``; they import the server, Faker and the rest only when a test uses one.

Options (command line > environment > ini > default): ``--idv-mock-seed-count``
(``IDV_MOCK_SEED_COUNT``, ini ``idv_mock_seed_count``, 50), ``--idv-mock-random-seed``
(``IDV_MOCK_RANDOM_SEED``, ``idv_mock_random_seed``, 0), ``--idv-mock-host``
(``IDV_MOCK_HOST``, ``idv_mock_host``, 127.0.0.1), ``--idv-mock-port``
(``IDV_MOCK_PORT``, ``idv_mock_port``, 0 = a free port), ``--idv-mock-clock``
(``IDV_MOCK_CLOCK``, ``idv_mock_clock``, tick: the clock mode of every project).
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # not typing's: importing typing (and re) would double the import cost
if TYPE_CHECKING:
    from typing import Any

OPTIONS = {
    # name: (default, help)
    "seed_count": ("50", "submissions seeded into the default project"),
    "random_seed": ("0", "seed of the fake data"),
    "host": ("127.0.0.1", "address of the idv_server fixture's server"),
    "port": ("0", "port of the idv_server fixture's server (0: a free port)"),
    "clock": ("tick", 'the projects\' clock mode: tick, wall or frozen (README "Time")'),
}
MARKERS = (
    "idv_scenario(name_or_path): load a scenario's `given` state before the test "
    "(a file, or a built-in name, as `idv-mock serve --scenario` reads it)",
    "idv_mock(seed_count=None, random_seed=None, api_key=None, admins=None, options=None, "
    "clock=None): this test's default project, different from the session's "
    "(clock: tick, wall or frozen)",
)


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("idv-mock")
    for name, (default, help_text) in OPTIONS.items():
        flag = "--idv-mock-" + name.replace("_", "-")
        group.addoption(flag, dest=f"idv_mock_{name}", default=None, help=help_text)
        parser.addini(f"idv_mock_{name}", help_text, default=default)


def pytest_configure(config: Any) -> None:
    for line in MARKERS:
        config.addinivalue_line("markers", line)
    fixtures = importlib.import_module("pytest_idv_mock.fixtures")
    config.pluginmanager.register(fixtures, "idv_mock.fixtures")


def __getattr__(name: str) -> Any:
    """The fixtures module's public names (``IdvServer``, ``serve_in_thread``, ...), for
    code that imported them from here."""
    return getattr(importlib.import_module("pytest_idv_mock.fixtures"), name)
