"""The webhook delivery levers of a project, as the control API, the dashboard, scenarios
and the pytest plugin steer them.

``service.delivery``, a part of :class:`~idv_mock.backend.Service` given the service's
``Core``; callers use its names directly (``service.delivery.levers``, ``.set_levers``,
``.release``, ``.in_state``, ``.resend``). The levers are lasting project state (kept
with the project, in its snapshots and state documents); what they have used up, and the
held and delayed deliveries themselves, are the dispatcher's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from idv_mock.backend.core import Core
from idv_mock.backend.event_codes import EVENT_NAMES
from idv_mock.backend.exceptions import InvalidInput, NotFound
from idv_mock.delivery.levers import RELEASE_SCHEMA, DeliveryLevers
from idv_mock.ground import schemas

if TYPE_CHECKING:
    from idv_mock.backend import routes

STATES = schemas.enum("delivery_state")


class Delivery:
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
        from idv_mock.delivery.webhooks import NotHeld  # with the dispatcher (service.py)

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

    def add_route(self, project_id: str, doc: Any) -> dict[str, Any]:
        """A one-shot route (``backend/routes.py``): the next event of ``webhook_trigger``
        whose payload has the ``match`` values goes to ``url`` (the project's URL without
        one), then the route records that delivery."""
        from idv_mock.backend import routes  # with the first route (a first use adds none)

        problems = routes.problems(doc, tuple(EVENT_NAMES))
        url = doc.get("url") if not problems else None
        refusal = self.core.webhooks.host_rule.refusal(url) if isinstance(url, str) else None
        if refusal:
            problems.append(f"url refused: {refusal}")
        if problems:
            raise InvalidInput("invalid webhook route", problems)
        with self.core.lock:
            self.core.project(project_id)
            found = self.core.routes.setdefault(project_id, [])
            taken = {r.route_id for r in found}
            number = len(found) + 1
            while f"rt-{number}" in taken:
                number += 1
            route = routes.Route(
                f"rt-{number}", project_id, doc["webhook_trigger"], dict(doc["match"]), url
            )
            found.append(route)
            return route.describe()

    def route(self, project_id: str, route_id: str) -> dict[str, Any]:
        """A route, with the delivery it made (``delivery``: null while unused)."""
        with self.core.lock:
            self.core.project(project_id)
            route = self._route(project_id, route_id)
            found = route.describe()
        delivery_id = found["delivery_id"]
        records = self.core.webhooks.deliveries(project_id) if delivery_id else []
        found["delivery"] = next((d for d in records if d["id"] == delivery_id), None)
        return found

    def remove_route(self, project_id: str, route_id: str) -> dict[str, Any]:
        """Drop a route (used or not); what it was."""
        with self.core.lock:
            self.core.project(project_id)
            route = self._route(project_id, route_id)
            self.core.routes[project_id].remove(route)
            return route.describe()

    def _route(self, project_id: str, route_id: str) -> routes.Route:
        found = next(
            (r for r in self.core.routes.get(project_id, ()) if r.route_id == route_id), None
        )
        if found is None:
            raise NotFound(f"route {route_id} not found")
        return found
