"""Wrong DELETE /submission/partial requests and their exact errors."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from functools import partial
from typing import Any

import orjson
from hypothesis import strategies as st

from idv_mock.ground import errors
from idv_mock.strategies.common import (
    ABSENT,
    IDENTIFIERS,
    NON_STRINGS,
    PARTIAL_DATA_FIELDS,
    PARTIAL_FIELDS,
    PARTIAL_PATH,
    Invalid,
    Kinds,
    Pairs,
    S,
    given_values,
    joined,
    listed,
    make_pairs,
    make_request,
    maybe,
    non_json_bodies,
    partial_query,
    pick_kinds,
    some_of,
    texts,
    unknown_ids,
    unknown_names,
    wrong_keys,
)
from idv_mock.strategies.valid import partial_delete_queries

_WRONG_PARTS = st.sampled_from(["ocr_raw", "image", "Data", "selfie", "name", "memo"]) | (
    IDENTIFIERS
)
_WRONG_DATA_FIELDS = st.sampled_from(["Name", "email", "dob", "address", "fullName"]) | (
    IDENTIFIERS
)


def _partial(kind: str, code: str, *args: str, **request: Any) -> Invalid:
    error = errors.PARTIAL_DELETE.error(code, *args)
    return Invalid(make_request("DELETE", PARTIAL_PATH, **request), error.status, error.body, kind)


def _any_names() -> S[str]:
    """A ``fields`` or ``data_fields`` value that may be right, or wrong in any way."""
    entries = st.lists(st.sampled_from(PARTIAL_FIELDS) | _WRONG_PARTS | st.just(""), max_size=4)
    return joined(entries) | texts(0, 12)


def _format_problem(entries: list[str]) -> str | None:
    """docs/gaps.md's ``invalid format`` detail for the first malformed entry, if any."""
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
def _partial_key_error(draw: st.DrawFn, queries: S[dict[str, str]]) -> Invalid:
    params, wrong = draw(queries), draw(wrong_keys())
    return _partial("wrong_api_key", "invalid_api_key", params=params, headers=wrong)


@st.composite
def _partial_twice(draw: st.DrawFn, sids: S[str]) -> Invalid:
    """``fields`` or ``data_fields`` given twice (``fields`` may be absent for the latter)."""
    name = draw(st.sampled_from(["fields", "data_fields"]))
    params = [("submission_id", draw(sids))]
    if name == "data_fields":
        params += make_pairs(fields=draw(maybe(_any_names())))
    params += [(name, draw(_any_names())) for _ in range(draw(st.integers(2, 3)))]
    return _partial("parameter_twice", f"{name}_not_string", params=params)


@st.composite
def _partial_body_type(draw: st.DrawFn, sids: S[str]) -> Invalid:
    """A JSON body whose ``fields`` or ``data_fields`` is not a string."""
    name = draw(st.sampled_from(["fields", "data_fields"]))
    params = [("submission_id", draw(sids))]
    if name == "data_fields":
        params += make_pairs(fields=draw(maybe(_any_names())))
    raw = orjson.dumps({name: draw(NON_STRINGS)})
    return _partial("not_string_in_body", f"{name}_not_string_format", params=params, content=raw)


@st.composite
def _data_fields_prefix(draw: st.DrawFn, sids: S[str]) -> Pairs:
    """The id and a right ``fields`` naming ``data``, for the ``data_fields`` kinds."""
    parts = draw(some_of(PARTIAL_FIELDS, 0, 4))
    names = draw(st.permutations(list(dict.fromkeys([*parts, "data"]))))
    return [("submission_id", draw(sids)), ("fields", draw(joined(st.just(names))))]


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
    names = unknown_names(allowed, wrong)
    return names.map(lambda ns: (",".join(ns), listed(ns, allowed)))


def _partial_fields_kinds(sids: S[str]) -> Kinds:
    """Failures of ``fields`` and then of ``data_fields``, the id being right."""
    heads = st.builds(
        lambda sid, d: make_pairs(submission_id=sid, data_fields=d), sids, maybe(_any_names())
    )
    with_data = _data_fields_prefix(sids)
    no_data = joined(some_of([p for p in PARTIAL_FIELDS if p != "data"]))
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
        make_pairs,
        submission_id=st.sampled_from([ABSENT, ""]),
        fields=maybe(_any_names()),
        data_fields=maybe(_any_names()),
    )
    blank = partial(_partial, "blank_api_key", "project_not_found", headers={"x-api-key": ""})
    not_json = non_json_bodies().filter(lambda raw: bool(raw.strip()))
    return {
        "wrong_api_key": _partial_key_error(queries),
        "blank_api_key": st.builds(blank, params=queries),
        "missing_submission_id": no_id.map(
            partial(_params_error, "missing_submission_id", "missing_submission_id")
        ),
        "parameter_twice": _partial_twice(sids),
        "not_string_in_body": _partial_body_type(sids),
        "unknown_submission": partial_query(unknown).map(
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
    """Wrong DELETE /submission/partial requests and their errors (7.3, gaps.md, docs/gaps.md).

    Kinds: wrong_api_key, blank_api_key, missing_submission_id, parameter_twice,
    not_string_in_body, missing_fields, empty_fields, fields_format, invalid_fields,
    data_fields_without_data, data_fields_format, invalid_data_fields, unknown_submission,
    bad_json_body; each respects docs/gaps.md's order of checks.
    """
    sids = given_values(submission_ids, "submission_ids")
    queries = partial_delete_queries(submission_ids)
    table = {
        **_partial_request_kinds(sids, queries, unknown_ids(submission_ids)),
        **_partial_fields_kinds(sids),
    }
    return pick_kinds(table, kinds, "invalid_partial_delete_queries")
