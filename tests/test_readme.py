"""The snippets of the README and the docs pages, run as a reader would run them.

The snippets are read from ``README.md``, the docs site's pages (``docs/*.md``, in the order
of ``mkdocs.yml``'s ``nav``) and ``scenarios/README.md`` here, so the files cannot drift from
what works. Shell (```sh / ```bash) and plain Python blocks run in the
files' order against one ``idv-mock serve`` on a free port (``8080`` in a snippet becomes
that port), from a folder that looks like the clone's root (its entries linked, so
``.venv/bin/idv-mock`` and ``scenarios/...`` resolve; what a snippet writes stays there).
Python blocks that define ``test_*`` functions are pytest files and run under pytest.

Markers, an HTML comment on the line before the fence:
- ``<!-- not-run: why -->``: not run (it starts a server of its own or waits for ever);
- ``<!-- errors-expected: why -->``: curl may answer 4xx on purpose. Anywhere else every
  curl call runs with ``--fail-with-body``, so a 4xx or 5xx answer fails the snippet.
- ``<!-- run-by: tests/test_x.py -->``: not run here; that test file runs it as written (the
  install lines, into a throwaway environment).
A ```py block titled with a file of ``tests/examples/`` shows that test file, verbatim
(tests/test_links.py checks the copy); the suite runs it as a test of its own.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from conftest import ServeProcess

ROOT = Path(__file__).resolve().parents[1]
SITE = yaml.safe_load((ROOT / "mkdocs.yml").read_text())


def nav_pages(nav: list[object]) -> list[str]:
    """The docs pages in the site's order: later snippets may use what earlier ones made."""
    pages: list[str] = []
    for entry in nav:
        for value in entry.values() if isinstance(entry, dict) else [entry]:
            pages += nav_pages(value) if isinstance(value, list) else [str(value)]
    return pages


NAV = nav_pages(SITE["nav"])
FILES = (
    ROOT / "README.md",
    *(ROOT / "docs" / page for page in NAV),
    ROOT / "scenarios" / "README.md",
)
RUN_LANGS = {"sh": "bash", "bash": "bash", "python": "python"}
FENCE = re.compile(r"^```(\w*)(?:\s+[^`]*)?$")  # a language, then maybe title="..."
MARKER = re.compile(r"^<!--\s*(not-run|errors-expected|run-by):\s*(.+?)\s*-->$")
MAX_NOT_RUN = 8  # a server of its own, a wait for ever, a browser (Playwright), a resilience run


@dataclass(frozen=True)
class Snippet:
    file: Path
    line: int  # of the opening fence
    lang: str
    code: str
    marker: str | None
    because: str | None = None  # what the marker says after its colon

    @property
    def where(self) -> str:
        return f"{self.file.relative_to(ROOT)}:{self.line}"

    @property
    def is_pytest(self) -> bool:
        return (
            self.lang == "python" and re.search(r"^(async )?def test_", self.code, re.M) is not None
        )


def snippets(path: Path) -> list[Snippet]:
    found: list[Snippet] = []
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines):
        opened = FENCE.match(lines[i])
        if opened is None:
            i += 1
            continue
        start, lang = i, opened.group(1)
        i += 1
        while not lines[i].startswith("```"):
            i += 1
        before = lines[start - 1].strip() if start else ""
        marker = MARKER.match(before)
        code = "\n".join(lines[start + 1 : i]) + "\n"
        kind, because = marker.groups() if marker else (None, None)
        found.append(Snippet(path, start + 1, lang, code, kind, because))
        i += 1
    return found


ALL = [s for path in FILES for s in snippets(path)]
RUNNABLE = [s for s in ALL if s.lang in RUN_LANGS and s.marker not in ("not-run", "run-by")]
IN_ORDER = [s for s in RUNNABLE if not s.is_pytest]
PYTESTS = [s for s in RUNNABLE if s.is_pytest]


@pytest.fixture(scope="module")
def server() -> Iterator[ServeProcess]:
    live = ServeProcess()
    live.cmd = [str(Path(sys.executable).with_name("idv-mock")), "serve", "--port", str(live.port)]
    with live:
        yield live


def clone_root(tmp: Path) -> Path:
    """A folder whose entries are the clone's (linked): snippets' own files land in it."""
    tmp.mkdir(parents=True, exist_ok=True)
    for entry in ROOT.iterdir():
        if entry.name not in {".git", ".venv", "README.md"}:
            (tmp / entry.name).symlink_to(entry)
    (tmp / ".venv").symlink_to(sys.prefix)  # the environment running the tests, as .venv
    return tmp


def run(snippet: Snippet, folder: Path, port: int) -> subprocess.CompletedProcess[str]:
    code = snippet.code.replace("8080", str(port))
    if snippet.is_pytest:
        test_file = folder / f"test_readme_line_{snippet.line}.py"
        test_file.write_text(code)
        argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", test_file.name]
    elif RUN_LANGS[snippet.lang] == "python":
        script = folder / f"readme_line_{snippet.line}.py"
        script.write_text(code)
        argv = [sys.executable, script.name]
    else:
        preamble = "set -euo pipefail\n"
        if snippet.marker != "errors-expected":
            preamble += 'curl() { command curl --fail-with-body "$@"; }\n'
        argv = ["bash", "-c", preamble + code]
    return subprocess.run(argv, cwd=folder, capture_output=True, text=True, timeout=300)


def test_the_readmes_have_snippets_and_few_left_out() -> None:
    assert len(IN_ORDER) >= 20 and len(PYTESTS) >= 6
    left_out = [s.where for s in ALL if s.marker == "not-run"]
    assert len(left_out) <= MAX_NOT_RUN, left_out
    for s in ALL:  # a marker on anything but a snippet that would run is a mistake
        if s.marker is not None:
            assert s.lang in RUN_LANGS, s.where
        if s.marker == "run-by":  # the test file that runs it names it
            runner = ROOT / str(s.because)
            assert runner.is_file() and "run-by" in runner.read_text(), s.where


def test_shell_and_python_snippets_run_in_order(server: ServeProcess, tmp_path: Path) -> None:
    """In the files' order: a later snippet may use what an earlier one made, as a reader's."""
    missing = [tool for tool in ("bash", "curl", "python3", "openssl") if not shutil.which(tool)]
    if missing:
        pytest.skip(f"the README's shell snippets need {', '.join(missing)}")
    folder = clone_root(tmp_path / "clone")
    failures = []
    for snippet in IN_ORDER:
        done = run(snippet, folder, server.port)
        if done.returncode != 0:
            failures.append(
                f"{snippet.where} ({snippet.lang}) exit {done.returncode}\n{snippet.code}"
                f"--- stdout\n{done.stdout[-2000:]}\n--- stderr\n{done.stderr[-2000:]}"
            )
    assert not failures, "\n\n".join(failures)


@pytest.mark.parametrize("snippet", PYTESTS, ids=[s.where for s in PYTESTS])
def test_pytest_snippets_pass(snippet: Snippet, tmp_path: Path) -> None:
    done = run(snippet, clone_root(tmp_path / "clone"), 8080)  # they start their own servers
    assert done.returncode == 0, f"{snippet.code}\n{done.stdout[-3000:]}\n{done.stderr[-2000:]}"


def test_commands_name_the_virtualenvs_idv_mock() -> None:
    """One way, stated once at the top: ``.venv/bin/idv-mock``, never a bare ``idv-mock``."""
    bare = re.compile(r"(?<![\w./-])idv-mock (serve|receive|crypto|scenario|openapi|verify)\b")
    for s in ALL:
        if s.lang in RUN_LANGS:
            for n, line in enumerate(s.code.splitlines(), s.line + 1):
                assert not bare.search(line), f"{s.file.name}:{n}: {line}"


LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def test_links_stay_inside_the_repository() -> None:
    for path in FILES:
        text = path.read_text()
        assert "shared/spec" not in text, path
        for target in LINK.findall(text):
            if target.startswith(("http://", "https://")):
                continue
            resolved = (path.parent / target).resolve()
            assert resolved.is_relative_to(ROOT) and resolved.exists(), f"{path.name}: {target}"


def test_the_readme_is_short_and_links_every_docs_page() -> None:
    """Relative links, as on disk and on a code host (tests/test_links.py resolves them)."""
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) < 250
    linked = set(LINK.findall(text))
    # the architecture page shows ARCHITECTURE.md: the README links that file itself
    wanted = [f"docs/{page}" for page in NAV if page != "architecture.md"] + ["ARCHITECTURE.md"]
    missing = [target for target in wanted if target not in linked]
    assert not missing, missing
