"""Stoplight Prism as an independent validating proxy in front of the mock.

Every scenario's requests go through ``prism proxy`` (given the OpenAPI document of the
whole server, control API included) to a live mock; the scenario must pass and Prism must
report no violation: no response violation at all, and no request violation for a
request the mock accepted (2xx) — the negative steps break the contract on purpose, and
a request violation there is the point. ``.ci/run`` installs Prism (npm
``@stoplight/prism-cli``); elsewhere the test is skipped with the reason.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from conftest import LiveServer, free_port
from idv_mock import Service, ServiceConfig, scenarios
from idv_mock.api import openapi

pytestmark = pytest.mark.live
# The fault-rule scenario makes the mock answer outside the contract on purpose.
OUTSIDE_THE_CONTRACT = {"fault-rules"}


def prism_binary() -> str | None:
    found = os.environ.get("IDV_MOCK_PRISM") or shutil.which("prism")
    return found if found and Path(found).exists() else None


@pytest.fixture(scope="module")
def prism(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    binary = prism_binary()
    if binary is None:
        pytest.skip("Prism is not installed (npm i @stoplight/prism-cli; .ci/run does it)")
    folder = tmp_path_factory.mktemp("prism")
    spec = folder / "openapi.json"
    spec.write_text(json.dumps(openapi.document(control=True)))
    log = folder / "prism.log"
    with LiveServer(Service(ServiceConfig(seed_count=10))) as mock:
        port = free_port()
        upstream = f"http://127.0.0.1:{mock.port}"
        cmd = [binary, "proxy", str(spec), upstream, "-p", str(port), "-h", "127.0.0.1"]
        with log.open("w") as out:
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
            try:
                _wait_for(f"http://127.0.0.1:{port}/__admin/projects", proc)
                yield f"http://127.0.0.1:{port}/v3", log
            finally:
                proc.terminate()
                proc.wait(10)


def _wait_for(url: str, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("prism exited")
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.TransportError:
            time.sleep(0.2)
    raise RuntimeError("prism did not start")


@pytest.mark.parametrize("name", sorted(set(scenarios.builtins()) - OUTSIDE_THE_CONTRACT))
def test_scenario_through_prism(prism: tuple[str, Path], name: str) -> None:
    base_url, log = prism
    seen = [len(log.read_text().splitlines())]
    problems: list[str] = []

    def after_each(response: httpx.Response) -> None:
        time.sleep(0.05)  # Prism logs a request's violations as it answers it
        lines = log.read_text().splitlines()
        fresh, seen[0] = lines[seen[0] :], len(lines)
        call = f"{response.request.method} {response.request.url.path} -> {response.status_code}"
        for line in fresh:
            accepted = 200 <= response.status_code < 300
            if "Violation: response" in line or ("Violation: request" in line and accepted):
                problems.append(f"{call}: {line.split('Violation:')[1].strip()}")

    results = scenarios.run(
        scenarios.builtin(name), base_url=base_url, reset=True, on_response=after_each
    )
    assert all(r.passed for r in results), "\n".join(str(r) for r in results)
    assert problems == []


def test_prism_reports_a_broken_response(prism: tuple[str, Path]) -> None:
    """The check above can fail: a fault rule answering a wrong shape is a violation."""
    base_url, log = prism
    admin = base_url.removesuffix("/v3") + "/__admin/projects/default/faults"
    rule = {"match": {"path": "/v3/submission"}, "respond": {"status": 200, "body": {"Items": 5}}}
    httpx.post(admin, json=rule).raise_for_status()
    try:
        before = len(log.read_text().splitlines())
        httpx.get(base_url + "/submission", headers={"x-api-key": "mock-api-key"})
        time.sleep(0.3)
        fresh = log.read_text().splitlines()[before:]
        assert any("Violation: response" in line for line in fresh), fresh
    finally:
        httpx.delete(admin)
