"""Shared fixtures: a fresh service, in-process and live clients that check every response."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import httpx
import pytest
from pytest_idv_mock.fixtures import serve_in_thread
from starlette.testclient import TestClient

from conformance import check_response
from idv_mock import Service, ServiceConfig, create_app
from idv_mock.delivery.receiver import WebhookReceiver
from idv_mock.transport import InProcessClient

pytest_plugins = ["pytester"]
# every webhook payload the service builds is checked against its trigger's schema
# (idv_mock.backend.events); child processes (idv-mock serve) inherit it
os.environ["IDV_MOCK_CHECK_WEBHOOKS"] = "1"

API_KEY = "mock-api-key"
ADMIN = "admin@example.com"
HEADERS = {"x-api-key": API_KEY}


@pytest.fixture
def service() -> Service:
    return Service(ServiceConfig(seed_count=30, random_seed=7))


@pytest.fixture
def client(service: Service) -> Iterator[TestClient]:
    """In-process client with the default project's key; every response is schema-checked."""
    with TestClient(create_app(service), headers=HEADERS) as c:
        c.event_hooks["response"] = [check_response]
        yield c


@pytest.fixture
def raw_client(service: Service) -> Iterator[TestClient]:
    """Like ``client`` but without a default API key header."""
    with TestClient(create_app(service)) as c:
        c.event_hooks["response"] = [check_response]
        yield c


def form_token(client: httpx.Client) -> str:
    """The dashboard's anti-forgery token of ``client``'s browser-like cookie jar (a page is
    opened first if it has none), as a form of the dashboard carries it."""
    from idv_mock.web import forgery

    found = client.cookies.get(forgery.COOKIE)
    if found is None:
        client.get("/__admin/ui/login")
        found = client.cookies.get(forgery.COOKIE)
    assert found, "the dashboard set no anti-forgery cookie"
    return str(found)


class FormClient(InProcessClient):
    """An in-process client that posts the dashboard's forms as a browser does: with the
    anti-forgery token the pages put in them (``web/forgery.py``)."""

    def post(self, url: Any, **kwargs: Any) -> httpx.Response:  # type: ignore[override]
        from idv_mock.web import forgery

        if str(url).startswith("/__admin/ui/") and kwargs.get("content") is None:
            data = dict(kwargs.pop("data", None) or {})
            data.setdefault(forgery.FIELD, form_token(self))
            kwargs["data"] = data
        return super().post(url, **kwargs)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LiveServer:
    """uvicorn in a background thread on a free port, stopped on exit: the plugin's own
    ``serve_in_thread`` (port 0, the bound port read back), so the two cannot drift."""

    def __init__(self, service: Service) -> None:
        self.service = service
        self._serving = serve_in_thread(create_app(service))

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v3"

    def __enter__(self) -> LiveServer:
        running = self._serving.__enter__()
        self.port = running.port
        return self

    def __exit__(self, *exc: Any) -> None:
        self._serving.__exit__(None, None, None)


@pytest.fixture
def live(service: Service) -> Iterator[LiveServer]:
    with LiveServer(service) as server:
        yield server


@pytest.fixture
def admin(live: LiveServer) -> Iterator[httpx.Client]:
    """A client of the live server's root (control API, hosted form), no redirects followed."""
    with httpx.Client(base_url=f"http://127.0.0.1:{live.port}", timeout=10) as c:
        yield c


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    """A real webhook receiver on a free port (files may define their own)."""
    with WebhookReceiver() as r:
        yield r


@pytest.fixture
def hook(service: Service, receiver: WebhookReceiver) -> Iterator[WebhookReceiver]:
    """``receiver``, set as the default project's webhook URL; after the test, what is
    queued is dropped and what is in flight ends before the receiver stops."""
    service.update_project("default", {"options": {"webhook_url": receiver.url}})
    yield receiver
    service.webhooks.clear()
    service.webhooks.wait_idle(5)


@pytest.fixture
def http(live: LiveServer) -> Iterator[httpx.Client]:
    """A real HTTP client against ``live``; every response is schema-checked."""
    with httpx.Client(
        base_url=f"http://127.0.0.1:{live.port}",
        headers=HEADERS,
        event_hooks={"response": [check_response]},
        timeout=10,
    ) as c:
        yield c


class ServeProcess:
    """``idv-mock serve`` as a user runs it: a subprocess on a free port, stopped on exit."""

    def __init__(self, *args: str) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.cmd = [sys.executable, "-m", "idv_mock.cli", "serve", "--port", str(self.port), *args]
        self.output = ""
        self._done = False

    def __enter__(self) -> ServeProcess:
        self.proc = subprocess.Popen(
            self.cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(self.base + "/__admin/projects", timeout=1)
                return self
            except httpx.TransportError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(self.stop()) from None
                time.sleep(0.1)

    def stop(self, sig: int = signal.SIGTERM) -> str:
        """Signal the server (if still running) and return everything it printed."""
        if not self._done:
            if self.proc.poll() is None:
                self.proc.send_signal(sig)
            self.output = self.proc.communicate(timeout=15)[0]
            self._done = True
        return self.output

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def _summary_file(controller_pid: int) -> Path:
    return Path(tempfile.gettempdir()) / f"idv-mock-test-summary-{controller_pid}.txt"


def report_summary(line: str) -> None:
    """A line for the end of the test run's output (from xdist workers too)."""
    in_worker = "PYTEST_XDIST_WORKER" in os.environ
    path = _summary_file(os.getppid() if in_worker else os.getpid())
    with path.open("a") as out:
        out.write(line + "\n")


def pytest_terminal_summary(terminalreporter: Any) -> None:
    path = _summary_file(os.getpid())
    if path.exists():
        for line in path.read_text().splitlines():
            terminalreporter.write_line(line)
        path.unlink()


def snapshot(service: Service) -> bytes:
    """The whole state, to assert that a refused call changed nothing."""
    import orjson

    return orjson.dumps(service.export_state())


def assert_refused(
    response: httpx.Response | Callable[[], httpx.Response],
    status: int,
    body: Any,
    *,
    service: Service | None = None,
    before: bytes | None = None,
    note: object = None,
) -> httpx.Response:
    """The answer has exactly ``status`` and the JSON ``body``; with ``service``, the call
    changed nothing.

    ``response`` is the answer, or a call that sends the request. Given a call and
    ``service``, the state is snapshotted just before it is sent; given an answer and
    ``service``, pass ``before``, the :func:`snapshot` taken before it was sent. ``note`` is
    shown when an assertion fails; the answer is returned.
    """
    if (before is not None and service is None) or (
        service is not None and before is None and not callable(response)
    ):
        raise TypeError("state check: pass service= with a call, or service= and before=")
    if callable(response):
        if service is not None and before is None:
            before = snapshot(service)
        response = response()
    assert response.status_code == status, (note, response.text)
    assert response.json() == body, (note, response.text)
    if service is not None:
        assert snapshot(service) == before, (note, "the refused call changed the state")
    return response


def some_submission(service: Service, index: int = 0) -> dict[str, Any]:
    """A live (not deleted) submission of the default project, newest first."""
    store = service.project("default").store
    subs = sorted(store, key=lambda s: s["created_at"], reverse=True)
    return subs[index]


def walk_pages(
    client: httpx.Client,
    query: Mapping[str, Any] | None = None,
    *,
    url: str = "/v3/submission",
    headers: Mapping[str, str] | None = None,
) -> Iterator[httpx.Response]:
    """Every page of a submission list as an integrator walks it: each next page asked for
    with the same ``query`` plus the previous page's ``nextpageKey`` as ``nextpage_id`` and
    ``nextpage_date``, until a page carries none (an error answer ends the walk)."""
    params = dict(query or {})
    while True:
        answer = client.get(url, params=params, headers=headers)
        yield answer
        after = answer.json().get("nextpageKey")
        if after is None:
            return
        params = {**(query or {}), "nextpage_id": after["id"], "nextpage_date": after["created_at"]}
