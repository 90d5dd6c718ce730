"""The page of ``GET /v3/submission`` for a non-secure project: its query, read and joined
from the stored items. The API's handler and fast lane answer with it, and the dashboard's
list reads it, so a page there holds exactly what the API would return (api-v3.md 4.2;
gaps.md "GET /submission")."""

from __future__ import annotations

import functools
import re
from collections.abc import Container
from datetime import date

import orjson

from idv_mock.backend import Project, Service
from idv_mock.backend.store import Selection, SortKey
from idv_mock.ground import schemas
from idv_mock.ground.by_value import ByValue
from idv_mock.ground.errors import GET_SUBMISSION as ERR

# the spec's parameter table, in its order (also the order of format checks)
PARAMS = (
    "submission_id",
    "userid",
    "email",
    "count",
    "nextpage_id",
    "nextpage_date",
    "start_date",
    "end_date",
    "request_type",
)
_NAMES = frozenset(PARAMS)
REQUEST_TYPES = frozenset(
    schemas.load("get_submission_query.json")["properties"]["request_type"]["enum"]
)
MAX_COUNT = 2000


@functools.cache
def _pattern(name: str) -> re.Pattern[str]:
    """A format of ``defs.json`` compiled when a query first has such a parameter (a
    first GET seldom has a date or a page key: each compile was a tenth of a millisecond)."""
    return re.compile(schemas.definition(name)["pattern"])


class Query(ByValue):
    """A parsed query. Equal, hashed and shown by value, read-only by convention
    (``ByValue``: not a frozen dataclass, whose generated methods were compiled at import,
    on every first use)."""

    __slots__ = ("only_id", "reduced", "request_type", "selection")
    FIELDS = ("selection", "reduced", "request_type", "only_id")

    def __init__(
        self,
        selection: Selection,
        reduced: bool,
        request_type: str | None,
        only_id: str | None = None,
    ) -> None:
        self.selection, self.reduced, self.request_type = selection, reduced, request_type
        # the id when the query names nothing else (no filter, date, paging or request
        # type): the polled call, answered from ``_ONE`` while its stored bytes stay the same
        self.only_id = only_id


def plain_page(service: Service, project: Project, found: dict[str, list[str]]) -> bytes:
    """The body of a non-secure project's GET (raises its ApiError): one function for the
    Starlette route, the fast lane (``fastlane.py``) and the dashboard's list, so they
    cannot drift apart."""
    return page_json(service, project, plain_query(found))


def plain_query(found: dict[str, list[str]]) -> Query:
    """The query of a non-secure project's GET (raises its ApiError): a function of the
    parameters alone, so the fast lane may keep it for the next call."""
    return parse(single_values(found, _NAMES))


def page_json(service: Service, project: Project, query: Query) -> bytes:
    """The page as orjson would write ``{"Items": [...], "nextpageKey": {...}}``, joined from
    each item's JSON. The only code that knows what ``service.read`` returns."""
    sid = query.only_id
    if sid is None:
        items, next_key = service.read(
            project, query.selection, reduced=query.reduced, request_type=query.request_type
        )
        return _JOINED.page(items, next_key)
    blob = project.store.blobs.get(sid)
    kept = _ONE.get(sid)
    if kept is not None and kept[0] is blob and not project.projections.applied.get(sid):
        return kept[1]
    items, next_key = service.read(project, query.selection, reduced=False, request_type=None)
    body = _JOINED.page(items, next_key)
    if items and items[0] is blob:  # the stored bytes as they are: the page is theirs alone
        if len(_ONE) >= ONE_LIMIT:
            _ONE.clear()
        _ONE[sid] = (items[0], body)
    return body


# A submission asked for by id alone, with the page of its stored bytes: while the project
# stores the same bytes object for the id (a change stores new bytes) and no projection hid
# fields of it, ``service.read`` gives those bytes as they are, so the page is the same.
# Polling one id is what load tests and clients do most: this spares the read and the
# memo's key per call. Bounded by ONE_LIMIT pages (a page of one is about 7 KB, mostly
# the same object ``_JOINED`` keeps). A packed store's items are not kept here (their JSON
# is a decompressed copy, not the stored bytes): they go through the read each time.
ONE_LIMIT = 1024
_ONE: dict[str, tuple[bytes, bytes]] = {}


class _Joined:
    """Pages joined lately, found again by the identity of their items: stored items are
    immutable bytes, never changed in place (a change stores new bytes), so the same item
    objects and next key make the same page. A polled submission is then not copied again
    per call (nor kept once per call by the journal). Bounded by ``BUDGET`` bytes of pages;
    the items are kept with their page, so no id can be reused while it is a key."""

    BUDGET = 8 * 1024 * 1024

    def __init__(self) -> None:
        self.pages: dict[tuple[object, ...], tuple[list[bytes], bytes]] = {}
        self.size = 0

    def page(self, items: list[bytes], next_key: SortKey | None) -> bytes:
        key = (next_key, *map(id, items))
        found = self.pages.get(key)
        if found is not None:
            return found[1]
        body = _join(items, next_key)
        if len(body) <= self.BUDGET // 8:
            if self.size + len(body) > self.BUDGET:
                self.pages.clear()
                self.size = 0
            self.pages[key] = (items, body)
            self.size += len(body)
        return body


def _join(items: list[bytes], next_key: SortKey | None) -> bytes:
    parts = [b'{"Items":[']
    for item in items:  # one join, one copy of a page that may be megabytes
        parts += (item, b",")
    if items:
        parts.pop()
    parts.append(b"]")
    if next_key is not None:
        parts += [b',"nextpageKey":', orjson.dumps({"id": next_key[1], "created_at": next_key[0]})]
    parts.append(b"}")
    return b"".join(parts)


_JOINED = _Joined()


# --- the query ---


def single_values(found: dict[str, list[str]], allowed: Container[str]) -> dict[str, str]:
    for name in found:
        if name not in allowed:
            raise ERR.error("invalid_parameter", name)
    for name, values in found.items():
        if len(values) > 1:
            raise ERR.error("invalid_format", name)
    return {name: values[0] for name, values in found.items()}


def parse(params: dict[str, str]) -> Query:
    """Check formats in the table's order; the first failure answers."""
    count = _count(params.get("count"))
    after = _after(params.get("nextpage_id"), params.get("nextpage_date"))
    start = _date(params, "start_date")
    end = _date(params, "end_date")
    request_type = params.get("request_type")
    if request_type is not None and request_type not in REQUEST_TYPES:
        raise ERR.error("invalid_format", "request_type")
    sid, userid = params.get("submission_id"), params.get("userid")
    email = params.get("email")
    sel = Selection(sid, userid, email, start, end, after, count)
    alone = userid is None and email is None and after is None and start is None and end is None
    only_id = sid if alone and request_type is None else None
    return Query(sel, userid is not None and sid is None, request_type, only_id)


def _count(text: str | None) -> int:
    if text is None:
        return 50
    if (
        not (text.isascii() and text.isdigit() and len(text) <= 4)
        or not 1 <= int(text) <= MAX_COUNT
    ):
        raise ERR.error("invalid_format", "count")
    return int(text)


def _after(page_id: str | None, page_date: str | None) -> tuple[str, str] | None:
    if page_id is None and page_date is None:
        return None
    if page_date is not None and not _pattern("timestamp").fullmatch(page_date):
        raise ERR.error("invalid_format", "nextpage_date")
    if page_id is None or page_date is None:
        raise ERR.error("missing_data")
    return (page_date, page_id)


def _date(params: dict[str, str], name: str) -> str | None:
    text = params.get(name)
    if text is None:
        return None
    try:
        if not _pattern("date").fullmatch(text):
            raise ValueError(text)
        date.fromisoformat(text)
    except ValueError:
        raise ERR.error("invalid_format", name) from None
    return text
