"""pytest plugin of idv-mock: a running, isolated, seeded fake of the service per test.

Installed with the package (``pytest11`` entry point ``idv_mock``), so ``pip install
idv-mock`` is all a test suite needs. One service per session (per xdist worker) is
reset to its seeded start state before each test that uses it; the live server, the
in-process clients and the webhook receiver all serve that same service, so state
seeded through ``idv_service`` is what the server answers.

Options (command line > environment > ini > default): ``--idv-mock-seed-count``
(``IDV_MOCK_SEED_COUNT``, ini ``idv_mock_seed_count``, 50), ``--idv-mock-random-seed``
(``IDV_MOCK_RANDOM_SEED``, ``idv_mock_random_seed``, 0), ``--idv-mock-host``
(``IDV_MOCK_HOST``, ``idv_mock_host``, 127.0.0.1), ``--idv-mock-port``
(``IDV_MOCK_PORT``, ``idv_mock_port``, 0 = a free port).
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from idv_mock import Service, ServiceConfig, create_app, crypto
from idv_mock.receiver import Received, WebhookReceiver
from idv_mock.transport import (
    ASGITransport,
    AsyncASGITransport,
    AsyncInProcessClient,
    InProcessClient,
)

OPTIONS = {
    # name: (default, help)
    "seed_count": ("50", "submissions seeded into the default project"),
    "random_seed": ("0", "seed of the fake data"),
    "host": ("127.0.0.1", "address of the idv_server fixture's server"),
    "port": ("0", "port of the idv_server fixture's server (0: a free port)"),
}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("idv-mock")
    for name, (default, help_text) in OPTIONS.items():
        flag = "--idv-mock-" + name.replace("_", "-")
        group.addoption(flag, dest=f"idv_mock_{name}", default=None, help=help_text)
        parser.addini(f"idv_mock_{name}", help_text, default=default)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "idv_scenario(name_or_path): load a scenario's `given` state before the test",
    )


def _option(config: pytest.Config, name: str) -> str:
    given = config.getoption(f"idv_mock_{name}")
    if given is not None:
        return str(given)
    env = os.environ.get(f"IDV_MOCK_{name.upper()}")
    if env is not None:
        return env
    return str(config.getini(f"idv_mock_{name}"))


@pytest.fixture(scope="session")
def _idv_session_service(pytestconfig: pytest.Config) -> Iterator[Service]:
    config = ServiceConfig(
        seed_count=int(_option(pytestconfig, "seed_count")),
        random_seed=int(_option(pytestconfig, "random_seed")),
        webhook_backoff=(0.1, 0.2),
    )
    service = Service(config)
    yield service
    service.close()


@pytest.fixture
def idv_service(_idv_session_service: Service, request: pytest.FixtureRequest) -> Service:
    """The in-process service (state plus the Python control API), at its seeded start."""
    _idv_session_service.reset()
    marker = request.node.get_closest_marker("idv_scenario")
    if marker is not None:
        _load_scenario(_idv_session_service, str(marker.args[0]))
    return _idv_session_service


def _load_scenario(service: Service, name_or_path: str) -> None:
    from idv_mock import scenarios

    path = Path(name_or_path)
    scenario = scenarios.load(path) if path.suffix else scenarios.builtin(name_or_path)
    scenarios.apply_given(service, scenario)


@dataclass
class IdvServer:
    """The live server of a session: where it listens and what it serves."""

    host: str
    port: int
    service: Service
    project_id: str = "default"

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v3"

    @property
    def admin_url(self) -> str:
        return f"http://{self.host}:{self.port}/__admin"

    @property
    def api_key(self) -> str:
        return self.service.project(self.project_id).api_key

    @property
    def admin(self) -> str:
        return self.service.project(self.project_id).admins[0]

    def requests(self, method: str | None = None, path: str | None = None) -> list[dict[str, Any]]:
        """Recorded API calls of the project (path is a glob, e.g. ``/v3/submission*``)."""
        return self.service.journal(self.project_id, method, path)

    def assert_called(
        self, method: str, path: str, *, times: int | None = None, body: Any = None
    ) -> list[dict[str, Any]]:
        """Assert matching calls were made; the failure lists the near misses."""
        found = [c for c in self.requests(method, path) if body is None or c["body"] == body]
        if (times is None and found) or (times is not None and len(found) == times):
            return found
        near = [f"  {c['method']} {c['path']} {c['query']} {c['body']}" for c in self.requests()]
        want = f"{method} {path}" + (f" with body {body}" if body is not None else "")
        count = "at least once" if times is None else f"{times} time(s)"
        raise AssertionError(
            f"expected {want} {count}, found {len(found)}; calls made:\n"
            + ("\n".join(near[-20:]) or "  (none)")
        )

    def liveform_url(self, *, secret_key: str | None = None, **params: Any) -> str:
        """A hosted-form link of the project: plain parameters in plain text, the others
        (all of them in encryption-only mode) inside ``encrypted``, with the project's
        cipher and key (``secret_key``: the issued secret, for ``liveform_key: secret``)."""
        from urllib.parse import urlencode

        from idv_mock.backend.liveform import link_query

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
        return f"http://{self.host}:{self.port}/liveform/?{urlencode(query)}"

    @contextmanager
    def fault(self, rule: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """A fault rule on the project for the duration of a ``with`` block.

        Added through the control API, so a rule naming an error the matched calls do not
        have is refused here rather than silently never firing.
        """
        faults = f"{self.admin_url}/projects/{self.project_id}/faults"
        response = httpx.post(faults, json=rule)
        if response.status_code != 201:
            raise ValueError(f"fault rule refused: {response.text}")
        added: dict[str, Any] = response.json()
        try:
            yield added
        finally:
            httpx.delete(f"{faults}/{added['id']}")


@pytest.fixture(scope="session")
def _idv_live(_idv_session_service: Service, pytestconfig: pytest.Config) -> Iterator[IdvServer]:
    host, port = _option(pytestconfig, "host"), int(_option(pytestconfig, "port"))
    config = uvicorn.Config(create_app(_idv_session_service), host=host, port=port)
    config.log_level = "warning"
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True, name="idv-mock-server")
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"idv-mock server did not start on {host}:{port}")
        time.sleep(0.01)
    bound = server.servers[0].sockets[0].getsockname()[1]
    yield IdvServer(host, int(bound), _idv_session_service)
    server.should_exit = True
    thread.join(10)


@pytest.fixture
def idv_server(_idv_live: IdvServer, idv_service: Service) -> IdvServer:
    """A real uvicorn server (one per session), serving the reset ``idv_service``."""
    return _idv_live


RESETTING = (
    "idv_service",
    "idv_server",
    "idv_client",
    "idv_async_client",
    "idv_webhook_receiver",
    "idv_mocked",
)


@pytest.fixture
def idv_project(_idv_live: IdvServer, request: pytest.FixtureRequest) -> Iterator[IdvServer]:
    """A project of its own on the shared server (own key, empty), for isolation without resets."""
    if any(name in request.fixturenames for name in RESETTING):
        request.getfixturevalue("idv_service")  # reset first, so it cannot remove this project
    token = uuid.uuid4().hex[:12]
    spec = {
        "project_id": f"test-{token}",
        "api_key": f"key-{token}",
        "admins": ["admin@example.com"],
    }
    project = _idv_live.service.create_project(spec)
    yield IdvServer(_idv_live.host, _idv_live.port, _idv_live.service, project.project_id)


IN_PROCESS_BASE_URL = "http://idv-mock/v3"


@pytest.fixture
def idv_client(idv_service: Service) -> Iterator[httpx.Client]:
    """A synchronous client of the in-process app, base URL ending in /v3, API key set.

    An ``httpx.Client`` calling the app directly on an event loop of its own in the test's
    thread (``idv_mock.transport``): no sockets and no thread hop per call.
    """
    transport = ASGITransport(create_app(idv_service))
    key = idv_service.project("default").api_key
    with InProcessClient(
        transport=transport, base_url=IN_PROCESS_BASE_URL, headers={"x-api-key": key}
    ) as client:
        yield client


@pytest.fixture
async def idv_async_client(idv_service: Service) -> AsyncIterator[httpx.AsyncClient]:
    """The same for async tests (any async plugin: anyio, pytest-asyncio)."""
    transport = AsyncASGITransport(create_app(idv_service))
    key = idv_service.project("default").api_key
    async with AsyncInProcessClient(
        transport=transport, base_url=IN_PROCESS_BASE_URL, headers={"x-api-key": key}
    ) as client:
        yield client


class IdvWebhookReceiver(WebhookReceiver):
    """A receiver wired as the default project's webhook URL."""

    api_key: str = ""

    def wait_for(self, trigger: str | int, timeout: float = 10.0) -> Any:
        """The first delivered payload whose ``webhook_trigger`` is ``trigger`` (decrypted).

        An ``int`` waits for that many requests instead, as the base class does.
        """
        if isinstance(trigger, int):
            return super().wait_for(trigger, timeout)
        deadline = time.monotonic() + timeout
        while True:
            for item in list(self.received):
                payload = self._payload(item)
                if isinstance(payload, dict) and payload.get("webhook_trigger") == trigger:
                    return payload
            if time.monotonic() > deadline:
                raise TimeoutError(f"no {trigger!r} webhook within {timeout} s")
            time.sleep(0.01)

    def _payload(self, item: Received) -> Any:
        body = item.body
        if isinstance(body, dict) and body.get("isEncrypted") and self.api_key:
            return crypto.decrypt(str(body["data"]), self.api_key)
        return body


@pytest.fixture
def idv_webhook_receiver(idv_service: Service) -> Iterator[IdvWebhookReceiver]:
    """A local HTTP receiver on a free port, set as the default project's webhook URL."""
    receiver = IdvWebhookReceiver()
    receiver.api_key = idv_service.project("default").api_key
    receiver.start()
    idv_service.update_project("default", {"options": {"webhook_url": receiver.url}})
    yield receiver
    receiver.stop()


@pytest.fixture
def idv_mocked(idv_service: Service) -> Iterator[Service]:
    """The real base URL answered in-process by ``idv_service``: code under test keeps its URL.

    httpx (sync, async) and requests calls to ``https://rest-api.argosidentity.com/v3`` go
    to the app serving ``idv_service`` (the client fixtures serve the same service); other
    URLs pass through. Imported here so the plugin stays light to import.
    """
    from idv_mock.intercept import mock

    with mock(service=idv_service):
        yield idv_service
