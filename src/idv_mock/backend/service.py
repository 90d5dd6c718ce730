"""The service object: every project's state, the clock, and the operations on them.

This is what the web layer and the control API call, and what tests drive in-process.
Operations take the service's lock, so a test thread may seed state while the server
thread answers requests. ``reset()`` restores a snapshot taken right after seeding,
which is both faster than seeding again and byte-identical to it.

The service itself holds the projects, the submissions' creation, edits and deletions,
projections, whole-state documents and the server settings. Each other area is a part it
owns (``parts/``), built on the shared ``Core`` (``core.py``) and given what else it uses
by name: ``clocks``, ``calls`` (rate limits, fault rules, journals), ``delivery``,
``tokens``, ``records`` (review, images, migration), ``liveform``, ``screening`` (AML and
monitoring), ``dashboard`` and ``coverage``. Callers use ``service.<part>.<method>``: the
service hands nothing over, so each name lives in one place (the module, the class and
the attribute of a part share its name).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, fields
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, ClassVar, cast

import orjson

from idv_mock.backend import derive, duplicates, prebuilt, snapshots, views
from idv_mock.backend.core import Core
from idv_mock.backend.exceptions import (
    AdminNotRegistered,
    Conflict,
    InvalidInput,
    InvalidProperty,
    NotFound,
)
from idv_mock.backend.parts.calls import Calls
from idv_mock.backend.parts.clocks import Clocks
from idv_mock.backend.parts.coverage import Coverage
from idv_mock.backend.projections import Policy
from idv_mock.backend.projects import Project
from idv_mock.backend.store import Selection, SortKey
from idv_mock.ground import schemas
from idv_mock.ground.clock import Clock, iso, stamp
from idv_mock.ground.gc_pause import no_gc
from idv_mock.ground.jsondepth import STATE_DEPTH, STATE_MESSAGE, too_deep
from idv_mock.ground.progress import SILENT, Progress

if TYPE_CHECKING:
    from collections.abc import Callable

    from idv_mock.backend.parts.dashboard import Dashboard
    from idv_mock.backend.parts.delivery import Delivery
    from idv_mock.backend.parts.liveform import Liveform
    from idv_mock.backend.parts.records import Records
    from idv_mock.backend.parts.screening import Screening
    from idv_mock.backend.parts.tokens import Tokens
    from idv_mock.backend.save_health import SaveHealth
    from idv_mock.delivery.webhooks import WebhookDispatcher
    from idv_mock.fake.factory import SubmissionFactory

Submission = dict[str, Any]
POST_SEED = 1_000_003  # the factory's seed offset for everything created after seeding


@dataclass(slots=True, init=False, repr=False, eq=False)
class ServiceConfig:
    """What a service is made from. A dataclass (``dataclasses.replace``, ``fields``) whose
    ``__init__``, ``__repr__`` and ``__eq__`` are written out below, as the dataclass would
    make them: the generated ones were compiled at import, on every first use
    (``tests/test_first_use.py`` compares them with generated ones)."""

    project_id: str = "default"
    api_key: str = "mock-api-key"
    admins: tuple[str, ...] = ("admin@example.com",)
    seed_count: int = 50
    random_seed: int = 0
    options: dict[str, Any] = field(default_factory=dict)
    clock_mode: str = "tick"
    webhook_backoff: tuple[float, ...] = (0.5, 1.0)  # pauses between the 3 attempts
    webhook_timeout: float = 5.0
    journal_size: int = 10_000  # API calls kept per project (oldest dropped)
    # where webhooks may not go: the server's own port (when serving) and allowed exceptions
    server_port: int | None = None
    server_host: str = "127.0.0.1"
    allowed_webhook_hosts: tuple[str, ...] = ()
    # a missing or wrong key: api-v3.md's errors, or the vendor's gateway 403 {"message":
    # "Forbidden"} (a server setting: a wrong key names no project); PUT /__admin/settings
    auth_errors: str = "api-v3"

    def __init__(
        self,
        project_id: str = "default",
        api_key: str = "mock-api-key",
        admins: tuple[str, ...] = ("admin@example.com",),
        seed_count: int = 50,
        random_seed: int = 0,
        options: dict[str, Any] | None = None,
        clock_mode: str = "tick",
        webhook_backoff: tuple[float, ...] = (0.5, 1.0),
        webhook_timeout: float = 5.0,
        journal_size: int = 10_000,
        server_port: int | None = None,
        server_host: str = "127.0.0.1",
        allowed_webhook_hosts: tuple[str, ...] = (),
        auth_errors: str = "api-v3",
    ) -> None:
        self.project_id, self.api_key, self.admins = project_id, api_key, admins
        self.seed_count, self.random_seed = seed_count, random_seed
        self.options = {} if options is None else options
        self.clock_mode = clock_mode
        self.webhook_backoff, self.webhook_timeout = webhook_backoff, webhook_timeout
        self.journal_size = journal_size
        self.server_port, self.server_host = server_port, server_host
        self.allowed_webhook_hosts = allowed_webhook_hosts
        self.auth_errors = auth_errors

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in _CONFIG_FIELDS)

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}={v!r}" for n, v in zip(_CONFIG_FIELDS, self._values(), strict=True))
        return f"{type(self).__qualname__}({shown})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()


_CONFIG_FIELDS = tuple(f.name for f in fields(ServiceConfig))


class FactoryOnFirstUse:
    """The service's ``SubmissionFactory``, built (with ``idv_mock.fake``: a tenth of a
    first use's imports) when something first asks it for more than a reseed: a service
    started from a prebuilt or cached start, whose tests only read, never builds one.
    Reseeds before that are kept as their effect on a new factory (the last seed, how many
    asked for new ids) and replayed on it, so the factory built is in the state the eager
    one would be in. ``on_built`` gets it, to put it where this stood in for it (no
    indirection on the seeding's and creation's every call after that)."""

    def __init__(self, seed: int, on_built: Callable[[SubmissionFactory], None]) -> None:
        self._seed = seed
        self._on_built = on_built
        self._reseeded: int | None = None  # the last reseed's seed, None: none yet
        self._new_ids = 0  # reseeds that moved the ids to a sequence of their own
        self._real: SubmissionFactory | None = None
        self._lock = threading.Lock()  # the server's thread and a test's ask at once

    def reseed(self, seed: int, *, new_ids: bool = False) -> None:
        with self._lock:
            real = self._real
            if real is None:
                self._reseeded = seed
                self._new_ids += new_ids
                return
        real.reseed(seed, new_ids=new_ids)

    def built(self) -> SubmissionFactory:
        real = self._real
        if real is None:
            with self._lock:
                real = self._real
                if real is None:
                    from idv_mock.fake.factory import SubmissionFactory

                    real = SubmissionFactory(self._seed)
                    for _ in range(self._new_ids):
                        real.reseed(self._seed, new_ids=True)
                    if self._reseeded is not None:
                        real.reseed(self._reseeded)
                    self._real = real
                    self._on_built(real)
        return real

    def __getattr__(self, name: str) -> Any:
        return getattr(self.built(), name)


class DispatcherOnFirstUse:
    """The service's ``WebhookDispatcher``, built (with ``delivery/webhooks.py``) when first
    asked for more than what one that never sent answers alike: ``clear`` (a reset before
    each test: nothing queued) and ``close`` (no thread started). A test that sends no
    webhook never builds one. ``on_built`` gets it, to put it where this stood in for it."""

    def __init__(
        self,
        build: Callable[[], WebhookDispatcher],
        on_built: Callable[[WebhookDispatcher], None],
    ) -> None:
        self._build, self._on_built = build, on_built
        self._real: WebhookDispatcher | None = None
        self._closed = False  # closed before it was built: built closed
        self._lock = threading.Lock()

    def clear(self, project_id: str | None = None) -> None:
        if self._real is not None:
            self._real.clear(project_id)

    def close(self) -> None:
        self._closed = True
        if self._real is not None:
            self._real.close()

    def built(self) -> WebhookDispatcher:
        real = self._real
        if real is None:
            with self._lock:
                real = self._real
                if real is None:
                    real = self._real = self._build()
                    if self._closed:
                        real.close()
                    self._on_built(real)
        return real

    def __getattr__(self, name: str) -> Any:
        return getattr(self.built(), name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("_"):
            object.__setattr__(self, name, value)
        else:
            setattr(self.built(), name, value)


class Service:
    def __init__(
        self,
        config: ServiceConfig | None = None,
        start: dict[str, Any] | None = None,
        progress: Progress = SILENT,
    ) -> None:
        """``start``: the seeded start state as ``export_state`` gave it for this same
        config (the pytest plugin keeps one in pytest's cache), restored instead of seeding
        again: no Faker to load, and byte for byte what seeding would make. Without it, a
        start built ahead for this config (``prebuilt.py``: the default one is shipped)
        is restored the same way, if there is one for the installed code. ``progress``:
        where seeding shows how far it is (``idv-mock serve`` on a terminal)."""
        self.config = cfg = config or ServiceConfig()
        self.settings = self._checked_settings({"auth_errors": cfg.auth_errors})
        webhooks = cast(
            "WebhookDispatcher", DispatcherOnFirstUse(self._dispatcher, self._dispatcher_built)
        )
        factory = cast("SubmissionFactory", FactoryOnFirstUse(cfg.random_seed, self._factory_built))
        self._core = core = Core(factory, webhooks, Clock(cfg.clock_mode))
        self._lock = core.lock  # private: every read and change of state is a method
        self.factory, self.forms, self.webhooks = factory, core.forms, webhooks
        # its parts, each owning one area, given the core (and what else they use) explicitly
        self.clocks = Clocks(core)
        self.calls = Calls(core)
        # delivery, tokens, records, liveform, screening and dashboard are built on first
        # use (the properties below): a test that never touches them does not import them
        self._parts: dict[str, Any] = {}
        self._parts_lock = threading.Lock()  # two threads' first use build one part
        # what each kind of due item does when a project's clock reaches it (docs/time.md)
        self.clocks.on("token_expiry", self._expire_token)
        self.clocks.on("incomplete_timeout", self._time_out_form)
        self.clocks.on(
            "monitoring_cycle",
            self._monitoring_cycle,
            self._idle_cycle,
            self._prepare_cycle,
        )
        # contract coverage (docs/coverage.md): counts by project id, kept across resets
        self.coverage = Coverage(core)
        self.coverage.counts.time_rules = self.clocks.rules
        # Start states as snapshots sharing the stored JSON with the live state (stored
        # bytes are immutable), so a reset copies indexes, not submissions.
        self._project_starts: dict[str, Project] = {}  # project id -> its start
        self.started_from_file = False  # a state file's state is the start (not the seeding)
        # made from the start shipped with the package (a cache of it would be a copy)
        self.started_prebuilt = start is None and (start := prebuilt.load(cfg)) is not None
        if start is None:
            with no_gc():
                self._seed(progress)
            self._start = {pid: snapshots.clone(p) for pid, p in self.projects.items()}
        else:
            self._restore(start)
            self.factory.reseed(self.config.random_seed + POST_SEED)
            # the restored projects are the start already (the live ones are their copies),
            # as ``import_state(as_start=True)`` keeps them: no third copy
            self._start = dict(self._project_starts)
        self._start_clock = self.clock.export()
        self._project_starts = dict(self._start)

    # --- the parts built on first use ---
    def _dispatcher(self) -> WebhookDispatcher:
        from idv_mock.delivery.webhooks import HostRule, WebhookDispatcher

        cfg = self.config
        rule = HostRule(cfg.server_port, cfg.server_host, frozenset(cfg.allowed_webhook_hosts))
        webhooks = WebhookDispatcher(cfg.webhook_backoff, cfg.webhook_timeout, host_rule=rule)
        webhooks.pause = self.clocks.webhook_pause  # a frozen project's retries wait on its clock
        webhooks.now = self.clocks.webhook_now  # and its delivery delays
        webhooks.stamp = self.clocks.webhook_stamp  # and its delivery records' times
        webhooks.observe = self._observe_webhook  # counted for contract coverage
        return webhooks

    def _dispatcher_built(self, webhooks: WebhookDispatcher) -> None:
        self.webhooks = self._core.webhooks = webhooks

    def _factory_built(self, factory: SubmissionFactory) -> None:
        self.factory = self._core.factory = factory

    def _part(self, name: str, build: Callable[[], Any]) -> Any:
        part = self._parts.get(name)
        if part is None:
            with self._parts_lock:
                part = self._parts.get(name)
                if part is None:
                    part = self._parts[name] = build()
        return part

    @property
    def save_health(self) -> SaveHealth:
        """How the state file's saves go (``save_health.py``): kept by the state-file
        saver, asked before writes; built on first use (a GET asks nothing of it)."""
        from idv_mock.backend.save_health import SaveHealth

        return self._part("save_health", SaveHealth)  # type: ignore[no-any-return]

    @property
    def delivery(self) -> Delivery:
        """Webhook delivery levers, records and one-shot routes (``parts/delivery.py``)."""
        from idv_mock.backend.parts.delivery import Delivery

        return self._part("delivery", lambda: Delivery(self._core))  # type: ignore[no-any-return]

    @property
    def tokens(self) -> Tokens:
        """The token pool's calls (``parts/tokens.py``)."""
        from idv_mock.backend.parts.tokens import Tokens

        return self._part("tokens", lambda: Tokens(self._core))  # type: ignore[no-any-return]

    @property
    def records(self) -> Records:
        """Review, images and migration (``parts/records.py``)."""
        from idv_mock.backend.parts.records import Records

        return self._part("records", lambda: Records(self._core, self._create_checked))  # type: ignore[no-any-return]

    @property
    def liveform(self) -> Liveform:
        """The hosted form's links, sessions and tokens (``parts/liveform.py``)."""
        from idv_mock.backend.parts.liveform import Liveform

        build = lambda: Liveform(self._core, self.clocks, self._create_checked)  # noqa: E731
        return self._part("liveform", build)  # type: ignore[no-any-return]

    @property
    def screening(self) -> Screening:
        """AML screening and monitoring (``parts/screening.py``)."""
        from idv_mock.backend.parts.screening import Screening

        return self._part("screening", lambda: Screening(self._core, self.create_submission))  # type: ignore[no-any-return]

    @property
    def dashboard(self) -> Dashboard:
        """What the dashboard reads (``parts/dashboard.py``)."""
        from idv_mock.backend.parts.dashboard import Dashboard

        return self._part("dashboard", lambda: Dashboard(self._core, self.clocks))  # type: ignore[no-any-return]

    # the clock's rules, handed to the part when one falls due (its first use)
    def _expire_token(self, project: Project, detail: dict[str, Any], at: datetime) -> list[str]:
        return self.liveform.expire_token(project, detail, at)

    def _time_out_form(self, project: Project, detail: dict[str, Any], at: datetime) -> list[str]:
        return self.liveform.time_out_form(project, detail, at)

    def _monitoring_cycle(
        self, project: Project, detail: dict[str, Any], at: datetime
    ) -> list[str]:
        return self.screening.monitoring_cycle(project, detail, at)

    def _idle_cycle(self, project: Project, detail: dict[str, Any]) -> timedelta | None:
        from idv_mock.backend.parts.screening import Screening

        return Screening.idle_cycle(project, detail)

    def _prepare_cycle(self, project: Project, detail: dict[str, Any]) -> Callable[[], None] | None:
        return self.screening.prepare_cycle(project, detail)

    def _observe_webhook(
        self, project_id: str, what: str, receiver: str | None, first: bool
    ) -> None:
        """A webhook attempt or a delivery lever, counted for contract coverage."""
        if receiver is None:
            self.coverage.counts.note(project_id, "delivery " + what.removeprefix("lever "))
        else:
            self.coverage.counts.webhook_seen(project_id, what, receiver, first)

    # --- what the core holds, read here as before ---
    @property
    def clock(self) -> Clock:
        """The server's clock (each project has its own, ``project.clock``)."""
        return self._core.clock

    @clock.setter
    def clock(self, clock: Clock) -> None:
        self._core.clock = clock

    @property
    def projects(self) -> dict[str, Project]:
        """Every project by id (replaced whole by a reset or an import)."""
        return self._core.projects

    @projects.setter
    def projects(self, projects: dict[str, Project]) -> None:
        self._core.projects = projects

    @property
    def changes(self) -> int:
        """Bumped by every change of lasting state: the state file's saver skips an idle state."""
        return self._core.changes

    @changes.setter
    def changes(self, changes: int) -> None:
        self._core.changes = changes

    # --- start state ---
    def _seed(self, progress: Progress) -> None:
        cfg = self.config
        spec = {"project_id": cfg.project_id, "api_key": cfg.api_key, "admins": list(cfg.admins)}
        project = self.create_project({**spec, "options": cfg.options})
        self.factory.reseed(cfg.random_seed)

        shared = project.project_options()  # the same for every seeded one; built once

        def create(overrides: dict[str, Any], when: datetime) -> Submission:
            return self._create(project, overrides, when, mirrored=shared)

        # only when a start is seeded (most ship prebuilt)
        from idv_mock.backend import seed, seed_split

        split = seed_split.Split(project, shared) if seed_split.wanted(cfg.seed_count) else None
        with self.factory.pooled(cfg.seed_count), project.store.packing_behind():
            when = self.clock.peek()
            seed.seed(self.factory, when, cfg.seed_count, create, progress, split)
        self.factory.reseed(cfg.random_seed + POST_SEED)
        opened = iso(self.clock.peek())
        from idv_mock.backend.monitoring import DEFAULT_WORKLIST, DEFAULT_WORKLIST_NAME, Worklist

        project.monitoring.add(Worklist(DEFAULT_WORKLIST, DEFAULT_WORKLIST_NAME, True, opened))

    def reset(self, *, new_ids: bool = True) -> None:
        """Back to the state right after start-up: the seeded default project, or the state
        file's state as the server loaded it (``import_state(as_start=True)``). The ids
        handed out after it never repeat those handed out before it in this run (the count
        of resets is mixed into them); ``new_ids=False`` (the pytest plugin's reset before
        each test) gives every test the same ids, whatever ran before."""
        with self._lock:
            self.changes += 1
            self._install(Clock.restore(self._start_clock), list(self._start.values()))
            self._project_starts = dict(self._start)
            self.factory.reseed(self.config.random_seed + POST_SEED, new_ids=new_ids)
            self.webhooks.clear()
            self._core.routes.clear()
            self.settings = {"auth_errors": self.config.auth_errors}  # the serve flag's value

    def _restore(
        self, state: dict[str, Any], progress: Progress = SILENT, as_start: bool = False
    ) -> None:
        """Make ``state`` (already checked and owned) the live state and every project's
        start; ``as_start``: also the server's start, what ``reset`` goes back to."""
        total = sum(len(p.get("submissions", ())) for p in state["projects"])
        task = progress.task("loading", total, "submissions")
        with no_gc():
            projects = [
                snapshots.import_project(p, state["clock"], task.add) for p in state["projects"]
            ]
        task.end()
        if len({p.api_key for p in projects}) != len(projects):
            raise InvalidInput("two projects share an api_key")
        if len({p.project_id for p in projects}) != len(projects):
            raise InvalidInput("two projects share a project_id")
        with no_gc():  # the live copies are made outside the lock too: only the swap is in
            live = [self._configured(snapshots.clone(p)) for p in projects]
        with self._lock:
            self.changes += 1
            self._install(Clock.restore(state["clock"]), projects, live)
            self._project_starts = {p.project_id: p for p in projects}
            if as_start:
                self.started_from_file = True
                self._start = dict(self._project_starts)
                self._start_clock = self.clock.export()

    def _install(
        self, clock: Clock, starts: list[Project], live: list[Project] | None = None
    ) -> None:
        """Live copies of ``starts`` (``live``, made already) become the whole state."""
        if live is None:
            with no_gc():
                live = [self._configured(snapshots.clone(p)) for p in starts]
        projects = live
        self.clock = clock
        self.projects = {p.project_id: p for p in projects}
        self._core.by_key = {p.api_key: p for p in projects}
        self.forms.clear()

    def _configured(self, project: Project) -> Project:
        project.journal.size = self.config.journal_size
        return project

    # --- server settings (PUT /__admin/settings) ---
    SETTINGS: ClassVar[dict[str, tuple[str, ...]]] = {"auth_errors": ("api-v3", "gateway")}

    def server_settings(self) -> dict[str, str]:
        """The server-wide settings, as GET /__admin/settings answers them."""
        with self._lock:
            return dict(self.settings)

    def update_settings(self, changes: dict[str, Any]) -> dict[str, str]:
        """Change server settings (all or nothing); a reset puts back the config's values."""
        with self._lock:
            fresh = self._checked_settings({**self.settings, **changes})
            self.changes += 1
            self.settings = fresh
            return dict(fresh)

    def gateway_auth(self) -> bool:
        """Whether a missing or wrong key answers the gateway's 403 (``auth_errors``)."""
        return self.settings["auth_errors"] == "gateway"

    @classmethod
    def _checked_settings(cls, given: dict[str, Any]) -> dict[str, str]:
        unknown = sorted(set(given) - set(cls.SETTINGS))
        if unknown:
            raise InvalidInput(f"unknown settings: {', '.join(unknown)}; known: auth_errors")
        for name, allowed in cls.SETTINGS.items():
            if given.get(name) not in allowed:
                raise InvalidInput(f"{name} must be one of: {', '.join(allowed)}")
        return {name: str(given[name]) for name in cls.SETTINGS}

    def reset_project(self, project_id: str) -> Project:
        """One project back to its start (seeded, imported, or as created); others untouched."""
        with self._lock:
            self.changes += 1
            old = self.project(project_id)
            with no_gc():
                fresh = self._configured(snapshots.clone(self._project_starts[project_id]))
            self.projects[project_id] = fresh
            del self._core.by_key[old.api_key]
            self._core.by_key[fresh.api_key] = fresh
            self.webhooks.clear(project_id)
            self._core.routes.pop(project_id, None)
            self.forms.clear(project_id)
            return fresh

    def close(self) -> None:
        """Stop webhook delivery threads (deliveries in flight are abandoned) and the clock
        watcher, if any."""
        self.clocks.stop_watching()
        self.webhooks.close()

    # --- projects ---
    def create_project(self, spec: dict[str, Any]) -> Project:
        with self._lock:
            self.changes += 1
            project = Project.from_input(spec, "")
            if project.project_id in self.projects:
                raise Conflict(f"project {project.project_id} already exists")
            if project.api_key in self._core.by_key:
                raise Conflict("api_key is already used by another project")
            project.created_at = iso(self.clock.now())
            # its own time from here on, starting where the server's stands
            mode = project.options.get("clock_mode") or self.clock.mode
            project.options["clock_mode"] = mode
            project.clock = self.clock.copy(mode)
            self.projects[project.project_id] = project
            self._core.by_key[project.api_key] = project
            self._project_starts[project.project_id] = snapshots.clone(project)
            return self._configured(project)

    def update_project(self, project_id: str, changes: dict[str, Any]) -> Project:
        """Change a project's admins and options (options merge over the current ones)."""
        with self._lock:
            self.changes += 1
            project = self.project(project_id)
            unknown = set(changes) - {"admins", "options"}
            if unknown:
                raise InvalidInput(f"cannot change {', '.join(sorted(unknown))}")
            if not isinstance(changes.get("options", {}), dict):
                raise InvalidInput("options must be an object")
            spec = project.describe()
            spec["admins"] = changes.get("admins", spec["admins"])
            spec["options"] = {**spec["options"], **(changes.get("options") or {})}
            del spec["submission_count"]
            updated = Project.from_input(spec, project.created_at)
            mode = updated.options.get("clock_mode") or self.clock.mode
            updated.options["clock_mode"] = mode
            project.clock.set_mode(mode)
            project.admins, project.options = updated.admins, updated.options
            return project

    def project(self, project_id: str) -> Project:
        return self._core.project(project_id)

    def project_for_key(self, api_key: str) -> Project | None:
        return self._core.by_key.get(api_key)

    def describe_projects(self) -> list[dict[str, Any]]:
        with self._lock:
            return [p.describe() for p in self.projects.values()]

    def project_ids(self) -> list[str]:
        with self._lock:
            return list(self.projects)

    def submission_counts(self) -> dict[str, int]:
        with self._lock:
            return {pid: len(p.store) for pid, p in self.projects.items()}

    # --- submissions: creation ---
    def create_submission(
        self,
        project_id: str,
        overrides: dict[str, Any] | None = None,
        *,
        fire_webhooks: bool = False,
    ) -> Submission:
        """A Faker submission with ``overrides`` deep-merged over it, derived and stored.

        Never filtered by a projection; sends the creation webhooks only when asked.
        """
        with self._lock:
            if "projection" in (overrides or {}):
                raise InvalidInput("projection is recorded by the hosted form only")
            sub = self._create_checked(self.project(project_id), overrides or {})
            if fire_webhooks:
                from idv_mock.backend import events  # loaded with the first event made

                self._core.fire(self.project(project_id), events.creation_events(sub, None, "omit"))
            return sub

    def _create_checked(
        self,
        project: Project,
        overrides: dict[str, Any],
        mirrored: dict[str, Any] | None = None,
        *,
        invent: bool = True,
        tries: int | None = None,
    ) -> Submission:
        """Create from control-API input: checked first, and nothing changes on refusal.

        ``invent``, ``tries``: see ``SubmissionFactory.build`` (the hosted form gives both).
        """
        self.changes += 1
        problems = schemas.errors("submission_fields.json", overrides)
        if problems:
            raise InvalidInput("invalid submission", problems)
        if "status" in overrides:
            raise InvalidInput("status is set by a deletion, not on creation")
        sid = overrides.get("submission_id")
        if sid is not None and sid in project.store:
            raise Conflict(f"submission {sid} already exists")
        clock = project.clock
        before = clock.current
        try:
            sub = self._create(
                project, overrides, clock.now(), validate=True, mirrored=mirrored,
                at_once=True, invent=invent, tries=tries,
            )  # fmt: skip
        except InvalidInput:
            clock.current = before
            raise
        return sub

    def _create(
        self,
        project: Project,
        overrides: dict[str, Any],
        when: datetime,
        validate: bool = False,
        mirrored: dict[str, Any] | None = None,
        at_once: bool = False,
        *,
        invent: bool = True,
        tries: int | None = None,
    ) -> Submission:
        """``at_once``: a creation on the project's clock, decided at the instant it was made
        (the factory's result a few milliseconds later would lie past a frozen clock's now).
        ``invent``, ``tries``: see ``SubmissionFactory.build``."""
        userid = overrides.get("userid")
        while True:
            built = self.factory.build(when, overrides, userid=userid, invent=invent, tries=tries)
            from idv_mock.fake.factory import merge_into

            raw = merge_into(built, overrides)  # built afresh: merged in place
            # after an import or a restart from a state file the factory's sequence starts
            # again and may draw an id that is already stored: draw again (deterministic)
            if "submission_id" in overrides or raw["submission_id"] not in project.store:
                break
        if at_once:
            for key in ("kyc_result_at", "updated_at"):
                if key not in overrides:
                    raw[key] = raw["created_at"]
        keys = duplicates.keys_of(raw)  # before masking
        found = project.store.dups.check(keys)
        shared = mirrored or project.project_options()
        sub = derive.finished(raw, project.options, shared, project.project_id, found)
        if validate:
            problems = schemas.errors("submission.json", sub)
            if problems:
                raise InvalidInput("the merged submission is not valid", problems)
        project.store.add(sub, keys)
        return sub

    def stored_submission(self, project_id: str, sid: str) -> Submission:
        found = self.project(project_id).store.get(sid)
        if found is None:
            raise NotFound(f"submission {sid} not found")
        return found

    # --- submissions: the API's operations ---
    def read(
        self, project: Project, sel: Selection, *, reduced: bool, request_type: str | None
    ) -> tuple[list[bytes], SortKey | None]:
        """One page as each item's JSON: a whole stored item is its stored bytes as they are."""
        with self._lock:
            found, next_key = project.store.select(sel)
            if not found and sel.submission_id is not None and sel.count >= 1:
                return self._incomplete(project, sel, request_type), None
            if not (reduced or request_type or project.projections.applied):
                # the common case: stored items as they are
                return project.store.jsons(found), next_key
            style = str(project.options["projection_style"])
            shaped = []
            for sid in found:
                hidden = project.hidden_fields(sid)
                if not (hidden or request_type):
                    plain = project.store.view(sid, "reduced", views.reduced) if reduced else None
                    shaped.append(plain or project.store.json(sid))
                    continue
                sub = orjson.loads(project.store.json(sid))
                view = views.reduced(sub) if reduced else sub
                if hidden:
                    view = views.projected(view, hidden, style, reduced=reduced)
                shaped.append(orjson.dumps(views.by_request_type(view, request_type)))
            return shaped, next_key

    def _incomplete(
        self, project: Project, sel: Selection, request_type: str | None
    ) -> list[bytes]:
        """A hosted-form submission between ``created`` and its result, when asked by id
        (gaps.md "Values an integrator branches on": it exists from ``created`` on)."""
        assert sel.submission_id is not None
        view = self.liveform.incomplete(project, sel.submission_id)
        if view is None or any(
            want is not None and view.get(name) != want
            for name, want in (("userid", sel.userid), ("email", sel.email))
        ):
            return []
        return [orjson.dumps(views.by_request_type(view, request_type))]

    def applicants(self, project: Project, applicant_id: str) -> list[dict[str, str]]:
        """GET /submission/applicant: the project's approved submissions carrying
        ``applicant_id``, newest first, as ``{submission_id, duplicated_information,
        email}`` (the vendor's order). The stored bytes are searched first, so only the
        submissions that name the id are decoded."""
        needle = b'"applicant_id":' + orjson.dumps(applicant_id)
        with self._lock:
            found = []
            for sid, blob in zip(list(project.store.blobs), project.store.all_json(), strict=True):
                if needle not in blob:
                    continue
                sub = orjson.loads(blob)
                approved = (sub.get("kyc") or {}).get("result") == "approved"
                if sub.get("applicant_id") == applicant_id and approved and not sub.get("status"):
                    found.append((str(sub.get("created_at", "")), sid, sub))
            found.sort(reverse=True, key=lambda item: item[:2])
            keys = ("submission_id", "duplicated_information", "email")
            return [{k: str(sub.get(k) or "") for k in keys} for _, _, sub in found]

    def edit(self, project: Project, sid: str, admin: str, changes: dict[str, str]) -> Submission:
        """Apply PATCH properties; checks values, then the admin, then the submission.
        Answers the new version: changing it changes nothing stored (the store keeps no
        reference to it)."""
        return self._edit(project, sid, admin, changes, keep=False)

    def patch(self, project: Project, sid: str, admin: str, changes: dict[str, str]) -> None:
        """``edit`` for a caller that needs nothing back (the API's PATCH): the new version
        then stays decoded in the store, and the next edit of the submission need not
        decode it again (``SubmissionStore.shared``)."""
        self._edit(project, sid, admin, changes, keep=True)

    def _edit(
        self, project: Project, sid: str, admin: str, changes: dict[str, str], *, keep: bool
    ) -> Submission:
        from idv_mock.backend import edits  # a first use edits nothing (issue 37)

        with self._lock:
            self.changes += 1
            bad = edits.first_invalid(changes)
            if bad is not None:
                raise InvalidProperty(bad)
            if not project.is_admin(admin):
                raise AdminNotRegistered(admin)
            # kept: every step below copies what it changes (copy-on-write), never ``old``
            old = self._core.live(project, sid, shared=keep)
            moment = project.clock.now()
            now = stamp(moment)
            edited = edits.apply_changes(old, changes)
            kinds = {
                duplicates.KIND_OF_PROPERTY[p] for p in changes if p in duplicates.KIND_OF_PROPERTY
            }
            if kinds:  # only identity and number edits change what duplicates are checked on
                project.store.dups.update(sid, duplicates.keys_of(edited), kinds)
            new = derive.apply_masking(edited, project.options)
            new = derive.identity_ids(new, project.project_id, before=old)
            new = self._edit_stamps(new, changes, admin, now)
            project.store.replace(new, shared=keep)
            self._fire_edit(project, old, new, admin, iso(moment), changes)
            return new

    def _fire_edit(
        self,
        project: Project,
        old: Submission,
        new: Submission,
        admin: str,
        when: str,
        changes: dict[str, str],
    ) -> None:
        """``updated`` naming what changed (nothing changed: nothing sent), then, when the
        status changed, what the new status sends, decided by a person (``agent``)."""
        from idv_mock.backend import edits, events

        changed = edits.changed_properties(old, new, changes)
        if not changed:
            return
        hidden = project.hidden_fields(new["submission_id"])
        style = str(project.options["projection_style"])
        batch = [events.updated_event(new, admin, when, changed, hidden, style)]
        if "kycStatus" in changed:
            batch += events.decision_events(new, hidden, style, reviewer="agent")
        self._core.fire(project, batch)

    @staticmethod
    def _edit_stamps(sub: Submission, changes: dict[str, str], admin: str, now: str) -> Submission:
        """Stamps written into ``sub``, a fresh top level (``apply_masking``'s copy)."""
        sub["updated_at"] = now
        sub["updateHistory"] = {"updateAdmin": admin, "updateTime": now}
        if "memo" in changes:
            sub["memo"] = {**sub["memo"], "updated_at": now}
        status = changes.get("kycStatus")
        if status is not None:
            sub["pending_at" if status == "pending" else "kyc_result_at"] = now
        return sub

    def delete(self, project: Project, sid: str, admin_name: str | None) -> Submission:
        """Delete a submission for good, keeping only what identifies no one (4.3)."""
        with self._lock:
            self.changes += 1
            old = self._core.live(project, sid)
            new = views.retained(old)
            project.store.replace(new)
            project.store.dups.exclude(sid, duplicates.KINDS)
            project.aml.forget(sid)
            self.records.forget_images(project, sid)
            if admin_name:
                from idv_mock.backend import events

                when = iso(project.clock.now())
                self._core.fire(project, [events.delete_event(sid, admin_name, when)])
            return new

    def delete_parts(
        self, project: Project, sid: str, parts: list[str], data_fields: list[str] | None
    ) -> Submission:
        """Delete parts of a submission (4.4); deleted checked parts end duplicate checks."""
        from idv_mock.backend import edits

        with self._lock:
            self.changes += 1
            old = self._core.live(project, sid)
            new, ended = edits.remove_parts(old, parts, data_fields)
            project.store.replace(new)
            project.store.dups.exclude(sid, ended)
            self.records.forget_images(project, sid)
            return new

    # --- projection policies ---
    def create_projection(
        self, project: Project, name: str, mode: str, fields: list[str]
    ) -> Policy:
        with self._lock:
            self.changes += 1
            project.projections.ensure_room(name)
            pid = self._core.fresh_uuid(project.projections.policies)
            policy = Policy(pid, name, mode, fields, iso(project.clock.now()))
            return project.projections.add(policy)

    def projections(self, project: Project) -> list[dict[str, Any]]:
        """The project's projection policies, as GET /projection lists them."""
        with self._lock:
            return [p.describe() for p in project.projections.policies.values()]

    def projection(self, project: Project, projection_id: str) -> Policy:
        with self._lock:
            return project.projections.get(projection_id)

    def delete_projection(self, project: Project, projection_id: str) -> Policy:
        with self._lock:
            self.changes += 1
            return project.projections.delete(projection_id)

    # --- whole state ---
    def export_state(self) -> dict[str, Any]:
        """The whole state as a document (schemas/state.json), the caller's own: nothing in
        it is shared with the live state."""
        return orjson.loads(self.export_state_json())  # type: ignore[no-any-return]

    def export_state_json(self, lines: bool = False) -> bytes:
        """The whole state as JSON, each submission's stored bytes put in as they are: a save
        of 100k submissions holds the lock while those are copied (a few hundred ms), not
        while they are decoded and encoded again (tens of seconds). ``lines``: each
        submission on a line of its own (the state file's layout, ``snapshots.LINE``)."""
        with self._lock:
            doc = {
                "version": 1,
                "clock": self.clock.export(),
                "projects": [snapshots.export_project(p, lines) for p in self.projects.values()],
            }
            return orjson.dumps(doc)  # under the lock: the document shares live objects

    def export_state_parts(self) -> tuple[bytes, list[snapshots.Stored]]:
        """The whole state for a streamed save (``snapshots.export_parts``): only the
        document's small parts and the lists of stored bytes are made under the lock."""
        with self._lock:
            return snapshots.export_parts(self.clock, list(self.projects.values()))

    def import_state(
        self,
        state: dict[str, Any],
        *,
        validate: bool = True,
        give: bool = False,
        progress: Progress = SILENT,
        as_start: bool = False,
    ) -> None:
        """Replace the whole state; an invalid document changes nothing. ``validate=False``:
        the caller checked it (depth and schema); ``give``: the caller hands ``state`` over
        (no copy: a large state file loads in half the time); ``progress``: where loading
        shows how far it is; ``as_start``: the state a server starts from (its state
        file), which ``reset`` then goes back to. An import through the control API is
        not a start: ``reset`` still goes back to the seeded state."""
        if validate and too_deep(state, STATE_DEPTH):
            raise InvalidInput("invalid state document", [STATE_MESSAGE])
        problems = schemas.errors("state.json", state) if validate else []
        if problems:
            raise InvalidInput("invalid state document", problems)
        with no_gc():
            own = state if give else snapshots.owned(state)  # callers keep theirs
        self._restore(own, progress, as_start)
