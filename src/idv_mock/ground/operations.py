"""The operation table: every ``/v3`` operation as one row, read from ``schemas/api.json``.

The routes (``api/app.py``), the OpenAPI document's tags, examples and extra media
(``openapi.py``), the probes of ``idv-mock verify``, the near-miss hints' paths
(``api/hints.py``) and the strategies' URLs are built from these rows, so an operation is
written down once, in the schema document; ``tests/test_operations.py`` checks that no
module lists one again by hand. A row names its handler as ``module:function`` under
``idv_mock.api`` (resolved by ``api/app.py``: this module sits below the HTTP layer) and its
error family by its name in ``errors.py``. A ``"*"`` row is a path's other methods: its
handler answers them (a path without one answers the generic 405).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

from idv_mock.ground import errors, schemas

API_PREFIX = "/v3"
ANY = "*"
# the order of the Allow header (and of the methods in each route)
METHOD_ORDER = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
_PARAM = re.compile(r"\{([^}]+)\}")


class TableError(ValueError):
    """A row of ``schemas/api.json`` the mock cannot build from (a test, not a user, sees it)."""


class Operation:
    """One row: a method of a path (or ``"*"``, the path's other methods) and its parts.
    Read-only by convention; a plain class, not a frozen dataclass, whose generated
    methods were compiled at import (the app's, on every first use)."""

    __slots__ = ("entry", "family", "handler", "method", "path")

    def __init__(
        self,
        method: str,
        path: str,
        handler: str,  # "module:function" under idv_mock.api
        family: errors.Family | None,  # None on a "*" row
        entry: dict[str, Any],  # the row as api.json has it: schemas, examples, media
    ) -> None:
        self.method, self.path, self.handler = method, path, handler
        self.family, self.entry = family, entry

    def __repr__(self) -> str:
        return f"Operation({self.method} {self.path} -> {self.handler})"

    @property
    def short_path(self) -> str:
        """The path under the API's base URL (``/submission``), as the OpenAPI document and
        ``idv-mock verify`` write it."""
        return self.path.removeprefix(API_PREFIX)

    @property
    def operation_id(self) -> str:
        return operation_id(self.method, self.short_path)

    @property
    def tag(self) -> str:
        return str(self.entry["x-idv-tag"])


def fill(template: str, **params: str) -> str:
    """A path template with its parameters filled in (a missing one is a ``KeyError``)."""
    return _PARAM.sub(lambda m: params[m[1]], template)


def operation_id(method: str, path: str) -> str:
    """``getProjectionProjectionId``: the method and the path's words, camel-cased."""
    words = [w for w in re.split(r"[/{}]", path) if w]
    return method.lower() + "".join(w[0].upper() + w[1:] for w in words)


@functools.cache
def operations() -> tuple[Operation, ...]:
    """Every row of ``api.json``'s ``operations``, in the document's order."""
    return tuple(_row(entry) for entry in schemas.load("api.json")["operations"])


def _row(entry: dict[str, Any]) -> Operation:
    method, path = entry["method"], entry["path"]
    where = f"api.json {method} {path}"
    handler = entry.get("x-idv-handler", "")
    if not re.fullmatch(r"[a-z_]+:[a-z_]+", handler):
        raise TableError(f"{where}: x-idv-handler must be module:function, not {handler!r}")
    family = None
    if method != ANY:
        family = getattr(errors, entry.get("x-idv-errors", ""), None)
        if not isinstance(family, errors.Family):
            raise TableError(f"{where}: x-idv-errors names no family of errors.py")
        if not isinstance(entry.get("x-idv-tag"), str):
            raise TableError(f"{where}: x-idv-tag is missing")
    return Operation(method, path, handler, family, entry)


@functools.cache
def by_path() -> dict[str, dict[str, Operation]]:
    """Path -> method -> row, paths in the document's order, methods in ``METHOD_ORDER``
    (the ``"*"`` row, if any, last)."""
    found: dict[str, list[Operation]] = {}
    for op in operations():
        found.setdefault(op.path, []).append(op)
    rank = {m: n for n, m in enumerate((*METHOD_ORDER, ANY))}
    return {
        path: {op.method: op for op in sorted(ops, key=lambda op: rank[op.method])}
        for path, ops in found.items()
    }


# the methods a client is likely to try on a path; a strategy's wrong method is one of these
COMMON_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")


def served(template: str) -> tuple[str, ...]:
    """The methods a path serves, in ``METHOD_ORDER``."""
    return tuple(m for m in by_path()[template] if m != ANY)


def refused(template: str) -> tuple[str, ...]:
    """The common methods a path does not serve (answered by its ``"*"`` row or a 405)."""
    return tuple(m for m in COMMON_METHODS if m not in served(template))


@functools.cache
def _by_id() -> dict[str, Operation]:
    return {op.operation_id: op for op in operations() if op.method != ANY}


def find(op_id: str) -> Operation:
    """The row of an OpenAPI operationId (``getSubmission``); a ``KeyError`` names it."""
    try:
        return _by_id()[op_id]
    except KeyError:
        raise KeyError(f"api.json has no operation {op_id}") from None


def path(op_id: str) -> str:
    """The full path template of an operation (``/v3/projection/{projectionId}``)."""
    return find(op_id).path


@functools.cache
def webhooks() -> dict[str, dict[str, str]]:
    """The webhook table, ``api.json``'s ``webhooks``: each vendor trigger, in the vendor's
    order, with its ``event`` (the ``X-Idv-Event`` header) and its payload ``schema``. Every
    other list of triggers (the CLI's, the coverage catalogue, the strategies, the docs'
    tables) is read from it or checked against it (``tests/test_one_list.py``)."""
    found: dict[str, dict[str, str]] = schemas.load("api.json")["webhooks"]
    return found


def triggers() -> tuple[str, ...]:
    return tuple(webhooks())


# schema lists that name every trigger, written from the webhook table by ``make lists``:
# file -> (JSON pointer of the list, how each trigger's entry reads)
DERIVED_LISTS: dict[str, tuple[tuple[str, ...], Callable[[dict[str, str]], Any]]] = {
    "webhook_payload.json": (("anyOf",), lambda row: {"$ref": row["schema"]}),
    "webhook_delivery_record.json": (("properties", "event", "enum"), lambda row: row["event"]),
}


def derived(name: str) -> dict[str, Any]:
    """A schema file of ``DERIVED_LISTS`` as the webhook table says it should read: the file
    with its list of triggers rebuilt, in the table's order (the rest of the file as it is)."""
    import copy

    where, entry = DERIVED_LISTS[name]
    doc = copy.deepcopy(schemas.load(name))
    node = doc
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = [entry(row) for row in webhooks().values()]
    return doc


def write_derived() -> None:
    """``make lists``: rewrite each derived schema list from the webhook table."""
    import orjson

    for name in DERIVED_LISTS:
        path = schemas.schema_dir() / name
        text = orjson.dumps(derived(name), option=orjson.OPT_INDENT_2).decode() + "\n"
        path.write_text(text, encoding="utf-8")
