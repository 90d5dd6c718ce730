"""One list per concept: every other list of it agrees with its table, or this fails.

The tables: the webhook triggers are ``schemas/api.json``'s ``webhooks`` (read by
``operations.webhooks()``), the project options ``schemas/project_options.json``'s
properties, the operations ``schemas/api.json``'s rows (``tests/test_operations.py``), and
each enumeration the schemas share a ``$defs`` entry of ``schemas/defs.json``. What cannot
be read from them is compared with them here: the schema lists of every trigger (a
schema's ``anyOf`` of the payloads, the delivery record's event enum; ``make lists`` writes
them from the table), the docs' tables, the vendor's mirrored ``project_options``;
so a trigger or option added to the table and forgotten elsewhere names the place to fix.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import find

from idv_mock.backend import coverage_counts, events, images, projects
from idv_mock.ground import operations, schemas
from idv_mock.strategies import webhook_payloads
from idv_mock.strategies import webhooks as webhook_strategies
from idv_mock.tools import trigger

ROOT = Path(__file__).resolve().parents[1]
TABLE = operations.webhooks()
TRIGGERS = tuple(TABLE)
OPTIONS: dict[str, Any] = schemas.load("project_options.json")["properties"]
DEFS: dict[str, Any] = schemas.load("defs.json")["$defs"]


def _doc(name: str) -> str:
    return (ROOT / "docs" / name).read_text(encoding="utf-8")


# --- webhook triggers -----------------------------------------------------------------------


def test_the_code_reads_its_triggers_from_the_table() -> None:
    items = coverage_counts.catalogue(())
    catalogue = [i.id.removeprefix("webhook ") for i in items if i.kind == "webhook"]
    assert trigger.TRIGGERS == TRIGGERS  # idv-mock trigger's EVENT
    assert tuple(events.EVENT_NAMES) == TRIGGERS == tuple(events.SCHEMAS)
    assert tuple(catalogue) == TRIGGERS
    assert webhook_strategies.TRIGGERS == TRIGGERS


def test_every_trigger_has_its_payload_schema_and_no_other_is_there() -> None:
    folder = schemas.schema_dir() / "webhooks"
    found = sorted(p.stem for p in folder.glob("*.json") if p.stem != "common")
    assert found == sorted(TRIGGERS)
    assert [entry["schema"] for entry in TABLE.values()] == [f"webhooks/{t}.json" for t in TRIGGERS]


@pytest.mark.parametrize("name", sorted(operations.DERIVED_LISTS))
def test_the_schemas_listing_triggers_are_written_from_the_table(name: str) -> None:
    assert schemas.load(name) == operations.derived(name), f"{name}: run `make lists`"


def test_the_derived_lists_name_every_trigger() -> None:
    payload = schemas.load("webhook_payload.json")["anyOf"]
    assert [ref["$ref"] for ref in payload] == [e["schema"] for e in TABLE.values()]
    record = schemas.load("webhook_delivery_record.json")["properties"]["event"]
    assert record["enum"] == [e["event"] for e in TABLE.values()]


def test_the_strategy_builds_every_trigger() -> None:
    for name in TRIGGERS:
        drawn = find(webhook_payloads([name]), lambda _: True)
        assert drawn["webhook_trigger"] == name


def test_the_docs_tables_name_every_trigger_once_in_the_tables_order() -> None:
    rows = re.findall(r"^\| `(\w+)` \(`([\w.]+)`\) \|", _doc("webhooks.md"), re.M)
    assert rows == [(t, e["event"]) for t, e in TABLE.items()]
    section = _doc("cli.md").split("| `EVENT` | What the command does", 1)[1].split("\n\n")[0]
    named = [n for cell in re.findall(r"^\| ([^|]+) \|", section, re.M) for n in cell.split(", ")]
    assert [n.strip("`") for n in named if n.startswith("`")] == list(TRIGGERS)


def test_no_doc_counts_the_triggers() -> None:
    """A count ("the twelve triggers") is a list in disguise: it goes stale on an addition."""
    texts = [(ROOT / "README.md").read_text(encoding="utf-8")]
    texts += [p.read_text(encoding="utf-8") for p in (ROOT / "docs").glob("*.md")]
    counted = re.compile(r"\b(\w+) (?:vendor |webhook )?(?:triggers|webhooks)\b")
    numbers = {"eleven", "twelve", "thirteen", *map(str, range(2, 30))}
    assert [m[0] for t in texts for m in counted.finditer(t) if m[1].lower() in numbers] == []


# --- project options ------------------------------------------------------------------------


def _options_paragraph() -> str:
    text = _doc("control-api.md")
    return text.split("Project options (schema:", 1)[1].split("\n\n", 1)[0]


def _doc_value(text: str) -> Any:
    words = {"false": False, "true": True, "null": None}
    if text in words:
        return words[text]
    if text.isdigit():
        return int(text)
    return text.strip("`")


def test_the_control_api_doc_names_every_option_with_its_default() -> None:
    paragraph = _options_paragraph()
    named = re.findall(r"`(\w+)`", paragraph)
    assert [n for n in named if n in OPTIONS] == list(OPTIONS)  # each once, the schema's order
    with_default = re.findall(r"`(\w+)` \(([^)]*)\)", paragraph)
    assert with_default, paragraph
    for name, text in with_default:
        assert name in OPTIONS, f"docs/control-api.md names an option the schema lacks: {name}"
        if " ".join(text.split()).startswith("the server's"):
            assert OPTIONS[name]["default"] is None, name
        else:
            assert _doc_value(text) == OPTIONS[name]["default"], name


def test_the_mirrored_options_are_the_submissions_project_options() -> None:
    """An ``option_``/``policy_`` option is copied into each new submission's
    ``project_options`` (the vendor's fields): the two schemas list the same, alike."""
    fields = schemas.load("submission_fields.json")["properties"]["project_options"]["properties"]
    vendor_own = ("webhookURL", "webhook")
    assert [k for k in fields if k not in vendor_own] == list(projects.MIRRORED)
    for key in projects.MIRRORED:
        option = {k: v for k, v in OPTIONS[key].items() if k not in ("default", "description")}
        assert fields[key] == option, key


# --- shared enumerations and image slots ------------------------------------------------------


def _enums(node: Any, where: str) -> Iterator[tuple[tuple[str, ...], str]]:
    if isinstance(node, dict):
        values = node.get("enum")
        if isinstance(values, list) and len(values) > 1:
            yield tuple(map(str, values)), where
        for key, value in node.items():
            yield from _enums(value, f"{where}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _enums(value, f"{where}/{i}")


def test_no_enumeration_is_written_twice_in_the_schemas() -> None:
    """A list of values two schemas share lives once, in ``defs.json``; the others ``$ref`` it."""
    seen: dict[tuple[str, ...], list[str]] = {}
    for name, schema in schemas.all_schemas().items():
        for values, where in _enums(schema, name):
            seen.setdefault(values, []).append(where)
    assert {v: w for v, w in seen.items() if len(w) > 1} == {}


def _literals(tree: ast.AST) -> Iterator[tuple[tuple[str, ...], int]]:
    for node in ast.walk(tree):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)) and len(node.elts) > 1:
            items = [e.value for e in node.elts if isinstance(e, ast.Constant)]
            if len(items) == len(node.elts) and all(isinstance(i, str) for i in items):
                yield tuple(items), node.lineno


def test_no_module_copies_a_shared_enumeration() -> None:
    """``SLOTS``, the KYC results, the clock's modes, ...: read with ``schemas.enum(name)``,
    never written again as a literal (the countries and the ID types included)."""
    shared = {tuple(d["enum"]): name for name, d in DEFS.items() if len(d.get("enum", ())) > 1}
    copies = []
    for path in sorted((ROOT / "src" / "idv_mock").rglob("*.py")):
        for values, line in _literals(ast.parse(path.read_text(encoding="utf-8"))):
            if values in shared:
                copies.append(f"{path.relative_to(ROOT)}:{line} copies {shared[values]}")
    for path in sorted((ROOT / "src" / "idv_mock" / "web" / "templates").rglob("*.html")):
        for found in re.finditer(r"\[((?:\s*\"[^\"]*\",?)+)\]", path.read_text(encoding="utf-8")):
            values = tuple(v for v in re.findall(r'"([^"]*)"', found[1]) if v)
            if values in shared:
                copies.append(f"{path.relative_to(ROOT)} copies {shared[values]}")
    assert copies == []


def test_the_image_slots_agree_everywhere() -> None:
    slots = list(schemas.enum("image_slot"))
    assert list(images.SLOTS) == slots and set(images.ID_SLOTS) < set(slots)
    put = schemas.load("put_image_request.json")["properties"]
    assert [k for k in put if k in slots or k.endswith("Image")] == slots
    image = schemas.load("submission_fields.json")["properties"]["image"]["properties"]
    assert list(image) == slots
    state = schemas.load("state.json")
    stored = _find(state, "images")["additionalProperties"]["properties"]
    assert list(stored) == slots


def _find(node: Any, key: str) -> Any:
    if isinstance(node, dict):
        if key in node and isinstance(node[key], dict) and "additionalProperties" in node[key]:
            return node[key]
        for value in node.values():
            found = _find(value, key)
            if found is not None:
                return found
    return None


@pytest.mark.parametrize("name", ["kyc_result", "clock_mode", "image_slot", "final_result"])
def test_a_shared_enumeration_reads_through_its_ref(name: str) -> None:
    assert schemas.enum(name) and len(set(schemas.enum(name))) == len(schemas.enum(name))
    assert Counter(schemas.enum("kyc_result")) == Counter(schemas.enum("kyc_outcome"))
