"""One-shot webhook routes: "the next ``approved`` whose ``userid`` is u-1 goes to this URL".

``idv-mock trigger --forward-to`` needs one event at a URL other than the project's webhook
URL, without pointing the project's URL elsewhere (every other event of the project would
follow it for as long) and even when the project has none. A route names the trigger and
payload fields only the flow it is made for carries (a fresh user id, submission id or
token), so no other delivery can take it; it is used once and then records the delivery
it made, which the caller reads back (the payload as sent, the receiver's answer). Without
a ``url`` the event goes to the project's URL as usual (its delivery levers apply) and the
route only records which delivery it was. Routes are the dispatcher's kind of state:
never saved, dropped by a reset.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from idv_mock.ground import schemas

SCHEMA = "webhook_route_request.json"


@dataclass(slots=True)
class Route:
    route_id: str
    project_id: str
    trigger: str
    match: dict[str, str]
    url: str | None = None
    delivery_id: str | None = None

    def takes(self, payload: dict[str, Any]) -> bool:
        """Whether this unused route is for ``payload``."""
        if self.delivery_id is not None or payload.get("webhook_trigger") != self.trigger:
            return False
        return all(str(payload.get(k, "")) == v for k, v in self.match.items())

    def describe(self) -> dict[str, Any]:
        return {
            "route_id": self.route_id,
            "webhook_trigger": self.trigger,
            "match": dict(self.match),
            "url": self.url,
            "delivery_id": self.delivery_id,
        }


def problems(doc: Any, events: tuple[str, ...]) -> list[str]:
    """Why ``doc`` is not a route (empty when it is): its schema, and a vendor trigger."""
    found = schemas.errors(SCHEMA, doc)
    if not found and doc["webhook_trigger"] not in events:
        found.append(f"webhook_trigger must be one of {', '.join(events)}")
    return found
