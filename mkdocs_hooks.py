"""mkdocs hooks (mkdocs.yml ``hooks:``): the same relative links on disk, on a code host and in
the built site.

The pages link the project's files outside ``docs/`` as a reader on disk or on a code host
follows them (``../schemas/api.json``, ``../profiles/``). The site has no such files of its
own, so each one a page links is copied under ``files/`` (a folder gets a page listing its
files, a Markdown file becomes a page of its own) and the link points at the copy. Pages
shown from a file outside ``docs/`` (``SHOWN``) have their links resolved from where that
file is, as a reader of it on disk would.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit
from xml.etree.ElementTree import Element

from markdown import Extension, Markdown
from markdown.treeprocessors import Treeprocessor
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files, InclusionLevel
from mkdocs.structure.pages import Page

ROOT = Path(__file__).resolve().parent
COPIES = "files"  # where the site keeps the copies: files/<the path in the repository>
# a docs page -> the file whose text the site shows on it (on disk, the page links that file)
SHOWN = {"architecture.md": "ARCHITECTURE.md"}
LINK = re.compile(r"\]\(\s*<?([^)\s>]+)")
SKIPPED = {"__pycache__", ".pytest_cache", "node_modules"}

_sources: dict[str, Path] = {}  # a page's src_uri -> the Markdown file its links start from
_copies: dict[Path, str] = {}  # a file or folder outside docs/ -> its src_uri in the site
_page: list[Page] = []  # the page being rendered


def _outside(target: Path, docs: Path) -> bool:
    return target.is_relative_to(ROOT) and not target.is_relative_to(docs) and target.exists()


def _listed(folder: Path) -> list[Path]:
    return sorted(
        p
        for p in folder.iterdir()
        if not p.name.startswith(".") and p.name not in SKIPPED and p.suffix != ".pyc"
    )


def _listing(folder: Path) -> str:
    name = folder.relative_to(ROOT).as_posix()
    lines = [f"# `{name}/`", ""]
    for entry in _listed(folder):
        slash = "/" if entry.is_dir() else ""
        lines.append(f"- [`{entry.name}{slash}`]({entry.name}{slash})")
    return "\n".join(lines) + "\n"


def _add(target: Path, files: Files, config: MkDocsConfig, queue: list[Path]) -> None:
    if target in _copies:
        return
    rel = target.relative_to(ROOT).as_posix()
    if target.is_dir():
        uri = f"{COPIES}/{rel}/index.md"
        page = File.generated(
            config, uri, content=_listing(target), inclusion=InclusionLevel.NOT_IN_NAV
        )
        _copies[target] = uri
        _sources[uri] = target / "index.md"
        files.append(page)
        for entry in _listed(target):
            _add(entry, files, config, queue)
        return
    # a Python file is copied as text: a browser shows it, and no copy under site/ is importable
    # (a test run from the clone would find the copies' packages beside its own)
    uri = f"{COPIES}/{rel}.txt" if target.suffix == ".py" else f"{COPIES}/{rel}"
    inclusion = InclusionLevel.NOT_IN_NAV if target.suffix == ".md" else InclusionLevel.INCLUDED
    files.append(File.generated(config, uri, abs_src_path=str(target), inclusion=inclusion))
    _copies[target] = uri
    if target.suffix == ".md":
        _sources[uri] = target
        queue.append(target)


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Copy every file outside docs/ a page links (and what those link, in turn)."""
    docs = Path(config.docs_dir).resolve()
    _sources.clear()
    _copies.clear()
    queue: list[Path] = []
    for file in files.documentation_pages():
        source = docs / file.src_uri
        if file.src_uri in SHOWN:
            source = ROOT / SHOWN[file.src_uri]
            file.abs_src_path = str(source)
        _sources[file.src_uri] = source
        queue.append(source)
    while queue:
        source = queue.pop()
        for url in LINK.findall(source.read_text(encoding="utf-8")):
            parts = urlsplit(url)
            if parts.scheme or parts.netloc or not parts.path or url.startswith("/"):
                continue
            target = (source.parent / unquote(parts.path)).resolve()
            if _outside(target, docs):
                _add(target, files, config, queue)
    return files


def on_page_markdown(markdown: str, page: Page, **_: Any) -> str:
    _page[:] = [page]
    return markdown


class _Relinker(Treeprocessor):
    """Before mkdocs resolves the links: point each one from where its page's text is."""

    def __init__(self, md: Markdown, docs: Path) -> None:
        super().__init__(md)
        self.docs = docs

    def run(self, root: Element) -> None:
        if not _page:
            return
        here = _page[0].file.src_uri
        source = _sources.get(here, self.docs / here)
        for element in root.iter():
            key = {"a": "href", "img": "src"}.get(element.tag)
            url = element.get(key) if key else None
            if key is None or not url:
                continue
            parts = urlsplit(url)
            if parts.scheme or parts.netloc or not parts.path or url.startswith("/"):
                continue
            target = (source.parent / unquote(parts.path)).resolve()
            if target.is_relative_to(self.docs):
                uri = target.relative_to(self.docs).as_posix()
            elif target in _copies:
                uri = _copies[target]
            else:
                continue  # not found: mkdocs says so (a failure with --strict)
            path = posixpath.relpath(uri, posixpath.dirname(here) or ".")
            element.set(key, urlunsplit(("", "", path, parts.query, parts.fragment)))


class _RelinkExtension(Extension):
    def __init__(self, docs: Path) -> None:
        super().__init__()
        self.docs = docs

    def extendMarkdown(self, md: Markdown) -> None:
        md.treeprocessors.register(_Relinker(md, self.docs), "idv_mock_relink", 1)


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    config.markdown_extensions.append(_RelinkExtension(Path(config.docs_dir).resolve()))
    return config
