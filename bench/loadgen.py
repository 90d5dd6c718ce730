"""The load generator: wrk on core 1, its Lua scripts, and the parsing of its report.

wrk is Debian's ``wrk``; when it is missing the harness installs it only when it runs as
root (with a printed note), and otherwise says how to and skips the throughput part.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from benchstate import PROJECTION_FIELD, PROJECTION_PROJECTS, Call, projection_key

LOAD_CORE = "1"
CONNECTIONS = 32
TIMEOUT = "10s"  # wrk's default 2 s would drop the slowest answers from the latencies
INSTALL_HINT = "install it with `sudo apt-get install -y wrk` (Debian/Ubuntu) or `brew install wrk`"


@dataclass(frozen=True, slots=True)
class WrkResult:
    rps: float
    p50_ms: float
    p99_ms: float
    requests: int
    non2xx: int  # answers outside 2xx/3xx
    socket_errors: int  # connect, read, write errors and timeouts (over TIMEOUT)
    threads: int

    @property
    def errors(self) -> int:
        return self.non2xx + self.socket_errors

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def ensure_wrk() -> tuple[str | None, str]:
    """wrk's path, or None and why: installs it only as root, where apt-get works as is."""
    found = shutil.which("wrk")
    if found:
        return found, ""
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        return None, f"wrk is missing: {INSTALL_HINT}; the throughput part is skipped"
    print("NOTE: wrk is missing and this runs as root: `apt-get install -y wrk` ...", flush=True)
    for update_first in (False, True):
        if update_first:
            _quiet(["apt-get", "update", "-q"])
        if _quiet(["apt-get", "install", "-y", "-q", "wrk"]) and shutil.which("wrk"):
            return shutil.which("wrk"), ""
    return None, f"apt-get could not install wrk: {INSTALL_HINT}; the throughput part is skipped"


def _quiet(cmd: list[str]) -> bool:
    try:
        done = subprocess.run(cmd, capture_output=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def wrk_version(wrk: str) -> str:
    done = subprocess.run([wrk, "-v"], capture_output=True, text=True, timeout=10)
    first = (done.stdout or done.stderr).strip().splitlines()
    return first[0] if first else "unknown"


# --- scripts ---
PATCH_LUA = """
wrk.method = "PATCH"
wrk.body = {body}
wrk.headers["Content-Type"] = "application/json"
"""

# One connection per wrk thread, each with its own project, so every connection strictly
# alternates POST (unique name) and DELETE of what it created: never more than one policy
# per project, so the limit of 10 never answers instead of the real work.
PROJECTION_LUA = """
local keys = {{{keys}}}
local next_index = 1
function setup(thread)
  thread:set("key", keys[next_index])
  next_index = next_index + 1
end
local counter = 0
local pending = nil
function request()
  local headers = {{["x-api-key"] = key}}
  if pending then
    local id = pending
    pending = nil
    return wrk.format("DELETE", "/v3/projection/" .. id, headers)
  end
  counter = counter + 1
  headers["Content-Type"] = "application/json"
  local body = '{{"name":"{tag}_' .. counter .. '","mode":"exclude","fields":["{field}"]}}'
  return wrk.format("POST", "/v3/projection", headers, body)
end
function response(status, headers, body)
  if status == 200 then
    pending = string.match(body, '"projection_id":"([^"]+)"')
  end
end
"""


def lua_string(text: str) -> str:
    return "[==[" + text + "]==]"


def script_for(call: Call, folder: Path, tag: str) -> tuple[Path | None, int]:
    """The Lua script (if any) for a call, and the wrk thread count it needs.

    ``tag`` starts every projection name, and differs from run to run: a run that stops
    between a POST and its DELETE leaves a policy behind whose name must not come back.
    """
    if call.lua == "projection":
        keys = ", ".join(f'"{projection_key(i)}"' for i in range(PROJECTION_PROJECTS))
        path = folder / f"projection_{tag}.lua"
        path.write_text(PROJECTION_LUA.format(keys=keys, field=PROJECTION_FIELD, tag=tag))
        return path, CONNECTIONS
    if call.body is not None:
        path = folder / f"{call.name}.lua"
        path.write_text(PATCH_LUA.format(body=lua_string(call.body.decode())))
        return path, 1
    return None, 1


# --- running and parsing ---
def run_wrk(
    wrk: str,
    url: str,
    seconds: int,
    *,
    api_key: str | None = None,
    script: Path | None = None,
    threads: int = 1,
    pin: bool = True,
) -> WrkResult:
    """One wrk run with the fixed connection count; ``pin`` puts it on core 1."""
    cmd = [wrk, f"-t{threads}", f"-c{CONNECTIONS}", f"-d{seconds}s", f"--timeout={TIMEOUT}"]
    cmd.append("--latency")
    if api_key is not None:
        cmd += ["-H", f"x-api-key: {api_key}"]
    if script is not None:
        cmd += ["-s", str(script)]
    cmd.append(url)
    if pin:
        cmd = ["taskset", "-c", LOAD_CORE, *cmd]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 60)
    if done.returncode != 0:
        raise RuntimeError(f"wrk failed ({done.returncode}): {done.stderr.strip()[-400:]}")
    return parse(done.stdout, threads)


_UNITS_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0}


def _duration_ms(text: str) -> float:
    match = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text)
    if match is None:
        raise ValueError(f"not a wrk duration: {text}")
    return float(match[1]) * _UNITS_MS[match[2]]


def parse(out: str, threads: int) -> WrkResult:
    """Requests/s, the 50th and 99th percentile, and every failed answer of wrk's report."""
    rps = re.search(r"Requests/sec:\s+([\d.]+)", out)
    p50 = re.search(r"^\s+50%\s+(\S+)", out, re.M)
    p99 = re.search(r"^\s+99%\s+(\S+)", out, re.M)
    total = re.search(r"(\d+) requests in", out)
    if not (rps and p50 and p99 and total):
        raise ValueError(f"unexpected wrk output:\n{out}")
    non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    sockets = re.search(
        r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out
    )
    return WrkResult(
        rps=float(rps[1]),
        p50_ms=_duration_ms(p50[1]),
        p99_ms=_duration_ms(p99[1]),
        requests=int(total[1]),
        non2xx=int(non2xx[1]) if non2xx else 0,
        socket_errors=sum(int(n) for n in sockets.groups()) if sockets else 0,
        threads=threads,
    )
