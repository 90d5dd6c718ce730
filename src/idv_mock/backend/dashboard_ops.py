"""What the dashboard (``web/dashboard``) asks of the service beyond what the API asks.

Kept apart from ``service.py`` so each stays small; :class:`~idv_mock.backend.Service`
inherits these methods. The dashboard shows and steers state that the control API covers
only in part (a worklist or a watchlist entry cannot be deleted there, a delivery cannot be
sent again), so those operations live here, under the service's lock like every other.
"""

from __future__ import annotations

import copy
import threading
from typing import TYPE_CHECKING, Any

from idv_mock.backend import events
from idv_mock.backend.exceptions import NotFound
from idv_mock.backend.projects import Project
from idv_mock.backend.time_service import Clocks

if TYPE_CHECKING:
    from idv_mock.webhooks import WebhookDispatcher


class DashboardOperations:
    """Mixin: the dashboard's reads and the few changes only it makes."""

    _lock: threading.RLock
    changes: int
    webhooks: WebhookDispatcher

    if TYPE_CHECKING:  # provided by Service

        def project(self, project_id: str) -> Project: ...

        def edit(
            self, project: Project, sid: str, admin: str, changes: dict[str, str]
        ) -> dict[str, Any]: ...

        def _fire(self, project: Project, batch: list[events.Event]) -> None: ...

        clocks: Clocks

    # --- review ---
    def review(
        self, project: Project, sid: str, admin: str, changes: dict[str, str]
    ) -> dict[str, Any]:
        """A reviewer's decision: the administrator's PATCH (``edit``: checks, stamps, the
        ``updated`` webhook and, for a changed status, the result's webhook with reviewer
        ``agent``)."""
        with self._lock:
            return self.edit(project, sid, admin, changes)

    # --- reads ---
    def dashboard_counts(self, project_id: str) -> dict[str, int]:
        """How much of each kind of state a project holds (the projects page's columns)."""
        with self._lock:
            project = self.project(project_id)
            counts = {
                "submissions": len(project.store),
                "faults": len(project.faults.rules),
                "projections": len(project.projections.policies),
                "watchlist": len(project.aml.entries),
                "worklists": len(project.monitoring.worklists),
                "journal": len(project.journal.entries),
            }
        counts["deliveries"] = self.webhooks.tally(project_id)[0]
        return counts

    def dashboard_pulse(self, project_id: str) -> str:
        """A stamp that changes whenever something a page shows may have changed: the live
        script polls it and fetches the page again only then."""
        with self._lock:
            project = self.project(project_id)
            self.clocks.catch_up(project)  # an open page is a touch: what fell due happens now
            stamp = f"{self.changes}.{len(project.store)}.{project.journal.counter}"
        count, attempts, settled = self.webhooks.tally(project_id)
        return f"{stamp}.{count}.{attempts}.{settled}"

    def hidden_fields_of(self, project_id: str, sid: str) -> list[str]:
        """The fields a projection hid from this submission when it arrived (none: [])."""
        with self._lock:
            return list(self.project(project_id).hidden_fields(sid) or [])

    def monitoring_records_of(self, project_id: str, sid: str) -> list[dict[str, Any]]:
        """Every monitoring record of a submission, each with its worklist's id and name."""
        with self._lock:
            worklists = self.project(project_id).monitoring.worklists.values()
            return [
                {"worklist_id": w.id, "worklist_name": w.name, **copy.deepcopy(r)}
                for w in worklists
                for r in w.records.values()
                if r.get("submissionId") == sid
            ]

    def own_watchlist(self, project_id: str) -> list[dict[str, Any]]:
        """The project's own watchlist entries (the built-in list cannot be changed)."""
        with self._lock:
            return [e.to_json() for e in self.project(project_id).aml.entries]

    # --- changes ---
    def delete_watchlist_entry(self, project_id: str, entry_id: str) -> dict[str, Any]:
        """Remove one of the project's own entries; later screenings no longer match it."""
        with self._lock:
            aml = self.project(project_id).aml
            found = next((e for e in aml.entries if e.entry_id == entry_id), None)
            if found is None:
                raise NotFound(f"watchlist entry {entry_id} not found in the project's own list")
            self.changes += 1
            aml.entries.remove(found)
            return found.to_json()

    def delete_worklist(self, project_id: str, wid: str) -> dict[str, Any]:
        """Remove a worklist and its records (the API then answers it as unknown)."""
        with self._lock:
            project = self.project(project_id)
            monitoring = project.monitoring
            described = monitoring.get(wid).describe()
            self.changes += 1
            del monitoring.worklists[wid]
            project.schedule.remove("monitoring_cycle", worklist_id=wid)
            return described
