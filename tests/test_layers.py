"""The layers of ARCHITECTURE.md, checked: no module imports from a layer above its own.

Every import counts: lazy ones inside functions (they are how a layer would reach up
unseen), relative ones, and ``importlib.import_module``/``__import__`` calls (with a
computed name, every dotted ``idv_mock`` name written in the module counts). Only
``if TYPE_CHECKING:`` blocks are left out, since they run nothing. A module in no layer
fails, and the pytest plugin is checked too: its ``__init__`` imports only the standard
library, its fixtures only the public objects ARCHITECTURE.md lists. ``api/`` and ``web/``
share a layer but not code: what both need lives in ``serving/``, below them, and neither
imports the other (but ``api.app``, which mounts the pages' routes). The table here and
ARCHITECTURE.md's are checked to say the same.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "idv_mock"
PLUGIN = ROOT / "pytest_plugin" / "pytest_idv_mock"

# ARCHITECTURE.md's table: layer number -> the modules in it (a name covers its subpackage;
# "idv_mock" is the package root alone)
LAYERS: dict[int, tuple[str, ...]] = {
    0: (
        *("errors", "clock", "schemas", "operations", "crypto", "jsondepth", "addresses"),
        *("gc_pause", "compat"),
    ),
    1: ("fake", "aml", "delivery", "webhooks", "receiver", "transport"),
    2: ("backend",),
    3: ("serving",),
    4: ("api", "web", "openapi"),
    5: (
        *("persistence", "verify", "strategies", "scenarios", "intercept", "resilience"),
        *("coverage", "idv_mock"),
    ),
    6: ("cli",),
}
# third-party packages a layer must not import, whatever its number
BANNED: dict[int, tuple[str, ...]] = {
    0: ("starlette", "uvicorn", "httpx", "jinja2", "http"),
    1: ("starlette", "uvicorn", "jinja2"),
    2: ("starlette", "uvicorn", "httpx", "jinja2", "http"),  # no HTTP, not even HTTPStatus
    3: ("jinja2",),  # the pages' templates are web's alone
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
OWN_BANS: dict[str, tuple[str, ...]] = {"idv_mock.compat": ("idv_mock", "jinja2")}
# what the plugin's fixtures may use (ARCHITECTURE.md, "The pytest plugin")
PLUGIN_USES = (
    "idv_mock",
    "idv_mock.transport",
    "idv_mock.receiver",
    "idv_mock.scenarios",
    "idv_mock.intercept",
    "idv_mock.crypto",
    "idv_mock.backend.liveform",
    "idv_mock.backend.events",
    "idv_mock.backend",  # InvalidInput, for a clear error from a bad marker
    "idv_mock.schemas",  # the files the seeded start cache is keyed on
    "idv_mock.gc_pause",  # no cycle collection while a first fixture builds
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
    "idv_mock.compat",  # standard library only: idv_mock off pytest's assert rewriting
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
    dynamic = False
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
            else:
                dynamic = True
    if dynamic:  # a computed name: every idv_mock module named in the module counts
        found += [
            node.value
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and node.value.startswith("idv_mock.")
            and node.value.replace(".", "").replace("_", "").isalnum()
        ]
    return found


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
        if top == "idv_mock" and target != module and layer_of(target) > own:
            wrong.append(f"{target} (layer {layer_of(target)})")
        banned = OWN_BANS.get(module, BANNED.get(own, ()))
        if any(_under(target, b) for b in banned):
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
        "__import__('idv_mock.openapi')\n"
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
        "idv_mock.openapi",
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
    assert found[1:] == ["idv_mock.web.pages", "idv_mock.api.app", "idv_mock.cli"]


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


def test_a_computed_import_counts_every_module_the_file_names(tmp_path: Path) -> None:
    code = "import importlib\nHOMES = {'x': 'idv_mock.cli'}\nimportlib.import_module(HOMES['x'])\n"
    (tmp_path / "lazy.py").write_text(code)
    assert "idv_mock.cli" in imports(tmp_path / "lazy.py", package="idv_mock")


def test_a_module_in_no_layer_fails() -> None:
    with pytest.raises(AssertionError, match=r"idv_mock.newthing is in no layer"):
        layer_of("idv_mock.newthing")
    assert layer_of("idv_mock") == 5
    assert layer_of("idv_mock.compat") == 0


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
