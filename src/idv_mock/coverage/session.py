"""``pytest --idv-coverage[=DIR]``: what the session's mocks met, written at its end.

The plugin registers a :class:`SessionCoverage` (``PLUGIN_NAME``) and its fixtures hand it
each service they are done with (``take``): the session's service at the end, a test's own
(``@pytest.mark.idv_mock(seed_count=...)``) when that test ends. Under pytest-xdist each
worker writes its part into the directory the controller named (``PARTS_ENV``) and the
controller, whose session ends last, combines them. In a resilience run only the baseline
profile's run writes the report: the profiles' faults are the resilience report's subject,
not something the suite made the mock do.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from idv_mock.backend.coverage_counts import combine
from idv_mock.coverage import report

PLUGIN_NAME = "idv-mock-coverage"
PARTS_ENV = "IDV_MOCK_COVERAGE_PARTS"  # where xdist's workers leave their parts
RESILIENCE_HTML_ENV = "IDV_MOCK_RESILIENCE_HTML"  # the resilience report to link to
PROFILE_ENV = "IDV_MOCK_PROFILE"


class SessionCoverage:
    """Collects the reports of the session's services; writes and prints them at its end."""

    def __init__(self, out_dir: str, worker: bool) -> None:
        self.out_dir = out_dir
        self.worker = worker
        self.reports: list[dict[str, Any]] = []
        self.doc: dict[str, Any] | None = None
        self.written: tuple[Path, Path] | None = None
        if not worker and PARTS_ENV not in os.environ:  # workers inherit the variable
            os.environ[PARTS_ENV] = tempfile.mkdtemp(prefix="idv-coverage-")

    def take(self, service: Any) -> None:
        """A service the fixtures are done with: its counts over every project."""
        self.reports.append(service.coverage.report())

    def pytest_sessionfinish(self) -> None:
        parts = Path(os.environ[PARTS_ENV])
        if self.worker:
            if self.reports:
                name = f"part-{os.getpid()}.json"
                (parts / name).write_text(json.dumps(combine(self.reports)), encoding="utf-8")
            return
        found = list(self.reports)
        for part in sorted(parts.glob("part-*.json")):
            found.append(json.loads(part.read_text(encoding="utf-8")))
            part.unlink()
        with contextlib.suppress(OSError):  # the folder this session made, now empty
            parts.rmdir()
        if not found or not _writes_here():
            return
        self.doc = combine(found)
        self.written = report.write(self.doc, self.out_dir, os.environ.get(RESILIENCE_HTML_ENV))

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.doc is None or self.written is None:
            return
        terminalreporter.write_sep("-", "idv-mock contract coverage")
        terminalreporter.write(report.text(self.doc))
        json_path, html_path = self.written
        terminalreporter.write_line(f"written: {json_path}, {html_path}")


def _writes_here() -> bool:
    """Not a resilience profile's run other than baseline's."""
    profile = os.environ.get(PROFILE_ENV)
    return not profile or Path(profile).stem == "baseline"
