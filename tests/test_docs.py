"""The docs site builds with ``mkdocs build --strict``: a broken link, a page left out of
the nav, a missing anchor or an include that finds no file fails the build."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def test_the_site_builds_strictly_with_every_page(tmp_path: Path) -> None:
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # the theme's end-of-life banner
    argv = [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)]
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "WARNING" not in done.stderr, done.stderr
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]
    pages = [page for entry in nav for page in entry.values()]
    assert sorted(pages) == sorted(p.name for p in (ROOT / "docs").glob("*.md"))
    for page in pages:
        html = site / ("index.html" if page == "index.md" else f"{page[:-3]}/index.html")
        assert html.is_file(), page
        assert "--8<--" not in html.read_text(), page  # every include was resolved
