"""Wrong GET /submission queries and their exact errors."""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

from hypothesis import strategies as st

from idv_mock.ground import errors
from idv_mock.strategies.common import (
    ASCII,
    GET_PARAMS,
    IDENTIFIERS,
    MAX_COUNT,
    REQUEST_TYPES,
    SUBMISSION_PATH,
    TIMESTAMP_PATTERN,
    Invalid,
    Kinds,
    Pairs,
    S,
    bad_dates,
    dates,
    make_pairs,
    make_request,
    maybe,
    not_in,
    pick_kinds,
    some_of,
    texts,
    wrong_keys,
)

_TIMESTAMPS = st.from_regex(TIMESTAMP_PATTERN, fullmatch=True, alphabet=ASCII)
GET_FORMAT_ORDER = ("count", "nextpage_date", "start_date", "end_date", "request_type")
_VALID_PARAM: dict[str, S[str]] = {
    "count": st.integers(1, MAX_COUNT).map(str),
    "nextpage_date": _TIMESTAMPS,
    "start_date": dates(),
    "end_date": dates(),
    "request_type": st.sampled_from(REQUEST_TYPES),
}
_BAD_PARAM: dict[str, S[str]] = {
    "count": st.sampled_from(["0", "2001", "-5", "abc", "", "1.5", "+5", " 5", "00050", "٣"])
    | st.integers(MAX_COUNT + 1, 10**6).map(str),
    "nextpage_date": (dates() | texts(0, 12)).filter(
        lambda t: not re.fullmatch(TIMESTAMP_PATTERN, t)
    ),
    "start_date": bad_dates() | st.sampled_from(["2023-02-29", "2024-04-31"]),
    "end_date": bad_dates() | st.sampled_from(["2023-02-30", "2024-06-31"]),
    "request_type": not_in(REQUEST_TYPES),
}


def _get(kind: str, code: str, *args: str, **request: Any) -> Invalid:
    error = errors.GET_SUBMISSION.error(code, *args)
    return Invalid(make_request("GET", SUBMISSION_PATH, **request), error.status, error.body, kind)


@st.composite
def _checked_param(draw: st.DrawFn, name: str, state: str) -> Pairs:
    """A format-checked parameter: ``valid`` (or absent), ``bad``, or ``any`` (or absent)."""
    values = {
        "valid": maybe(_VALID_PARAM[name]),
        "bad": _BAD_PARAM[name],
        "any": maybe(_VALID_PARAM[name] | _BAD_PARAM[name]),
    }
    params = make_pairs(**{name: draw(values[state])})
    if name == "nextpage_date":  # a valid page position has both halves, or neither
        both = state == "valid" and bool(params)
        if both or (state != "valid" and draw(st.booleans())):
            params.append(("nextpage_id", draw(texts(1, 16))))
    return params


@st.composite
def _get_params(draw: st.DrawFn, bad: str | None = None) -> Pairs:
    """Known parameters: those checked before ``bad`` right, ``bad`` wrong, later ones
    anything (every one anything when ``bad`` is None); free ones (ids, e-mail) any text."""
    frees = draw(some_of(("submission_id", "userid", "email"), 0, 3))
    params = [(name, draw(texts(0, 16))) for name in frees]
    index = GET_FORMAT_ORDER.index(bad) if bad is not None else -1
    for i, name in enumerate(GET_FORMAT_ORDER):
        state = "any" if bad is None or i > index else "valid" if i < index else "bad"
        params += draw(_checked_param(name, state))
    return draw(st.permutations(params))


@st.composite
def _half_page(draw: st.DrawFn) -> Pairs:
    """``nextpage_id`` without ``nextpage_date`` or the reverse, ``count`` right."""
    params = draw(_checked_param("count", "valid"))
    half = st.tuples(st.just("nextpage_id"), texts(0, 16)) | st.tuples(
        st.just("nextpage_date"), _TIMESTAMPS
    )
    params.append(draw(half))
    for name in GET_FORMAT_ORDER[2:]:
        params += draw(_checked_param(name, "any"))
    return draw(st.permutations(params))


@st.composite
def _unknown_param(draw: st.DrawFn) -> Invalid:
    wrong = st.sampled_from(["submissionId", "limit", "page", "data", "user_id", "Email"])
    extra = st.tuples((wrong | IDENTIFIERS).filter(lambda n: n not in GET_PARAMS), texts(0, 8))
    params = draw(
        st.permutations(draw(_get_params()) + draw(st.lists(extra, min_size=1, max_size=2)))
    )
    first = next(name for name, _ in params if name not in GET_PARAMS)
    return _get("unknown_parameter", "invalid_parameter", first, params=params)


@st.composite
def _repeated_param(draw: st.DrawFn) -> Invalid:
    name = draw(st.sampled_from(GET_PARAMS))
    twice = [(name, draw(texts(0, 10))) for _ in range(2)]
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
    keys = wrong_keys() | st.just({"x-api-key": ""})
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
    return pick_kinds(table, kinds, "invalid_get_queries")
