"""Contract coverage: which of the mock's behaviours each project exhibited (issue 36).

A suite that passes proves only what it made the mock do. The catalogue lists what the
mock can do, derived from the tables the mock itself runs on (never a list of its own):
every response of the operation table (``schemas/api.json``) with each error of its
family (``errors.py``), every webhook trigger (``events.EVENT_NAMES``), every time rule
registered with the project clocks (``parts/clocks.py``), every delivery lever of
``schemas/webhook_delivery.json`` and every hosted-form page (``liveform_flow.STEPS``)
and error page (``errors.LIVEFORM``). Counts are kept by project id outside the projects,
so a project reset keeps them; :meth:`CoverageCounts.clear` forgets them.

Recording is on every API call's path (``parts.calls.Calls.record``, under the service's lock):
a tuple key and a dict increment, and, for an error only, reading its body once to name
the catalogue entry. The rest (ids, areas, ranking) happens when someone reads the report.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Iterable
from typing import Any

import orjson

from idv_mock.backend.form_state import STEPS
from idv_mock.ground import errors, operations, schemas
from idv_mock.ground.by_value import ByValue

KINDS = ("response", "webhook", "time", "delivery", "page")
# "never" is ranked by where integrations break most (docs/coverage.md "Ranking"): a missed
# webhook or time rule first, then the delivery faults, the error answers, the plain
# answers, and the hosted form's pages last.
RANKS = {"webhook": 0, "time": 1, "delivery": 2, "error": 3, "response": 4, "page": 5}
NO_PROJECT = ""  # where a page of an unknown project is counted (the form's bad-path)
LEVERS_NOT_FAULTS = frozenset({"events"})  # a filter on the levers, not a misbehaviour
STEP_PAGE = "/liveform/s/{session}/"
ERROR_PAGE = "/error-page/"


@functools.cache
def _triggers() -> dict[str, str]:
    """A webhook's trigger by its event name (``event_codes`` loaded with the first one
    seen or the first report: an API call never asks)."""
    from idv_mock.backend.event_codes import EVENT_NAMES

    return {event: trigger for trigger, event in EVENT_NAMES.items()}


class Item(ByValue):
    """One behaviour of the catalogue; ``how`` says how a suite makes the mock show it.
    Equal, hashed and shown by value, read-only by convention (``ByValue``: not a frozen
    dataclass, whose generated methods were compiled at import, on every first use)."""

    __slots__ = ("area", "how", "id", "kind")
    FIELDS = ("kind", "id", "area", "how")

    def __init__(self, kind: str, id: str, area: str, how: str) -> None:
        self.kind, self.id, self.area, self.how = kind, id, area, how


def _success_statuses(op: operations.Operation) -> list[int]:
    return sorted(int(s) for s in op.entry["responses"] if int(s) < 400)


@functools.cache
def _response_items() -> tuple[Item, ...]:
    found: list[Item] = []
    for op in operations.operations():
        if op.method == operations.ANY or op.family is None:
            continue
        head = f"{op.method} {op.path}"
        for status in _success_statuses(op):
            how = f"call {head} as the spec describes it"
            found.append(Item("response", f"{head} {status}", op.tag, how))
        seen: set[str] = set()
        for entry in op.family.entries:
            if entry.key in seen:
                continue
            seen.add(entry.key)
            rule = {"match": {"method": op.method, "path": op.path}, "error": entry.key}
            fault = f"POST /__admin/projects/{{project}}/faults {orjson.dumps(rule).decode()}"
            how = fault if entry.fault_only else f"send a call the mock refuses so, or {fault}"
            item_id = f"{head} {entry.status} {entry.key}"
            found.append(Item("response", item_id, op.tag, how))
    return tuple(found)


def _levers() -> list[str]:
    props = schemas.load("webhook_delivery.json")["properties"]
    return [name for name in props if name not in LEVERS_NOT_FAULTS]


def catalogue(time_rules: Iterable[str]) -> tuple[Item, ...]:
    """Every item, in report order: responses by operation, webhooks, time rules, delivery
    levers, pages. ``time_rules``: the kinds registered with the clocks (``clocks.rules``)."""
    from idv_mock.backend.event_codes import EVENT_NAMES  # with the report (see _triggers)

    items = list(_response_items())
    for trigger in EVENT_NAMES:
        how = f"idv-mock trigger {trigger}"
        items.append(Item("webhook", f"webhook {trigger}", "webhooks", how))
    for rule in time_rules:
        how = f"have a {rule} fall due, then POST /__admin/projects/{{project}}/clock/advance"
        items.append(Item("time", f"time {rule}", "time", how))
    for lever in _levers():
        how = (
            f"@pytest.mark.idv_webhook_delivery({lever}=...), or PUT "
            f'/__admin/projects/{{project}}/webhook-delivery {{"{lever}": ...}}'
        )
        items.append(Item("delivery", f"delivery {lever}", "delivery", how))
    for step in STEPS:
        how = "open a hosted-form link (POST /__admin/projects/{project}/hosted-submissions)"
        if step != STEPS[0]:
            how = f"walk the hosted form to its {step} step"
        items.append(Item("page", f"page {STEP_PAGE}{step}", "hosted form", how))
    seen: set[str] = set()
    for entry in errors.LIVEFORM.entries:
        if entry.key not in seen:
            seen.add(entry.key)
            how = f"a link or step the form refuses with {entry.code}: {entry.message}"
            page = f"page {ERROR_PAGE}{entry.key}"
            items.append(Item("page", page, "hosted form", how))
    return tuple(items)


# --- recording ---
_TEMPLATES: dict[str, str | None] = {}  # a concrete path -> its operation's path (bounded)
_TEMPLATE_LIMIT = 4096


@functools.cache
def _patterns() -> tuple[tuple[re.Pattern[str], str], ...]:
    paths = {op.path for op in operations.operations()}
    return tuple((re.compile(re.sub(r"\{[^}]+\}", "[^/]+", p) + "$"), p) for p in sorted(paths))


@functools.cache
def _literal_paths() -> frozenset[str]:
    """The operation paths without a parameter: each is its own template (what ``_scan``
    finds for it too: a parameter's ``[^/]+`` sorts after every letter, so no pattern of a
    parameter comes before the literal path it could match), found without compiling the
    patterns: the first call counted, a first test's GET, needs none of them."""
    return frozenset(op.path for op in operations.operations() if "{" not in op.path)


def _scan(path: str) -> str | None:
    return next((p for rx, p in _patterns() if rx.match(path)), None)


def template(path: str) -> str | None:
    """The operation path a concrete path belongs to (None: no operation's)."""
    try:
        return _TEMPLATES[path]
    except KeyError:
        pass
    found = path if path in _literal_paths() else _scan(path)
    if len(_TEMPLATES) >= _TEMPLATE_LIMIT:
        _TEMPLATES.clear()
    _TEMPLATES[path] = found
    return found


def error_key(method: str, path: str, body: bytes) -> str:
    """The catalogue entry an error body is (its key), or the body's own code or "?"."""
    try:
        doc = orjson.loads(body)
    except orjson.JSONDecodeError:
        return "?"
    if not isinstance(doc, dict):
        return "?"
    op = operations.by_path().get(path, {}).get(method)
    message = doc.get("message", doc.get("errorMessage"))
    if op is not None and op.family is not None and isinstance(message, str):
        entry = op.family.find(message)
        if entry is not None:
            return entry.key
    return str(doc.get("errorCode", "?"))


class Counts:
    """One project's counts. ``responses`` is changed only under the service's lock (it is
    on every call's path); the rest under the coverage's own lock, since webhook workers
    record from their threads while the service may hold its lock."""

    __slots__ = ("other", "receivers", "responses")

    def __init__(self) -> None:
        # (method, operation path [and error key], status) -> count
        self.responses: dict[tuple[str, str, int], int] = {}
        self.other: dict[str, int] = {}  # item id -> count
        self.receivers: dict[str, dict[str, int]] = {}  # webhook item id -> class -> count


class CoverageCounts:
    """Every project's counts, by project id (a reset project keeps its own)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()  # for ``other`` and ``receivers`` (not ``responses``)
        self.projects: dict[str, Counts] = {}
        self.time_rules: Iterable[str] = ()  # the clocks' rule kinds (set by the service)
        # off only to measure what counting costs (bench: the mock with and without it)
        self.recording = True

    def counts(self, project_id: str) -> Counts:
        found = self.projects.get(project_id)
        if found is None:
            found = self.projects[project_id] = Counts()
        return found

    def response(self, project_id: str, method: str, path: str, status: int, body: bytes) -> None:
        """An API call's answer (under the service's lock: ``Calls.record``), counted by its
        operation's path (so the keys stay few: a path with ids is one key), and for an
        error by its catalogue entry. A call of no operation is not counted."""
        try:
            tpl = _TEMPLATES[path]  # the plain case: one look-up
        except KeyError:
            tpl = template(path)
        if tpl is None:
            return
        counts = self.projects.get(project_id)
        if counts is None:
            counts = self.counts(project_id)
        if status >= 400:
            tpl = f"{tpl} {error_key(method, tpl, body)}"
        key = (method, tpl, status)
        responses = counts.responses
        responses[key] = responses.get(key, 0) + 1

    def note(self, project_id: str, item_id: str) -> None:
        """A time rule, delivery fault or page the project showed."""
        with self.lock:
            counts = self.counts(project_id)
            counts.other[item_id] = counts.other.get(item_id, 0) + 1

    def webhook_seen(self, project_id: str, event: str, receiver: str, first: bool) -> None:
        """An attempt to deliver ``event`` (the X-Idv-Event name) and the receiver's class;
        the webhook counts once, at its first attempt."""
        trigger = _triggers().get(event, event)
        item_id = f"webhook {trigger}"
        with self.lock:
            counts = self.counts(project_id)
            if first:
                counts.other[item_id] = counts.other.get(item_id, 0) + 1
            classes = counts.receivers.setdefault(item_id, {})
            classes[receiver] = classes.get(receiver, 0) + 1

    def clear(self, project_id: str | None = None) -> None:
        with self.lock:
            if project_id is None:
                self.projects.clear()
            else:
                self.projects.pop(project_id, None)

    def merged(self, project_ids: Iterable[str] | None) -> tuple[dict[str, int], dict[str, Any]]:
        """Item id -> count and webhook id -> receiver classes, over the projects asked
        (None: all). The caller holds the service's lock (for ``responses``)."""
        counts: dict[str, int] = {}
        receivers: dict[str, dict[str, int]] = {}
        wanted = None if project_ids is None else set(project_ids)
        with self.lock:
            chosen = [c for pid, c in self.projects.items() if wanted is None or pid in wanted]
            for c in chosen:
                for (method, where, status), n in c.responses.items():
                    tpl, _, key = where.partition(" ")  # an error's key follows its path
                    item_id = (
                        f"{method} {tpl} {status} {key}" if key else f"{method} {tpl} {status}"
                    )
                    counts[item_id] = counts.get(item_id, 0) + n
                for item_id, n in c.other.items():
                    counts[item_id] = counts.get(item_id, 0) + n
                for item_id, classes in c.receivers.items():
                    mine = receivers.setdefault(item_id, {})
                    for cls, n in classes.items():
                        mine[cls] = mine.get(cls, 0) + n
        return counts, receivers

    def report(self, project_ids: Iterable[str] | None = None) -> dict[str, Any]:
        """``{"catalogue", "met", "items", "never"}`` (the control API's answer)."""
        counts, receivers = self.merged(project_ids)
        shown: list[dict[str, Any]] = []
        for item in catalogue(self.time_rules):
            row: dict[str, Any] = {
                "kind": item.kind,
                "id": item.id,
                "area": item.area,
                "count": counts.get(item.id, 0),
            }
            if item.kind == "webhook":
                row["receiver"] = receivers.get(item.id, {})
            row["how"] = item.how
            shown.append(row)
        return summed(shown)


def summed(items: list[dict[str, Any]]) -> dict[str, Any]:
    """The report of catalogue rows (in catalogue order) with their counts: ``met`` and the
    ranked ``never`` follow from them."""
    order = {row["id"]: n for n, row in enumerate(items)}
    never = sorted(
        (row for row in items if not row["count"]),
        key=lambda row: (rank_of(row["kind"], row["id"]), order[row["id"]]),
    )
    return {
        "catalogue": len(items),
        "met": sum(1 for row in items if row["count"]),
        "items": items,
        "never": [row["id"] for row in never],
    }


def combine(reports: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Several reports of one catalogue (a session's services, xdist's workers) as one."""
    rows: dict[str, dict[str, Any]] = {}
    for doc in reports:
        for row in doc["items"]:
            mine = rows.get(row["id"])
            if mine is None:
                rows[row["id"]] = {
                    **row,
                    **({"receiver": dict(row["receiver"])} if "receiver" in row else {}),
                }
                continue
            mine["count"] += row["count"]
            for cls, n in row.get("receiver", {}).items():
                mine["receiver"][cls] = mine["receiver"].get(cls, 0) + n
    return summed(list(rows.values()))


def rank_of(kind: str, item_id: str) -> int:
    """Where a never-met item goes (``RANKS``): an error answer's id names its error."""
    if kind == "response" and len(item_id.split(" ")) == 4:
        return RANKS["error"]
    return RANKS[kind]


def receiver_class(status: int | None) -> str:
    """How a receiver answered an attempt: ``2xx``, ``4xx``, ``5xx`` (or the status's own
    hundred), or ``unreachable`` (no answer at all)."""
    if status is None:
        return "unreachable"
    return f"{status // 100}xx"
