"""The token pool calls (POST and DELETE /v3/submission/tokens): valid token IDs and
requests, and wrong requests with their exact errors (endpoints.md 1, 3; docs/gaps.md's order)."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import orjson
from hypothesis import strategies as st

from idv_mock.ground import errors, operations
from idv_mock.strategies.common import (
    NON_STRINGS,
    Invalid,
    Kinds,
    S,
    json_non_objects,
    make_request,
    non_json_bodies,
    pick_kinds,
    wrong_keys,
)

TOKENS_PATH = operations.path("postSubmissionTokens")
TEXT_PLAIN = {"content-type": "text/plain"}  # as the vendor's samples send the JSON text
REQUEST_LIMIT = 500  # the option token_request_limit's default
_EDGE = "A-Za-z0-9"
_INNER = "A-Za-z0-9._-"


def token_ids() -> S[str]:
    """IDs the pool accepts: 8-64 characters of ``[A-Za-z0-9._-]``, alphanumeric at both ends."""
    return st.from_regex(rf"[{_EDGE}][{_INNER}]{{6,62}}[{_EDGE}]", fullmatch=True)


def token_requests(max_size: int = 20) -> S[dict[str, Any]]:
    """POST (or DELETE by ID) bodies: ``{"tokenId": [...]}``."""
    return st.lists(token_ids(), min_size=1, max_size=max_size).map(lambda ids: {"tokenId": ids})


def _bad_lengths() -> S[str]:
    short = st.from_regex(rf"[{_EDGE}]{{1,7}}", fullmatch=True)
    long = st.from_regex(rf"[{_EDGE}]{{65,80}}", fullmatch=True)
    return short | long


def _bad_formats() -> S[str]:
    """Right length, wrong characters or ends."""
    middle = st.from_regex(rf"[{_EDGE}]{{8,20}}", fullmatch=True)
    edge = st.sampled_from(["-", "_", "."])
    inner = st.sampled_from([" ", "\t", "!", "/", "é", "+"])
    return st.one_of(
        st.builds(lambda e, m: e + m, edge, middle),
        st.builds(lambda m, e: m + e, middle, edge),
        st.builds(lambda m, c: m[:4] + c + m[4:], middle, inner),
    )


def _tokens(kind: str, code: str, *args: str, method: str = "POST", **request: Any) -> Invalid:
    error = errors.TOKENS.error(code, *args)
    headers = {**TEXT_PLAIN, **request.pop("headers", {})}
    req = make_request(method, TOKENS_PATH, headers=headers, **request)
    return Invalid(req, error.status, error.body, kind)


def _json(body: Any) -> bytes:
    return orjson.dumps(body)


def _ids(ids: list[str]) -> bytes:
    return orjson.dumps({"tokenId": ids})


@st.composite
def _one_bad(draw: st.DrawFn, bad: S[str], alone: bool = False) -> tuple[list[str], str]:
    """Valid IDs with one bad one among them: it is the first the call checks. ``alone``
    (POST, which registers the good IDs of a batch and lists the bad ones): only bad IDs
    of that kind, the first named by the error."""
    if alone:
        ids = draw(st.lists(bad, min_size=1, max_size=3))
        return ids, ids[0]
    ids = draw(st.lists(token_ids(), max_size=5))
    wrong = draw(bad)
    ids.insert(draw(st.integers(0, len(ids))), wrong)
    return ids, wrong


def _token_kinds(method: str) -> Kinds:
    def call(kind: str, code: str, *args: str, **request: Any) -> Invalid:
        return _tokens(kind, code, *args, method=method, **request)

    def content(kind: str, code: str) -> Any:
        return lambda body: call(kind, code, content=_json(body))

    not_array = st.one_of(
        st.just({}),
        st.just({"tokenId": []}),
        NON_STRINGS.filter(lambda v: v not in ([], ["x"])).map(lambda v: {"tokenId": v}),
        token_ids().map(lambda t: {"tokenId": t}),
        st.lists(NON_STRINGS, min_size=1, max_size=3).map(lambda v: {"tokenId": v}),
    )
    too_many = st.integers(REQUEST_LIMIT + 1, REQUEST_LIMIT + 20).map(
        lambda n: {"tokenId": [f"token{i:06d}" for i in range(n)]}
    )
    limit = f"{REQUEST_LIMIT}"
    alone = method == "POST"  # a POST with a good ID among bad ones is answered 200
    return {
        "wrong_api_key": st.builds(
            lambda h, b: call("wrong_api_key", "invalid_project", headers=h, content=_json(b)),
            wrong_keys(),
            token_requests(),
        ),
        "not_json": non_json_bodies().map(lambda r: call("not_json", "invalid_payload", content=r)),
        "not_object": json_non_objects().map(
            lambda r: call("not_object", "invalid_payload", content=r)
        ),
        "not_array": not_array.map(content("not_array", "invalid_token_id")),
        "too_many": too_many.map(
            lambda b: call("too_many", "request_token_limit_exceeded", limit, content=_json(b))
        ),
        "bad_length": _one_bad(_bad_lengths(), alone).map(
            lambda p: call("bad_length", "invalid_token_id_length", p[1], content=_ids(p[0]))
        ),
        "bad_format": _one_bad(_bad_formats(), alone).map(
            lambda p: call("bad_format", "invalid_token_id_format", p[1], content=_ids(p[0]))
        ),
    }


def invalid_token_requests(
    *, method: str = "POST", kinds: Collection[str] | None = None
) -> S[Invalid]:
    """Wrong POST (or, with ``method="DELETE"``, DELETE by ID) /submission/tokens requests.

    Kinds: wrong_api_key, not_json, not_object, not_array (``tokenId`` missing, empty or
    not an array of strings), too_many (over the default limit of 500), bad_length and
    bad_format (DELETE: one bad ID among good ones; POST, which processes a batch ID by ID
    and registers its good ones: bad IDs only; the error names the first). None changes
    the pool.
    """
    if method not in ("POST", "DELETE"):
        raise ValueError("method is POST or DELETE")
    return pick_kinds(_token_kinds(method), kinds, "invalid_token_requests")
