"""Hypothesis strategies for what a client sends idv-mock: valid requests, and wrong ones.

Valid strategies draw bodies and queries the mock accepts; their allowed values (countries,
id types, the date pattern, projection fields, limits) are read from ``schemas/`` through
:mod:`idv_mock.schemas`, so a strategy cannot drift from the server's own tables.

The ``invalid_*`` strategies draw an :class:`Invalid`: a bad request *together with* the
exact response the mock (and the real service) must give it. Where a request breaks
several rules, the expected error is the one the documented check order (gaps.md, the
README's "Spec gaps and assumptions") makes fire first, and drawn requests are often wrong
in several ways on purpose: that is what tests the order. The order is written here, not
imported from the backend, so that a property test catches a server checking in another
order. Error bodies come from the catalogue (:mod:`idv_mock.errors`); the property tests
compare them with the spec's literal texts. Each ``invalid_*`` strategy takes ``kinds`` to
draw only some of its failure kinds (the names are listed in its docstring).

Ids and administrators are plain sequences, checked when a value is drawn rather than when
the strategy is built, as Hypothesis' own strategies do.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import date
from functools import partial
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import orjson
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from idv_mock import errors, schemas
from idv_mock.backend.edits import DATA_FIELDS, PARTS

if TYPE_CHECKING:
    import httpx

__all__ = [
    "Invalid",
    "aml_requests",
    "edit_requests",
    "invalid_aml_requests",
    "invalid_edit_requests",
    "invalid_get_queries",
    "invalid_monitor_requests",
    "invalid_partial_delete_queries",
    "invalid_projection_requests",
    "monitor_requests",
    "partial_delete_queries",
    "projection_requests",
    "send",
    "submissions",
]

S = st.SearchStrategy
Pairs = list[tuple[str, Any]]
Kinds = dict[str, S["Invalid"]]

SUBMISSION_PATH = "/v3/submission"
PARTIAL_PATH = "/v3/submission/partial"
AML_PATH = "/v3/submission/aml"
MONITOR_PATH = "/v3/submission/aml/monitor"
PROJECTION_PATH = "/v3/projection"


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
_THRESHOLD = schemas.load("aml_request.json")["properties"]["amlThreshold"]
MAX_IDS: int = schemas.load("monitor_request.json")["properties"]["submissionIds"]["maxItems"]
_PATCH_DATA: dict[str, Any] = schemas.load("patch_submission_request.json")["properties"]["data"][
    "properties"
]
# gaps.md's PATCH table, in its order: the order in which property values are checked
PATCH_CHECK_ORDER = (
    *("idType", "issuingCountry", "fullName", "firstName", "lastName", "gender"),
    *("birthDate", "issueDate", "expireDate", "nationality", "kycStatus"),
    *("identityNumber", "documentNumber", "serialNumber", "memo"),
)
PARTIAL_FIELDS = tuple(sorted(PARTS))  # api-v3.md 4.4, as the backend's table holds them
PARTIAL_DATA_FIELDS = tuple(sorted(DATA_FIELDS))
MISSING_RECORD = {"statusCode": 404, "error": {"code": "MAPI-001", "message": "Resource not found"}}


# --- small building blocks -----------------------------------------------------------------


class _Absent:
    """Marks a member or parameter that a drawn request leaves out."""


ABSENT: Any = _Absent()
_CHARS = st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"])
_ASCII = st.characters(codec="ascii", exclude_categories=["Cc"])
_IDENTIFIERS = st.from_regex(r"[a-z][a-zA-Z0-9_]{0,11}", fullmatch=True)
_NON_STRINGS: S[Any] = st.sampled_from([0, 42, -1, 1.5, True, False, None, [], ["x"], {}])
_NOT_NULL: S[Any] = _NON_STRINGS.filter(lambda v: v is not None)


def _texts(min_size: int = 1, max_size: int = 24) -> S[str]:
    """Any text that JSON and a query string carry (no surrogates, no control characters)."""
    return st.text(_CHARS, min_size=min_size, max_size=max_size)


def _maybe(strategy: S[Any]) -> S[Any]:
    return st.one_of(st.just(ABSENT), strategy)


def _body(**members: Any) -> dict[str, Any]:
    return {k: v for k, v in members.items() if v is not ABSENT}


def _pairs(**params: Any) -> Pairs:
    return [(k, v) for k, v in params.items() if v is not ABSENT]


def _request(method: str, url: str, **kwargs: Any) -> dict[str, Any]:
    return {"method": method, "url": url, **{k: v for k, v in kwargs.items() if v is not None}}


def _wrong_keys() -> S[dict[str, str]]:
    """An ``x-api-key`` header no project has; it overrides the client's own."""
    keys = st.from_regex(r"wrong-key-[A-Za-z0-9]{1,16}", fullmatch=True)
    return keys.map(lambda key: {"x-api-key": key})


def _pool(values: Sequence[str], what: str) -> tuple[str, ...]:
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise InvalidArgument(f"{what} must be a sequence of strings, got {values!r}")
    if not values or not all(isinstance(v, str) and v for v in values):
        raise InvalidArgument(f"{what} must hold at least one non-empty string: {values!r}")
    return tuple(values)


def _given(values: Sequence[str], what: str) -> S[str]:
    """``sampled_from(values)``, checked at the first draw (the list may fill up later)."""
    return st.deferred(lambda: st.sampled_from(_pool(values, what)))


def _pick(table: Kinds, kinds: Collection[str] | None, call: str) -> S[Invalid]:
    """The failure kinds asked for (all by default), checked at the first draw."""

    def chosen() -> S[Invalid]:
        names = list(table) if kinds is None else list(kinds)
        unknown = sorted(set(names) - set(table))
        if unknown or not names:
            raise InvalidArgument(f"{call} kinds are {sorted(table)}; got {names!r}")
        return st.one_of([table[name] for name in names])

    return st.deferred(chosen)


def _unknown_ids(known: Sequence[str], prefix: str = "missing-") -> S[str]:
    """Ids the mock never makes (it makes UUIDs), and not among ``known``."""
    ids = st.from_regex(rf"{prefix}[0-9a-f]{{8,16}}", fullmatch=True)
    return ids.filter(lambda i: i not in known)


def _strangers(admins: Sequence[str]) -> S[str]:
    """E-mails or plain words that are not registered administrators (in any case)."""
    emails = st.from_regex(r"[a-z0-9]{1,12}@[a-z0-9]{1,10}\.(com|org|net)", fullmatch=True)
    return (emails | _IDENTIFIERS).filter(lambda a: a.lower() not in {x.lower() for x in admins})


def _emails() -> S[str]:
    return st.from_regex(r"[a-z0-9._]{1,12}@[a-z0-9]{1,10}\.(com|org|net|io)", fullmatch=True)


def _is_json(raw: bytes) -> bool:
    try:
        orjson.loads(raw)
    except orjson.JSONDecodeError:
        return False
    return True


def _not_json() -> S[bytes]:
    """Bodies that do not parse as JSON at all."""
    fixed = st.sampled_from([b"", b"{", b"[1, 2", b"{'a': 1}", b"a=b&c=d", b"\xff\xfe", b"nul"])
    words = st.from_regex(r"[A-Za-z=&]{1,20}", fullmatch=True).map(str.encode)
    return fixed | words.filter(lambda raw: not _is_json(raw))


def _json_non_objects() -> S[bytes]:
    return st.sampled_from([b"[]", b"1", b'"text"', b"null", b"true", b'[{"a": "b"}]'])


def _some(names: Sequence[str], min_size: int = 1, max_size: int = 5) -> S[list[str]]:
    return st.lists(st.sampled_from(names), min_size=min_size, max_size=max_size, unique=True)


def _dates() -> S[str]:
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


def _bad_dates(pattern: str = DATE_PATTERN) -> S[str]:
    """Near misses of YYYY-MM-DD, and other text, that ``pattern`` refuses."""
    mutated = st.builds(lambda d, f: f(d), _dates(), st.sampled_from(_DATE_MUTATIONS))
    compiled = re.compile(pattern)
    return (mutated | _texts(0, 12)).filter(lambda t: not compiled.fullmatch(t))


def _not_in(allowed: Sequence[str]) -> S[str]:
    """Near misses of enumerated values (case, plural, cut short, blank), and other text."""
    near = st.sampled_from(allowed).flatmap(
        lambda v: st.sampled_from([v.upper(), v.title(), v + "s", v[:-1], " " + v, ""])
    )
    return (near | _texts(0, 12)).filter(lambda v: v not in allowed)


def _joined(names: S[list[str]]) -> S[str]:
    """Names joined by commas, with or without blanks around them."""
    separators = st.sampled_from([",", ", ", " ,", " , "])
    return st.builds(lambda sep, ns: sep.join(ns), separators, names)


# --- submissions (the control API's creation call) -----------------------------------------


def _names() -> S[str]:
    word = st.text(st.characters(categories=["L"]), min_size=1, max_size=12)
    return st.lists(word, min_size=1, max_size=3).map(" ".join)


def _identity() -> S[dict[str, str]]:
    birth = st.dates(date(1930, 1, 1), date(2007, 12, 31)).map(date.isoformat)
    return st.fixed_dictionaries(
        {},
        optional={
            **{k: _names() for k in ("full_name", "first_name", "last_name")},
            "gender": st.sampled_from(GENDERS),
            "nationality": st.sampled_from(COUNTRIES),
            "date_of_birth": birth,
            "idType": st.sampled_from(ID_TYPES),
            "idcard_issuingCountry": st.sampled_from(COUNTRIES),
            "idcard_issueDate": _dates(),
            "idcard_expireDate": _dates(),
        },
    )


def submissions() -> S[dict[str, Any]]:
    """Overrides for ``Service.create_submission`` (and the control API's creation call).

    A partial submission: some identity fields of ``data``, ``userid``, ``email``,
    ``kyc.result``; the mock fills in the rest with Faker data consistent with them.
    """
    return st.fixed_dictionaries(
        {},
        optional={
            "data": _identity(),
            "userid": st.from_regex(r"[A-Za-z0-9_\-]{1,24}", fullmatch=True),
            "email": _emails(),
            "kyc": st.fixed_dictionaries({"result": st.sampled_from(KYC_RESULTS)}),
        },
    )


# --- PATCH /submission ---------------------------------------------------------------------


def _patch_rule(prop: str) -> dict[str, Any]:
    """A PATCH property's schema, its ``defs.json`` reference resolved."""
    spec: dict[str, Any] = _PATCH_DATA[prop]
    ref = spec.get("$ref", "")
    return schemas.definition(ref.rpartition("/")[2]) if ref else spec


def _valid_value(prop: str) -> S[str]:
    rule = _patch_rule(prop)
    if "enum" in rule:
        return st.sampled_from(tuple(rule["enum"]))
    if "pattern" in rule:  # format only: 1999-11-31 passes (gaps.md)
        return st.from_regex(rule["pattern"], fullmatch=True, alphabet=_ASCII)
    return _texts(0, 30)


def _refused_value(prop: str) -> S[str] | None:
    """Values the property's rule refuses; None for a free string."""
    rule = _patch_rule(prop)
    if "enum" in rule:
        return _not_in(tuple(rule["enum"]))
    return _bad_dates(rule["pattern"]) if "pattern" in rule else None


_VALID_VALUES = {prop: _valid_value(prop) for prop in PATCH_CHECK_ORDER}
_REFUSED = {p: s for p in PATCH_CHECK_ORDER if (s := _refused_value(p)) is not None}
_WRONG_PROPERTIES = (
    st.sampled_from(["full_name", "date_of_birth", "email", "userid", "FullName", "status"])
    | _IDENTIFIERS
).filter(lambda name: name not in _PATCH_DATA)
_PATCH_MEMBERS = ("submissionId", "admin", "data", "projectId")


@st.composite
def _patch_data(draw: st.DrawFn) -> dict[str, str]:
    """1-5 properties of gaps.md's table, each with a value its rule accepts."""
    return {name: draw(_VALID_VALUES[name]) for name in draw(_some(PATCH_CHECK_ORDER))}


@st.composite
def _refused_data(draw: st.DrawFn) -> tuple[dict[str, str], str]:
    """Data with 1-3 refused values among valid ones, and the property checked first."""
    bad = draw(_some(tuple(_REFUSED), max_size=3))
    data = {**draw(_patch_data()), **{name: draw(_REFUSED[name]) for name in bad}}
    return data, next(p for p in PATCH_CHECK_ORDER if p in bad)


@st.composite
def _unknown_data(draw: st.DrawFn) -> dict[str, Any]:
    """Data naming a property outside the table (known ones may have refused values)."""
    data: dict[str, Any] = draw(_patch_data() | _refused_data().map(lambda t: t[0]))
    for name in draw(st.lists(_WRONG_PROPERTIES, min_size=1, max_size=2)):
        data[name] = draw(_texts(0, 12) | _NON_STRINGS)
    return data


def _later_data() -> S[Any]:
    """``data`` that may fail any check made after ``admin`` (or none)."""
    refused = _refused_data().map(lambda t: t[0])
    return st.sampled_from([ABSENT, {}]) | _patch_data() | refused | _unknown_data()


def edit_requests(submission_ids: Sequence[str], admins: Sequence[str]) -> S[dict[str, Any]]:
    """PATCH /submission bodies the mock accepts: 1-5 properties with valid values.

    ``submission_ids`` are live submissions of the project, ``admins`` its registered
    administrators; ``projectId`` (accepted and ignored) is sometimes present.
    """
    return st.builds(
        _body,
        submissionId=_given(submission_ids, "submission_ids"),
        admin=_given(admins, "admins"),
        data=_patch_data(),
        projectId=_maybe(_IDENTIFIERS),
    )


def _patch(kind: str, code: str, **request: Any) -> Invalid:
    error = errors.PATCH_SUBMISSION.error(code)
    return Invalid(_request("PATCH", SUBMISSION_PATH, **request), error.status, error.body, kind)


def _patch_kind(kind: str, code: str, **members: S[Any]) -> S[Invalid]:
    """That error for JSON bodies whose members are drawn from ``members``."""
    return st.builds(_body, **members).map(lambda body: _patch(kind, code, json=body))


@st.composite
def _wrong_key_patch(draw: st.DrawFn, bodies: S[dict[str, Any]]) -> Invalid:
    """A wrong key: checked first, so even a body that does not parse is fine."""
    headers = draw(_wrong_keys())
    if draw(st.booleans()):
        return _patch("wrong_api_key", "invalid_project", headers=headers, json=draw(bodies))
    raw = draw(_not_json())
    return _patch("wrong_api_key", "invalid_project", headers=headers, content=raw)


@st.composite
def _wrong_type_patch(draw: st.DrawFn, sids: S[str], admins: S[str]) -> Invalid:
    """One member of a wrong JSON type, everything else right."""
    body: dict[str, Any] = {"submissionId": draw(sids), "admin": draw(admins)}
    body["data"] = data = draw(_patch_data())
    target = draw(st.sampled_from(["submissionId", "admin", "data", "value"]))
    if target == "value":
        data[draw(st.sampled_from(sorted(data)))] = draw(_NON_STRINGS)
    elif target == "data":
        body["data"] = draw(st.sampled_from(["x", [], ["memo"], 5, True]))
    else:
        body[target] = draw(_NOT_NULL)
    return _patch("wrong_type", "parse_error", json=body)


def _refused_patch(sids: S[str], admins: S[str]) -> S[Invalid]:
    def build(sid: str, admin: str, refused: tuple[dict[str, str], str]) -> Invalid:
        body = {"submissionId": sid, "admin": admin, "data": refused[0]}
        return _patch("bad_value", f"invalid_{refused[1]}", json=body)

    return st.builds(build, sids, admins, _refused_data())


def _unknown_member_patch(sids: S[str], admins: S[str]) -> S[Invalid]:
    """A top-level member outside the request's four, in a body otherwise right."""
    names = _IDENTIFIERS.filter(lambda n: n not in _PATCH_MEMBERS)
    extra = st.dictionaries(names, _texts(0, 12) | _NON_STRINGS, min_size=1, max_size=2)
    bodies = st.builds(
        lambda body, more: {**body, **more},
        st.fixed_dictionaries({"submissionId": sids, "admin": admins, "data": _patch_data()}),
        extra,
    )
    return bodies.map(lambda body: _patch("unknown_property", "parse_error", json=body))


def _edit_early_kinds(valid: S[dict[str, Any]], sids: S[str], admins: S[str]) -> Kinds:
    """Failures of the key, the body, and the presence of each member."""
    missing, later = st.sampled_from([ABSENT, ""]), _later_data()
    blank_keys = st.sampled_from(["", " "]).map(lambda key: {"x-api-key": key})
    return {
        "wrong_api_key": _wrong_key_patch(valid),
        "blank_api_key": st.builds(
            partial(_patch, "blank_api_key", "missing_project"), headers=blank_keys, json=valid
        ),
        "unparsable_body": st.builds(
            partial(_patch, "unparsable_body", "parse_error"),
            content=_not_json() | _json_non_objects(),
        ),
        "missing_submissionId": _patch_kind(
            "missing_submissionId",
            "missing_submissionId",
            submissionId=missing,
            admin=missing | admins,
            data=later,
        ),
        "missing_admin": _patch_kind(
            "missing_admin", "missing_admin", submissionId=sids, admin=missing, data=later
        ),
        "nothing_to_modify": _patch_kind(
            "nothing_to_modify",
            "nothing_to_modify",
            submissionId=sids,
            admin=admins,
            data=st.sampled_from([ABSENT, {}]),
        ),
    }


def _edit_late_kinds(ids: tuple[S[str], S[str]], admins: tuple[S[str], S[str]]) -> Kinds:
    """Failures of the properties, then of the admin, then of the submission.

    ``ids``: (known, unknown) submission ids; ``admins``: (registered, strangers).
    """
    (known, unknown), (team, strangers) = ids, admins
    any_sid, anyone, data = known | unknown, team | strangers, _patch_data()
    return {
        "unknown_property": _unknown_member_patch(any_sid, anyone)
        | _patch_kind(
            "unknown_property",
            "parse_error",
            submissionId=any_sid,
            admin=anyone,
            data=_unknown_data(),
        ),
        "wrong_type": _wrong_type_patch(known, team),
        "bad_value": _refused_patch(any_sid, anyone),
        "unregistered_admin": _patch_kind(
            "unregistered_admin", "invalid_admin", submissionId=any_sid, admin=strangers, data=data
        ),
        "unknown_submission": _patch_kind(
            "unknown_submission",
            "invalid_submissionId",
            submissionId=unknown,
            admin=team,
            data=data,
        ),
    }


def invalid_edit_requests(
    submission_ids: Sequence[str],
    admins: Sequence[str],
    *,
    kinds: Collection[str] | None = None,
) -> S[Invalid]:
    """Wrong PATCH /submission requests and their exact errors (api-v3.md 7.1, gaps.md).

    Kinds: wrong_api_key, blank_api_key, unparsable_body, missing_submissionId,
    missing_admin, nothing_to_modify, unknown_property, wrong_type, bad_value (the first
    refused value in gaps.md's table order answers), unregistered_admin,
    unknown_submission. Each request is right up to its failing check; what the server
    checks later may be wrong too.
    """
    sids, team = _given(submission_ids, "submission_ids"), _given(admins, "admins")
    unknown, strangers = _unknown_ids(submission_ids), _strangers(admins)
    valid = edit_requests(submission_ids, admins)
    table = {
        **_edit_early_kinds(valid, sids | unknown, team | strangers),
        **_edit_late_kinds((sids, unknown), (team, strangers)),
    }
    return _pick(table, kinds, "invalid_edit_requests")


# --- DELETE /submission/partial ------------------------------------------------------------

_WRONG_PARTS = st.sampled_from(["ocr_raw", "image", "Data", "selfie", "name", "memo"]) | (
    _IDENTIFIERS
)
_WRONG_DATA_FIELDS = st.sampled_from(["Name", "email", "dob", "address", "fullName"]) | (
    _IDENTIFIERS
)


@st.composite
def _partial_query(draw: st.DrawFn, sids: S[str]) -> dict[str, str]:
    parts = draw(_some(PARTIAL_FIELDS))
    query = {draw(st.sampled_from(["submission_id", "submissionId"])): draw(sids)}
    query["fields"] = draw(_joined(st.just(parts)))
    if "data" in parts and draw(st.booleans()):
        query["data_fields"] = draw(_joined(_some(PARTIAL_DATA_FIELDS)))
    if draw(st.booleans()):
        query["admin_name"] = draw(_emails())
    return query


def partial_delete_queries(submission_ids: Sequence[str]) -> S[dict[str, str]]:
    """DELETE /submission/partial queries the mock accepts (api-v3.md 4.4, gaps.md).

    The id as ``submission_id`` or ``submissionId``; ``fields`` names 1-5 parts (blanks
    around names allowed); ``data_fields`` only with ``data``; sometimes ``admin_name``.
    """
    return _partial_query(_given(submission_ids, "submission_ids"))


def _partial(kind: str, code: str, *args: str, **request: Any) -> Invalid:
    error = errors.PARTIAL_DELETE.error(code, *args)
    return Invalid(_request("DELETE", PARTIAL_PATH, **request), error.status, error.body, kind)


def _any_names() -> S[str]:
    """A ``fields`` or ``data_fields`` value that may be right, or wrong in any way."""
    entries = st.lists(st.sampled_from(PARTIAL_FIELDS) | _WRONG_PARTS | st.just(""), max_size=4)
    return _joined(entries) | _texts(0, 12)


def _format_problem(entries: list[str]) -> str | None:
    """The README's ``invalid format`` detail for the first malformed entry, if any."""
    for position, entry in enumerate((e.strip() for e in entries), start=1):
        if not entry:
            return f"empty entry at position {position}"
        if " " in entry:
            return f"whitespace inside '{entry}'"
    return None


@st.composite
def _malformed(draw: st.DrawFn, allowed: Sequence[str], wrong: S[str]) -> tuple[str, str]:
    """Names with an empty entry or a blank inside one (others may be unknown), and the
    detail: format is checked for every entry before any name is."""
    entries = draw(st.lists(st.sampled_from(allowed) | wrong, max_size=4))
    spaced = st.sampled_from(allowed).filter(lambda n: len(n) > 1).map(lambda n: f"{n[0]} {n[1:]}")
    entries.insert(draw(st.integers(0, len(entries))), draw(st.sampled_from(["", " "]) | spaced))
    if not any(e.strip() for e in entries):
        entries.append(draw(st.sampled_from(allowed)))
    detail = _format_problem(entries)
    assert detail is not None
    return ",".join(entries), detail


@st.composite
def _unknown_names(draw: st.DrawFn, allowed: Sequence[str], wrong: S[str]) -> list[str]:
    """Well-formed names, 1-2 of them unknown, in a random order."""
    unknown = st.lists(wrong.filter(lambda n: n not in allowed), min_size=1, max_size=2)
    return draw(st.permutations([*draw(_some(allowed, 0)), *dict.fromkeys(draw(unknown))]))


def _listed(names: list[str], allowed: Sequence[str]) -> str:
    return ", ".join(n for n in names if n not in allowed)


@st.composite
def _partial_key_error(draw: st.DrawFn, queries: S[dict[str, str]]) -> Invalid:
    params, wrong = draw(queries), draw(_wrong_keys())
    return _partial("wrong_api_key", "invalid_api_key", params=params, headers=wrong)


@st.composite
def _partial_twice(draw: st.DrawFn, sids: S[str]) -> Invalid:
    """``fields`` or ``data_fields`` given twice (``fields`` may be absent for the latter)."""
    name = draw(st.sampled_from(["fields", "data_fields"]))
    params = [("submission_id", draw(sids))]
    if name == "data_fields":
        params += _pairs(fields=draw(_maybe(_any_names())))
    params += [(name, draw(_any_names())) for _ in range(draw(st.integers(2, 3)))]
    return _partial("parameter_twice", f"{name}_not_string", params=params)


@st.composite
def _partial_body_type(draw: st.DrawFn, sids: S[str]) -> Invalid:
    """A JSON body whose ``fields`` or ``data_fields`` is not a string."""
    name = draw(st.sampled_from(["fields", "data_fields"]))
    params = [("submission_id", draw(sids))]
    if name == "data_fields":
        params += _pairs(fields=draw(_maybe(_any_names())))
    raw = orjson.dumps({name: draw(_NON_STRINGS)})
    return _partial("not_string_in_body", f"{name}_not_string_format", params=params, content=raw)


@st.composite
def _data_fields_prefix(draw: st.DrawFn, sids: S[str]) -> Pairs:
    """The id and a right ``fields`` naming ``data``, for the ``data_fields`` kinds."""
    parts = draw(_some(PARTIAL_FIELDS, 0, 4))
    names = draw(st.permutations(list(dict.fromkeys([*parts, "data"]))))
    return [("submission_id", draw(sids)), ("fields", draw(_joined(st.just(names))))]


def _names_kind(
    kind: str, code: str, name: str, heads: S[Pairs], values: S[tuple[str, str]]
) -> S[Invalid]:
    """``name`` after the ``heads`` parameters; ``values`` draws (text, message detail)."""

    def build(head: Pairs, value: tuple[str, str]) -> Invalid:
        text, detail = value
        args = (detail,) if detail else ()
        return _partial(kind, code, *args, params=[*head, (name, text)])

    return st.builds(build, heads, values)


def _listing(allowed: Sequence[str], wrong: S[str]) -> S[tuple[str, str]]:
    """Comma-separated names, some unknown, and the unknown ones as the message lists them."""
    names = _unknown_names(allowed, wrong)
    return names.map(lambda ns: (",".join(ns), _listed(ns, allowed)))


def _partial_fields_kinds(sids: S[str]) -> Kinds:
    """Failures of ``fields`` and then of ``data_fields``, the id being right."""
    heads = st.builds(
        lambda sid, d: _pairs(submission_id=sid, data_fields=d), sids, _maybe(_any_names())
    )
    with_data = _data_fields_prefix(sids)
    no_data = _joined(_some([p for p in PARTIAL_FIELDS if p != "data"]))
    without_data = st.builds(lambda sid, f: [("submission_id", sid), ("fields", f)], sids, no_data)
    empty = st.tuples(st.sampled_from(["", " ", ",", " , ,", ",,"]), st.just(""))
    no_entries = st.tuples(st.sampled_from(["", " ", ",", " , "]), st.just("no entries"))
    data_malformed = _malformed(PARTIAL_DATA_FIELDS, _WRONG_DATA_FIELDS) | no_entries
    return {
        "missing_fields": heads.map(partial(_params_error, "missing_fields", "missing_fields")),
        "empty_fields": _names_kind("empty_fields", "empty_fields", "fields", heads, empty),
        "fields_format": _names_kind(
            "fields_format",
            "fields_format",
            "fields",
            heads,
            _malformed(PARTIAL_FIELDS, _WRONG_PARTS),
        ),
        "invalid_fields": _names_kind(
            "invalid_fields",
            "invalid_fields",
            "fields",
            heads,
            _listing(PARTIAL_FIELDS, _WRONG_PARTS),
        ),
        "data_fields_without_data": _names_kind(
            "data_fields_without_data",
            "data_fields_not_allowed",
            "data_fields",
            without_data,
            st.tuples(_any_names(), st.just("")),
        ),
        "data_fields_format": _names_kind(
            "data_fields_format", "data_fields_format", "data_fields", with_data, data_malformed
        ),
        "invalid_data_fields": _names_kind(
            "invalid_data_fields",
            "invalid_data_fields",
            "data_fields",
            with_data,
            _listing(PARTIAL_DATA_FIELDS, _WRONG_DATA_FIELDS),
        ),
    }


def _params_error(kind: str, code: str, params: Any) -> Invalid:
    return _partial(kind, code, params=params)


def _partial_request_kinds(sids: S[str], queries: S[dict[str, str]], unknown: S[str]) -> Kinds:
    """Failures of the key, the body, the id and the parameters' types; the submission."""
    no_id = st.builds(
        _pairs,
        submission_id=st.sampled_from([ABSENT, ""]),
        fields=_maybe(_any_names()),
        data_fields=_maybe(_any_names()),
    )
    blank = partial(_partial, "blank_api_key", "project_not_found", headers={"x-api-key": ""})
    not_json = _not_json().filter(lambda raw: bool(raw.strip()))
    return {
        "wrong_api_key": _partial_key_error(queries),
        "blank_api_key": st.builds(blank, params=queries),
        "missing_submission_id": no_id.map(
            partial(_params_error, "missing_submission_id", "missing_submission_id")
        ),
        "parameter_twice": _partial_twice(sids),
        "not_string_in_body": _partial_body_type(sids),
        "unknown_submission": _partial_query(unknown).map(
            partial(_params_error, "unknown_submission", "submission_not_found")
        ),
        "bad_json_body": st.builds(
            partial(_partial, "bad_json_body", "fields_format", "request body is not valid JSON"),
            params=queries,
            content=not_json,
        ),
    }


def invalid_partial_delete_queries(
    submission_ids: Sequence[str], *, kinds: Collection[str] | None = None
) -> S[Invalid]:
    """Wrong DELETE /submission/partial requests and their errors (7.3, gaps.md, README).

    Kinds: wrong_api_key, blank_api_key, missing_submission_id, parameter_twice,
    not_string_in_body, missing_fields, empty_fields, fields_format, invalid_fields,
    data_fields_without_data, data_fields_format, invalid_data_fields, unknown_submission,
    bad_json_body; each respects the README's order of checks.
    """
    sids = _given(submission_ids, "submission_ids")
    queries = partial_delete_queries(submission_ids)
    table = {
        **_partial_request_kinds(sids, queries, _unknown_ids(submission_ids)),
        **_partial_fields_kinds(sids),
    }
    return _pick(table, kinds, "invalid_partial_delete_queries")


# --- GET /submission -----------------------------------------------------------------------

_TIMESTAMPS = st.from_regex(TIMESTAMP_PATTERN, fullmatch=True, alphabet=_ASCII)
GET_FORMAT_ORDER = ("count", "nextpage_date", "start_date", "end_date", "request_type")
_VALID_PARAM: dict[str, S[str]] = {
    "count": st.integers(1, MAX_COUNT).map(str),
    "nextpage_date": _TIMESTAMPS,
    "start_date": _dates(),
    "end_date": _dates(),
    "request_type": st.sampled_from(REQUEST_TYPES),
}
_BAD_PARAM: dict[str, S[str]] = {
    "count": st.sampled_from(["0", "2001", "-5", "abc", "", "1.5", "+5", " 5", "00050", "٣"])
    | st.integers(MAX_COUNT + 1, 10**6).map(str),
    "nextpage_date": (_dates() | _texts(0, 12)).filter(
        lambda t: not re.fullmatch(TIMESTAMP_PATTERN, t)
    ),
    "start_date": _bad_dates() | st.sampled_from(["2023-02-29", "2024-04-31"]),
    "end_date": _bad_dates() | st.sampled_from(["2023-02-30", "2024-06-31"]),
    "request_type": _not_in(REQUEST_TYPES),
}


def _get(kind: str, code: str, *args: str, **request: Any) -> Invalid:
    error = errors.GET_SUBMISSION.error(code, *args)
    return Invalid(_request("GET", SUBMISSION_PATH, **request), error.status, error.body, kind)


@st.composite
def _checked_param(draw: st.DrawFn, name: str, state: str) -> Pairs:
    """A format-checked parameter: ``valid`` (or absent), ``bad``, or ``any`` (or absent)."""
    values = {
        "valid": _maybe(_VALID_PARAM[name]),
        "bad": _BAD_PARAM[name],
        "any": _maybe(_VALID_PARAM[name] | _BAD_PARAM[name]),
    }
    params = _pairs(**{name: draw(values[state])})
    if name == "nextpage_date":  # a valid page position has both halves, or neither
        both = state == "valid" and bool(params)
        if both or (state != "valid" and draw(st.booleans())):
            params.append(("nextpage_id", draw(_texts(1, 16))))
    return params


@st.composite
def _get_params(draw: st.DrawFn, bad: str | None = None) -> Pairs:
    """Known parameters: those checked before ``bad`` right, ``bad`` wrong, later ones
    anything (every one anything when ``bad`` is None); free ones (ids, e-mail) any text."""
    frees = draw(_some(("submission_id", "userid", "email"), 0, 3))
    params = [(name, draw(_texts(0, 16))) for name in frees]
    index = GET_FORMAT_ORDER.index(bad) if bad is not None else -1
    for i, name in enumerate(GET_FORMAT_ORDER):
        state = "any" if bad is None or i > index else "valid" if i < index else "bad"
        params += draw(_checked_param(name, state))
    return draw(st.permutations(params))


@st.composite
def _half_page(draw: st.DrawFn) -> Pairs:
    """``nextpage_id`` without ``nextpage_date`` or the reverse, ``count`` right."""
    params = draw(_checked_param("count", "valid"))
    half = st.tuples(st.just("nextpage_id"), _texts(0, 16)) | st.tuples(
        st.just("nextpage_date"), _TIMESTAMPS
    )
    params.append(draw(half))
    for name in GET_FORMAT_ORDER[2:]:
        params += draw(_checked_param(name, "any"))
    return draw(st.permutations(params))


@st.composite
def _unknown_param(draw: st.DrawFn) -> Invalid:
    wrong = st.sampled_from(["submissionId", "limit", "page", "data", "user_id", "Email"])
    extra = st.tuples((wrong | _IDENTIFIERS).filter(lambda n: n not in GET_PARAMS), _texts(0, 8))
    params = draw(
        st.permutations(draw(_get_params()) + draw(st.lists(extra, min_size=1, max_size=2)))
    )
    first = next(name for name, _ in params if name not in GET_PARAMS)
    return _get("unknown_parameter", "invalid_parameter", first, params=params)


@st.composite
def _repeated_param(draw: st.DrawFn) -> Invalid:
    name = draw(st.sampled_from(GET_PARAMS))
    twice = [(name, draw(_texts(0, 10))) for _ in range(2)]
    params = draw(st.permutations(draw(_get_params()) + twice))
    names = [n for n, _ in params]
    first = next(n for n in dict.fromkeys(names) if names.count(n) > 1)
    return _get("repeated_parameter", "invalid_format", first, params=params)


def _bad_format(name: str) -> S[Invalid]:
    kind = f"bad_{name}"
    return _get_params(name).map(lambda p: _get(kind, "invalid_format", name, params=p))


def invalid_get_queries(*, kinds: Collection[str] | None = None) -> S[Invalid]:
    """Wrong GET /submission queries (plain project) and their errors (7.2, gaps.md).

    Kinds: wrong_api_key, unknown_parameter (the first in the query's order answers),
    repeated_parameter, bad_count, bad_nextpage_date, half_nextpage, bad_start_date,
    bad_end_date, bad_request_type; formats are checked in the spec's table order.
    """
    keys = _wrong_keys() | st.just({"x-api-key": ""})
    table: Kinds = {
        "wrong_api_key": st.builds(
            lambda h, p: _get("wrong_api_key", "invalid_project", params=p, headers=h),
            keys,
            _get_params(),
        ),
        "unknown_parameter": _unknown_param(),
        "repeated_parameter": _repeated_param(),
        "half_nextpage": _half_page().map(
            lambda p: _get("half_nextpage", "missing_data", params=p)
        ),
    }
    table.update({f"bad_{name}": _bad_format(name) for name in GET_FORMAT_ORDER})
    return _pick(table, kinds, "invalid_get_queries")


# --- projection ----------------------------------------------------------------------------

_POLICY_NAMES = st.from_regex(PROJECTION_NAME, fullmatch=True, alphabet=_ASCII).filter(
    lambda n: len(n) <= 40
)
_BAD_POLICY_NAMES = (
    st.sampled_from(["", "Upper", "with-dash", "with space", "dot.name", "émile", "名前"])
    | _texts(1, 12)
).filter(lambda n: not re.fullmatch(PROJECTION_NAME, n))
_WRONG_FIELDS = (
    st.sampled_from(["email", "userid", "name", "ocr", "review", "FULL_NAME"]) | _texts(1, 12)
).filter(lambda f: f not in PROJECTION_FIELDS)
_FIELD_LISTS = st.lists(st.sampled_from(PROJECTION_FIELDS) | _WRONG_FIELDS, min_size=1, max_size=4)


def _policy(name: Any = ABSENT, mode: Any = ABSENT, fields: Any = ABSENT) -> dict[str, Any]:
    return _body(name=name, mode=mode, fields=fields)


def projection_requests() -> S[dict[str, Any]]:
    """POST /projection bodies the mock accepts: a name of lowercase letters, digits and
    underscores, mode ``exclude``, 1-5 allowed fields (schemas/projection_request.json)."""
    return st.builds(_policy, _POLICY_NAMES, st.just("exclude"), _some(PROJECTION_FIELDS))


def _projection(kind: str, code: str, *args: str, **request: Any) -> Invalid:
    error = errors.PROJECTION.error(code, *args)
    method, url = request.pop("method", "POST"), request.pop("url", PROJECTION_PATH)
    return Invalid(_request(method, url, **request), error.status, error.body, kind)


@st.composite
def _missing_member(draw: st.DrawFn) -> Invalid:
    """A member missing or of a wrong type (an empty ``fields`` too); others anything."""
    body = {
        "name": draw(_POLICY_NAMES | _BAD_POLICY_NAMES),
        "mode": draw(st.just("exclude") | _texts(0, 10)),
        "fields": draw(_FIELD_LISTS),
    }
    wrong = {
        "name": _NON_STRINGS,
        "mode": _NON_STRINGS,
        "fields": st.sampled_from(["full_name", [], [1], [None], ["gender", 2], None, {}]),
    }
    for member in draw(_some(["name", "mode", "fields"])):
        body[member] = draw(_maybe(wrong[member]))
    return _projection("missing_member", "invalid_body", json=_body(**body))


@st.composite
def _policy_paths(draw: st.DrawFn, kind: str) -> Invalid:
    """A method a path does not serve (405), or an unknown policy id (404)."""
    item = f"{PROJECTION_PATH}/{draw(_unknown_ids(()))}"
    if kind == "unknown_projection":
        method = draw(st.sampled_from(["GET", "DELETE"]))
        return _projection(kind, "not_found", method=method, url=item)
    url, code, methods = draw(
        st.sampled_from(
            [
                (PROJECTION_PATH, "collection_method", ["PUT", "PATCH", "DELETE"]),
                (item, "item_method", ["PUT", "PATCH", "POST"]),
            ]
        )
    )
    return _projection(kind, code, method=draw(st.sampled_from(methods)), url=url)


def _unknown_fields(names: list[str]) -> dict[str, Any]:
    return {"fields": names, "listed": _listed(names, PROJECTION_FIELDS)}


def _projection_kinds() -> Kinds:
    """Each failure kind of the projection calls, by name."""
    return {
        "wrong_api_key": st.builds(
            lambda h, b: _projection("wrong_api_key", "forbidden", headers=h, json=b),
            _wrong_keys(),
            projection_requests() | st.builds(_policy, _BAD_POLICY_NAMES),
        ),
        "not_json": _not_json().map(lambda r: _projection("not_json", "invalid_json", content=r)),
        "not_object": _json_non_objects().map(
            lambda r: _projection("not_object", "invalid_body", content=r)
        ),
        "missing_member": _missing_member(),
        "bad_name": st.builds(
            lambda n, m, f: _projection("bad_name", "invalid_name", json=_policy(n, m, f)),
            _BAD_POLICY_NAMES,
            _texts(0, 10),
            _FIELD_LISTS,
        ),
        "bad_mode": st.builds(
            lambda n, m, f: _projection("bad_mode", "invalid_mode", m, json=_policy(n, m, f)),
            _POLICY_NAMES,
            _texts(0, 10).filter(lambda m: m != "exclude"),
            _FIELD_LISTS,
        ),
        "bad_fields": st.builds(
            lambda n, f: _projection(
                "bad_fields", "invalid_fields", f["listed"], json=_policy(n, "exclude", f["fields"])
            ),
            _POLICY_NAMES,
            _unknown_names(PROJECTION_FIELDS, _WRONG_FIELDS).map(_unknown_fields),
        ),
        "method_not_allowed": _policy_paths("method_not_allowed"),
        "unknown_projection": _policy_paths("unknown_projection"),
    }


def invalid_projection_requests(*, kinds: Collection[str] | None = None) -> S[Invalid]:
    """Wrong projection calls and their errors (api-v3.md 7.6, gaps.md, README order).

    Kinds: wrong_api_key (403, before anything), not_json, not_object, missing_member (a
    member absent, of a wrong type, or an empty ``fields``), bad_name, bad_mode,
    bad_fields (the unknown ones listed in order), method_not_allowed (405, collection or
    item path), unknown_projection (404, GET or DELETE). A taken name and the limit of 10
    depend on state, and are left to example tests.
    """
    return _pick(_projection_kinds(), kinds, "invalid_projection_requests")


# --- POST /submission/aml ------------------------------------------------------------------

_THRESHOLDS = st.integers(_THRESHOLD["minimum"], _THRESHOLD["maximum"])
_BAD_THRESHOLDS = (
    st.integers(max_value=_THRESHOLD["minimum"] - 1)
    | st.integers(min_value=_THRESHOLD["maximum"] + 1)
    | st.sampled_from([50.5, "50", True, False, [], {}, "high"])
)


def _screening(sid: Any = ABSENT, threshold: Any = ABSENT) -> dict[str, Any]:
    return _body(submissionId=sid, amlThreshold=threshold)


def aml_requests(
    submission_ids: Sequence[str], *, threshold: bool | None = None
) -> S[dict[str, Any]]:
    """POST /submission/aml bodies: ``submissionId`` and an ``amlThreshold`` of 0-100.

    ``threshold``: None draws one sometimes (without it the project needs the option
    ``aml_threshold``), True always, False never. The ids must be live submissions with a
    real nationality code (seeded and Faker-made ones have one).
    """
    values = {None: _maybe(_THRESHOLDS), True: _THRESHOLDS, False: st.just(ABSENT)}[threshold]
    return st.builds(_screening, _given(submission_ids, "submission_ids"), values)


def _aml(kind: str, code: str, **request: Any) -> Invalid:
    error = errors.AML_SCREENING.error(code)
    return Invalid(_request("POST", AML_PATH, **request), error.status, error.body, kind)


def _aml_json(kind: str, code: str) -> Callable[[dict[str, Any]], Invalid]:
    return lambda body: _aml(kind, code, json=body)


def _aml_kinds(submission_ids: Sequence[str], project_threshold: bool) -> Kinds:
    """Each failure kind of the screening call, by name."""
    sids = _given(submission_ids, "submission_ids")
    threshold = _maybe(_THRESHOLDS)
    table: Kinds = {
        "wrong_api_key": st.builds(
            lambda h, b: _aml("wrong_api_key", "invalid_project", headers=h, json=b),
            _wrong_keys(),
            aml_requests(submission_ids),
        ),
        "not_json": _not_json().map(lambda r: _aml("not_json", "invalid_payload", content=r)),
        "not_object": _json_non_objects().map(
            lambda r: _aml("not_object", "invalid_payload", content=r)
        ),
        "bad_threshold": st.builds(
            _screening, _maybe(sids | st.just("") | _NOT_NULL), _BAD_THRESHOLDS
        ).map(_aml_json("bad_threshold", "invalid_payload")),
        "missing_submissionId": st.builds(_screening, st.sampled_from([ABSENT, ""]), threshold).map(
            _aml_json("missing_submissionId", "missing_parameter")
        ),
        "wrong_type": st.builds(_screening, _NOT_NULL, threshold).map(
            _aml_json("wrong_type", "invalid_payload")
        ),
        "unknown_submission": st.builds(_screening, _unknown_ids(submission_ids), threshold).map(
            _aml_json("unknown_submission", "invalid_submissionId")
        ),
    }
    if not project_threshold:
        table["no_threshold"] = aml_requests(submission_ids, threshold=False).map(
            _aml_json("no_threshold", "invalid_aml_threshold")
        )
    return table


def invalid_aml_requests(
    submission_ids: Sequence[str],
    *,
    project_threshold: bool = False,
    kinds: Collection[str] | None = None,
) -> S[Invalid]:
    """Wrong POST /submission/aml requests and their errors (api-v3.md 7.4, README order).

    Kinds: wrong_api_key, not_json, not_object, bad_threshold (``submissionId`` then may
    be anything), missing_submissionId, wrong_type (``submissionId`` not a string),
    unknown_submission, and no_threshold (a live submission without ``amlThreshold``;
    left out when ``project_threshold`` says the project has the option ``aml_threshold``).
    """
    return _pick(_aml_kinds(submission_ids, project_threshold), kinds, "invalid_aml_requests")


# --- ongoing monitoring --------------------------------------------------------------------


def _id_lists(ids: S[str], unique: bool = False) -> S[list[str]]:
    return st.lists(ids, min_size=1, max_size=MAX_IDS, unique=unique)


def monitor_requests(submission_ids: Sequence[str], admins: Sequence[str]) -> S[dict[str, Any]]:
    """POST /submission/aml/monitor/{worklistId} bodies: 1-25 ids and an administrator.

    The call answers 200 when at least one id is an approved submission with a valid full
    name and birth date; when none is, the spec's 500 ``all_submissions_failed``.
    """
    return st.builds(
        lambda ids, admin: {"submissionIds": ids, "admin": admin},
        _id_lists(_given(submission_ids, "submission_ids")),
        _given(admins, "admins"),
    )


def _monitor(kind: str, code: str, *args: str, extra: Any = None, **request: Any) -> Invalid:
    error = errors.MONITORING.error(code, *args, **(extra or {}))
    return Invalid(_request(**request), error.status, error.body, kind)


def _worklist_path(*segments: str) -> str:
    return "/".join([MONITOR_PATH, *(quote(s, safe="") for s in segments)])


@st.composite
def _any_monitor_body(draw: st.DrawFn, sids: S[str], admins: S[str]) -> dict[str, Any]:
    ids = draw(_maybe(st.lists(sids, max_size=MAX_IDS + 3) | _NON_STRINGS))
    return _body(submissionIds=ids, admin=draw(_maybe(admins | _NON_STRINGS)))


@st.composite
def _missing_parameters(draw: st.DrawFn, sids: S[str], admins: S[str], url: str) -> Invalid:
    """``submissionIds`` and/or ``admin`` absent or empty (no JSON object: both); what is
    present may be malformed, since the presence of both is checked first."""
    missing = draw(_some(["submissionIds", "admin"]))
    names = ", ".join(n for n in ("submissionIds", "admin") if n in missing)
    code = "missing_required_parameters"
    if len(missing) == 2 and draw(st.booleans()):
        raw = draw(_not_json() | _json_non_objects())
        return _monitor("missing_parameters", code, names, method="POST", url=url, content=raw)
    present = {
        "submissionIds": st.lists(sids | _NON_STRINGS, max_size=MAX_IDS + 3),
        "admin": admins | _NOT_NULL,
    }
    body = {
        n: draw(st.sampled_from([ABSENT, ""]) if n in missing else s) for n, s in present.items()
    }
    return _monitor("missing_parameters", code, names, method="POST", url=url, json=_body(**body))


def _bad_id_lists(sids: S[str]) -> S[Any]:
    """Not a list of 1-25 non-empty strings."""
    wrong_items = st.lists(sids | _NON_STRINGS | st.just(""), min_size=1, max_size=4).filter(
        lambda xs: not all(isinstance(x, str) and x for x in xs)
    )
    too_many = st.lists(sids, min_size=MAX_IDS + 1, max_size=MAX_IDS + 5)
    return st.sampled_from([[], "abc", {"0": "x"}, 7]) | too_many | wrong_items


def _all_failed(ids: list[str], admin: str, url: str) -> Invalid:
    """Only unknown submissions: the spec's own 500, the batch in the body (gaps.md)."""
    error = "Cannot find submission: {}"
    failed = [
        {"submissionId": i, "recordIds": [], "status": "failed", "error": error.format(i)}
        for i in ids
    ]
    batch = {"success": False, "successCount": 0, "failedCount": len(ids), "successResults": []}
    body = {"submissionIds": ids, "admin": admin}
    return _monitor(
        "all_failed",
        "all_submissions_failed",
        extra={**batch, "failedResults": failed},
        method="POST",
        url=url,
        json=body,
    )


@st.composite
def _wrong_method(draw: st.DrawFn, wid: str, records: S[str]) -> Invalid:
    """A method the path does not serve, or POST without a worklist id: ``invalid_path``."""
    url, methods = draw(
        st.sampled_from(
            [
                (_worklist_path(wid), ["PUT", "PATCH", "GET"]),
                (MONITOR_PATH, ["POST", "GET", "PUT", "DELETE"]),
                (_worklist_path(wid, draw(records)), ["POST", "PUT", "PATCH", "DELETE"]),
            ]
        )
    )
    method = draw(st.sampled_from(methods))
    return _monitor("wrong_method", "invalid_path", method=method, url=url)


@st.composite
def _record_worklist(draw: st.DrawFn, wids: S[str], records: S[str], admins: S[str]) -> Invalid:
    """GET or DELETE of records in a worklist that does not exist."""
    kind, code, wid = "record_unknown_worklist", "invalide_worklist", draw(wids)
    if draw(st.booleans()):
        url = _worklist_path(wid, draw(records))
        return _monitor(kind, code, method="GET", url=url)
    body = {"recordIds": draw(_id_lists(records)), "admin": draw(admins)}
    return _monitor(kind, code, method="DELETE", url=_worklist_path(wid), json=body)


@st.composite
def _delete_payload(draw: st.DrawFn, url: str, records: S[str], admins: S[str]) -> Invalid:
    """A DELETE body that is not JSON, or whose ``recordIds`` (checked first) or ``admin``
    is missing or malformed."""
    choice = draw(st.sampled_from(["json", "ids", "admin"]))
    if choice == "json":
        raw = draw(_not_json() | _json_non_objects())
        return _monitor(
            "delete_bad_payload", "invalid_payload", method="DELETE", url=url, content=raw
        )
    if choice == "ids":
        bad = st.sampled_from([ABSENT, [], "r1", 5, [1], [""]]) | st.lists(
            records, min_size=MAX_IDS + 1, max_size=MAX_IDS + 3
        )
        body = _body(recordIds=draw(bad), admin=draw(_maybe(admins | _NON_STRINGS)))
    else:
        bad_admin = st.sampled_from([ABSENT, "", 5, None, ["a"]])
        body = _body(recordIds=draw(_id_lists(records)), admin=draw(bad_admin))
    return _monitor("delete_bad_payload", "invalid_payload", method="DELETE", url=url, json=body)


def _missing_records(ids: list[str], admin: str, url: str) -> Invalid:
    details = [MISSING_RECORD for _ in ids]
    body = {"recordIds": ids, "admin": admin}
    kind, code = "delete_missing_records", "missing_records"
    return _monitor(kind, code, extra={"details": details}, method="DELETE", url=url, json=body)


def _sent(
    kind: str, code: str, method: str, urls: S[str], bodies: S[Any], keys: S[Any] | None = None
) -> S[Invalid]:
    """That error for each drawn body sent to each drawn URL (with each drawn key header)."""

    def build(url: str, body: Any, headers: dict[str, str] | None) -> Invalid:
        return _monitor(kind, code, method=method, url=url, json=body, headers=headers)

    return st.builds(build, urls, bodies, keys if keys is not None else st.none())


def _registration(ids: S[Any], admins: S[Any]) -> S[dict[str, Any]]:
    return st.fixed_dictionaries({"submissionIds": ids, "admin": admins})


def _monitor_post_kinds(
    ids: tuple[S[str], S[str]], admins: tuple[S[str], S[str]], wids: dict[str, S[str]], url: str
) -> Kinds:
    """Failures of registration, in the README's order. ``ids``: (known, unknown)
    submission ids; ``admins``: (registered, strangers); ``wids``: worklist ids by state."""
    (sids, unknown), (team, strangers) = ids, admins
    here, anyone, any_sid = st.just(url), team | strangers, sids | unknown
    bodies = _any_monitor_body(any_sid, anyone)
    table: Kinds = {
        "wrong_api_key": _sent(
            "wrong_api_key", "invalid_project", "POST", here, bodies, _wrong_keys()
        ),
        "unknown_worklist": _sent(
            "unknown_worklist",
            "unknown_worklist",
            "POST",
            wids["unknown"].map(_worklist_path),
            bodies,
        ),
        "missing_parameters": _missing_parameters(any_sid, anyone, url),
        "bad_submission_ids": _sent(
            "bad_submission_ids",
            "invalid_submissionIds",
            "POST",
            here,
            _registration(_bad_id_lists(sids), anyone | _NOT_NULL),
        ),
        "bad_admin": _sent(
            "bad_admin",
            "invalid_admin",
            "POST",
            here,
            _registration(_id_lists(any_sid), strangers | _NOT_NULL),
        ),
        "all_failed": st.builds(_all_failed, _id_lists(unknown, unique=True), team, here),
    }
    if "inactive" in wids:
        inactive = wids["inactive"].map(_worklist_path)
        table["inactive_worklist"] = _sent(
            "inactive_worklist", "invalid_worklist", "POST", inactive, bodies
        )
    return table


def _monitor_record_kinds(wid: str, unknown_wids: S[str], admins: tuple[S[str], S[str]]) -> Kinds:
    """Failures of the paths, and of reading and deleting records."""
    (team, strangers), records, url = admins, _unknown_ids(()), _worklist_path(wid)
    unique_records = _id_lists(records, unique=True)
    return {
        "wrong_method": _wrong_method(wid, records),
        "record_unknown_worklist": _record_worklist(unknown_wids, records, team | strangers),
        "unknown_record": records.map(
            lambda r: _monitor("unknown_record", "invalid_record", method="GET", url=f"{url}/{r}")
        ),
        "delete_bad_payload": _delete_payload(url, records, team | strangers),
        "delete_unregistered_admin": _sent(
            "delete_unregistered_admin",
            "invalid_admin",
            "DELETE",
            st.just(url),
            st.fixed_dictionaries({"recordIds": unique_records, "admin": strangers}),
        ),
        "delete_missing_records": st.builds(_missing_records, unique_records, team, st.just(url)),
    }


def invalid_monitor_requests(
    submission_ids: Sequence[str],
    admins: Sequence[str],
    *,
    worklist_id: str,
    inactive_worklist_id: str | None = None,
    kinds: Collection[str] | None = None,
) -> S[Invalid]:
    """Wrong monitoring calls and their errors (api-v3.md 7.5, gaps.md, README order).

    ``worklist_id`` must be an active worklist of the project (worklists are made through
    the control API) holding no record whose id starts with ``missing-``;
    ``inactive_worklist_id`` an inactive one, if given. Kinds of POST: wrong_api_key,
    unknown_worklist, inactive_worklist (only with ``inactive_worklist_id``),
    missing_parameters, bad_submission_ids, bad_admin, all_failed (the spec's 500),
    wrong_method; of GET and DELETE of records: record_unknown_worklist, unknown_record,
    delete_bad_payload, delete_unregistered_admin, delete_missing_records.
    """
    sids, team = _given(submission_ids, "submission_ids"), _given(admins, "admins")
    known = [w for w in (worklist_id, inactive_worklist_id) if w is not None]
    wids = {"unknown": _unknown_ids(known, "missing-wl-")}
    if inactive_worklist_id is not None:
        wids["inactive"] = st.just(inactive_worklist_id)
    ids = (sids, _unknown_ids(submission_ids))
    both = (team, _strangers(admins))
    table = {
        **_monitor_post_kinds(ids, both, wids, _worklist_path(worklist_id)),
        **_monitor_record_kinds(worklist_id, wids["unknown"], both),
    }
    return _pick(table, kinds, "invalid_monitor_requests")
