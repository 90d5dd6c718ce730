"""Part 8: simulated time (issue 25): advancing a busy frozen project by a year.

A frozen project with 1,000 approved submissions registered in a worklist (daily search
cycle, the default) is advanced by 365 days in one call: 365 cycles, each re-screening the
records against the watchlist as it then is. Two figures: the watchlist unchanged all year
(the target: under 2 s), and a new entry added every 30 days (12 cycles then re-screen
every record). The timed part is the advance alone, as a test pays it.

``python bench/clock.py`` runs it alone.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from report import Row, verdict

PART = "8 simulated time"
RECORDS = 1000
DAYS = 365
TARGET_S = 2.0


def busy_project(cycle_seconds: int | None = None) -> Any:
    """A service whose project ``busy`` has RECORDS monitored records on a frozen clock
    (its search cycle every ``cycle_seconds``, else daily); ``other``, a second project."""
    from idv_mock import Service, ServiceConfig

    service = Service(ServiceConfig(seed_count=0))
    spec = {"project_id": "busy", "api_key": "busy-key", "admins": ["a@example.com"]}
    options: dict[str, Any] = {"clock_mode": "frozen"}
    if cycle_seconds is not None:
        options["monitoring_cycle_seconds"] = cycle_seconds
    service.create_project({**spec, "options": options})
    service.create_project({"project_id": "other", "api_key": "other-key"})
    service.screening.create_worklist("busy", {"id": "wl", "name": "all"})
    sids = []
    for i in range(RECORDS):
        person = {"full_name": f"Person Number{i}", "date_of_birth": "1980-01-01"}
        sub = service.create_submission("busy", {"kyc": {"result": "approved"}, "data": person})
        sids.append(sub["submission_id"])
    project = service.project("busy")
    service.screening.monitor(project, "wl", sids, "a@example.com")
    return service


def advance(service: Any, days: float) -> tuple[float, int]:
    started = time.perf_counter()
    fired = service.clocks.advance("busy", {"seconds": days * 86400})["fired"]
    return time.perf_counter() - started, len(fired)


def year_of_seconds(threshold: int | None = None) -> dict[str, Any]:
    """Issue 39: a year with ``monitoring_cycle_seconds: 1`` (31,536,000 cycles) in one
    call, and the longest another project's read waited meanwhile; with ``threshold``, set
    just before, the first cycle re-screens every record against the whole watchlist."""
    import threading

    service = busy_project(cycle_seconds=1)
    if threshold is not None:
        service.update_project("busy", {"options": {"aml_threshold": threshold}})
    waits: list[float] = []
    done = threading.Event()

    def reader() -> None:
        while not done.is_set():
            started = time.perf_counter()
            service.clocks.describe("other")
            waits.append(time.perf_counter() - started)
            time.sleep(0.005)

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        started = time.perf_counter()
        answer = service.clocks.advance("busy", {"seconds": DAYS * 86400})
        seconds = time.perf_counter() - started
    finally:
        done.set()
        thread.join()
        service.close()
    return {
        "seconds": round(seconds, 3),
        "cycles": answer["fired_count"],
        "listed": len(answer["fired"]),
        "other_max_wait_ms": round(1000 * max(waits, default=0.0), 1),
    }


def measure() -> dict[str, Any]:
    """One busy project, three years: unchanged; a new entry every 30 days (each such cycle
    screens every record against the new entry); a threshold change (a full re-screen)."""
    service = busy_project()
    try:
        quiet, quiet_cycles = advance(service, DAYS)
        busy, busy_cycles = 0.0, 0
        for month in range(12):
            entry = {"entry_id": f"E-{month}", "list": "pep", "name": f"Person Number{month}"}
            service.screening.add_watchlist_entry("busy", {**entry, "nationality": "KOR"})
            seconds, cycles = advance(service, 30 if month < 11 else DAYS - 330)
            busy, busy_cycles = busy + seconds, busy_cycles + cycles
        service.update_project("busy", {"options": {"aml_threshold": 70}})
        full, _ = advance(service, 1)
    finally:
        service.close()
    return {
        "seconds_cycle_year": year_of_seconds(),
        "seconds_cycle_year_rescreen": year_of_seconds(threshold=70),
        "unchanged": {"seconds": round(quiet, 3), "cycles": quiet_cycles},
        "monthly_entries": {"seconds": round(busy, 3), "cycles": busy_cycles},
        "full_rescreen_seconds": round(full, 3),
    }


def rows(data: dict[str, Any]) -> list[Row]:
    quiet, busy = data["unchanged"], data["monthly_entries"]
    year, full = data["seconds_cycle_year"], data["seconds_cycle_year_rescreen"]
    return [
        Row(
            PART,
            f"advance {DAYS} days, monitoring_cycle_seconds 1, {RECORDS:,} records",
            f"{year['seconds']:.2f} s ({year['cycles']:,} cycles, {year['listed']} listed)",
            f"< {TARGET_S:.0f} s",
            verdict(year["seconds"] < TARGET_S),
        ),
        Row(
            PART,
            "meanwhile, another project's longest read",
            f"{year['other_max_wait_ms']:.0f} ms",
            "< 100 ms",
            verdict(year["other_max_wait_ms"] < 100),
        ),
        Row(
            PART,
            "the same year after a threshold change (its first cycle re-screens every record)",
            f"{full['seconds']:.2f} s ({full['cycles']:,} cycles)",
            f"< {TARGET_S:.0f} s",
            verdict(full["seconds"] < TARGET_S),
        ),
        Row(
            PART,
            "meanwhile, another project's longest read",
            f"{full['other_max_wait_ms']:.0f} ms",
            "< 100 ms",
            verdict(full["other_max_wait_ms"] < 100),
        ),
        Row(
            PART,
            f"advance {DAYS} days, {RECORDS:,} monitored records, watchlist unchanged",
            f"{quiet['seconds']:.2f} s ({quiet['cycles']} cycles)",
            f"< {TARGET_S:.0f} s",
            verdict(quiet["seconds"] < TARGET_S),
        ),
        Row(
            PART,
            "the same with a new watchlist entry every 30 days",
            f"{busy['seconds']:.2f} s ({busy['cycles']} cycles)",
            "none (reported)",
            "-",
        ),
        Row(
            PART,
            f"one cycle re-screening all {RECORDS:,} records (threshold changed)",
            f"{data['full_rescreen_seconds']:.2f} s",
            "none (reported)",
            "-",
        ),
    ]


def part(ctx: Any, mode: Any) -> tuple[list[Row], dict[str, Any]]:
    print("8. simulated time (a year of a busy frozen project)", flush=True)
    data = measure()
    return rows(data), data


if __name__ == "__main__":
    from report import render

    found = measure()
    print(render(rows(found)))
    sys.exit(0)
