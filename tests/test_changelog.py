"""CHANGELOG.md is the one place the old names live: each name removed from ``Service``
in 0.4.0 is listed there with its new home, the old name is gone for good, and the new
one exists (a reader following the changelog reaches a real method)."""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import idv_mock
from idv_mock import Service, ServiceConfig

ROOT = Path(__file__).resolve().parents[1]
CHANGELOG = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
ROW = re.compile(r"^\| `([^`]+)` \| `([^`]+)`", re.M)

# the names Service lost in 0.4.0 -> where they are now (read from the service)
REMOVED = {
    # hand-overs to a part
    "delivery_levers": "delivery.levers",
    "set_delivery_levers": "delivery.set_levers",
    "release_webhooks": "delivery.release",
    "deliveries_in": "delivery.in_state",
    "resend": "delivery.resend",
    "issue_liveform_secret": "liveform.issue_secret",
    "hosted_submission": "liveform.hosted_submission",
    "watchlist": "screening.watchlist",
    "add_watchlist_entry": "screening.add_watchlist_entry",
    "watchlist_submission": "screening.watchlist_submission",
    "worklists": "screening.worklists",
    "create_worklist": "screening.create_worklist",
    "set_worklist_active": "screening.set_worklist_active",
    "register_record": "screening.register_record",
    "project_clock": "clocks.handle",
    "clock_of": "clocks.describe",
    "advance_clock": "clocks.advance",
    "watch_clocks": "clocks.watch",
    "writes_refused": "save_health.refusal",
    "journal_reader": "calls.reader",
    # moved to the part that owns their state
    "add_fault": "calls.add_fault",
    "faults": "calls.faults",
    "remove_faults": "calls.remove_faults",
    "coverage_report": "coverage.report",
    "clear_coverage": "coverage.clear",
    # the deprecated aliases (backend/moved_names.py until 0.4.0)
    "journal": "calls.journal",
    "clear_journal": "calls.clear_journal",
    "deliveries": "delivery.recorded",
    "resend_delivery": "delivery.resend",
    "register_tokens": "tokens.register",
    "delete_tokens": "tokens.delete",
    "delete_oldest_tokens": "tokens.delete_oldest",
    "token": "tokens.get",
    "token_count": "tokens.count",
    "token_lives": "tokens.lives",
    "token_page": "tokens.page",
    "review": "edit",
    "client_review": "records.client_review",
    "image": "records.image",
    "put_images": "records.put_images",
    "migrate": "records.migrate",
    "screen": "screening.screen",
    "report_pdf": "screening.report_pdf",
    "monitor": "screening.monitor",
    "monitoring_record": "screening.monitoring_record",
    "monitoring_records_of": "screening.records_of",
    "own_watchlist": "screening.own_watchlist",
    "delete_watchlist_entry": "screening.delete_watchlist_entry",
    "delete_worklist": "screening.delete_worklist",
    "delete_records": "screening.delete_records",
    "liveform_open": "liveform.open",
    "liveform_step": "liveform.step",
    "liveform_session": "liveform.session",
}
# modules of idv_mock.backend renamed in 0.4.0 -> their new name (None: gone)
MODULES = {
    "time_service": "parts.clocks",
    "calls": "parts.calls",
    "delivery_service": "parts.delivery",
    "token_service": "parts.tokens",
    "record_service": "parts.records",
    "liveform_service": "parts.liveform",
    "screening_service": "parts.screening",
    "dashboard_reads": "parts.dashboard",
    "coverage": "coverage_counts",
    "tokens": "token_pool",
    "liveform": "liveform_links",
    "moved_names": None,
}
# top-level modules of idv_mock moved into their layer's folder in 0.4.0 -> the new path
LAYER_MOVES = {
    **{m: f"ground.{m}" for m in ("errors", "clock", "schemas", "operations", "crypto")},
    **{m: f"ground.{m}" for m in ("jsondepth", "addresses", "gc_pause", "progress", "compat")},
    "webhooks": "delivery.webhooks",
    "receiver": "delivery.receiver",
    "openapi": "api.openapi",
    **{m: f"tools.{m}" for m in ("persistence", "verify", "formwalk", "trigger")},
}
PARTS = ("clocks", "calls", "delivery", "tokens", "records", "liveform", "screening")
PARTS += ("dashboard", "coverage")


@pytest.fixture(scope="module")
def service() -> Iterator[Service]:
    made = Service(ServiceConfig(seed_count=0))
    yield made
    made.close()


def test_the_changelog_is_of_the_installed_version() -> None:
    assert f"## [{idv_mock.__version__}]" in CHANGELOG


def test_the_changelog_lists_every_removed_name_with_its_new_one() -> None:
    listed = dict(ROW.findall(CHANGELOG))
    expected = {f"service.{old}": f"service.{new}" for old, new in REMOVED.items()}
    assert {k: listed.get(k) for k in expected} == expected


@pytest.mark.parametrize("old", sorted(REMOVED))
def test_a_removed_name_is_gone_and_its_new_home_exists(service: Service, old: str) -> None:
    assert not hasattr(service, old)
    *path, name = REMOVED[old].split(".")
    owner: object = service
    for step in path:
        owner = getattr(owner, step)
    assert hasattr(owner, name), REMOVED[old]


def test_the_service_hands_nothing_over() -> None:
    """No public method of ``Service`` is one line calling a part: a caller names the part."""
    for name, member in vars(Service).items():
        if name.startswith("_") or not callable(member):
            continue
        body = inspect.getsource(member).split(":\n", 1)[1].strip().splitlines()
        code = [line for line in body if not line.strip().startswith(('"""', "#"))]
        one = code[0].strip() if len(code) == 1 else ""
        part = re.match(r"return self\.(\w+)\.", one)
        assert not (part and part.group(1) in PARTS), f"Service.{name} hands over: {one}"


@pytest.mark.parametrize("old", sorted(MODULES))
def test_a_renamed_module_is_gone_and_listed(old: str) -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(f"idv_mock.backend.{old}")
    new = MODULES[old]
    if new is not None:
        importlib.import_module(f"idv_mock.backend.{new}")
    assert re.search(rf"^\| `{old}[`.]", CHANGELOG, re.M), old


@pytest.mark.parametrize("part", PARTS)
def test_each_part_has_one_name_at_every_level(service: Service, part: str) -> None:
    """The attribute, the module and the class of a part agree (``service.clocks`` is
    ``parts.clocks.Clocks``)."""
    obj = getattr(service, part)
    assert type(obj).__module__ == f"idv_mock.backend.parts.{part}"
    assert type(obj).__name__ == part.capitalize()


@pytest.mark.parametrize("old", sorted(LAYER_MOVES))
def test_a_module_moved_into_its_layer_is_gone_and_listed(old: str) -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(f"idv_mock.{old}")
    new = f"idv_mock.{LAYER_MOVES[old]}"
    importlib.import_module(new)
    assert f"| `idv_mock.{old}` | `{new}` |" in CHANGELOG


def test_the_delivery_module_is_now_a_package_of_the_webhook_layer() -> None:
    assert "| `idv_mock.delivery` (the module) | `idv_mock.delivery.levers` |" in CHANGELOG
    importlib.import_module("idv_mock.delivery.levers")
