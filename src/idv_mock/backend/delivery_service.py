"""The webhook delivery levers of a project, as the control API, the dashboard, scenarios
and the pytest plugin steer them.

``service.delivery``, a part of :class:`~idv_mock.backend.Service` given the service's
``Core``; the service keeps the documented names (``delivery_levers``, ``resend``, ...)
as entry points. The levers are lasting project state (kept with the project, in
its snapshots and state documents); what they have used up, and the held and delayed
deliveries themselves, are the dispatcher's.
"""

from __future__ import annotations

from typing import Any

from idv_mock import schemas
from idv_mock.backend.core import Core
from idv_mock.backend.exceptions import InvalidInput, NotFound
from idv_mock.delivery import RELEASE_SCHEMA, DeliveryLevers
from idv_mock.webhooks import NotHeld

STATES = ("pending", "held", "delayed", "sending", "delivered", "failed", "dropped", "cancelled")


class WebhookDelivery:
    """A project's delivery levers, held deliveries, listing by state and resending."""

    def __init__(self, core: Core) -> None:
        self.core = core

    def levers(self, project_id: str) -> dict[str, Any]:
        """The project's levers as set (``{}``: prompt delivery)."""
        with self.core.lock:
            return self.core.project(project_id).delivery.to_json()

    def set_levers(self, project_id: str, doc: Any) -> dict[str, Any]:
        """Replace the project's levers (``{}`` restores prompt delivery); the counts of
        ``drop.first`` and ``fail_first`` start again. Held deliveries stay held."""
        problems = DeliveryLevers.problems(doc)
        if problems:
            raise InvalidInput("invalid webhook delivery levers", problems)
        levers = DeliveryLevers.from_json(doc)
        with self.core.lock:
            self.core.changes += 1
            self.core.project(project_id).delivery = levers
            return levers.to_json()

    def release(self, project_id: str, doc: Any) -> list[str]:
        """Send the project's held deliveries in the order ``doc`` asks; the ids released."""
        problems = schemas.errors(RELEASE_SCHEMA, doc)
        if problems:
            raise InvalidInput("invalid release", problems)
        with self.core.lock:
            self.core.project(project_id)
        try:
            return self.core.webhooks.release(
                project_id, doc.get("order", "queued"), doc.get("seed", 0)
            )
        except NotHeld as exc:
            raise InvalidInput("not held: " + ", ".join(exc.ids), exc.ids) from None

    def recorded(self, project_id: str, newest: int | None = None) -> list[dict[str, Any]]:
        """The project's webhook deliveries, each with its attempts (the newest ``newest``)."""
        with self.core.lock:
            self.core.project(project_id)  # an unknown project is refused, not an empty list
        return self.core.webhooks.deliveries(project_id, newest)

    def in_state(self, project_id: str, state: str | None) -> list[dict[str, Any]]:
        """The project's deliveries, only those in ``state`` when given."""
        if state is not None and state not in STATES:
            raise InvalidInput(f"state must be one of {', '.join(STATES)}")
        with self.core.lock:
            self.core.project(project_id)
        return self.core.webhooks.deliveries(project_id, state=state)

    def resend(self, project_id: str, delivery_id: str) -> dict[str, Any]:
        """Send a recorded webhook again now, as a new delivery (``resend_of`` names it)."""
        with self.core.lock:
            self.core.project(project_id)
        again = self.core.webhooks.resend(project_id, delivery_id)
        if again is None:
            raise NotFound(f"delivery {delivery_id} not found")
        return again.describe()
