"""``idv-mock coverage``: the contract coverage of a live mock (``--url``), for a suite in
any language, or of a pytest suite run on its own mock (``-- pytest ARGS``, the same run
as ``pytest --idv-coverage``). ``--fail-under PCT`` makes it a CI gate, as coverage.py's."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx

from idv_mock.coverage import report

ADMIN_TOKEN_HEADER = "x-idv-mock-admin-token"


class CoverageError(Exception):
    """A report that could not be had (the server unreachable, an unknown project)."""


def fetch(url: str, project: str | None = None, admin_token: str | None = None) -> Any:
    """``GET /__admin/coverage`` of the mock at ``url`` (its root; a trailing ``/v3`` is
    taken off)."""
    root = url.rstrip("/").removesuffix("/v3")
    headers = {ADMIN_TOKEN_HEADER: admin_token} if admin_token else {}
    params = {"project": project} if project else {}
    try:
        r = httpx.get(f"{root}/__admin/coverage", params=params, headers=headers, timeout=30)
    except httpx.HTTPError as exc:
        raise CoverageError(f"{root}: {exc}") from None
    if r.status_code != 200:
        raise CoverageError(f"{r.request.url} answered {r.status_code}: {r.text[:300]}")
    return r.json()


def run_suite(pytest_args: Sequence[str], out_dir: str) -> tuple[int, Any]:
    """The suite under ``pytest --idv-coverage=DIR`` (its output shown as it runs), then
    the report it wrote (None if it wrote none)."""
    command = [sys.executable, "-m", "pytest", *pytest_args, f"--idv-coverage={out_dir}"]
    code = subprocess.run(command, check=False).returncode
    found = Path(out_dir) / report.JSON_NAME
    return code, json.loads(found.read_text(encoding="utf-8")) if found.is_file() else None


def main(
    url: str | None,
    project: str | None,
    json_out: str | None,
    html_out: str | None,
    fail_under: float | None,
    admin_token: str | None,
    out_dir: str,
    pytest_args: Sequence[str],
) -> int:
    """0, 1 below ``fail_under`` (or the suite failed), 2 on bad use or no report."""
    rest = list(pytest_args)
    rest = rest[1:] if rest[:1] == ["--"] else rest
    rest = rest[1:] if rest[:1] == ["pytest"] else rest
    if bool(url) == bool(rest):
        print("idv-mock coverage: give --url URL or -- pytest ARGS (one of them)", file=sys.stderr)
        return 2
    suite_code = 0
    if url:
        try:
            doc = fetch(url, project, admin_token)
        except CoverageError as exc:
            print(f"idv-mock coverage: {exc}", file=sys.stderr)
            return 2
        sys.stdout.write(report.text(doc))
    else:
        suite_code, doc = run_suite(rest, out_dir)
        if doc is None:
            print(f"idv-mock coverage: the suite wrote no report (pytest exit code {suite_code})")
            return 2
    if json_out:
        Path(json_out).write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    if html_out:
        Path(html_out).write_text(report.html(doc), encoding="utf-8")
    if fail_under is not None and report.share(doc) < fail_under:
        print(f"idv-mock coverage: {report.share(doc):.1f}% is below --fail-under {fail_under:g}%")
        return 1
    return 1 if suite_code not in (0, 5) else 0
