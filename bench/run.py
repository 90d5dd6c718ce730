"""The benchmark of issue 8: one command, one table of figures beside their targets.

    .venv/bin/python bench/run.py            # quick: 1 round, 3 s runs, up to 10k submissions
    .venv/bin/python bench/run.py --full     # 3 rounds (medians), 10 s runs, adds 100k
    .venv/bin/python bench/run.py --profile get_page   # cProfile of one in-process call

Parts: 1 throughput (wrk on loopback, servers on core 0, wrk on core 1), 2 in-process
cost per call, 3 lifecycle (server start, resets), 4 scale (seeding, memory, reads). The
table goes to stdout and everything, with the machine, to bench/results.json. Nothing
here asserts: the figures are for people (and the README), never a test's pass or fail.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import benchstate  # noqa: E402
import call_costs  # noqa: E402
import clock  # noqa: E402
import inprocess  # noqa: E402
import interception  # noqa: E402
import lifecycle  # noqa: E402
import plugin_cost  # noqa: E402
import raw_asgi  # noqa: E402
import report  # noqa: E402
import restart  # noqa: E402
import scale  # noqa: E402
import startup  # noqa: E402
import throughput  # noqa: E402

PARTS = (
    *("throughput", "inprocess", "lifecycle", "scale", "interception", "restart", "startup"),
    "clock",
    "plugin",
    "callcosts",
)


@dataclass(frozen=True, slots=True)
class Mode:
    name: str
    plan: throughput.Plan
    calls: int  # in-process calls per endpoint
    resets: int
    sizes: tuple[int, ...]


QUICK = Mode(
    "quick",
    throughput.Plan(seconds=3, warmup=2, stub_warmup=9, rounds=1),
    2000,
    30,
    (1000, 5000, 10_000),
)
FULL = Mode(
    "full",
    throughput.Plan(seconds=10, warmup=5, stub_warmup=15, rounds=3),
    5000,
    100,
    (1000, 10_000, 100_000),
)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--quick", action="store_true", help="one round, short runs (default)")
    group.add_argument("--full", action="store_true", help="3 rounds (medians) and the 100k step")
    parser.add_argument(
        "--parts", default=",".join(PARTS), help=f"comma-separated subset of {PARTS}"
    )
    parser.add_argument("--seconds", type=int, default=None, help="override each wrk run's length")
    parser.add_argument(
        "--profile",
        metavar="CALL",
        default=None,
        help="cProfile one in-process call and exit: get_by_id, get_by_userid, get_page,"
        " patch, get_secure, projection",
    )
    parser.add_argument(
        "--output", type=Path, default=HERE / "results.json", help="(bench/results.json)"
    )
    return parser.parse_args(argv)


def select_mode(args: argparse.Namespace) -> Mode:
    mode = FULL if args.full else QUICK
    if args.seconds:
        plan = throughput.Plan(
            args.seconds, mode.plan.warmup, mode.plan.stub_warmup, mode.plan.rounds
        )
        mode = Mode(mode.name, plan, mode.calls, mode.resets, mode.sizes)
    return mode


def by_id_body(service: Any, call: benchstate.Call) -> bytes:
    """The bytes the mock answers to GET by id: what the baselines and stubs serve too."""
    with inprocess.sync_client(service) as client:
        response = client.get(call.path)
        response.raise_for_status()
        return bytes(response.content)


def print_header(mode: Mode, machine: dict[str, Any]) -> None:
    load = machine["loadavg_start"][0]
    print(
        f"idv-mock benchmark ({mode.name}): {machine['nproc']} cores, {machine['cpu_model']},"
        f" Python {machine['python']}"
    )
    print(f"load average at start: {load:.2f}", end="")
    if load > 0.5:
        print("  (other processes are busy: figures may be low and noisy)", end="")
    print(flush=True)


@dataclass(frozen=True, slots=True)
class Context:
    """What every part measures against: the service, its six calls, the by-id bytes."""

    service: Any
    calls: list[benchstate.Call]
    body: bytes
    tmp: Path

    @property
    def labels(self) -> dict[str, str]:
        return {c.name: c.label for c in self.calls}


PartResult = tuple[list[report.Row], Any]


def part_throughput(ctx: Context, mode: Mode) -> PartResult:
    print("1. throughput (wrk on loopback)", flush=True)
    outcome = throughput.run(mode.plan, ctx.calls, ctx.body, ctx.tmp)
    for note in outcome.notes:
        print(f"  note: {note}")
    summary = throughput.summary(outcome)
    data = {
        "summary": summary,
        "skipped": outcome.skipped,
        "notes": outcome.notes,
        "versions": outcome.versions,
    }
    rows = report.throughput_rows(summary, ctx.labels, outcome.skipped)
    return rows + raw_asgi.rows(summary), data


def part_inprocess(ctx: Context, mode: Mode) -> PartResult:
    print("2. in-process cost per call", flush=True)
    data = inprocess.run(ctx.service, ctx.calls, mode.calls, ctx.body)
    return report.inprocess_rows(data, ctx.labels), data


def part_lifecycle(ctx: Context, mode: Mode) -> PartResult:
    print("3. lifecycle (fresh process)", flush=True)
    data = lifecycle.run(mode.resets)
    return report.lifecycle_rows(data), data


def part_scale(ctx: Context, mode: Mode) -> PartResult:
    data = run_scale(mode)
    return report.scale_rows(data), data


RUNNERS = {
    "throughput": part_throughput,
    "inprocess": part_inprocess,
    "lifecycle": part_lifecycle,
    "scale": part_scale,
    "interception": interception.part,
    "restart": restart.part,
    "startup": startup.part,
    "clock": clock.part,
    "plugin": plugin_cost.part,
    "callcosts": call_costs.part,
}


def run_parts(mode: Mode, parts: set[str], tmp: Path) -> tuple[list[report.Row], dict[str, Any]]:
    """The chosen parts in order; each part's seconds are kept to check the time budget."""
    service = benchstate.build_service()
    calls = benchstate.calls(benchstate.picks(service))
    ctx = Context(service, calls, by_id_body(service, calls[0]), tmp)
    rows: list[report.Row] = []
    data: dict[str, Any] = {"by_id_body_bytes": len(ctx.body), "part_seconds": {}}
    for part in PARTS:
        if part not in parts:
            continue
        started = time.monotonic()
        part_rows, data[part] = RUNNERS[part](ctx, mode)
        rows += part_rows
        data["part_seconds"][part] = round(time.monotonic() - started, 1)
    return rows, data


def run_scale(mode: Mode) -> list[dict[str, Any]]:
    print("4. scale (one fresh process per size)", flush=True)
    results = []
    for size in mode.sizes:
        result = scale.run(size, mode.calls, timeout=1800)
        print(
            f"    {size:>7,}: seeded in {result['seed_s']:.1f} s"
            f" (answering after {result.get('seed_answer_s', result['seed_s']):.1f} s;"
            f" CPU {result['seed_cpu_s']:.1f} s + workers {result['seed_worker_cpu_s']:.1f} s),"
            f" {result['rss_bytes'] / 1e6:,.0f} MB RSS,"
            f" {result['bytes_per_submission'] / 1e3:.1f} KB/submission;"
            f" state file loaded in {result['load_s']:.1f} s,"
            f" {result['load_rss_bytes'] / 1e6:,.0f} MB RSS",
            flush=True,
        )
        results.append(result)
    return results


def write_results(
    path: Path,
    mode: Mode,
    rows: list[report.Row],
    data: dict[str, Any],
    machine: dict[str, Any],
    wall: float,
) -> None:
    tools = data.get("throughput", {}).get("versions", {})
    machine = {**machine, "tools": tools, "loadavg_end": list(os.getloadavg())}
    doc = {
        "generated": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "mode": mode.name,
        "plan": {
            "wrk_seconds": mode.plan.seconds,
            "warmup_seconds": mode.plan.warmup,
            "stub_warmup_seconds": mode.plan.stub_warmup,
            "rounds": mode.plan.rounds,
            "connections": 32,
        },
        "wall_seconds": round(wall, 1),
        "machine": machine,
        "table": report.rows_json(rows),
        **data,
    }
    path.write_text(json.dumps(doc, indent=2) + "\n")


def profile(name: str, calls_wanted: int) -> int:
    service = benchstate.build_service()
    calls = {c.name: c for c in benchstate.calls(benchstate.picks(service))}
    if name not in calls:
        print(f"unknown call {name!r}; one of {', '.join(calls)}", file=sys.stderr)
        return 2
    print(inprocess.profile(service, calls[name], calls_wanted))
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    mode = select_mode(args)
    if args.profile:
        return profile(args.profile, 500 if args.profile == "get_page" else 2000)
    parts = {p.strip() for p in args.parts.split(",") if p.strip()}
    unknown = parts - set(PARTS)
    if unknown:
        print(f"unknown part(s) {', '.join(sorted(unknown))}; choose from {PARTS}", file=sys.stderr)
        return 2
    started = time.monotonic()
    machine = report.machine_info()
    print_header(mode, machine)
    tmp = Path(tempfile.mkdtemp(prefix="idv-mock-bench-"))
    try:
        rows, data = run_parts(mode, parts, tmp)
    except BaseException:
        print(f"benchmark failed; server logs kept in {tmp}", file=sys.stderr)
        raise
    shutil.rmtree(tmp, ignore_errors=True)
    wall = time.monotonic() - started
    print()
    print(report.render(rows))
    missed = report.missed(rows)
    print(f"\n{len(missed)} target(s) missed; wall time {wall:.0f} s ({mode.name})")
    write_results(args.output, mode, rows, data, machine, wall)
    print(f"results written to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
