"""Every Python name the user docs show exists: a rename or removal fails here first.

test_readme.py runs the docs' code blocks, but most names users read are in inline code
(``service.delivery.in_state(id, state)`` in a table, ``idv_server.clock``'s ``.advance(...)``
in a sentence), which nothing runs. Here the Python in README.md, docs/*.md,
ARCHITECTURE.md and scenarios/README.md is read, code blocks and inline code alike, and
each dotted name is looked up on the real objects: imports are imported, ``service.x`` is
looked up on a ``Service`` (built with no submissions; ``service.<part>.<method>`` on
the part, since ``Service`` hands nothing over to its parts), ``idv_server.x`` on the plugin's
``IdvServer``, and so on; a call's return annotation says what the next name is looked up
on, and each ``keyword=`` shown must be a parameter. Which inline code counts:

- a dotted name starting with a name of the ``roots`` fixture (``service.reset()``,
  ``idv_mock.ground.crypto``, ``idv_server.clock``);
- ``.name`` alone: a name of the last object named before it in the paragraph;
- a bare name in a table's "Python" column: a ``Service`` method;
- a bare name in the fixture table's description of a fixture: that fixture's attribute;
- a bare name after one of ``LISTS``' openings in a paragraph (the strategies' list);
- the name after the word "logger": a logger the source creates.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import re
import typing
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
FILES = (
    ROOT / "README.md",
    ROOT / "ARCHITECTURE.md",
    ROOT / "scenarios" / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
)
SPAN = re.compile(r"(?<!`)`([^`]+)`(?!`)")  # may wrap to the next line
FENCE = re.compile(r"^\s*```(\w*)")
INCLUDE = re.compile(r'^--8<-- "([^"]+)"$', re.M)
NAME = re.compile(r"[A-Za-z_]\w*")
KEYWORD = re.compile(r"\s*(\w+)\s*=(?!=)")
FILE_LIKE = re.compile(r"\.(py|md|json|ya?ml|toml|html|txt|cfg|js|sh|ini)$")
# the words that open a paragraph's names of one object -> (that object, calls only)
LISTS = {
    "Valid:": ("idv_mock.strategies", False),  # docs/pytest.md: the strategies
    "For the other direction,": ("idv_mock.strategies", True),
    "`ServiceConfig` fields:": ("ServiceConfig", False),  # docs/in-process.md
    "The same primitives are importable:": ("idv_mock.ground.crypto", False),  # secure-transfer.md
    "**Walking it from a browser test.**": ("pytest_idv_mock.liveform", True),  # hosted-form
}
OURS = ("idv_mock", "pytest_idv_mock")  # the packages whose names the docs promise
UNKNOWN = object()  # what a call answers when its annotation names no class: not followed


@dataclass(frozen=True)
class Use:
    where: str  # file:line
    text: str  # as the docs write it, rewritten to start at its root
    parts: tuple[tuple[str, str | None], ...]  # (name, call arguments or None)

    @property
    def dotted(self) -> str:
        return ".".join(name for name, _ in self.parts)


def chain(text: str) -> tuple[tuple[str, str | None], ...] | None:
    """``a.b(x, y=1).c`` as ``(("a", None), ("b", "x, y=1"), ("c", None))``; None when
    ``text`` is not a dotted name (a command, a path, a JSON body)."""
    parts: list[tuple[str, str | None]] = []
    i = 0
    while True:
        match = NAME.match(text, i)
        if match is None:
            return None
        i, args = match.end(), None
        if text.startswith("(", i):
            depth = 0
            for j in range(i, len(text)):
                depth += {"(": 1, ")": -1}.get(text[j], 0)
                if depth == 0:
                    break
            else:
                return None
            args, i = text[i + 1 : j], j + 1
        parts.append((match.group(), args))
        if i == len(text):
            return tuple(parts)
        if text[i] != ".":
            return None
        i += 1


def arguments(args: str) -> list[str]:
    """A call's argument text split at its top-level commas."""
    pieces, depth, start = [], 0, 0
    for i, c in enumerate(args):
        depth += 1 if c in "([{" else -1 if c in ")]}" else 0
        if c == "," and depth == 0:
            pieces.append(args[start:i])
            start = i + 1
    return [*pieces, args[start:]]


def keywords(args: str) -> list[str]:
    """The ``name=`` arguments at the top level of a call's argument text."""
    return [m.group(1) for p in arguments(args) if (m := KEYWORD.match(p))]


# --- reading the docs ---
def uses_in(name: str, text: str, roots: set[str]) -> Iterator[Use]:
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if fence:
            end = next((j for j in range(i + 1, len(lines)) if FENCE.match(lines[j])), len(lines))
            if fence.group(1) in ("python", "py"):
                yield from code_uses(f"{name}:{i + 1}", "\n".join(lines[i + 1 : end]), roots)
            i = end + 1
            continue
        start = i
        while i < len(lines) and lines[i].strip() and not FENCE.match(lines[i]):
            i += 1
        if i == start:
            i += 1
            continue
        block = lines[start:i]
        if block[0].startswith("|"):
            yield from table_uses(name, start, block, roots)
        else:
            yield from prose_uses(name, start, "\n".join(block), roots)


def span_use(where: str, text: str, roots: set[str]) -> Use | None:
    text = text.strip()
    if FILE_LIKE.search(text) or text.startswith("@"):
        return None
    parts = chain(text)
    if parts is None or parts[0][0] not in roots:
        return None
    return Use(where, text, parts)


def nested(use: Use, roots: set[str]) -> Iterator[Use]:
    """The dotted names passed to ``use``'s calls (``run(scenarios.builtin("x"))``)."""
    for _, args in use.parts:
        for piece in arguments(args or ""):
            value = KEYWORD.sub("", piece, count=1).strip()
            inner = span_use(use.where, value, roots) if value else None
            if inner is not None:
                yield inner
                yield from nested(inner, roots)


def prose_uses(name: str, start: int, para: str, roots: set[str], last: str = "") -> Iterator[Use]:
    """A paragraph's (or a table cell's) inline code; ``last``: the object named before."""
    list_at = {para.find(lead): root for lead, root in LISTS.items() if lead in para}
    for match in SPAN.finditer(para):
        where = f"{name}:{start + para.count(chr(10), 0, match.start()) + 1}"
        text = " ".join(match.group(1).split())
        lead = [root for at, root in list_at.items() if 0 <= at < match.start()]
        before = para[: match.start()].rstrip()
        if before.endswith("logger"):
            yield Use(where, f"logging.{text}", (("logging", None), ("getLogger", text)))
            continue
        if text.startswith(".") and last:
            text = last + text
        elif lead and (one := chain(text)) and len(one) == 1 and not hasattr(builtins, text):
            root, calls_only = lead[-1]
            text = f"{root}.{text}" if one[0][1] is not None or not calls_only else text
        use = span_use(where, text, roots)
        if use is not None:
            last = last if match.group(1).startswith(".") else use.text
            yield use
            yield from nested(use, roots)


def table_uses(name: str, start: int, rows: list[str], roots: set[str]) -> Iterator[Use]:
    """A table: its "Python" column names ``Service`` methods; the fixture table's
    descriptions name the fixture's attributes; any cell may hold dotted names."""
    header = [c.strip() for c in rows[0].strip().strip("|").split("|")]
    for n, row in enumerate(rows[2:], start + 3):
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", row.strip().strip("|"))]
        owner = chain(cells[0].strip("`")) if header[0] == "Fixture" else None
        for column, cell in zip(header, cells, strict=False):  # a short row leaves cells out
            yield from prose_uses(name, n - 1, cell, roots)
            for match in SPAN.finditer(cell):
                text = match.group(1)
                one = chain(text)
                if not one or one[0][0] in roots:
                    continue
                if column == "Python":
                    yield Use(f"{name}:{n}", f"service.{text}", (("service", None), *one))
                elif (
                    column != header[0]
                    and owner
                    and owner[0][0] in roots
                    and len(one) == 1
                    and text[0].islower()
                    and not text.startswith("idv_")
                ):
                    fixture = owner[0][0]
                    yield Use(f"{name}:{n}", f"{fixture}.{text}", ((fixture, None), *one))


def code_uses(where: str, code: str, roots: set[str]) -> Iterator[Use]:
    """A Python block's imports of idv_mock and its dotted names from a root or an import."""
    for path in INCLUDE.findall(code):
        code = code.replace(f'--8<-- "{path}"', (ROOT / path).read_text())
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return  # test_readme.py runs it and says so
    aliases: dict[str, str] = {}  # a name the block binds -> what it imported
    imported: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(OURS):
            for alias in node.names:
                imported.append(f"{node.module}.{alias.name}")
                aliases[alias.asname or alias.name] = imported[-1]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(OURS):
                    imported.append(alias.name)
                    aliases[alias.asname or alias.name.split(".")[0]] = alias.name
    for dotted in imported:
        yield Use(where, dotted, tuple((p, None) for p in dotted.split(".")))
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        text = ast.unparse(node)
        head = NAME.match(text)
        if head and head.group() in aliases and head.group() not in roots:
            text = aliases[head.group()] + text[head.end() :]
        use = span_use(f"{where}+{node.lineno}", text, roots)
        if use is not None:
            yield use


# --- looking names up ---
class Missing(Exception):
    pass


def hints(target: Any) -> dict[str, Any]:
    try:
        return typing.get_type_hints(target)
    except Exception:  # an annotation that names what only TYPE_CHECKING imports
        return {}


def ours(cls: type) -> bool:
    return cls.__module__.startswith(OURS)


def returns(target: Any) -> Any:
    """What calling ``target`` answers, as far as its annotation tells: one of our classes
    (another library's names are that library's to keep)."""
    answer = target if isinstance(target, type) else hints(target).get("return")
    return answer if isinstance(answer, type) and ours(answer) else UNKNOWN


def set_in_init(cls: type, name: str) -> bool:
    """Whether an instance of ``cls`` gets ``name`` in ``__init__`` (no class attribute)."""
    pattern = re.compile(rf"\bself\.{name}\s*[:=]")
    return any(ours(k) and pattern.search(inspect.getsource(k)) for k in cls.__mro__)


def member(obj: Any, name: str) -> Any:
    if isinstance(obj, ModuleType):
        if hasattr(obj, name):
            return getattr(obj, name)
        try:
            return importlib.import_module(f"{obj.__name__}.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"{obj.__name__}.{name}":
                raise
            raise Missing(f"module {obj.__name__} has no {name}") from None
    cls = obj if isinstance(obj, type) else type(obj)
    try:
        static = inspect.getattr_static(obj, name)
    except AttributeError:
        declared = hints(cls).get(name)
        if declared is None and set_in_init(cls, name):
            return UNKNOWN
        if declared is None:
            raise Missing(f"{cls.__name__} has no {name}") from None
        return declared if isinstance(declared, type) and ours(declared) else UNKNOWN
    if isinstance(static, property) and (isinstance(obj, type) or static.fget is None):
        return returns(static.fget)
    try:
        return getattr(obj, name)
    except Exception:  # a property that needs a running object (a mock not started)
        return returns(static.fget) if isinstance(static, property) else UNKNOWN


def problem(use: Use, roots: dict[str, Any]) -> str | None:
    """Why ``use`` does not resolve, or None."""
    (first, _), *rest = use.parts
    if first == "logging":
        logger = re.escape(use.parts[1][1] or "")
        made = any(re.search(rf'getLogger\("{logger}"\)', p.read_text()) for p in SOURCES)
        return None if made else f"no module creates the logger {use.parts[1][1]}"
    obj = roots[first]
    for name, args in rest:
        if obj is UNKNOWN:
            return None
        try:
            obj = member(obj, name)
        except Missing as e:
            return str(e)
        if args is None:
            continue
        try:
            params = inspect.signature(obj).parameters.values()
        except (TypeError, ValueError):
            params = None
        if params is not None and not any(p.kind is p.VAR_KEYWORD for p in params):
            names = {p.name for p in params}
            unknown = [k for k in keywords(args) if k not in names]
            if unknown:
                return f"{name}() takes no {', '.join(unknown)}"
        obj = returns(obj)
    return None


SOURCES = [*(ROOT / "src").rglob("*.py"), *(ROOT / "pytest_plugin").rglob("*.py")]


@pytest.fixture(scope="module")
def roots() -> Iterator[dict[str, Any]]:
    """What each root name is: the objects a reader of the docs holds."""
    import pytest_idv_mock
    from pytest_idv_mock.fixtures import IdvServer, WebhookDelivery, receiver_class

    import idv_mock
    from idv_mock import scenarios
    from idv_mock.api.app import create_app
    from idv_mock.backend import Service, ServiceConfig
    from idv_mock.intercept import Mock
    from idv_mock.transport import AsyncInProcessClient, InProcessClient

    service = Service(ServiceConfig(seed_count=0))
    server = IdvServer("127.0.0.1", 8080, service)
    yield {
        **dict.fromkeys(("service", "idv_service", "idv_mocked"), service),
        **dict.fromkeys(("idv_server", "idv_project"), server),
        "idv_webhook_delivery": WebhookDelivery(service),
        "idv_webhook_receiver": receiver_class(),
        "idv_client": InProcessClient,
        "idv_async_client": AsyncInProcessClient,
        "project": service.project("default"),
        "create_app": create_app,  # the real options (idv_mock.create_app passes them on)
        "scenarios": scenarios,
        "pytest_idv_mock": pytest_idv_mock,
        "m": Mock,
        "Service": Service,
        "ServiceConfig": ServiceConfig(),
        "idv_mock": idv_mock,
    }
    service.close()


def all_uses(roots: set[str]) -> list[Use]:
    found: dict[str, Use] = {}
    for path in FILES:
        for use in uses_in(str(path.relative_to(ROOT)), path.read_text(), roots):
            found.setdefault(use.text, use)
    return list(found.values())


def problems_of(uses: Iterable[Use], roots: dict[str, Any]) -> list[str]:
    return [
        f"{use.where} `{use.text}`: {why}"
        for use in uses
        if (why := problem(use, roots)) is not None
    ]


def test_every_python_name_the_docs_show_exists(roots: dict[str, Any]) -> None:
    problems = problems_of(all_uses(set(roots)), roots)
    assert not problems, "\n".join(problems)


def test_the_names_are_found_where_the_docs_write_them(roots: dict[str, Any]) -> None:
    """Each way the docs name things is read (a reader that finds nothing checks nothing)."""
    found = {use.dotted for use in all_uses(set(roots))}
    expected = {
        "service.delivery.in_state",  # the control API's table, "Python" column
        "service.export_state",  # a bare name there
        "service.clocks.handle",  # a part's method after the part (`.handle(id)`)
        "project.journal",
        "idv_server.assert_called",  # the fixture table
        "idv_webhook_receiver.wait_for",
        "idv_webhook_delivery.wait_idle",  # `.wait_idle()` after `idv_webhook_delivery`
        "idv_project.clock.advance",
        "idv_mock.strategies.invalid_token_requests",  # the strategies' list
        "idv_mock.strategies.Invalid",
        "ServiceConfig.journal_size",
        "idv_mock.delivery.receiver.shape_problems",
        "idv_mock.transport.InProcessClient",  # a code block's import
        "idv_mock.strategies.send",  # `st.send(...)` with `import strategies as st`
        "logging.getLogger",
        "idv_mock.ground.crypto.decrypt_object",
        "pytest_idv_mock.liveform.current_step",
        "create_app",
        "scenarios.builtin",
    }
    assert expected <= found, sorted(expected - found)


@pytest.mark.parametrize(
    ("doc", "why"),
    [
        ("Call `service.no_such_call(id)`.", "Service has no no_such_call"),
        ("| Call | Python |\n|---|---|\n| `GET /x` | `no_such_call(id)` |", "no_such_call"),
        ("`service.create_submission(id, nope=)`", "create_submission() takes no nope"),
        ("`idv_server.clock` has `.now` and `.no_such_field`", "ProjectClock has no no_such"),
        ("`service.tokens.no_such_method`", "Tokens has no no_such_method"),
        # a part's method named on the service (the hand-overs before 0.4.0) is refused
        ("`service.deliveries_in(id, state)`", "Service has no deliveries_in"),
        ("| Call | Python |\n|---|---|\n| `GET /x` | `advance_clock(id, b)` |", "advance_clock"),
        ("`service.clocks` has `.advance(id, body)` and `.advance_clock`", "Clocks has no adv"),
        ('`scenarios.run(scenarios.nope("x"))`', "module idv_mock.scenarios has no nope"),
        ("```python\nfrom idv_mock.transport import Nope\n```", "module idv_mock.transport"),
        ("```python\nfrom idv_mock import strategies as st\nst.nope()\n```", "has no nope"),
        ("Valid: `submissions()`, `no_such_strategy()`.", "has no no_such_strategy"),
        ("a warning of the logger `idv_mock.no_such_logger`", "no module creates the logger"),
    ],
)
def test_a_name_that_does_not_exist_is_reported(roots: dict[str, Any], doc: str, why: str) -> None:
    (found,) = problems_of(uses_in("page.md", doc, set(roots)), roots)
    assert why in found, found


def test_only_dotted_names_are_read_as_names() -> None:
    assert chain("idv-mock serve") is None and chain("/v3/submission") is None
    assert chain("a.b(x, y=f(1)).c") == (("a", None), ("b", "x, y=f(1)"), ("c", None))
    assert keywords('a, b=1, *, c=f(d=2), e == 3, method="POST"') == ["b", "c", "method"]
