"""Part 1: requests/s and latency on loopback, every server on core 0 and wrk on core 1.

A round runs, one after the other and with the same connections, warm-up and duration:
the two bare-Starlette baselines, the mock's six workloads, WireMock and Prism. Ratios
are taken inside a round (side by side), and with several rounds the medians are kept.
"""

from __future__ import annotations

import os
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import loadgen
import servers
from benchstate import Call, projection_body, projection_key

BY_ID = "get_by_id"


@dataclass(frozen=True, slots=True)
class Plan:
    seconds: int
    warmup: int  # Python servers: imports and caches are warm after a second or two
    stub_warmup: int  # WireMock (JVM) and Prism (V8) reach their plateau only after JIT
    rounds: int


@dataclass
class Outcome:
    """Every round's wrk results by workload name, plus what was skipped and why."""

    rounds: list[dict[str, loadgen.WrkResult]] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    versions: dict[str, str] = field(default_factory=dict)


def run(plan: Plan, calls: list[Call], body: bytes, tmp: Path) -> Outcome:
    outcome = Outcome()
    wrk, why = loadgen.ensure_wrk()
    if wrk is None:
        print(f"  SKIPPED: {why}")
        outcome.skipped["throughput"] = why
        return outcome
    outcome.versions["wrk"] = loadgen.wrk_version(wrk)
    pin = (os.cpu_count() or 1) >= 2
    if not pin:
        outcome.notes.append("fewer than 2 cores: servers and wrk share the core (no taskset)")
    stubs = _stub_servers(outcome, tmp, body, calls[0].path)
    body_file = tmp / "submission.json"
    body_file.write_bytes(body)
    for number in range(plan.rounds):
        print(f"  round {number + 1}/{plan.rounds}", flush=True)
        results: dict[str, loadgen.WrkResult] = {}
        runner = _Runner(wrk, plan, pin, tmp, results)
        runner.baseline("baseline_raw", "raw", body_file, calls[0])  # raw_asgi.py
        runner.baseline("baseline_bytes", "bytes", body_file, calls[0])
        runner.baseline("baseline_dict", "dict", body_file, calls[0])
        runner.mock(calls, body)
        runner.counting_pair(calls[0], uncounted_first=number % 2 == 1)
        for name, server in stubs.items():
            runner.stub(name, server, calls[0])
        outcome.rounds.append(results)
    for server in stubs.values():
        outcome.notes.extend(server.notes)
    outcome.notes.append(
        f"warm-up before each measured {plan.seconds} s run: {plan.warmup} s for the Python"
        f" servers, {plan.stub_warmup} s for WireMock and Prism (JIT: they reach their"
        " plateau after 6-9 s here)"
    )
    outcome.notes.append(
        "POST+DELETE /projection runs wrk -t32 -c32 (one connection per wrk thread, each"
        " alternating on its own project); every other run is -t1 -c32"
    )
    return outcome


def _stub_servers(outcome: Outcome, tmp: Path, body: bytes, path: str) -> dict[str, servers.Server]:
    """WireMock and Prism serving ``body`` at the by-id path, or the reason each is skipped."""
    found: dict[str, servers.Server] = {}
    wiremock = (servers.wiremock_jar, servers.wiremock_server, servers.wiremock_version)
    prism = (servers.prism_bin, servers.prism_server, servers.prism_version)
    stubs = (("wiremock", "WireMock", *wiremock), ("prism", "Prism", *prism))
    for name, label, locate, start, version in stubs:
        tool, why = locate()
        if tool is None:
            outcome.skipped[name] = why
            print(f"  SKIPPED {label}: {why}")
            continue
        found[name] = start(tool, tmp, body, "/v3" + path)
        outcome.versions[name] = version(tool)
    return found


@dataclass
class _Runner:
    wrk: str
    plan: Plan
    pin: bool
    tmp: Path
    results: dict[str, loadgen.WrkResult]
    runs: int = 0

    def measure(
        self, name: str, port: int, call: Call, api_key: str | None = None, warmup: int = 0
    ) -> None:
        """Warm up, then one measured run with the same settings as every other workload."""
        url = f"http://127.0.0.1:{port}/v3{call.path}"
        warmup = warmup or self.plan.warmup
        for tag, seconds in (("warm", warmup), ("run", self.plan.seconds)):
            self.runs += 1
            script, threads = loadgen.script_for(call, self.tmp, f"{tag}{self.runs}")
            result = loadgen.run_wrk(
                self.wrk,
                url,
                seconds,
                api_key=api_key,
                script=script,
                threads=threads,
                pin=self.pin,
            )
        self.results[name] = result
        errors = f", {result.errors} errors" if result.errors else ""
        print(
            f"    {name:<16} {result.rps:>9.0f} req/s  p50 {result.p50_ms:6.2f} ms"
            f"  p99 {result.p99_ms:6.2f} ms{errors}",
            flush=True,
        )

    def baseline(self, name: str, kind: str, body_file: Path, by_id: Call) -> None:
        server = servers.python_server(kind, "/v3" + by_id.path, body_file)
        with servers.running(server, self.tmp):
            self.measure(name, server.port, by_id)

    def stub(self, name: str, server: servers.Server, by_id: Call) -> None:
        try:
            with servers.running(server, self.tmp):
                self.measure(name, server.port, by_id, warmup=self.plan.stub_warmup)
        except RuntimeError as exc:
            print(f"    {name}: could not run: {exc}")

    def mock(self, calls: list[Call], body: bytes) -> None:
        server = servers.python_server("mock", "/v3" + calls[0].path)
        with servers.running(server, self.tmp):
            check_mock(server.port, calls, body)
            for call in calls:
                self.measure("mock_" + call.name, server.port, call, call.api_key)

    def counting_pair(self, by_id: Call, uncounted_first: bool) -> None:
        """What contract coverage's counting costs: GET by id on a fresh mock server with
        counting on and on one with it off, one straight after the other (the order
        swapped every other round), so the machine's drift between them is as small as
        the bench can make it; the mock's own GET by id above ran several workloads
        earlier."""
        pair = [("mock", COUNTED), ("mock-uncounted", UNCOUNTED)]
        for kind, name in reversed(pair) if uncounted_first else pair:
            server = servers.python_server(kind, "/v3" + by_id.path)
            with servers.running(server, self.tmp):
                self.measure(name, server.port, by_id, by_id.api_key)


COUNTED = "mock_get_by_id_counted"
UNCOUNTED = "mock_get_by_id_uncounted"


def check_mock(port: int, calls: list[Call], body: bytes) -> None:
    """Every workload answers 2xx before it is loaded; GET by id answers the stubs' bytes."""
    base = f"http://127.0.0.1:{port}/v3"
    with httpx.Client(base_url=base, timeout=10) as client:
        for call in calls:
            if call.lua == "projection":
                _check_projection(client)
                continue
            headers = {"x-api-key": call.api_key, "content-type": "application/json"}
            r = client.request(call.method, base + call.path, content=call.body, headers=headers)
            if r.status_code >= 300:
                raise RuntimeError(f"{call.name} answered {r.status_code}: {r.text[:300]}")
            if call.name == BY_ID and r.content != body:
                raise RuntimeError("the live mock's GET by id differs from the stubs' body")


def _check_projection(client: httpx.Client) -> None:
    headers = {"x-api-key": projection_key(0), "content-type": "application/json"}
    r = client.post("/projection", content=projection_body("bench_check"), headers=headers)
    if r.status_code != 200:
        raise RuntimeError(f"POST /projection answered {r.status_code}: {r.text[:300]}")
    pid = r.json()["projection_id"]
    r = client.delete(f"/projection/{pid}", headers=headers)
    if r.status_code != 200:
        raise RuntimeError(f"DELETE /projection answered {r.status_code}: {r.text[:300]}")


def summary(outcome: Outcome) -> dict[str, dict[str, Any]]:
    """Per workload: median requests/s, p50, p99 over rounds, and per-round ratios' medians."""
    names = {name for results in outcome.rounds for name in results}
    out: dict[str, dict[str, Any]] = {}
    for name in sorted(names):
        runs = [r[name] for r in outcome.rounds if name in r]
        out[name] = {
            "rps": statistics.median(r.rps for r in runs),
            "p50_ms": statistics.median(r.p50_ms for r in runs),
            "p99_ms": statistics.median(r.p99_ms for r in runs),
            "errors": sum(r.errors for r in runs),
            "non2xx": sum(r.non2xx for r in runs),
            "socket_errors": sum(r.socket_errors for r in runs),
            "rounds": [r.as_dict() for r in runs],
        }
        bases = ("baseline_raw", "baseline_bytes", "baseline_dict", "wiremock", "prism", UNCOUNTED)
        for base in bases:
            ratios = [r[name].rps / r[base].rps for r in outcome.rounds if name in r and base in r]
            if ratios:
                out[name][f"vs_{base}"] = statistics.median(ratios)
    return out
