"""Contract coverage as the control API and the coverage report read it (docs/coverage.md).

``service.coverage``, a part of :class:`~idv_mock.backend.Service` given the service's
``Core``. The counts themselves (``coverage_counts.CoverageCounts``, ``counts`` here) are
kept by project id outside the projects, so a reset keeps them; reading a report holds the
service's lock, since API calls are counted under it.
"""

from __future__ import annotations

from typing import Any

from idv_mock.backend.core import Core
from idv_mock.backend.coverage_counts import CoverageCounts
from idv_mock.backend.exceptions import NotFound


class Coverage:
    """What each project showed of the mock's behaviours, read and cleared under the lock."""

    def __init__(self, core: Core) -> None:
        self.core = core

    @property
    def counts(self) -> CoverageCounts:
        """The counts every part adds to (on each call's path, so without this part's lock)."""
        return self.core.coverage_counts

    def report(self, project_id: str | None = None) -> dict[str, Any]:
        """Contract coverage (docs/coverage.md) of one project, or of all projects."""
        with self.core.lock:
            if project_id is None:
                return self.counts.report()
            if project_id not in self.core.projects and project_id not in self.counts.projects:
                raise NotFound(f"project {project_id} not found")
            return self.counts.report([project_id])

    def clear(self, project_id: str | None = None) -> list[str]:
        """Forget the coverage counts (of one project, or all); the projects cleared."""
        with self.core.lock:
            if project_id is not None and project_id not in self.core.projects:
                raise NotFound(f"project {project_id} not found")
            cleared = sorted(self.counts.projects) if project_id is None else [project_id]
            self.counts.clear(project_id)
            return cleared
