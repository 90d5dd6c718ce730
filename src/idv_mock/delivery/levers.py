"""A project's webhook delivery levers: how production delivers webhooks, on demand.

Vendors deliver a webhook late, twice, out of order, or never (the vendor's FAQ tells
integrators to poll for results that never arrived); a mock that always delivers each one
once, at once and in order hides the bugs that follow. The levers say how the dispatcher
should misbehave for one project; ``{}`` is prompt delivery. They are plain, immutable
data (validated by ``schemas/webhook_delivery.json``), kept with the project so a state
export carries them; the dispatcher keeps the counters that ``drop.first`` and
``fail_first`` need, started again whenever a project's levers are set.
"""

from __future__ import annotations

import copy
import random
from typing import Any

from idv_mock.ground import schemas
from idv_mock.ground.by_value import ByValue

SCHEMA = "webhook_delivery.json"
RELEASE_SCHEMA = "webhook_release.json"
RELEASE_ORDERS = schemas.enum("release_order")


class DeliveryLevers(ByValue):
    """A project's delivery levers. Equal, hashed and shown by the levers (not ``source``,
    the document given), read-only by convention (``ByValue``: not a frozen dataclass,
    whose generated methods were compiled at import, on every first use)."""

    __slots__ = (
        "delay_seconds",
        "drop_first",
        "drop_seed",
        "drop_share",
        "duplicate",
        "events",
        "fail_first",
        "hold",
        "release_after",
        "release_order",
        "release_seed",
        "source",
    )
    FIELDS = tuple(n for n in __slots__ if n != "source")  # the levers, not the document

    def __init__(
        self,
        duplicate: int = 1,
        delay_seconds: float = 0.0,
        hold: bool = False,
        drop_first: int = 0,
        drop_share: float = 0.0,
        drop_seed: int | None = None,  # as given (None: not given, drawn as seed 0)
        fail_first: int = 0,
        events: tuple[str, ...] = (),  # the events the levers apply to (empty: every event)
        release_after: float = 0.0,  # with hold: a held batch goes out by itself after this
        release_order: str = "queued",
        release_seed: int = 0,
        source: dict[str, Any] | None = None,  # the document given
    ) -> None:
        self.duplicate, self.delay_seconds, self.hold = duplicate, delay_seconds, hold
        self.drop_first, self.drop_share, self.drop_seed = drop_first, drop_share, drop_seed
        self.fail_first, self.events, self.release_after = fail_first, events, release_after
        self.release_order, self.release_seed = release_order, release_seed
        self.source: dict[str, Any] = {} if source is None else source

    @classmethod
    def problems(cls, doc: Any) -> list[str]:
        """Why ``doc`` is not a levers document (empty when it is)."""
        return schemas.errors(SCHEMA, doc)

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> DeliveryLevers:
        """Levers from a document already checked by ``problems``."""
        drop = doc.get("drop", {})
        release = doc.get("auto_release", {})
        return cls(
            duplicate=int(doc.get("duplicate", 1)),
            delay_seconds=float(doc.get("delay_seconds", 0)),
            hold=bool(doc.get("hold", False)),
            drop_first=int(drop.get("first", 0)),
            drop_share=float(drop.get("share", 0.0)),
            drop_seed=drop.get("seed"),
            fail_first=int(doc.get("fail_first", 0)),
            events=tuple(doc.get("events", ())),
            release_after=float(release.get("after_seconds", 0)),
            release_order=str(release.get("order", "queued")),
            release_seed=int(release.get("seed", 0)),
            source=copy.deepcopy(doc),
        )

    def to_json(self) -> dict[str, Any]:
        """The levers as they were given (``GET`` reads back what ``PUT`` set)."""
        return copy.deepcopy(self.source)

    def applies_to(self, event: str) -> bool:
        """Whether the levers steer this event's deliveries (else it goes out promptly)."""
        return not self.events or event in self.events

    @property
    def prompt(self) -> bool:
        """Whether these levers change nothing (each webhook once, at once, in order)."""
        return self == PROMPT


PROMPT = DeliveryLevers()


class LeverCounters:
    """What the levers of one project have used up: webhooks seen (for ``drop.first``), the
    seeded draw of ``drop.share``, and attempts failed on purpose (``fail_first``)."""

    def __init__(self, levers: DeliveryLevers) -> None:
        self.levers = levers
        self.webhooks = 0
        self.failed = 0
        self._draw = random.Random(levers.drop_seed or 0)

    def drops_next(self) -> bool:
        """Whether the next webhook is dropped (counts it)."""
        self.webhooks += 1
        if self.levers.drop_first:
            return self.webhooks <= self.levers.drop_first
        if self.levers.drop_share:
            return self._draw.random() < self.levers.drop_share
        return False

    def fails_next(self) -> bool:
        """Whether the next attempt is answered as a failing receiver (counts it)."""
        if self.failed < self.levers.fail_first:
            self.failed += 1
            return True
        return False


def release_order(held: list[str], order: Any, seed: int) -> list[str]:
    """The held delivery ids to release, in the order asked (``order`` already checked by
    the schema; a list names held ids only, which the caller checks)."""
    if isinstance(order, list):
        return [str(i) for i in order]
    if order == "reversed":
        return held[::-1]
    if order == "shuffle":
        shuffled = list(held)
        random.Random(seed).shuffle(shuffled)
        return shuffled
    return list(held)
