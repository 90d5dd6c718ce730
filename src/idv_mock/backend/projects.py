"""A mocked project: its key, its administrators, its options, and its submissions."""

from __future__ import annotations

import copy
import threading
from typing import TYPE_CHECKING, Any

import orjson

from idv_mock.backend.exceptions import InvalidInput
from idv_mock.backend.faults import FaultRules
from idv_mock.backend.journal import Journal
from idv_mock.backend.projections import Projections
from idv_mock.backend.schedule import Schedule
from idv_mock.backend.store import SubmissionStore
from idv_mock.delivery.levers import PROMPT, DeliveryLevers
from idv_mock.ground import schemas
from idv_mock.ground.clock import Clock

if TYPE_CHECKING:
    from idv_mock.backend.aml import AmlState
    from idv_mock.backend.monitoring import Monitoring
    from idv_mock.backend.ratelimit import TokenBucket
    from idv_mock.backend.token_pool import TokenPool

# option keys mirrored into each new submission's project_options (api-v3.md 2.3)
MIRRORED = tuple(k for k in schemas.option_defaults() if k.startswith(("option_", "policy_")))
# the parts a project builds on first use (``Project.aml`` ...): what a GET never reads
LAZY_PARTS = ("aml", "monitoring", "tokens")
_BUILDING = threading.Lock()  # the server's thread and a test's may ask for one at once


def _part_from(name: str, doc: Any) -> Any:
    """The part ``name`` from its state document (None: a new, empty one), its module
    imported now. The document is shared by a start and its clones: restored from a copy."""
    if name == "aml":
        from idv_mock.backend.aml import AmlState

        return AmlState() if doc is None else AmlState.restore(orjson.loads(orjson.dumps(doc)))
    if name == "monitoring":
        from idv_mock.backend.monitoring import Monitoring

        return Monitoring() if doc is None else Monitoring.restore(orjson.loads(orjson.dumps(doc)))
    from idv_mock.backend.token_pool import TokenPool

    return TokenPool() if doc is None else TokenPool.restore(doc)  # str to str: copied


class Project:
    """A project's settings and every part of its state. A plain class, not a dataclass:
    its generated methods were compiled at import (on every first use), for comparing or
    printing whole projects, which nothing does."""

    __slots__ = (
        "_aml",
        "_monitoring",
        "_pending",
        "_tokens",
        "admins",
        "api_key",
        "bucket",
        "clock",
        "created_at",
        "delivery",
        "faults",
        "images",
        "journal",
        "options",
        "project_id",
        "projections",
        "schedule",
        "store",
    )

    def __init__(
        self,
        project_id: str,
        api_key: str,
        admins: list[str],
        options: dict[str, Any],
        created_at: str,
    ) -> None:
        self.project_id, self.api_key, self.admins = project_id, api_key, admins
        self.options, self.created_at = options, created_at
        self.store = SubmissionStore()
        self.faults = FaultRules()
        self.projections = Projections()
        self.journal = Journal()
        self.bucket: TokenBucket | None = None
        # AML state, worklists and the token pool (``aml``, ``monitoring``, ``tokens``
        # below): built on first use, from the state document kept in ``_pending`` till then
        self._aml: AmlState | None = None
        self._monitoring: Monitoring | None = None
        self._tokens: TokenPool | None = None  # POST /v3/submission/tokens
        self._pending: dict[str, Any] = {}
        self.images: dict[str, dict[str, bytes]] = {}  # PUT /submission/image
        self.clock = Clock()  # the project's own time (docs/time.md)
        self.schedule = Schedule()  # what falls due on that clock
        self.delivery: DeliveryLevers = PROMPT  # how its webhooks go out (delivery/levers.py)

    def __repr__(self) -> str:
        return f"Project(project_id={self.project_id!r})"

    def seconds(self, option: str) -> float:
        """A duration option (``token_expiry_seconds``, ...) in seconds."""
        return float(self.options.get(option) or schemas.option_defaults()[option])

    @property
    def aml(self) -> AmlState:
        """The project's own watchlist entries and AML reports (``aml.py``)."""
        found = self._aml
        return found if found is not None else self._built("aml")

    @aml.setter
    def aml(self, value: AmlState) -> None:
        self._aml = value
        self._pending.pop("aml", None)

    @property
    def monitoring(self) -> Monitoring:
        """The project's monitoring worklists (``monitoring.py``)."""
        found = self._monitoring
        return found if found is not None else self._built("monitoring")

    @monitoring.setter
    def monitoring(self, value: Monitoring) -> None:
        self._monitoring = value
        self._pending.pop("monitoring", None)

    @property
    def tokens(self) -> TokenPool:
        """The project's token pool (``token_pool.py``)."""
        found = self._tokens
        return found if found is not None else self._built("tokens")

    @tokens.setter
    def tokens(self, value: TokenPool) -> None:
        self._tokens = value
        self._pending.pop("tokens", None)

    def _built(self, name: str) -> Any:
        with _BUILDING:
            found = getattr(self, "_" + name)
            if found is None:
                found = _part_from(name, self._pending.pop(name, None))
                setattr(self, "_" + name, found)
            return found

    def defer(self, name: str, doc: Any) -> None:
        """The part ``name`` (of ``LAZY_PARTS``) to be restored from ``doc``, its state
        document (checked already; never changed after this), on first use."""
        setattr(self, "_" + name, None)
        self._pending[name] = doc

    def lazy_parts_of(self, other: Project) -> None:
        """``other``'s lazy parts as an independent copy: one it has not built shares its
        state document (restored from a copy when built), one it has is exported and
        restored (``snapshots.clone``)."""
        for name in LAZY_PARTS:
            built = getattr(other, "_" + name)
            if built is not None:
                self.defer(name, built.export())
                self._built(name)
            elif name in other._pending:
                self.defer(name, other._pending[name])
            else:
                setattr(self, "_" + name, None)
                self._pending.pop(name, None)

    def admit_call(self) -> int | None:
        """None when the project's rate limit (option ``rate_limit_per_second``) lets a call
        in, else the whole seconds until it would."""
        rate = self.options.get("rate_limit_per_second")
        if not rate:
            return None
        if self.bucket is None or self.bucket.rate != rate:
            from idv_mock.backend.ratelimit import TokenBucket  # only a rate-limited project's

            self.bucket = TokenBucket(float(rate))
        return None if self.bucket.allow() else self.bucket.wait_seconds()

    @classmethod
    def from_input(cls, spec: dict[str, Any], created_at: str) -> Project:
        """A project from control-API input; options not given take their schema default."""
        problems = schemas.errors("project.json", spec)
        if problems:
            raise InvalidInput("invalid project", problems)
        return cls.from_checked(spec, created_at)

    @classmethod
    def from_checked(cls, spec: dict[str, Any], created_at: str) -> Project:
        """A project from input already checked against ``project.json`` (a state document
        is checked whole before import): no validator is loaded for it."""
        options = {**schemas.option_defaults(), **spec.get("options", {})}
        if options["key_derivation"] == "raw" and len(spec["api_key"].encode()) != 32:
            raise InvalidInput("key_derivation raw needs an api_key of exactly 32 bytes")
        admins = list(dict.fromkeys(spec.get("admins", [])))
        return cls(spec["project_id"], spec["api_key"], admins, options, created_at)

    def hidden_fields(self, sid: str) -> list[str] | None:
        """The fields a projection hid from this submission when it arrived, if any."""
        return self.projections.applied.get(sid)

    @property
    def derivation(self) -> str:
        """How the project's API key becomes an AES key (option ``key_derivation``)."""
        return str(self.options.get("key_derivation", "sha256"))

    @property
    def secure(self) -> bool:
        return bool(self.options.get("secure_transfer"))

    def is_admin(self, email: str) -> bool:
        return email in self.admins

    def describe(self) -> dict[str, Any]:
        return {
            "project_id": self.project_id,
            "api_key": self.api_key,
            "admins": list(self.admins),
            "options": copy.deepcopy(self.options),  # option values include lists
            "created_at": self.created_at,
            "submission_count": len(self.store),
        }

    def project_options(self) -> dict[str, Any]:
        """The ``project_options`` object a submission created now carries."""
        mirrored: dict[str, Any] = {k: self.options[k] for k in MIRRORED}
        url = self.options.get("webhook_url") or ""
        members = [
            {"name": a.split("@")[0], "addDate": self.created_at, "email": a} for a in self.admins
        ]
        mirrored["webhookURL"] = url
        mirrored["webhook"] = {"createTime": self.created_at, "members": members, "url": url}
        return mirrored
