"""Instructions per GET by id of a server process: load-free, where req/s on a shared machine
is not (session 12, issue 37's throughput floor).

Run: ``.venv/bin/python bench/instructions.py [KIND ...]`` (kinds of ``serve_child.py``:
``raw``, ``mock``, ``mock-uncounted``; default ``raw mock``). Each kind runs twice under
``valgrind --tool=callgrind``, answering FEW and then MANY GETs by id on CONNECTIONS
keep-alive connections; the difference of the two counts over the difference of the
requests is one request's instructions (start-up and shutdown cancel out). Set
``PYTHONPATH`` to another checkout's ``src`` to count that code instead. About a minute a
run; not part of ``make bench``. Ratios of these counts tracked wrk's req/s ratios within a
few hundredths on a quiet machine (docs/performance.md, session 12).
"""

from __future__ import annotations

import asyncio
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import benchstate  # noqa: E402
from call_costs import _answer, scope  # noqa: E402

FEW, MANY, CONNECTIONS = 400, 2400, 8


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _connect(port: int) -> socket.socket:
    deadline = time.monotonic() + 300  # a server under valgrind starts slowly
    while True:
        try:
            return socket.create_connection(("127.0.0.1", port))
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def _read_answer(conn: socket.socket) -> None:
    data = b""
    while b"\r\n\r\n" not in data:
        data += conn.recv(65536)
    head, _, rest = data.partition(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 200"):
        raise RuntimeError(f"answered {head[:40]!r}")
    lines = head.lower().split(b"\r\n")
    length = next(int(line.split(b":")[1]) for line in lines if line.startswith(b"content-length"))
    while len(rest) < length:
        rest += conn.recv(65536)


def _requests(port: int, path: str, count: int) -> None:
    request = (
        f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nx-api-key: {benchstate.API_KEY}\r\n\r\n"
    ).encode()
    conns = [_connect(port) for _ in range(CONNECTIONS)]
    for _ in range(count // CONNECTIONS):
        for conn in conns:
            conn.sendall(request)
        for conn in conns:
            _read_answer(conn)
    for conn in conns:
        conn.close()


def count(kind: str, requests: int, path: str, body_file: Path, folder: Path) -> int:
    """The instructions of one server process that answered ``requests`` GETs."""
    port, out = _free_port(), folder / f"{kind}.{requests}.out"
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable]
    cmd += [str(HERE / "serve_child.py"), kind, str(port), str(body_file)]
    server = subprocess.Popen(cmd, cwd=HERE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _requests(port, path, requests)
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=300)
    for line in out.read_text().splitlines():
        if line.startswith("summary:"):
            return int(line.split()[1])
    raise RuntimeError(f"no summary in {out}")


def main(kinds: list[str]) -> None:
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is missing: apt-get install -y valgrind")
    from idv_mock import create_app

    service = benchstate.build_service()
    sid = benchstate.picks(service).submission_id
    path = f"/v3/submission?submission_id={sid}"
    body = asyncio.run(_answer(create_app(service), scope("GET", b"submission_id=" + sid.encode())))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        body_file = folder / "body.json"
        body_file.write_bytes(body)  # the raw callable serves the mock's own bytes
        found = {}
        for kind in kinds:
            few = count(kind, FEW, path, body_file, folder)
            many = count(kind, MANY, path, body_file, folder)
            found[kind] = (many - few) / (MANY - FEW)
            print(f"{kind:<16} {found[kind] / 1000:8.1f}k instructions per GET by id", flush=True)
    if "raw" in found:
        for kind, value in found.items():
            print(f"raw / {kind}: {found['raw'] / value:.3f}")


if __name__ == "__main__":
    main(sys.argv[1:] or ["raw", "mock"])
