"""What the dashboard (``web/dashboard``) reads of the service beyond what the API reads.

``service.dashboard``, a part of :class:`~idv_mock.backend.Service` given the service's
``Core`` and ``Clocks`` (an open page is a touch: what fell due happens now). The
dashboard's changes beyond the control API (deleting a worklist or a watchlist entry) are
``service.screening``'s, its resend ``service.delivery``'s and its review the API's edit.
"""

from __future__ import annotations

from idv_mock.backend.core import Core
from idv_mock.backend.parts.clocks import Clocks


class Dashboard:
    """A project's counts, the pages' change stamp, a submission's hidden fields."""

    def __init__(self, core: Core, clocks: Clocks) -> None:
        self.core = core
        self.clocks = clocks

    def counts(self, project_id: str) -> dict[str, int]:
        """How much of each kind of state a project holds (the projects page's columns)."""
        with self.core.lock:
            project = self.core.project(project_id)
            counts = {
                "submissions": len(project.store),
                "faults": len(project.faults.rules),
                "projections": len(project.projections.policies),
                "watchlist": len(project.aml.entries),
                "worklists": len(project.monitoring.worklists),
                "journal": len(project.journal.entries),
            }
        counts["deliveries"] = self.core.webhooks.tally(project_id)[0]
        return counts

    def pulse(self, project_id: str) -> str:
        """A stamp that changes whenever something a page shows may have changed: the live
        script polls it and fetches the page again only then."""
        with self.core.lock:
            project = self.core.project(project_id)
            self.clocks.catch_up(project)  # an open page is a touch: what fell due happens now
            stamp = f"{self.core.changes}.{len(project.store)}.{project.journal.counter}"
        count, attempts, settled = self.core.webhooks.tally(project_id)
        return f"{stamp}.{count}.{attempts}.{settled}"

    def hidden_fields(self, project_id: str, sid: str) -> list[str]:
        """The fields a projection hid from this submission when it arrived (none: [])."""
        with self.core.lock:
            return list(self.core.project(project_id).hidden_fields(sid) or [])
