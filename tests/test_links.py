"""Every link and image of the project's Markdown resolves where the files are read: on disk,
on a code host and in the built site (``mkdocs_hooks.py`` copies what ``docs/`` links outside
itself). A link is relative and names a file or folder of the clone; an anchor names a
heading as both GitHub and mkdocs write its id; an image is a local file. Code shown in the
docs as a copy of a file of the clone is that file, character for character.
"""

from __future__ import annotations

import os
import re
import unicodedata
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import markdown
import pytest
from markdown.extensions.toc import slugify

ROOT = Path(__file__).resolve().parents[1]
SKIPPED = {".git", ".venv", "site", "build", "dist", "node_modules", ".venv-compat"}


def markdown_files() -> list[Path]:
    found = []
    for path in sorted(ROOT.rglob("*.md")):
        parts = path.relative_to(ROOT).parts
        if not any(part in SKIPPED or part.startswith(".") for part in parts):
            found.append(path)
    return found


FILES = markdown_files()


class _Collector(HTMLParser):
    """The links, images and headings of one rendered page."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, str]] = []  # (tag, url)
        self.headings: list[tuple[str | None, str]] = []  # (the id mkdocs gives, the text)
        self._heading: list[object] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "a" and values.get("href"):
            self.links.append((tag, str(values["href"])))
        elif tag == "img":
            self.links.append((tag, str(values.get("src") or "")))
        elif re.fullmatch(r"h[1-6]", tag):
            self._heading = [values.get("id"), ""]

    def handle_data(self, data: str) -> None:
        if self._heading is not None:
            self._heading[1] = str(self._heading[1]) + data

    def handle_endtag(self, tag: str) -> None:
        if re.fullmatch(r"h[1-6]", tag) and self._heading is not None:
            ident, text = self._heading
            self.headings.append((ident if isinstance(ident, str) else None, str(text)))
            self._heading = None


def rendered(path: Path) -> _Collector:
    """The page as mkdocs renders it (its extensions that give ids or hide text)."""
    html = markdown.markdown(
        path.read_text(encoding="utf-8"),
        extensions=["attr_list", "tables", "toc", "fenced_code", "admonition"],
    )
    collector = _Collector()
    collector.feed(html)
    return collector


def github_slug(text: str) -> str:
    """GitHub's heading ids (github-slugger): lower case, punctuation dropped, each space a
    hyphen; unlike mkdocs it keeps runs of hyphens and non-ASCII letters."""
    text = text.strip().lower()
    kept = []
    for char in text:
        category = unicodedata.category(char)
        if char in " -_" or category[0] in "LN" or category in ("Mn", "Mc"):
            kept.append(char)
    return "".join(kept).replace(" ", "-")


def anchors(path: Path) -> tuple[set[str], set[str]]:
    """The heading ids of a page: (GitHub's, mkdocs's), numbered duplicates included."""
    github: set[str] = set()
    mkdocs: set[str] = set()
    for ident, text in rendered(path).headings:
        slug = github_slug(text)
        n = 0
        while (slug if n == 0 else f"{slug}-{n}") in github:
            n += 1
        github.add(slug if n == 0 else f"{slug}-{n}")
        mkdocs.add(ident or slugify(text, "-"))
    return github, mkdocs


def problems(path: Path, root: Path = ROOT) -> list[str]:
    found = []
    for tag, url in rendered(path).links:
        where = f"{path.relative_to(root)}: {url}"
        parts = urlsplit(url)
        if parts.scheme or parts.netloc:
            if tag == "img":
                found.append(f"{where}: an image from another host (keep images local)")
            continue
        if url.startswith("/"):
            found.append(f"{where}: absolute (breaks on a code host and in the site)")
            continue
        target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
        if not target.is_relative_to(root) or not target.exists():
            found.append(f"{where}: no such file in the clone")
            continue
        if parts.fragment:
            if target.suffix != ".md":
                found.append(f"{where}: an anchor into a file that is not Markdown")
                continue
            github, mkdocs = anchors(target)
            if parts.fragment not in github:
                found.append(f"{where}: no heading with that id on GitHub")
            if parts.fragment not in mkdocs:
                found.append(f"{where}: no heading with that id in the site")
    return found


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROOT)) for p in FILES])
def test_every_link_and_image_resolves(path: Path) -> None:
    assert not problems(path)


def test_the_checker_finds_broken_links(tmp_path: Path) -> None:
    """A missing file, a missing anchor, an id only mkdocs gives, an absolute link and a
    remote image are each found."""
    (tmp_path / "index.md").write_text("# Index\n")
    probe = tmp_path / "probe.md"
    probe.write_text(
        "# A — title\n\n[a](nope.md) [b](index.md#nope) [c](#a-title) [d](/docs/index.md)\n"
        "![e](https://example.com/e.png) [f](index.md#index) [g](#a--title)\n"
    )
    found = problems(probe, tmp_path.resolve())
    assert [p.split(": ", 2)[1:] for p in found] == [
        ["nope.md", "no such file in the clone"],
        ["index.md#nope", "no heading with that id on GitHub"],
        ["index.md#nope", "no heading with that id in the site"],
        ["#a-title", "no heading with that id on GitHub"],
        ["/docs/index.md", "absolute (breaks on a code host and in the site)"],
        ["https://example.com/e.png", "an image from another host (keep images local)"],
        ["#a--title", "no heading with that id in the site"],
    ]


def test_the_checked_files_include_the_readme_and_every_docs_page() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in FILES}
    assert {"README.md", "ARCHITECTURE.md", "scenarios/README.md", "bench/README.md"} <= names
    assert {f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md")} <= names


# --- copies: code and sections shown inline, readable without the site -----------------

TITLED = re.compile(r'^```\w*\s+title="([^"]+)"\n(.*?)^```$', re.M | re.S)
COPY = re.compile(
    r"^<!-- copy of ([^:\s]+):(\w+) \(tests/test_links\.py checks it is the same\) -->\n"
    r"(.*?)^<!-- end of the copy -->$",
    re.M | re.S,
)


def test_code_titled_with_a_file_of_the_clone_is_that_file() -> None:
    shown = []
    for path in FILES:
        for name, code in TITLED.findall(path.read_text(encoding="utf-8")):
            source = ROOT / name
            if source.is_file():
                assert code == source.read_text(encoding="utf-8"), f"{path.name}: {name}"
                shown.append(name)
    assert len(shown) >= 8  # docs/pytest.md's seven examples, docs/webhooks.md's receiver
    # each shows a test file the suite runs, never code to run from the page
    assert all(name.startswith("tests/examples/test_") for name in shown), shown


def test_copied_sections_match_their_source() -> None:
    copies = 0
    for path in FILES:
        for name, section, copy in COPY.findall(path.read_text(encoding="utf-8")):
            source = (ROOT / name).read_text(encoding="utf-8")
            start = f"<!-- --8<-- [start:{section}] -->\n"
            end = f"<!-- --8<-- [end:{section}] -->"
            assert start in source and end in source, f"{path.name}: {name}:{section}"
            original = source.split(start, 1)[1].split(end, 1)[0]
            assert copy == original, f"{path.name}: the copy of {name}:{section} differs"
            copies += 1
    assert copies >= 1


def test_no_page_includes_what_a_reader_outside_the_site_cannot_see() -> None:
    for path in FILES:
        if path.parent.name == "docs" or path.name == "README.md":
            lines = path.read_text(encoding="utf-8").splitlines()
            assert not [line for line in lines if line.startswith("--8<--")], path


# --- hosts the project must not name ----------------------------------------------------

# an invented repository address, and the hosts of package registries and their mirrors:
# where packages come from is the reader's setup (pip's index, apt's sources), never ours
NAMED = re.compile(
    r"github\.com/idv-mock|pypi\.org|pythonhosted\.org|npmjs\.(org|com)|yarnpkg\.com"
    r"|deb\.debian\.org|security\.debian\.org|archive\.ubuntu\.com|docker\.io|ghcr\.io"
    r"|quay\.io|maven\.org|maven\.apache\.org|crates\.io|proxy\.golang\.org|rubygems\.org"
)


def text_files() -> list[Path]:
    found = []
    for folder, dirs, names in os.walk(ROOT):
        # hidden folders are tools' caches and environments, but .ci is the project's own
        dirs[:] = [d for d in dirs if d not in SKIPPED and (d == ".ci" or not d.startswith("."))]
        for name in names:
            path = Path(folder, name)
            if path != Path(__file__).resolve() and b"\0" not in path.read_bytes()[:8192]:
                found.append(path)
    return found


def test_no_invented_repository_address_and_no_registry_host() -> None:
    named = []
    for path in text_files():
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if NAMED.search(line):
                named.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not named, named
    files = text_files()
    assert len(files) > 300 and ROOT / ".ci" / "run" in files  # the whole tree was read


def test_the_image_test_takes_the_mirror_from_apts_sources(tmp_path: Path) -> None:
    from test_image import apt_mirror

    assert apt_mirror(tmp_path) is None
    (tmp_path / "other.sources").write_text("Types: deb\nURIs: http://other.invalid/x\n")
    (tmp_path / "debian.sources").write_text(
        "Types: deb\nURIs: http://mirror.invalid/debian\nSuites: bookworm\n\n"
        "Types: deb\nURIs: http://mirror.invalid/debian-security\n"
    )
    assert apt_mirror(tmp_path) == "http://mirror.invalid/debian"


# a section named in prose, a docstring or a --help text: README "Time", docs/layout.md "Tested
# versions" (a link would be better; this catches a section that moved or was renamed)
SECTION = re.compile(r"(README(?:\.md)?|docs/[\w-]+\.md)(?:'s)?,? \\?\"([^\"\\]+)\\?\"")


def test_sections_named_by_file_and_title_exist() -> None:
    named = []
    for path in text_files():
        for file, title in SECTION.findall(path.read_text(errors="replace")):
            target = ROOT / ("README.md" if file.startswith("README") else file)
            title = " ".join(title.split())  # it may wrap
            headings = [text.strip() for _, text in rendered(target).headings]
            if title not in headings:
                named.append(f"{path.relative_to(ROOT)}: {file} {title!r}")
    assert not named, named
