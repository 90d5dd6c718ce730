"""Starting the servers under test on core 0, and finding (or installing) WireMock and Prism.

Every server is a child process started as ``taskset -c 0 ...`` so it has one core and the
load generator has the other. Stubs for WireMock and Prism are written at run time into a
temporary folder from the very bytes the mock answers, so all servers send the same JSON.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import httpx

BENCH_DIR = Path(__file__).resolve().parent
CACHE = Path(os.environ.get("IDV_MOCK_BENCH_CACHE", Path.home() / ".cache/idv-mock/bench"))
SERVER_CORE = "0"
WIREMOCK_PACKAGE = "wiremock@3"
PRISM_PACKAGE = "@stoplight/prism-cli@5"


@dataclass
class Server:
    """How to start one server and which URL answers once it is ready."""

    name: str
    argv: list[str]
    port: int
    probe_path: str
    notes: list[str] = field(default_factory=list)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def pinned(argv: list[str]) -> list[str]:
    return ["taskset", "-c", SERVER_CORE, *argv]


@contextlib.contextmanager
def running(server: Server, log_dir: Path, timeout: float = 90.0) -> Iterator[Server]:
    """The server started, answering its probe URL, and stopped (by its pid) afterwards."""
    log = (log_dir / f"{server.name}.log").open("wb")
    proc = subprocess.Popen(
        pinned(server.argv),
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=BENCH_DIR,
        start_new_session=True,
    )
    try:
        _wait_ready(proc, server, timeout, log)
        yield server
    finally:
        _stop(proc)
        log.close()


def _wait_ready(
    proc: subprocess.Popen[bytes], server: Server, timeout: float, log: IO[bytes]
) -> None:
    url = f"http://127.0.0.1:{server.port}{server.probe_path}"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            log.flush()
            raise RuntimeError(f"{server.name} exited with {proc.returncode}; see {log.name}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url, timeout=2).status_code < 500:
                return
        time.sleep(0.2)
    raise RuntimeError(f"{server.name} did not answer {url} within {timeout:.0f} s")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the server's own process group (Prism's node, WireMock's JVM), then SIGKILL."""
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(5)


# --- the Python servers ---
def python_server(kind: str, probe_path: str, body_file: Path | None = None) -> Server:
    port = free_port()
    argv = [sys.executable, str(BENCH_DIR / "serve_child.py"), kind, str(port)]
    if body_file is not None:
        argv.append(str(body_file))
    return Server(kind, argv, port, probe_path)


# --- WireMock ---
def wiremock_jar() -> tuple[Path | None, str]:
    """The standalone jar of the npm package ``wiremock`` (installed on first use)."""
    if shutil.which("java") is None:
        return None, "Java is missing (WireMock runs on the JVM): apt-get install default-jre"
    jar = _find_jar()
    if jar is None:
        problem = npm_install(WIREMOCK_PACKAGE)
        if problem:
            return None, problem
        jar = _find_jar()
    return (jar, "") if jar else (None, "the wiremock package holds no standalone jar")


def _find_jar() -> Path | None:
    found = sorted((CACHE / "node_modules/wiremock/build").glob("wiremock-standalone-*.jar"))
    return found[-1] if found else None


def wiremock_server(jar: Path, stub_dir: Path, body: bytes, request_path: str) -> Server:
    """A mapping that answers ``request_path`` (path + one query parameter) with ``body``."""
    path, _, query = request_path.partition("?")
    name, _, value = query.partition("=")
    mapping = {
        "request": {
            "method": "GET",
            "urlPath": path,
            "queryParameters": {name: {"equalTo": value}},
        },
        "response": {
            "status": 200,
            "body": body.decode(),
            "headers": {"Content-Type": "application/json"},
        },
    }
    root = stub_dir / "wiremock"
    (root / "mappings").mkdir(parents=True, exist_ok=True)
    (root / "__files").mkdir(exist_ok=True)
    (root / "mappings/submission.json").write_text(json.dumps(mapping))
    port = free_port()
    argv = [
        "java",
        "-jar",
        str(jar),
        "--port",
        str(port),
        "--bind-address",
        "127.0.0.1",
        "--root-dir",
        str(root),
        "--disable-banner",
        "--no-request-journal",
        "--disable-request-logging",
    ]
    note = (
        "WireMock: --no-request-journal --disable-request-logging, its fastest documented"
        " setting (a capped journal made it 5x slower here, the default ~15% slower)"
    )
    return Server("wiremock", argv, port, request_path, [note])


def wiremock_version(jar: Path) -> str:
    return jar.stem.removeprefix("wiremock-standalone-")


# --- Prism ---
def prism_bin() -> tuple[Path | None, str]:
    """Prism's binary: the bench cache, $IDV_MOCK_PRISM, CI's cache, else installed with npm."""
    if shutil.which("node") is None:
        return None, "Node.js is missing (Prism runs on Node): apt-get install nodejs npm"
    candidates = [
        CACHE / "node_modules/.bin/prism",
        Path(os.environ.get("IDV_MOCK_PRISM", "/nonexistent")),
        Path.home() / ".cache/idv-mock/prism/node_modules/.bin/prism",
    ]
    for path in candidates:
        if path.is_file():
            return path, ""
    problem = npm_install(PRISM_PACKAGE)
    if problem:
        return None, problem
    return (
        (candidates[0], "") if candidates[0].is_file() else (None, "prism not found after install")
    )


def prism_server(binary: Path, stub_dir: Path, body: bytes, request_path: str) -> Server:
    """``prism mock`` of a one-operation document whose static example is ``body``."""
    path, _, query = request_path.partition("?")
    name = query.partition("=")[0]
    document = {
        "openapi": "3.0.3",
        "info": {"title": "idv-mock benchmark stub", "version": "1"},
        "paths": {
            path: {
                "get": {
                    "parameters": [{"name": name, "in": "query", "schema": {"type": "string"}}],
                    "responses": {
                        "200": {
                            "description": "one submission",
                            "content": {"application/json": {"example": json.loads(body)}},
                        }
                    },
                }
            }
        },
    }
    spec = stub_dir / "prism.json"
    spec.write_text(json.dumps(document))
    port = free_port()
    argv = [str(binary), "mock", "-h", "127.0.0.1", "-p", str(port), "-v", "error", str(spec)]
    note = (
        "Prism: mock mode, static example, -v error (logging each request at its default"
        " level info halved its rate here)"
    )
    return Server("prism", argv, port, request_path, [note])


def prism_version(binary: Path) -> str:
    package = binary.resolve().parents[1] / "package.json"
    if not package.is_file():
        package = binary.parent.parent / "@stoplight/prism-cli/package.json"
    with contextlib.suppress(OSError, ValueError, KeyError):
        return str(json.loads(package.read_text())["version"])
    return "unknown"


# --- npm ---
def npm_install(package: str) -> str:
    """Install ``package`` into the bench cache; answers a reason when that is impossible."""
    npm = shutil.which("npm")
    if npm is None:
        return f"npm is missing, so {package} cannot be installed"
    CACHE.mkdir(parents=True, exist_ok=True)
    print(f"  installing {package} into {CACHE} (first use) ...", flush=True)
    cmd = [npm, "install", "--prefix", str(CACHE), "--no-audit", "--no-fund", "--silent", package]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return f"npm install {package} timed out"
    if done.returncode != 0:
        return f"npm install {package} failed: {done.stderr.strip()[-300:]}"
    return ""
