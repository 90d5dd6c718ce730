"""The layers of ARCHITECTURE.md, checked: no module imports from a layer above its own.

Every import counts, lazy ones inside functions included (they are how a layer would
reach up unseen); only ``if TYPE_CHECKING:`` blocks are left out, since they run nothing.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "idv_mock"

# ARCHITECTURE.md's table: layer number -> the modules in it (a name covers its subpackage)
LAYERS: dict[int, tuple[str, ...]] = {
    0: ("errors", "clock", "schemas", "crypto", "jsondepth", "addresses"),
    1: ("fake", "aml", "delivery", "webhooks", "receiver", "transport"),
    2: ("backend",),
    3: ("api", "web", "openapi"),
    4: ("persistence", "verify", "strategies", "scenarios", "intercept", "resilience", "idv_mock"),
    5: ("cli",),
}
# third-party packages a layer must not import, whatever its number
BANNED: dict[int, tuple[str, ...]] = {
    0: ("starlette", "uvicorn", "httpx", "jinja2", "http"),
    1: ("starlette", "uvicorn", "jinja2"),
    2: ("starlette", "uvicorn", "httpx", "jinja2", "http"),  # no HTTP, not even HTTPStatus
    3: ("idv_mock.cli",),
}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer_of(module: str) -> int:
    """The layer of an ``idv_mock`` module: the longest entry of LAYERS that covers it."""
    best: tuple[int, int] | None = None
    for number, names in LAYERS.items():
        for name in names:
            full = name if name == "idv_mock" else f"idv_mock.{name}"
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


def imports(path: Path) -> list[str]:
    """Every module ``path`` imports at run time (names of ``from idv_mock import x`` that
    are modules count as that module; other names as the package itself)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
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
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found += [_target(node.module, alias.name) for alias in node.names]
    return found


def _target(module: str, name: str) -> str:
    if module.startswith("idv_mock"):
        inner = PACKAGE.joinpath(*module.split(".")[1:], name)
        if inner.with_suffix(".py").exists() or (inner / "__init__.py").exists():
            return f"{module}.{name}"
    return module


SOURCES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: module_name(p))
def test_no_module_imports_from_a_layer_above_its_own(path: Path) -> None:
    module = module_name(path)
    own = layer_of(module)
    wrong = []
    for target in imports(path):
        top = target.split(".")[0]
        if top == "idv_mock" and target != module and layer_of(target) > own:
            wrong.append(f"{target} (layer {layer_of(target)})")
        banned = BANNED.get(own, ())
        if any(target == b or target.startswith(b + ".") for b in banned):
            wrong.append(f"{target} (banned in layer {own})")
    assert wrong == [], f"{module} (layer {own}) imports {wrong}"


def test_the_checker_sees_a_violation(tmp_path: Path) -> None:
    """A backend module reaching for Starlette or the web layer is caught."""
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from starlette.responses import Response\n"
        "def f():\n    from idv_mock.api import app\n"
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import uvicorn\n"
    )
    assert imports(bad) == ["starlette.responses", "typing", "idv_mock.api.app"]
    assert layer_of("idv_mock.api.app") > layer_of("idv_mock.backend.service")


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
