"""Wrong projection calls (/projection) and their exact errors."""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

from hypothesis import strategies as st

from idv_mock.ground import errors, operations
from idv_mock.strategies.common import (
    NON_STRINGS,
    POLICY_NAMES,
    PROJECTION_FIELDS,
    PROJECTION_NAME,
    PROJECTION_PATH,
    Invalid,
    Kinds,
    S,
    json_non_objects,
    listed,
    make_body,
    make_request,
    maybe,
    non_json_bodies,
    pick_kinds,
    policy_body,
    some_of,
    texts,
    unknown_ids,
    unknown_names,
    wrong_keys,
)
from idv_mock.strategies.valid import projection_requests

_BAD_POLICY_NAMES = (
    st.sampled_from(["", "Upper", "with-dash", "with space", "dot.name", "émile", "名前"])
    | texts(1, 12)
).filter(lambda n: not re.fullmatch(PROJECTION_NAME, n))
_WRONG_FIELDS = (
    st.sampled_from(["email", "userid", "name", "ocr", "review", "FULL_NAME"]) | texts(1, 12)
).filter(lambda f: f not in PROJECTION_FIELDS)
_FIELD_LISTS = st.lists(st.sampled_from(PROJECTION_FIELDS) | _WRONG_FIELDS, min_size=1, max_size=4)


def _projection(kind: str, code: str, *args: str, **request: Any) -> Invalid:
    error = errors.PROJECTION.error(code, *args)
    method, url = request.pop("method", "POST"), request.pop("url", PROJECTION_PATH)
    return Invalid(make_request(method, url, **request), error.status, error.body, kind)


@st.composite
def _missing_member(draw: st.DrawFn) -> Invalid:
    """A member missing or of a wrong type (an empty ``fields`` too); others anything."""
    body = {
        "name": draw(POLICY_NAMES | _BAD_POLICY_NAMES),
        "mode": draw(st.just("exclude") | texts(0, 10)),
        "fields": draw(_FIELD_LISTS),
    }
    wrong = {
        "name": NON_STRINGS,
        "mode": NON_STRINGS,
        "fields": st.sampled_from(["full_name", [], [1], [None], ["gender", 2], None, {}]),
    }
    for member in draw(some_of(["name", "mode", "fields"])):
        body[member] = draw(maybe(wrong[member]))
    return _projection("missing_member", "invalid_body", json=make_body(**body))


POLICY = operations.path("getProjectionProjectionId")


@st.composite
def _policy_paths(draw: st.DrawFn, kind: str) -> Invalid:
    """A method a path does not serve (405), or an unknown policy id (404)."""
    item = f"{PROJECTION_PATH}/{draw(unknown_ids(()))}"
    if kind == "unknown_projection":
        method = draw(st.sampled_from(operations.served(POLICY)))
        return _projection(kind, "not_found", method=method, url=item)
    url, code, methods = draw(
        st.sampled_from(
            [
                (PROJECTION_PATH, "collection_method", operations.refused(PROJECTION_PATH)),
                (item, "item_method", operations.refused(POLICY)),
            ]
        )
    )
    return _projection(kind, code, method=draw(st.sampled_from(methods)), url=url)


def _unknown_fields(names: list[str]) -> dict[str, Any]:
    return {"fields": names, "listed": listed(names, PROJECTION_FIELDS)}


def _projection_kinds() -> Kinds:
    """Each failure kind of the projection calls, by name."""
    return {
        "wrong_api_key": st.builds(
            lambda h, b: _projection("wrong_api_key", "forbidden", headers=h, json=b),
            wrong_keys(),
            projection_requests() | st.builds(policy_body, _BAD_POLICY_NAMES),
        ),
        "not_json": non_json_bodies().map(
            lambda r: _projection("not_json", "invalid_json", content=r)
        ),
        "not_object": json_non_objects().map(
            lambda r: _projection("not_object", "invalid_body", content=r)
        ),
        "missing_member": _missing_member(),
        "bad_name": st.builds(
            lambda n, m, f: _projection("bad_name", "invalid_name", json=policy_body(n, m, f)),
            _BAD_POLICY_NAMES,
            texts(0, 10),
            _FIELD_LISTS,
        ),
        "bad_mode": st.builds(
            lambda n, m, f: _projection("bad_mode", "invalid_mode", m, json=policy_body(n, m, f)),
            POLICY_NAMES,
            texts(0, 10).filter(lambda m: m != "exclude"),
            _FIELD_LISTS,
        ),
        "bad_fields": st.builds(
            lambda n, f: _projection(
                "bad_fields",
                "invalid_fields",
                f["listed"],
                json=policy_body(n, "exclude", f["fields"]),
            ),
            POLICY_NAMES,
            unknown_names(PROJECTION_FIELDS, _WRONG_FIELDS).map(_unknown_fields),
        ),
        "method_not_allowed": _policy_paths("method_not_allowed"),
        "unknown_projection": _policy_paths("unknown_projection"),
    }


def invalid_projection_requests(*, kinds: Collection[str] | None = None) -> S[Invalid]:
    """Wrong projection calls and their errors (api-v3.md 7.6, gaps.md, docs/gaps.md's order).

    Kinds: wrong_api_key (403, before anything), not_json, not_object, missing_member (a
    member absent, of a wrong type, or an empty ``fields``), bad_name, bad_mode,
    bad_fields (the unknown ones listed in order), method_not_allowed (405, collection or
    item path), unknown_projection (404, GET or DELETE). A taken name and the limit of 10
    depend on state, and are left to example tests.
    """
    return pick_kinds(_projection_kinds(), kinds, "invalid_projection_requests")
