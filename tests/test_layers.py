"""The layers of ARCHITECTURE.md, checked: no module imports from a layer above its own.

Every import counts: lazy ones inside functions (they are how a layer would reach up
unseen), relative ones, ``importlib.import_module``/``__import__`` calls, and every string
that names an ``idv_mock`` module whatever function receives it (an alias of
``import_module``, ``pkgutil.resolve_name``, a table a computed call reads). Only
``if TYPE_CHECKING:`` blocks are left out, since they run nothing. A module in no layer
fails, and the pytest plugin is checked too: its ``__init__`` imports only the standard
library, its fixtures only the public objects ARCHITECTURE.md lists. ``api/`` and ``web/``
share a layer but not code: what both need lives in ``serving/``, below them, and neither
imports the other (but ``api.app``, which mounts the pages' routes). The table here and
ARCHITECTURE.md's are checked to say the same.
"""

from __future__ import annotations

import ast
import os
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# IDV_MOCK_LAYERS_PACKAGE: check a copy of the package instead (the test of the tricks)
PACKAGE = Path(os.environ.get("IDV_MOCK_LAYERS_PACKAGE", ROOT / "src" / "idv_mock"))
PLUGIN = ROOT / "pytest_plugin" / "pytest_idv_mock"

# ARCHITECTURE.md's table: layer number -> the modules in it (a name covers its subpackage;
# "idv_mock" is the package root alone)
LAYERS: dict[int, tuple[str, ...]] = {
    0: ("ground",),
    1: ("fake", "aml", "delivery", "transport"),
    2: ("backend",),
    3: ("serving",),
    4: ("api", "web"),
    5: (
        "tools",
        "strategies",
        "scenarios",
        "intercept",
        "resilience",
        "coverage",
        "idv_mock",
    ),
    6: ("cli",),
}
# third-party packages a layer must not import, whatever its number
BANNED: dict[int, tuple[str, ...]] = {
    0: ("starlette", "uvicorn", "httpx", "jinja2", "http"),
    1: ("starlette", "uvicorn", "jinja2"),
    2: ("starlette", "uvicorn", "httpx", "jinja2", "http"),  # no HTTP, not even HTTPStatus
    3: ("jinja2", "idv_mock.api", "idv_mock.web"),  # the pages' templates are web's alone
}
# packages of one layer that may not import each other: a helper both need goes below them
APART: dict[str, tuple[str, ...]] = {
    "idv_mock.web": ("idv_mock.api",),
    "idv_mock.api": ("idv_mock.web",),
}
# the one module allowed across: the app mounts the pages' routes beside the API's
ACROSS: dict[str, tuple[str, ...]] = {"idv_mock.api.app": ("idv_mock.web",)}
# modules with rules of their own instead of their layer's bans: compat is the one door to
# the dependencies' internals, so it may import them (lazily), and nothing of idv_mock
OWN_BANS: dict[str, tuple[str, ...]] = {"idv_mock.ground.compat": ("idv_mock", "jinja2")}
# what the plugin's fixtures may use (ARCHITECTURE.md, "The pytest plugin")
PLUGIN_USES = (
    "idv_mock",
    "idv_mock.transport",
    "idv_mock.delivery.receiver",
    "idv_mock.scenarios",
    "idv_mock.intercept",
    "idv_mock.ground.crypto",
    "idv_mock.backend.liveform_links",
    "idv_mock.backend.events",
    "idv_mock.backend",  # InvalidInput, for a clear error from a bad marker
    "idv_mock.ground.schemas",  # the files the seeded start cache is keyed on
    "idv_mock.ground.gc_pause",  # no cycle collection while a first fixture builds
    "idv_mock.backend.prebuilt",  # available(): a shipped start, so no cache key to work out
    "idv_mock.serving.thread_server",  # the live fixtures' server (uvicorn is serve's)
    "idv_mock.resilience",
    "idv_mock.resilience.profiles",
)
# what __init__ may load beyond the standard library, each only when asked: its fixtures,
# pytest itself (loaded already), and the resilience runner under --idv-resilience
PLUGIN_INIT_USES = (
    "pytest_idv_mock.fixtures",
    "pytest",
    "idv_mock.resilience.runner",
    "idv_mock.coverage.session",  # under --idv-coverage
    "idv_mock.ground.compat",  # standard library only: idv_mock off pytest's assert rewriting
)


def module_name(path: Path) -> str:
    if path.is_relative_to(PACKAGE):
        parts = path.relative_to(PACKAGE.parent).parts
    else:
        parts = path.relative_to(PLUGIN.parent).parts
    parts = (*parts[:-1], parts[-1].removesuffix(".py"))
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer_of(module: str) -> int:
    """The layer of an ``idv_mock`` module: the longest entry of LAYERS that covers it."""
    best: tuple[int, int] | None = None
    for number, names in LAYERS.items():
        for name in names:
            if name == "idv_mock":
                covers, full = module == name, name  # the root only, not what is under it
            else:
                full = f"idv_mock.{name}"
                covers = module == full or module.startswith(full + ".")
            if covers and (best is None or len(full) > best[1]):
                best = (number, len(full))
    assert best is not None, f"{module} is in no layer of ARCHITECTURE.md: add it there and here"
    return best[0]


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports(path: Path, package: str | None = None) -> list[str]:
    """Every module ``path`` imports at run time (names of ``from idv_mock import x`` that
    are modules count as that module; other names as the package itself). ``package``:
    what relative imports are relative to (the module's own package by default)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    if package is None:
        own = module_name(path)
        package = own if path.name == "__init__.py" else own.rpartition(".")[0]
    skipped = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and _type_checking(node)
        for stmt in node.body
        for inner in ast.walk(stmt)
    }
    found: list[str] = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, package)
            found += [_target(base, alias.name) for alias in node.names]
        elif isinstance(node, ast.Call) and _imports_by_name(node):
            name = node.args[0] if node.args else None
            if isinstance(name, ast.Constant) and isinstance(name.value, str):
                found.append(_absolute_name(name.value, _anchor(node, package)))
    # Any string naming an idv_mock module is an import of it, whatever receives it: an
    # alias of import_module, pkgutil.resolve_name("idv_mock.cli:main"), a table of homes
    # a computed call reads, the head of an f-string. Only whole strings of that shape
    # count, so prose (docstrings, messages) mentioning a module does not.
    found += [
        named
        for node in ast.walk(tree)
        if id(node) not in skipped
        and isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and (named := _named_module(node.value)) is not None
    ]
    return list(dict.fromkeys(found))


MODULE_STRING = re.compile(r"idv_mock(?:\.[A-Za-z_]\w*)*\.?(?::[\w.]*)?")


def _named_module(text: str) -> str | None:
    """The ``idv_mock`` module a string names, or None: ``"idv_mock.api.app"``, the head
    ``"idv_mock.api."`` of an f-string, ``"idv_mock.cli:main"`` and ``"idv_mock.cli.main"``
    (both forms ``pkgutil.resolve_name`` reads) name a module, as does ``"idv_mock"``. A
    dotted string whose rest is no name of its module (a logger's ``"idv_mock.hints"``, a
    scope key's ``"idv_mock.project"``) names none."""
    if not MODULE_STRING.fullmatch(text):
        return None
    dotted, colon, _ = text.partition(":")
    parts = dotted.rstrip(".").split(".")
    rest: list[str] = []
    while len(parts) > 1 and _source_of(parts) is None:
        rest.insert(0, parts.pop())
    if colon or not rest or rest[0] in _names_of(parts):
        return ".".join(parts)
    return None


def _source_of(parts: list[str]) -> Path | None:
    inner = PACKAGE.joinpath(*parts[1:])
    for candidate in (inner.with_suffix(".py"), inner / "__init__.py"):
        if candidate.exists():
            return candidate
    return None


def _names_of(parts: list[str]) -> set[str]:
    """The names a module defines or exports at its top level (``__all__`` included)."""
    source = _source_of(parts)
    if source is None:
        return set()
    names: set[str] = set()
    for node in ast.parse(source.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                names.update(
                    e.value
                    for e in ast.walk(node)
                    if isinstance(e, ast.Constant) and isinstance(e.value, str)
                )
    return names


def _absolute(node: ast.ImportFrom, package: str) -> str:
    """The module a ``from ... import`` reads, relative ones resolved against ``package``."""
    if not node.level:
        return node.module or ""
    parts = package.split(".")
    base = ".".join(parts[: len(parts) - (node.level - 1)])
    return f"{base}.{node.module}" if node.module else base


def _absolute_name(name: str, package: str) -> str:
    """``import_module``'s name, a relative one (``".store"``) resolved against ``package``."""
    level = len(name) - len(name.lstrip("."))
    if not level:
        return name
    parts = package.split(".")
    base = ".".join(parts[: len(parts) - (level - 1)])
    rest = name[level:]
    return f"{base}.{rest}" if rest else base


def _anchor(node: ast.Call, package: str) -> str:
    """The package a relative ``import_module`` name is read against: the written one, or
    the module's own (``__package__``, ``__spec__.parent`` or any computed anchor)."""
    given = node.args[1] if len(node.args) > 1 else None
    given = next((k.value for k in node.keywords if k.arg == "package"), given)
    if isinstance(given, ast.Constant) and isinstance(given.value, str):
        return given.value
    return package


def _imports_by_name(node: ast.Call) -> bool:
    """``importlib.import_module(...)``, ``import_module(...)`` or ``__import__(...)``."""
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    return name in ("import_module", "__import__")


def _target(module: str, name: str) -> str:
    if module == "idv_mock" or module.startswith("idv_mock."):
        inner = PACKAGE.joinpath(*module.split(".")[1:], name)
        if inner.with_suffix(".py").exists() or (inner / "__init__.py").exists():
            return f"{module}.{name}"
    return module


SOURCES = sorted(PACKAGE.rglob("*.py"))
PLUGIN_SOURCES = sorted(PLUGIN.rglob("*.py"))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: module_name(p))
def test_no_module_imports_from_a_layer_above_its_own(path: Path) -> None:
    module = module_name(path)
    assert problems(path, module) == [], f"{module} (layer {layer_of(module)})"


def problems(path: Path, module: str) -> list[str]:
    """What ``path``, the module ``module``, imports that its layer may not."""
    own = layer_of(module)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    wrong = []
    for target in imports(path, package):
        top = target.split(".")[0]
        banned = OWN_BANS.get(module, BANNED.get(own, ()))
        if top == "idv_mock" and target != module and layer_of(target) > own:
            wrong.append(f"{target} (layer {layer_of(target)})")
        elif any(_under(target, b) for b in banned):
            wrong.append(f"{target} (banned in {module})")
        if _across(module, target):
            wrong.append(f"{target} (a sibling: move what both need into idv_mock.serving)")
    return wrong


def _under(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _across(module: str, target: str) -> bool:
    """Whether ``module`` imports a package of its layer that APART keeps it from."""
    if any(_under(target, allowed) for allowed in ACROSS.get(module, ())):
        return False
    return any(
        _under(module, home) and any(_under(target, other) for other in apart)
        for home, apart in APART.items()
    )


def test_the_checker_sees_a_violation(tmp_path: Path) -> None:
    """A backend module reaching for Starlette or the web layer is caught, however it
    imports: plainly, lazily, relatively or through importlib."""
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from starlette.responses import Response\n"
        "def f():\n    from idv_mock.api import app\n"
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import uvicorn\n"
        "from ..api import admin\nfrom .. import cli\nfrom . import store\n"
        "import importlib\nimportlib.import_module('idv_mock.web.pages')\n"
        "__import__('idv_mock.api.openapi')\n"
    )
    found = imports(bad, package="idv_mock.backend")
    assert found == [
        "starlette.responses",
        "typing",
        "idv_mock.api.admin",
        "idv_mock.cli",
        "idv_mock.backend.store",
        "importlib",
        "idv_mock.api.app",
        "idv_mock.web.pages",
        "idv_mock.api.openapi",
    ]
    assert layer_of("idv_mock.api.app") > layer_of("idv_mock.backend.service")


def test_a_relative_import_by_name_is_read_against_its_anchor(tmp_path: Path) -> None:
    (tmp_path / "lazy.py").write_text(
        "import importlib\n"
        "importlib.import_module('..web.pages', __package__)\n"
        "importlib.import_module('.app', package='idv_mock.api')\n"
        "__import__('idv_mock.cli')\n"
    )
    found = imports(tmp_path / "lazy.py", package="idv_mock.backend")
    assert found[1:] == ["idv_mock.web.pages", "idv_mock.api.app", "idv_mock.cli", "idv_mock.api"]


def test_api_and_web_import_nothing_of_each_other(tmp_path: Path) -> None:
    """A fixture tree: a page borrowing an API helper (plainly, relatively, by name) and an
    API module reaching for the pages each fail; the app mounting the pages' routes passes."""
    (tmp_path / "page.py").write_text(
        "from idv_mock.api.admin import refusal\n"
        "from ...api import exposure\n"
        "import importlib\nimportlib.import_module('idv_mock.api.faults')\n"
        "from idv_mock.serving.http import service_of\n"
    )
    found = problems(tmp_path / "page.py", "idv_mock.web.dashboard.page")
    assert [p.split(" ")[0] for p in found] == [
        "idv_mock.api.admin",
        "idv_mock.api.exposure",
        "idv_mock.api.faults",
    ]
    (tmp_path / "handler.py").write_text("from idv_mock import web\n")
    assert problems(tmp_path / "handler.py", "idv_mock.api.handler") == [
        "idv_mock.web (a sibling: move what both need into idv_mock.serving)"
    ]
    assert problems(tmp_path / "handler.py", "idv_mock.api.app") == []
    (tmp_path / "shared.py").write_text("from idv_mock.api import admin\nimport jinja2\n")
    assert problems(tmp_path / "shared.py", "idv_mock.serving.shared") == [
        "idv_mock.api.admin (layer 4)",
        "jinja2 (banned in idv_mock.serving.shared)",
    ]


def test_the_table_names_modules_that_exist() -> None:
    """A stale or misspelt entry would leave its modules to a shorter entry's layer."""
    scanned = {module_name(path) for path in SOURCES}
    for names in LAYERS.values():
        for name in names:
            assert (name if name == "idv_mock" else f"idv_mock.{name}") in scanned, name
    assert {module_name(path) for path in PLUGIN_SOURCES} >= {
        "pytest_idv_mock",
        "pytest_idv_mock.fixtures",
    }


def test_architecture_md_lists_the_same_layers() -> None:
    """ARCHITECTURE.md's table and LAYERS say the same: each row's modules, by number."""
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (\d) [^|]*\| ([^|]*) \|", text, flags=re.MULTILINE)
    written = {
        int(number): tuple(
            "idv_mock" if "package root" in name else name.strip("` /")
            for name in re.split(r",|;", names)
            if name.strip()
        )
        for number, names in rows
    }
    assert written == LAYERS


def _written_name(text: str) -> str:
    """A name of the "may not import" column as the tables here spell it."""
    name = re.sub(r"\(.*?\)", "", text).replace("`", "").strip().rstrip("/")
    if name == "any idv_mock module":
        return "idv_mock"
    modules = {n for names in LAYERS.values() for n in names}
    return f"idv_mock.{name}" if name in modules or "." in name else name.lower()


def test_architecture_md_bans_the_same_imports() -> None:
    """The table's second column, "may not import", and BANNED, OWN_BANS, APART and
    ACROSS say the same: a ban written only in prose would be checked by nothing."""
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (\d) [^|]*\|[^|]*\| ([^|]*)\|", text, flags=re.MULTILINE)
    layer_bans: dict[int, set[str]] = {}
    own: dict[str, set[str]] = {}
    apart: dict[str, set[str]] = {}
    across: dict[str, set[str]] = {}
    for number, cell in rows:
        cell = cell.strip()
        if cell.startswith("each other"):
            inside = cell[cell.index("(") + 1 : cell.rindex(")")]
            for clause in inside.split(";"):
                if "↔" in clause:
                    one, other = (_written_name(x) for x in clause.split("↔"))
                    apart.setdefault(one, set()).add(other)
                    apart.setdefault(other, set()).add(one)
                elif " mounts " in clause:
                    home, mounted = (_written_name(x) for x in clause.split(" mounts "))
                    across.setdefault(home, set()).add(mounted)
            continue
        first, *owned = cell.split(";")
        if first.strip():
            layer_bans[int(number)] = {_written_name(x) for x in first.split(",")}
        for clause in owned:
            module, _, names = clause.partition(":")
            own[_written_name(module)] = {_written_name(x) for x in names.split(",")}
    assert layer_bans == {n: set(b) for n, b in BANNED.items()}
    assert own == {m: set(b) for m, b in OWN_BANS.items()}
    assert apart == {m: set(b) for m, b in APART.items()}
    assert across == {m: set(b) for m, b in ACROSS.items()}


TRICKS = {
    "aliased": "from importlib import import_module as load\nload('idv_mock.api.app')\n",
    "resolved": "import pkgutil\npkgutil.resolve_name('idv_mock.cli:main')\n",
    "dunder": "m = __import__\nm('idv_mock.web.pages')\n",
}


def test_the_checker_fails_on_each_trick_in_a_copy_of_the_package(tmp_path: Path) -> None:
    """Each way of importing by a name a call receives, written into a backend module of a
    temporary copy of the package: the checker, run on that copy, fails on those three
    modules and on nothing else."""
    import shutil
    import subprocess

    copy = tmp_path / "src" / "idv_mock"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    for name, code in TRICKS.items():
        (copy / "backend" / f"trick_{name}.py").write_text(code, encoding="utf-8")
    plugins_off = ["-p", "no:randomly", "-p", "no:cacheprovider", "-p", "no:xdist"]
    only = ["-k", "imports_from_a_layer_above"]
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", *plugins_off, str(Path(__file__)), *only],
        env={**os.environ, "IDV_MOCK_LAYERS_PACKAGE": str(copy)},
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    failed = sorted(re.findall(r"^FAILED .*\[(idv_mock[\w.]*)\]", run.stdout, re.MULTILINE))
    assert failed == [f"idv_mock.backend.trick_{name}" for name in sorted(TRICKS)], run.stdout
    assert "idv_mock.api.app (layer 4)" in run.stdout
    assert "idv_mock.cli (layer 6)" in run.stdout
    assert "idv_mock.web.pages (layer 4)" in run.stdout


def test_a_computed_import_counts_every_module_the_file_names(tmp_path: Path) -> None:
    code = "import importlib\nHOMES = {'x': 'idv_mock.cli'}\nimportlib.import_module(HOMES['x'])\n"
    (tmp_path / "lazy.py").write_text(code)
    assert "idv_mock.cli" in imports(tmp_path / "lazy.py", package="idv_mock")


def test_a_module_in_no_layer_fails() -> None:
    with pytest.raises(AssertionError, match=r"idv_mock.newthing is in no layer"):
        layer_of("idv_mock.newthing")
    assert layer_of("idv_mock") == 5
    assert layer_of("idv_mock.ground.compat") == 0


@pytest.mark.parametrize("path", PLUGIN_SOURCES, ids=lambda p: module_name(p))
def test_the_plugin_uses_only_public_objects(path: Path) -> None:
    """``__init__`` (loaded by every pytest run of a downstream project) imports only the
    standard library and its own fixtures; the fixtures use only what ARCHITECTURE.md lists."""
    module = module_name(path)
    wrong = []
    for target in imports(path):
        top = target.split(".")[0]
        if module == "pytest_idv_mock":
            if top not in sys.stdlib_module_names and target not in PLUGIN_INIT_USES:
                wrong.append(target)
        elif top == "idv_mock" and target not in PLUGIN_USES:
            wrong.append(target)
    assert wrong == [], f"{module} imports {wrong}"


def test_only_the_backend_takes_the_service_lock() -> None:
    """Outside ``backend/`` nothing names the service's lock (``service._lock`` or a public
    ``lock`` of the service); the transport's and the dispatcher's own locks are theirs."""
    found = []
    for path in SOURCES:
        if module_name(path).startswith("idv_mock.backend"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in ("lock", "_lock"):
                owner = node.value
                if not (isinstance(owner, ast.Name) and owner.id == "self"):
                    found.append(f"{module_name(path)}:{node.lineno}")
    assert found == []


def test_the_service_has_no_public_lock() -> None:
    from idv_mock import Service, ServiceConfig

    service = Service(ServiceConfig(seed_count=0))
    assert not hasattr(service, "lock")
