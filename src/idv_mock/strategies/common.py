"""Shared by the strategies: :class:`Invalid` and :func:`send`, the values read from
``schemas/`` (and the backend's tables), small building blocks, and the parts of valid
requests that the invalid strategies reuse (PATCH data, partial-delete queries, policy and
screening bodies, id lists).

Every part another strategy module uses is here, under a public name, and is imported from
here; a name used by one module only stays private to it. The package's own API is
:mod:`idv_mock.strategies`' ``__all__``."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any

import orjson
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from idv_mock.backend.edits import DATA_FIELDS, PARTS
from idv_mock.ground import errors, operations, schemas

if TYPE_CHECKING:
    import httpx

S = st.SearchStrategy
Pairs = list[tuple[str, Any]]
Kinds = dict[str, S["Invalid"]]

# the calls' paths, from the operation table (schemas/api.json)
SUBMISSION_PATH = operations.path("getSubmission")
PARTIAL_PATH = operations.path("deleteSubmissionPartial")
AML_PATH = operations.path("postSubmissionAml")
MONITOR_PATH = posixpath.dirname(operations.path("postSubmissionAmlMonitorWorklistId"))
PROJECTION_PATH = operations.path("postProjection")


@dataclass(frozen=True, slots=True)
class Invalid:
    """A bad request and the exact response it must get.

    ``request`` holds ``method``, ``url`` (a path starting with ``/v3``) and whichever other
    keyword arguments of ``httpx.Client.request`` it needs (``params``, ``json``,
    ``content``, ``headers``): ``client.request(**invalid.request)`` sends it. ``kind``
    names the rule it breaks, for ``hypothesis.event`` and for the ``kinds`` filter.
    """

    request: dict[str, Any]
    status: int
    body: dict[str, Any]
    kind: str = ""


def send(client: httpx.Client, invalid: Invalid) -> httpx.Response:
    """Send ``invalid.request``; a client whose base URL ends in ``/v3`` works too."""
    kwargs = dict(invalid.request)
    method, url = kwargs.pop("method"), kwargs.pop("url")
    if client.base_url.path.rstrip("/").endswith("/v3"):
        url = url.removeprefix("/v3")
    response: httpx.Response = client.request(method, url, **kwargs)
    return response


# --- values read from the schemas ----------------------------------------------------------

COUNTRIES = schemas.enum("country")
ID_TYPES = schemas.enum("id_type")
GENDERS = schemas.enum("gender")
KYC_RESULTS = schemas.enum("kyc_result")
DATE_PATTERN = schemas.definition("date")["pattern"]
TIMESTAMP_PATTERN = schemas.definition("timestamp")["pattern"]
_PROJECTION = schemas.load("projection_request.json")
PROJECTION_FIELDS: tuple[str, ...] = tuple(_PROJECTION["$defs"]["field"]["enum"])
PROJECTION_NAME = _PROJECTION["properties"]["name"]["pattern"]
_GET_QUERY = schemas.load("get_submission_query.json")["properties"]
GET_PARAMS = tuple(name for name in _GET_QUERY if name != "data")  # data: secure projects
REQUEST_TYPES: tuple[str, ...] = tuple(_GET_QUERY["request_type"]["enum"])
MAX_COUNT = 2000  # gaps.md
THRESHOLD_SCHEMA = schemas.load("aml_request.json")["properties"]["amlThreshold"]
MAX_IDS: int = schemas.load("monitor_request.json")["properties"]["submissionIds"]["maxItems"]
_PATCH = schemas.load("patch_submission_request.json")
PATCH_PROPERTIES: dict[str, Any] = _PATCH["properties"]["data"]["properties"]
# gaps.md's PATCH table, in its order: the order in which property values are checked
PATCH_CHECK_ORDER = (
    *("idType", "issuingCountry", "fullName", "firstName", "lastName", "gender"),
    *("birthDate", "issueDate", "expireDate", "nationality", "kycStatus"),
    *("identityNumber", "documentNumber", "serialNumber", "memo"),
)
PARTIAL_FIELDS = tuple(sorted(PARTS))  # api-v3.md 4.4, as the backend's table holds them
PARTIAL_DATA_FIELDS = tuple(sorted(DATA_FIELDS))
MISSING_RECORD = errors.MISSING_RECORD


# --- small building blocks -----------------------------------------------------------------


class _Absent:
    """Marks a member or parameter that a drawn request leaves out."""


ABSENT: Any = _Absent()
_CHARS = st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"])
ASCII = st.characters(codec="ascii", exclude_categories=["Cc"])
IDENTIFIERS = st.from_regex(r"[a-z][a-zA-Z0-9_]{0,11}", fullmatch=True)
NON_STRINGS: S[Any] = st.sampled_from([0, 42, -1, 1.5, True, False, None, [], ["x"], {}])
NOT_NULL: S[Any] = NON_STRINGS.filter(lambda v: v is not None)


def texts(min_size: int = 1, max_size: int = 24) -> S[str]:
    """Any text that JSON and a query string carry (no surrogates, no control characters)."""
    return st.text(_CHARS, min_size=min_size, max_size=max_size)


def maybe(strategy: S[Any]) -> S[Any]:
    return st.one_of(st.just(ABSENT), strategy)


def make_body(**members: Any) -> dict[str, Any]:
    return {k: v for k, v in members.items() if v is not ABSENT}


def make_pairs(**params: Any) -> Pairs:
    return [(k, v) for k, v in params.items() if v is not ABSENT]


def make_request(method: str, url: str, **kwargs: Any) -> dict[str, Any]:
    return {"method": method, "url": url, **{k: v for k, v in kwargs.items() if v is not None}}


def wrong_keys() -> S[dict[str, str]]:
    """An ``x-api-key`` header no project has; it overrides the client's own."""
    keys = st.from_regex(r"wrong-key-[A-Za-z0-9]{1,16}", fullmatch=True)
    return keys.map(lambda key: {"x-api-key": key})


def _pool(values: Sequence[str], what: str) -> tuple[str, ...]:
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise InvalidArgument(f"{what} must be a sequence of strings, got {values!r}")
    if not values or not all(isinstance(v, str) and v for v in values):
        raise InvalidArgument(f"{what} must hold at least one non-empty string: {values!r}")
    return tuple(values)


def given_values(values: Sequence[str], what: str) -> S[str]:
    """``sampled_from(values)``, checked at the first draw (the list may fill up later)."""
    return st.deferred(lambda: st.sampled_from(_pool(values, what)))


def pick_kinds(table: Kinds, kinds: Collection[str] | None, call: str) -> S[Invalid]:
    """The failure kinds asked for (all by default), checked at the first draw."""

    def chosen() -> S[Invalid]:
        names = list(table) if kinds is None else list(kinds)
        unknown = sorted(set(names) - set(table))
        if unknown or not names:
            raise InvalidArgument(f"{call} kinds are {sorted(table)}; got {names!r}")
        return st.one_of([table[name] for name in names])

    return st.deferred(chosen)


def unknown_ids(known: Sequence[str], prefix: str = "missing-") -> S[str]:
    """Ids the mock never makes (it makes UUIDs), and not among ``known``."""
    ids = st.from_regex(rf"{prefix}[0-9a-f]{{8,16}}", fullmatch=True)
    return ids.filter(lambda i: i not in known)


def unregistered_admins(admins: Sequence[str]) -> S[str]:
    """E-mails or plain words that are not registered administrators (in any case)."""
    addresses = st.from_regex(r"[a-z0-9]{1,12}@[a-z0-9]{1,10}\.(com|org|net)", fullmatch=True)
    return (addresses | IDENTIFIERS).filter(lambda a: a.lower() not in {x.lower() for x in admins})


def emails() -> S[str]:
    return st.from_regex(r"[a-z0-9._]{1,12}@[a-z0-9]{1,10}\.(com|org|net|io)", fullmatch=True)


def _is_json(raw: bytes) -> bool:
    try:
        orjson.loads(raw)
    except orjson.JSONDecodeError:
        return False
    return True


def non_json_bodies() -> S[bytes]:
    """Bodies that do not parse as JSON at all."""
    fixed = st.sampled_from([b"", b"{", b"[1, 2", b"{'a': 1}", b"a=b&c=d", b"\xff\xfe", b"nul"])
    words = st.from_regex(r"[A-Za-z=&]{1,20}", fullmatch=True).map(str.encode)
    return fixed | words.filter(lambda raw: not _is_json(raw))


def json_non_objects() -> S[bytes]:
    return st.sampled_from([b"[]", b"1", b'"text"', b"null", b"true", b'[{"a": "b"}]'])


def some_of(names: Sequence[str], min_size: int = 1, max_size: int = 5) -> S[list[str]]:
    return st.lists(st.sampled_from(names), min_size=min_size, max_size=max_size, unique=True)


def dates() -> S[str]:
    """Real calendar dates, which every date check (format or calendar) accepts."""
    return st.dates(date(1930, 1, 1), date(2035, 12, 31)).map(date.isoformat)


_DATE_MUTATIONS: tuple[Callable[[str], str], ...] = (
    lambda d: d.replace("-", "/"),
    lambda d: d.replace("-", ""),
    lambda d: d[2:],
    lambda d: d + "T00:00:00",
    lambda d: " " + d,
    lambda d: d[:5] + "13" + d[7:],
    lambda d: d[:5] + "00" + d[7:],
    lambda d: d[:8] + "32",
    lambda d: d[:5] + d[6:],
)


def bad_dates(pattern: str = DATE_PATTERN) -> S[str]:
    """Near misses of YYYY-MM-DD, and other text, that ``pattern`` refuses."""
    mutated = st.builds(lambda d, f: f(d), dates(), st.sampled_from(_DATE_MUTATIONS))
    compiled = re.compile(pattern)
    return (mutated | texts(0, 12)).filter(lambda t: not compiled.fullmatch(t))


def not_in(allowed: Sequence[str]) -> S[str]:
    """Near misses of enumerated values (case, plural, cut short, blank), and other text."""
    near = st.sampled_from(allowed).flatmap(
        lambda v: st.sampled_from([v.upper(), v.title(), v + "s", v[:-1], " " + v, ""])
    )
    return (near | texts(0, 12)).filter(lambda v: v not in allowed)


def joined(names: S[list[str]]) -> S[str]:
    """Names joined by commas, with or without blanks around them."""
    separators = st.sampled_from([",", ", ", " ,", " , "])
    return st.builds(lambda sep, ns: sep.join(ns), separators, names)


@st.composite
def unknown_names(draw: st.DrawFn, allowed: Sequence[str], wrong: S[str]) -> list[str]:
    """Well-formed names, 1-2 of them unknown, in a random order."""
    unknown = st.lists(wrong.filter(lambda n: n not in allowed), min_size=1, max_size=2)
    return draw(st.permutations([*draw(some_of(allowed, 0)), *dict.fromkeys(draw(unknown))]))


def listed(names: list[str], allowed: Sequence[str]) -> str:
    return ", ".join(n for n in names if n not in allowed)


# --- valid parts, shared by the valid strategies and the invalid ones ----------------------


def patch_rule(prop: str) -> dict[str, Any]:
    """A PATCH property's schema, its ``defs.json`` reference resolved."""
    spec: dict[str, Any] = PATCH_PROPERTIES[prop]
    ref = spec.get("$ref", "")
    return schemas.definition(ref.rpartition("/")[2]) if ref else spec


def _valid_value(prop: str) -> S[str]:
    rule = patch_rule(prop)
    if "enum" in rule:
        return st.sampled_from(tuple(rule["enum"]))
    if "pattern" in rule:  # format only: 1999-11-31 passes (gaps.md)
        return st.from_regex(rule["pattern"], fullmatch=True, alphabet=ASCII)
    return texts(0, 30)


_VALID_VALUES = {prop: _valid_value(prop) for prop in PATCH_CHECK_ORDER}


@st.composite
def patch_data(draw: st.DrawFn) -> dict[str, str]:
    """1-5 properties of gaps.md's table, each with a value its rule accepts."""
    return {name: draw(_VALID_VALUES[name]) for name in draw(some_of(PATCH_CHECK_ORDER))}


@st.composite
def partial_query(draw: st.DrawFn, sids: S[str]) -> dict[str, str]:
    parts = draw(some_of(PARTIAL_FIELDS))
    query = {draw(st.sampled_from(["submission_id", "submissionId"])): draw(sids)}
    query["fields"] = draw(joined(st.just(parts)))
    if "data" in parts and draw(st.booleans()):
        query["data_fields"] = draw(joined(some_of(PARTIAL_DATA_FIELDS)))
    if draw(st.booleans()):
        query["admin_name"] = draw(emails())
    return query


POLICY_NAMES = st.from_regex(PROJECTION_NAME, fullmatch=True, alphabet=ASCII).filter(
    lambda n: len(n) <= 40
)


def policy_body(name: Any = ABSENT, mode: Any = ABSENT, fields: Any = ABSENT) -> dict[str, Any]:
    return make_body(name=name, mode=mode, fields=fields)


THRESHOLDS = st.integers(THRESHOLD_SCHEMA["minimum"], THRESHOLD_SCHEMA["maximum"])


def screening_body(sid: Any = ABSENT, threshold: Any = ABSENT) -> dict[str, Any]:
    return make_body(submissionId=sid, amlThreshold=threshold)


def id_lists(ids: S[str], unique: bool = False) -> S[list[str]]:
    return st.lists(ids, min_size=1, max_size=MAX_IDS, unique=unique)
