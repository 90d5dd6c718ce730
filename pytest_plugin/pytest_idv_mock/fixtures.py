"""The fixtures of the idv-mock pytest plugin, registered by ``pytest_idv_mock``.

One service per session (per xdist worker) is reset to its seeded start state before each
test that uses it; the live server, the in-process clients, the interception and the
webhook receiver all serve that same service, so state seeded through ``idv_service`` is
what the server answers. Configure it as pytest-httpserver is configured: override the
session fixture ``idv_service_config`` in a ``conftest.py``, or mark one test with
``@pytest.mark.idv_mock(seed_count=..., options=...)`` (as respx's marker does).

Nothing heavy is imported at module level: the app, Faker and httpx load when a test first
uses a fixture. The live fixtures' server is ``idv_mock.serving.thread_server``, not
uvicorn (``idv-mock serve`` runs uvicorn).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import threading
import time
import uuid
import warnings
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

from idv_mock.ground.gc_pause import no_gc  # standard library only: paused before the mock loads

if TYPE_CHECKING:
    from pathlib import Path

    import httpx

    from idv_mock import Service, ServiceConfig
    from idv_mock.backend.parts.clocks import ProjectClock
    from idv_mock.serving.thread_server import ThreadServer

IN_PROCESS_BASE_URL = "http://idv-mock/v3"
# marker arguments that need a service of their own (the others change the shared one)
OWN_SERVICE = ("seed_count", "random_seed", "api_key", "admins")


def _option(config: pytest.Config, name: str) -> str:
    given = config.getoption(f"idv_mock_{name}")
    if given is not None:
        return str(given)
    env = os.environ.get(f"IDV_MOCK_{name.upper()}")
    if env is not None:
        return env
    return str(config.getini(f"idv_mock_{name}"))


# A first fixture's imports and start state make a few hundred thousand objects that live
# for the session: the cycle collector walking the heap while they are made was a fifth of
# the first use, so the fixtures build under ``idv_mock.ground.gc_pause.no_gc``.


# --- running a server ---
@dataclass
class RunningServer:
    """The fixtures' server on a daemon thread: where it listens, and how to stop it."""

    server: ThreadServer
    thread: threading.Thread
    host: str
    port: int

    def stop(self) -> None:
        self.server.stop()


@contextmanager
def serve_in_thread(app: Any, host: str = "127.0.0.1", port: int = 0) -> Iterator[RunningServer]:
    """``app`` served on a daemon thread by ``idv_mock.serving.thread_server`` (not uvicorn:
    its import and start were a fifth of a first use, its stop a 0.1 s tick); port 0 binds
    a free port and reads it back from the socket (no bind-and-close guess that another
    process can race)."""
    from idv_mock.serving.thread_server import ThreadServer

    server = ThreadServer(app, host, port)
    try:
        bound = server.start()
    except OSError as exc:  # the port taken, an address not this machine's
        raise RuntimeError(f"idv-mock server did not start on {host}:{port}") from exc
    running = RunningServer(server, server.thread, host, bound)
    try:
        yield running
    finally:
        running.stop()


def server_app(service: Service) -> Any:
    """The app a live fixture serves: the mock, with the dashboard's scenario runner."""
    from idv_mock import create_app

    app = create_app(service)
    app.shared["scenarios"] = LazyScenarios()  # app.state's dict: no State made for it
    return app


class LazyScenarios:
    """``idv_mock.scenarios`` for the dashboard, imported when it first runs one: the
    import (httpx, YAML) would otherwise be most of a live fixture's first use."""

    def __getattr__(self, name: str) -> Any:
        from idv_mock import scenarios

        return getattr(scenarios, name)


# --- the service ---
@pytest.fixture(scope="session")
def idv_service_config(pytestconfig: pytest.Config) -> ServiceConfig:
    """The session service's configuration; override it in a ``conftest.py``::

    @pytest.fixture(scope="session")
    def idv_service_config():
        return ServiceConfig(seed_count=5, options={"secure_transfer": True})
    """
    with no_gc():  # the import loads the backend: about a third of a first use
        from idv_mock import ServiceConfig

    return ServiceConfig(
        seed_count=int(_option(pytestconfig, "seed_count")),
        random_seed=int(_option(pytestconfig, "random_seed")),
        clock_mode=_clock_mode(pytestconfig),
        webhook_backoff=(0.1, 0.2),
        auth_errors=_auth_errors(pytestconfig),
    )


def _auth_errors(config: pytest.Config) -> str:
    given = _option(config, "auth_errors")
    if given not in ("api-v3", "gateway"):
        raise pytest.UsageError(f"idv-mock auth_errors: {given!r} is not api-v3 or gateway")
    return given


def _clock_mode(config: pytest.Config) -> str:
    mode = _option(config, "clock")
    if mode not in ("tick", "wall", "frozen"):
        raise pytest.UsageError(f"idv-mock clock: {mode!r} is not tick, wall or frozen")
    return mode


@pytest.fixture(scope="session")
def _idv_session_service(
    idv_service_config: ServiceConfig, pytestconfig: pytest.Config
) -> Iterator[Service]:
    with no_gc():
        service = _started_service(idv_service_config, pytestconfig)
    yield service
    _coverage_taken(pytestconfig, service)
    service.close()


def _coverage_taken(config: pytest.Config, service: Service) -> None:
    """Under ``--idv-coverage``: hand a service the fixtures are done with to the report."""
    recorder = config.pluginmanager.get_plugin("idv-mock-coverage")  # coverage.session
    if recorder is not None:
        recorder.take(service)


def _started_service(config: ServiceConfig, pytestconfig: pytest.Config) -> Service:
    """The session's service: its seeded start state is kept in pytest's cache (keyed by
    the configuration and the installed code), so later sessions restore it instead of
    loading Faker and seeding again (most of a first fixture's cost). Without the cache
    plugin (``-p no:cacheprovider``), with ``--cache-clear``, or on the wall clock (a start
    stamped now), it seeds as usual. A configuration whose start ships with the package
    (``backend/prebuilt.py``: the default one) starts from that, before the cache is
    looked at: no cache key to work out (a stat of every seeding file), no cache folder."""
    from idv_mock import Service
    from idv_mock.backend import prebuilt

    if prebuilt.available(config):
        return Service(config)
    cache = getattr(pytestconfig, "cache", None)
    if config.clock_mode != "tick":  # a wall-clock start is stamped with today's time
        cache = None
    path = None if cache is None else cache.mkdir("idv-mock") / f"start-{_start_key(config)}.json"
    damaged = None
    if path is not None and path.is_file():
        restored = _restored(config, path)
        if isinstance(restored, Service):
            return restored
        damaged = restored
    service = Service(config)
    if path is not None and not service.started_prebuilt:  # the package's own start: no copy
        temporary = path.with_suffix(f".{os.getpid()}.tmp")  # xdist workers may race: rename
        temporary.write_bytes(service.export_state_json())
        os.replace(temporary, path)
    if path is not None and damaged is not None:  # said once the file is good again
        _say_damaged(path, damaged, service)
    return service


def _say_damaged(path: Path, reason: str, service: Service) -> None:
    """A warning naming the damaged cached start; said after it was written again, so that
    under ``-W error`` one session fails, and the next restores. The service is closed
    when the warning is raised (nothing else would close it)."""
    why = f"idv-mock: the cached start {path} was not used ({reason}): seeded and written again"
    try:
        warnings.warn(pytest.PytestCacheWarning(why), stacklevel=1)
    except pytest.PytestCacheWarning:
        service.close()
        raise


def _restored(config: ServiceConfig, path: Path) -> Service | str:
    """The service restored from the cached start at ``path``, or why the file is not
    used: unreadable, not JSON, not a version 1 state document, or one that breaks
    schemas/state.json or a rule of a state. The schema is checked only once restoring
    failed (checking costs a hundred times the restore it guards); a restore failing on a
    valid document is a bug in the mock, and raises."""
    import orjson

    from idv_mock import Service
    from idv_mock.backend import InvalidInput
    from idv_mock.ground import schemas

    try:
        start = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:  # gone, unreadable, cut short
        return str(exc)
    if not isinstance(start, dict) or start.get("version") != 1:
        return "not a version 1 state document"
    try:
        return Service(config, start=start)
    except InvalidInput as exc:  # two projects with one id or key, a repeated submission
        return str(exc)
    except (LookupError, TypeError, ValueError, AttributeError):
        problems = schemas.errors("state.json", start)
        if not problems:
            raise
        return problems[0]


# what a start state is made by (with schemas)
SEEDING_PACKAGES = ("ground", "delivery", "backend", "backend/parts", "fake", "aml")


def _start_key(config: ServiceConfig) -> str:
    """What a start state depends on: the configuration, the package's files and Faker's
    (their sizes and times: an edited rule or schema, another Faker, makes a new start)."""
    import hashlib
    import importlib.util
    from pathlib import Path

    from idv_mock.ground import schemas

    faker = importlib.util.find_spec("faker")  # found, not imported
    files = [Path(faker.origin)] if faker is not None and faker.origin else []
    files += sorted(Path(schemas.schema_dir()).glob("*.json"))
    package = Path(schemas.__file__).resolve().parents[1]  # idv_mock (schemas is in ground/)
    files += sorted(package.glob("*.py"))  # the packages seeding runs in, not pages or API
    for folder in SEEDING_PACKAGES:
        files += sorted(f for f in (package / folder).iterdir() if f.suffix in (".py", ".json"))
    digest = hashlib.sha256(repr(config).encode())
    for found in files:
        stat = found.stat()
        digest.update(f"{found}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:24]


@pytest.fixture
def idv_service(
    _idv_session_service: Service, idv_service_config: ServiceConfig, request: pytest.FixtureRequest
) -> Iterator[Service]:
    """The in-process service (state plus the Python control API), at its seeded start."""
    marker = request.node.get_closest_marker("idv_mock")
    wanted: dict[str, Any] = dict(marker.kwargs) if marker is not None else {}
    options = wanted.pop("options", None)
    clock = wanted.pop("clock", None)
    if clock is not None:
        options = {**(options or {}), "clock_mode": clock}
    own = {k: wanted.pop(k) for k in OWN_SERVICE if k in wanted}
    if wanted:
        raise pytest.UsageError(f"idv_mock marker: unknown arguments {sorted(wanted)}")
    if own:
        service = _own_service(idv_service_config, own)
    else:
        service = _idv_session_service
        service.reset(new_ids=False)  # each test the same ids, whatever ran before it
    if options:
        service.update_project("default", {"options": options})
    scenario = request.node.get_closest_marker("idv_scenario")
    if scenario is not None:
        _load_scenario(service, str(scenario.args[0]))
    _apply_profile(service, "default")
    delivery = request.node.get_closest_marker("idv_webhook_delivery")
    if delivery is not None:
        _set_levers(service, "default", dict(delivery.kwargs))
    yield service
    if os.environ.get("IDV_MOCK_RESILIENCE_OUT"):  # the report shows what the test received
        request.node.user_properties.append(("idv_mock_webhooks", _webhooks_sent(service)))
    if service is not _idv_session_service:
        _coverage_taken(request.config, service)
        service.close()


def _webhooks_sent(service: Service) -> list[str]:
    """The default project's webhooks in the order they went out, each with its receiver's
    answers (``submission.approved wh-3: 503, 200``) or why none came."""
    from idv_mock.backend import NotFound

    try:
        found = service.delivery.in_state("default", None)
    except NotFound:  # the test's state has no default project (a scenario's)
        return []
    lines = []
    for delivery in sorted(found, key=lambda d: (_first_at(d), d["delivery_id"])):
        answers = [str(a.get("status_code") or a.get("error", "?")) for a in delivery["attempts"]]
        told = ", ".join(answers) if answers else f"not sent ({delivery['state']})"
        lines.append(f"{delivery['event']} {delivery['delivery_id']}: {told}")
    return lines


def _first_at(delivery: dict[str, Any]) -> str:
    attempts = delivery["attempts"]
    return str(attempts[0]["at"]) if attempts else "~"  # never sent: after those that were


def _own_service(base: ServiceConfig, changes: dict[str, Any]) -> Service:
    from idv_mock import Service

    if "admins" in changes:
        changes["admins"] = tuple(changes["admins"])
    return Service(dataclasses.replace(base, **changes))


@functools.cache
def _profile() -> Any:
    """The resilience profile this run applies (``IDV_MOCK_PROFILE``), or None."""
    name = os.environ.get("IDV_MOCK_PROFILE")
    if not name:
        return None
    from idv_mock.resilience import profiles

    try:
        return profiles.load(name)
    except profiles.ProfileError as exc:
        raise pytest.UsageError(f"IDV_MOCK_PROFILE: {exc}") from None


def _apply_profile(service: Service, project_id: str) -> None:
    """The run's resilience profile on a project the plugin hands out (none: nothing)."""
    profile = _profile()
    if profile is not None:
        from idv_mock.resilience import profiles

        profiles.apply(service, project_id, profile)


def _set_levers(service: Service, project_id: str, levers: dict[str, Any]) -> None:
    from idv_mock.backend import InvalidInput

    try:
        service.delivery.set_levers(project_id, levers)
    except InvalidInput as exc:
        raise pytest.UsageError(f"idv_webhook_delivery marker: {exc} {exc.problems}") from None


def _load_scenario(service: Service, name_or_path: str) -> None:
    """As ``idv-mock serve --scenario`` reads its argument: a file, or a built-in name."""
    from idv_mock import scenarios

    try:
        scenario = scenarios.load(scenarios.find(name_or_path))
    except scenarios.ScenarioError as exc:
        raise pytest.UsageError(f"idv_scenario marker: {exc}") from None
    scenarios.apply_given(service, scenario)


# --- the live server ---
@dataclass
class IdvServer:
    """A live server: where it listens, what it serves, and checks of the calls it got."""

    host: str
    port: int
    service: Service
    project_id: str = "default"

    @property
    def root_url(self) -> str:
        """The server's root: the hosted form (``/``, ``/liveform/``), ``/openapi.json``."""
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.root_url}/v3"

    @property
    def admin_url(self) -> str:
        return f"{self.root_url}/__admin"

    @property
    def api_key(self) -> str:
        return self.service.project(self.project_id).api_key

    @property
    def admin(self) -> str:
        return self.service.project(self.project_id).admins[0]

    @property
    def clock(self) -> ProjectClock:
        """The project's clock: ``.now``, ``.due``, ``.advance(hours=3)`` (docs/time.md)."""
        return self.service.clocks.handle(self.project_id)

    def requests(self, method: str | None = None, path: str | None = None) -> list[dict[str, Any]]:
        """Recorded API calls of the project (path is a glob, e.g. ``/v3/submission*``)."""
        return self.service.calls.journal(self.project_id, method, path)

    def assert_called(
        self, method: str, path: str, *, times: int | None = None, body: Any = None
    ) -> list[dict[str, Any]]:
        """Assert matching calls were made; the failure lists the calls that were made, with
        the near-miss hint of each call that did not match the contract."""
        found = [c for c in self.requests(method, path) if body is None or c["body"] == body]
        if (times is None and found) or (times is not None and len(found) == times):
            return found
        want = f"{method} {path}" + (f" with body {body}" if body is not None else "")
        count = "at least once" if times is None else f"{times} time(s)"
        made = [_described(c) for c in self.requests()][-20:]
        raise AssertionError(
            f"expected {want} {count}, found {len(found)}; calls made:\n"
            + ("\n".join(made) or "  (none)")
        )

    def liveform_url(self, *, secret_key: str | None = None, **params: Any) -> str:
        """A hosted-form link of the project: plain parameters in plain text, the others
        (all of them in encryption-only mode) inside ``encrypted``, with the project's
        cipher and key (``secret_key``: the issued secret, for ``liveform_key: secret``)."""
        from urllib.parse import urlencode

        from idv_mock.backend.liveform_links import link_query
        from idv_mock.ground import crypto

        options = self.service.project(self.project_id).describe()["options"]
        key, derivation = self.api_key, str(options["key_derivation"])
        if options["liveform_key"] == "secret":
            if secret_key is None:
                raise ValueError("liveform_key is secret: pass secret_key=<the issued secret>")
            key, derivation = secret_key, "sha256"
        seal = crypto.encrypt_gcm if options["liveform_cipher"] == "gcm" else crypto.encrypt

        def encrypt(inner: dict[str, Any]) -> str:
            return seal(inner, key, derivation)

        only = bool(options["liveform_encrypted_only"])
        query = link_query(self.project_id, params, encrypt, encrypted_only=only)
        return f"{self.root_url}/liveform/?{urlencode(query)}"

    @contextmanager
    def fault(self, rule: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """A fault rule on the project for the duration of a ``with`` block.

        Added through the control API, so a rule naming an error the matched calls do not
        have is refused here rather than silently never firing.
        """
        import httpx

        faults = f"{self.admin_url}/projects/{self.project_id}/faults"
        response = httpx.post(faults, json=rule)
        if response.status_code != 201:
            raise ValueError(f"fault rule refused: {response.text}")
        added: dict[str, Any] = response.json()
        try:
            yield added
        finally:
            httpx.delete(f"{faults}/{added['id']}")


def _described(call: dict[str, Any]) -> str:
    line = f"  {call['status']} {call['method']} {call['path']} {call['query']} {call['body']}"
    hint = call.get("hint")
    return f"{line}\n      hint: {hint}" if hint else line


@pytest.fixture(scope="session")
def _idv_live(_idv_session_service: Service, pytestconfig: pytest.Config) -> Iterator[IdvServer]:
    host, port = _option(pytestconfig, "host"), int(_option(pytestconfig, "port"))
    with ExitStack() as stack:
        with no_gc():
            app = server_app(_idv_session_service)
            running = stack.enter_context(serve_in_thread(app, host, port))
        yield IdvServer(host, running.port, _idv_session_service)


@pytest.fixture
def idv_server(_idv_live: IdvServer, idv_service: Service) -> Iterator[IdvServer]:
    """A real HTTP server (one per session), serving the reset ``idv_service``; a test
    whose ``idv_mock`` marker gives it a service of its own gets a server of its own."""
    if idv_service is _idv_live.service:
        yield _idv_live
        return
    with serve_in_thread(server_app(idv_service), _idv_live.host) as running:
        yield IdvServer(running.host, running.port, idv_service)


RESETTING = (
    "idv_service",
    "idv_server",
    "idv_client",
    "idv_async_client",
    "idv_webhook_receiver",
    "idv_mocked",
)


@pytest.fixture
def idv_project(_idv_live: IdvServer, request: pytest.FixtureRequest) -> IdvServer:
    """A project of its own on the shared server (own key, empty), for isolation without resets."""
    if any(name in request.fixturenames for name in RESETTING):
        request.getfixturevalue("idv_service")  # reset first, so it cannot remove this project
    token = uuid.uuid4().hex[:12]
    spec: dict[str, Any] = {
        "project_id": f"test-{token}",
        "api_key": f"key-{token}",
        "admins": ["admin@example.com"],
    }
    marker = request.node.get_closest_marker("idv_mock")
    if marker is not None and marker.kwargs.get("clock"):  # its own clock takes the mode
        spec["options"] = {"clock_mode": marker.kwargs["clock"]}
    project = _idv_live.service.create_project(spec)
    _apply_profile(_idv_live.service, project.project_id)
    return IdvServer(_idv_live.host, _idv_live.port, _idv_live.service, project.project_id)


# --- in-process clients ---
@pytest.fixture
def idv_client(idv_service: Service) -> Iterator[httpx.Client]:
    """A synchronous client of the in-process app, base URL ending in /v3, API key set.

    An ``httpx.Client`` calling the app directly on an event loop of its own in the test's
    thread (``idv_mock.transport``): no sockets and no thread hop per call.
    """
    with no_gc():
        from idv_mock import create_app
        from idv_mock.transport import ASGITransport, InProcessClient

        transport = ASGITransport(create_app(idv_service))
    key = idv_service.project("default").api_key
    with InProcessClient(
        transport=transport, base_url=IN_PROCESS_BASE_URL, headers={"x-api-key": key}
    ) as client:
        yield client


@pytest.fixture
def idv_async_client(idv_service: Service) -> httpx.AsyncClient:
    """The same for async tests. A plain (not async) fixture, so any async plugin takes it
    as it is: anyio, and pytest-asyncio in strict mode (which refuses async fixtures not
    declared with its own decorator). The in-process transport holds no connection, so the
    client needs no closing."""
    from idv_mock import create_app
    from idv_mock.transport import AsyncASGITransport, AsyncInProcessClient

    transport = AsyncASGITransport(create_app(idv_service))
    key = idv_service.project("default").api_key
    return AsyncInProcessClient(
        transport=transport, base_url=IN_PROCESS_BASE_URL, headers={"x-api-key": key}
    )


# --- webhooks ---
@functools.cache
def receiver_class() -> type[Any]:
    """``IdvWebhookReceiver``, built on first use (the receiver imports the crypto stack)."""
    from idv_mock.backend.events import EVENT_NAMES
    from idv_mock.delivery.receiver import Received, WebhookReceiver
    from idv_mock.ground import crypto

    # a webhook's trigger (``webhook_trigger``: ``updated``) by its event name, as in the
    # ``X-Idv-Event`` header (``submission.updated``); a trigger stands for itself
    triggers = {event: trigger for trigger, event in EVENT_NAMES.items()}

    class IdvWebhookReceiver(WebhookReceiver):
        """A receiver wired as the default project's webhook URL."""

        api_key: str = ""
        key_derivation: str = "sha256"

        def wait_for(self, trigger: str | int, timeout: float = 10.0) -> Any:
            """The first delivered payload of ``trigger`` (``"updated"`` or
            ``"submission.updated"``), decrypted with the project's key. An ``int`` waits
            for that many requests instead, as the base class does. A timeout lists what
            did arrive."""
            if isinstance(trigger, int):
                return super().wait_for(trigger, timeout)
            wanted = triggers.get(trigger, trigger)
            deadline = time.monotonic() + timeout
            while True:
                for item in list(self.received):
                    payload = self._payload(item)
                    if isinstance(payload, dict) and payload.get("webhook_trigger") == wanted:
                        return payload
                if time.monotonic() > deadline:
                    raise TimeoutError(
                        f"no {trigger!r} webhook within {timeout} s; arrived: {self._arrived()}"
                    )
                time.sleep(0.01)

        def _arrived(self) -> str:
            names = [item.event or "(no event header)" for item in list(self.received)]
            return ", ".join(names) or "nothing"

        def _payload(self, item: Received) -> Any:
            body = item.body
            if isinstance(body, dict) and body.get("isEncrypted") and self.api_key:
                return crypto.decrypt(str(body["data"]), self.api_key, self.key_derivation)
            return body

    return IdvWebhookReceiver


@pytest.fixture
def idv_webhook_receiver(idv_service: Service) -> Iterator[Any]:
    """A local HTTP receiver on a free port, set as the default project's webhook URL."""
    receiver = receiver_class()()
    project = idv_service.project("default")
    receiver.api_key = project.api_key
    receiver.key_derivation = project.derivation
    receiver.start()
    idv_service.update_project("default", {"options": {"webhook_url": receiver.url}})
    yield receiver
    receiver.stop()


@dataclass
class WebhookDelivery:
    """A project's webhook delivery levers and deliveries, from a test: what the control
    API's ``webhook-delivery`` and ``webhooks`` calls do, in-process."""

    service: Service
    project_id: str = "default"

    def set(self, **levers: Any) -> dict[str, Any]:
        """Replace the levers (``set()``: prompt delivery), e.g. ``set(duplicate=2)``."""
        return self.service.delivery.set_levers(self.project_id, levers)

    def get(self) -> dict[str, Any]:
        return self.service.delivery.levers(self.project_id)

    def deliveries(self, state: str | None = None) -> list[dict[str, Any]]:
        """Delivery records (``state``: only those held, dropped, failed, delivered, ...)."""
        return self.service.delivery.in_state(self.project_id, state)

    def release(self, order: str | list[str] = "queued", seed: int = 0) -> list[str]:
        """Send held deliveries: ``queued``, ``reversed``, ``shuffle`` or a list of ids."""
        return self.service.delivery.release(self.project_id, {"order": order, "seed": seed})

    def resend(self, delivery_id: str) -> dict[str, Any]:
        """Send a recorded delivery again now (a new record with ``resend_of``)."""
        return self.service.delivery.resend(self.project_id, delivery_id)

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Wait until nothing is queued, in flight or delayed (held ones do not count)."""
        return self.service.webhooks.wait_idle(timeout)


@pytest.fixture
def idv_webhook_delivery(idv_service: Service) -> WebhookDelivery:
    """The default project's webhook delivery levers and records (see ``WebhookDelivery``)."""
    return WebhookDelivery(idv_service)


# --- interception ---
@pytest.fixture
def idv_mocked(idv_service: Service) -> Iterator[Service]:
    """The real base URL answered in-process by ``idv_service``: code under test keeps its URL.

    httpx (sync, async) and requests calls to ``https://rest-api.argosidentity.com/v3`` go
    to the app serving ``idv_service`` (the client fixtures serve the same service); other
    URLs pass through.
    """
    from idv_mock.intercept import mock

    with mock(service=idv_service):
        yield idv_service
