"""Stoplight Prism as an independent validating proxy in front of the mock.

Every scenario's requests go through ``prism proxy`` (given the OpenAPI document of the
whole server, control API included) to a live mock; the scenario must pass and Prism must
report no response violation. Requests that break the contract on purpose (the negative
steps) are Prism *request* violations, which is expected. ``.ci/run`` installs Prism
(npm ``@stoplight/prism-cli``); elsewhere the test is skipped with the reason.
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
from idv_mock import Service, ServiceConfig, openapi, scenarios

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
    before = log.read_text().count("\n")
    results = scenarios.run(scenarios.builtin(name), base_url=base_url, reset=True)
    assert all(r.passed for r in results), "\n".join(str(r) for r in results)
    lines = log.read_text().splitlines()[before:]
    violations = [ln for ln in lines if "Violation: response" in ln]
    assert violations == []
