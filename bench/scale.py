"""Part 4: seeding N submissions, the memory they take, and read latency at that size.

Each size runs in a fresh child process (``python bench/scale.py N CALLS``) so its
resident memory holds that one service only. Memory per submission is the growth of
VmRSS from a service seeded with nothing (schemas and imports already loaded) to one
seeded with N. Reads are timed twice: as GET requests through the async in-process
client (the latency a test or integrator sees; the targets apply to it), and straight
through ``Service.read`` (the store alone, where memory locality shows: informational).

Then the seeded state is saved as ``--state-file`` saves it, and a second fresh child
(``python bench/scale.py load N PATH``) opens it as ``idv-mock serve --state-file`` does
(read, load, a new epoch saved at once): its time, and its memory measured the same way
(issue 37: the same bounds as seeding).
"""

from __future__ import annotations

import asyncio
import gc
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def run(size: int, calls: int, timeout: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        state = str(Path(folder) / "state.json")
        result = _child([str(size), str(calls), state], size, timeout)
        result.update(_child(["load", str(size), state], size, timeout))
    return result


def _child(args: list[str], size: int, timeout: float) -> dict[str, Any]:
    cmd = [sys.executable, str(HERE / "scale.py"), *args]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=HERE)
    if done.returncode != 0:
        raise RuntimeError(f"scale child ({size}) failed: {done.stderr[-800:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def rss_bytes() -> int:
    """Current resident memory (VmRSS), after a full collection."""
    gc.collect()
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return peak_rss_bytes()  # no /proc: the peak is the best there is


def children_cpu() -> float:
    """CPU seconds of this process's ended children (the seeding's worker)."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _median_us(samples: list[int]) -> float:
    return sorted(samples)[len(samples) // 2] / 1000


@dataclass(frozen=True, slots=True)
class Draw:
    """Random ids, e-mails and page positions: what tells an index from a scan.

    A scan finds the newest page fast too, so pages also start at random depths.
    """

    ids: list[str]
    emails: list[str]
    positions: list[tuple[str, str]]  # (created_at, submission_id) to page after


def draw(store: Any, calls: int) -> Draw:
    rng = random.Random(8)
    return Draw(
        ids=rng.choices(list(store.blobs), k=calls),
        emails=rng.choices(sorted(store.by_email), k=calls),
        positions=rng.choices(store.order[50:] or store.order, k=max(100, calls // 4)),
    )


def store_latencies(service: Any, d: Draw) -> dict[str, float]:
    """Median µs of ``Service.read``: the store alone, without the HTTP layer's constant cost."""
    from idv_mock.backend.store import Selection

    project = service.project("default")
    kinds = {
        "by_id": [Selection(submission_id=sid) for sid in d.ids],
        "by_email": [Selection(email=e) for e in d.emails],
        "page_first": [Selection(count=50)] * len(d.positions),
        "page": [Selection(after=key, count=50) for key in d.positions],
    }
    out = {}
    for kind, selections in kinds.items():
        samples = []
        for sel in selections:
            start = time.perf_counter_ns()
            items, _ = service.read(project, sel, reduced=False, request_type=None)
            samples.append(time.perf_counter_ns() - start)
            if not items:
                raise RuntimeError(f"{kind} read found nothing")
        out[f"store_{kind}_us"] = _median_us(samples)
    return out


def http_latencies(service: Any, d: Draw) -> dict[str, float]:
    """Median µs of the same reads as GET requests through the ``idv_async_client`` path."""
    kinds: dict[str, list[dict[str, str]]] = {
        "by_id": [{"submission_id": sid} for sid in d.ids],
        "by_email": [{"email": e} for e in d.emails],
        "page_first": [{"count": "50"}] * len(d.positions),
        "page": [
            {"count": "50", "nextpage_id": sid, "nextpage_date": created}
            for created, sid in d.positions
        ],
    }
    return asyncio.run(_http_kinds(service, kinds))


async def _http_kinds(service: Any, kinds: dict[str, list[dict[str, str]]]) -> dict[str, float]:
    from inprocess import async_client  # as the idv_async_client fixture builds it

    out = {}
    async with async_client(service) as client:
        for kind, queries in kinds.items():
            samples = []
            for params in queries:
                start = time.perf_counter_ns()
                response = await client.get("/submission", params=params)
                samples.append(time.perf_counter_ns() - start)
                if response.status_code != 200 or not response.json()["Items"]:
                    raise RuntimeError(f"{kind} {params} answered {response.status_code}")
            out[f"http_{kind}_us"] = _median_us(samples)
    return out


def child(size: int, calls: int, state: str) -> dict[str, Any]:
    from idv_mock import Service, ServiceConfig
    from idv_mock.tools import persistence

    empty = Service(ServiceConfig(seed_count=0))  # loads schemas, Faker, orjson, ...
    base = rss_bytes()
    start, cpu, worker = time.perf_counter(), time.process_time(), children_cpu()
    service = Service(ServiceConfig(seed_count=size))
    # from 20,000 on the service answers once every submission is indexed, the rest built
    # behind by forked workers (backend/seed_split.py): that time, then until all is built
    answering = time.perf_counter() - start
    unbuilt = service.project("default").store.unbuilt
    if unbuilt is not None:
        unbuilt.wait()
    seconds = time.perf_counter() - start
    cpu, worker = time.process_time() - cpu, children_cpu() - worker
    after = rss_bytes()
    del empty
    picked = draw(service.project("default").store, calls)
    found = {
        "size": size,
        "seed_s": seconds,
        "seed_answer_s": answering,
        # CPU: on a shared machine the wall time says little; from 20,000 on forked
        # workers build the submissions (backend/seed_split.py)
        "seed_cpu_s": cpu,
        "seed_worker_cpu_s": worker,
        "rss_base_bytes": base,
        "rss_bytes": after,
        "rss_peak_bytes": peak_rss_bytes(),
        "bytes_per_submission": (after - base) / size,
        **store_latencies(service, picked),
        **http_latencies(service, picked),
    }
    persistence.save(service, Path(state))  # what the load child opens
    found["state_file_bytes"] = Path(state).stat().st_size
    return found


def load_child(size: int, state: str) -> dict[str, Any]:
    """``serve --state-file`` of the seeded state: read, load, the new epoch saved at once."""
    from idv_mock import Service, ServiceConfig
    from idv_mock.tools.persistence import StateFile

    empty = Service(ServiceConfig(seed_count=0))
    base = rss_bytes()
    start = time.perf_counter()
    service = Service(ServiceConfig(seed_count=0))
    StateFile(service, Path(state)).open()
    seconds = time.perf_counter() - start
    after = rss_bytes()
    del empty
    if len(service.project("default").store) != size:
        raise RuntimeError("the state file did not load every submission")
    return {
        "load_s": seconds,
        "load_rss_bytes": after,
        "load_rss_peak_bytes": peak_rss_bytes(),
        "load_bytes_per_submission": (after - base) / size,
    }


if __name__ == "__main__":
    if sys.argv[1] == "load":
        print(json.dumps(load_child(int(sys.argv[2]), sys.argv[3])))
    else:
        print(json.dumps(child(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3])))
