"""The docs site builds with ``mkdocs build --strict``: a broken link, a page left out of
the nav, a missing anchor or an include that finds no file fails the build."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from idv_mock.cli import build_parser
from test_readme import NAV

ROOT = Path(__file__).resolve().parents[1]


def test_the_site_builds_strictly_with_every_page(tmp_path: Path) -> None:
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # the theme's end-of-life banner
    argv = [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)]
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "WARNING" not in done.stderr, done.stderr
    assert sorted(NAV) == sorted(p.name for p in (ROOT / "docs").glob("*.md"))
    for page in NAV:
        html = site / ("index.html" if page == "index.md" else f"{page[:-3]}/index.html")
        assert html.is_file(), page
        assert "--8<--" not in html.read_text(), page  # every include was resolved


def commands(
    parser: argparse.ArgumentParser, name: str = "idv-mock"
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                yield from commands(sub, f"{name} {sub_name}")


def test_the_cli_reference_names_every_flag_of_every_command() -> None:
    """Each command's section of docs/cli.md lists each of its flags (a new flag fails here
    until it is documented)."""
    page = (ROOT / "docs" / "cli.md").read_text()
    missing = []
    for name, parser in commands(build_parser()):
        flags = [max(a.option_strings, key=len) for a in parser._actions if a.option_strings]
        flags = [flag for flag in flags if flag != "--help"]
        if not flags:
            continue
        heading = f"\n## `{name}`\n"
        section = page.split(heading, 1)[1].split("\n## ", 1)[0] if heading in page else ""
        missing += [f"{name} {flag}" for flag in flags if f"`{flag}`" not in section]
    assert not missing, missing
