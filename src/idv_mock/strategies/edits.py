"""Wrong PATCH /submission requests and their exact errors."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from functools import partial
from typing import Any

from hypothesis import strategies as st

from idv_mock.ground import errors
from idv_mock.strategies.common import (
    ABSENT,
    IDENTIFIERS,
    NON_STRINGS,
    NOT_NULL,
    PATCH_CHECK_ORDER,
    PATCH_PROPERTIES,
    SUBMISSION_PATH,
    Invalid,
    Kinds,
    S,
    bad_dates,
    given_values,
    json_non_objects,
    make_body,
    make_request,
    non_json_bodies,
    not_in,
    patch_data,
    patch_rule,
    pick_kinds,
    some_of,
    texts,
    unknown_ids,
    unregistered_admins,
    wrong_keys,
)
from idv_mock.strategies.valid import edit_requests


def _refused_value(prop: str) -> S[str] | None:
    """Values the property's rule refuses; None for a free string."""
    rule = patch_rule(prop)
    if "enum" in rule:
        return not_in(tuple(rule["enum"]))
    return bad_dates(rule["pattern"]) if "pattern" in rule else None


_REFUSED = {p: s for p in PATCH_CHECK_ORDER if (s := _refused_value(p)) is not None}
_WRONG_PROPERTIES = (
    st.sampled_from(["full_name", "date_of_birth", "email", "userid", "FullName", "status"])
    | IDENTIFIERS
).filter(lambda name: name not in PATCH_PROPERTIES)
_PATCH_MEMBERS = ("submissionId", "admin", "data", "projectId")


@st.composite
def _refused_data(draw: st.DrawFn) -> tuple[dict[str, str], str]:
    """Data with 1-3 refused values among valid ones, and the property checked first."""
    bad = draw(some_of(tuple(_REFUSED), max_size=3))
    data = {**draw(patch_data()), **{name: draw(_REFUSED[name]) for name in bad}}
    return data, next(p for p in PATCH_CHECK_ORDER if p in bad)


@st.composite
def _unknown_data(draw: st.DrawFn) -> dict[str, Any]:
    """Data naming a property outside the table (known ones may have refused values)."""
    data: dict[str, Any] = draw(patch_data() | _refused_data().map(lambda t: t[0]))
    for name in draw(st.lists(_WRONG_PROPERTIES, min_size=1, max_size=2)):
        data[name] = draw(texts(0, 12) | NON_STRINGS)
    return data


def _later_data() -> S[Any]:
    """``data`` that may fail any check made after ``admin`` (or none)."""
    refused = _refused_data().map(lambda t: t[0])
    return st.sampled_from([ABSENT, {}]) | patch_data() | refused | _unknown_data()


def _patch(kind: str, code: str, **request: Any) -> Invalid:
    error = errors.PATCH_SUBMISSION.error(code)
    return Invalid(
        make_request("PATCH", SUBMISSION_PATH, **request), error.status, error.body, kind
    )


def _patch_kind(kind: str, code: str, **members: S[Any]) -> S[Invalid]:
    """That error for JSON bodies whose members are drawn from ``members``."""
    return st.builds(make_body, **members).map(lambda body: _patch(kind, code, json=body))


@st.composite
def _wrong_key_patch(draw: st.DrawFn, bodies: S[dict[str, Any]]) -> Invalid:
    """A wrong key: checked first, so even a body that does not parse is fine."""
    headers = draw(wrong_keys())
    if draw(st.booleans()):
        return _patch("wrong_api_key", "invalid_project", headers=headers, json=draw(bodies))
    raw = draw(non_json_bodies())
    return _patch("wrong_api_key", "invalid_project", headers=headers, content=raw)


@st.composite
def _wrong_type_patch(draw: st.DrawFn, sids: S[str], admins: S[str]) -> Invalid:
    """One member of a wrong JSON type, everything else right."""
    body: dict[str, Any] = {"submissionId": draw(sids), "admin": draw(admins)}
    body["data"] = data = draw(patch_data())
    target = draw(st.sampled_from(["submissionId", "admin", "data", "value"]))
    if target == "value":
        data[draw(st.sampled_from(sorted(data)))] = draw(NON_STRINGS)
    elif target == "data":
        body["data"] = draw(st.sampled_from(["x", [], ["memo"], 5, True]))
    else:
        body[target] = draw(NOT_NULL)
    return _patch("wrong_type", "parse_error", json=body)


def _refused_patch(sids: S[str], admins: S[str]) -> S[Invalid]:
    def build(sid: str, admin: str, refused: tuple[dict[str, str], str]) -> Invalid:
        body = {"submissionId": sid, "admin": admin, "data": refused[0]}
        return _patch("bad_value", f"invalid_{refused[1]}", json=body)

    return st.builds(build, sids, admins, _refused_data())


def _unknown_member_patch(sids: S[str], admins: S[str]) -> S[Invalid]:
    """A top-level member outside the request's four, in a body otherwise right."""
    names = IDENTIFIERS.filter(lambda n: n not in _PATCH_MEMBERS)
    extra = st.dictionaries(names, texts(0, 12) | NON_STRINGS, min_size=1, max_size=2)
    bodies = st.builds(
        lambda body, more: {**body, **more},
        st.fixed_dictionaries({"submissionId": sids, "admin": admins, "data": patch_data()}),
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
            content=non_json_bodies() | json_non_objects(),
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
    any_sid, anyone, data = known | unknown, team | strangers, patch_data()
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
    sids, team = given_values(submission_ids, "submission_ids"), given_values(admins, "admins")
    unknown, strangers = unknown_ids(submission_ids), unregistered_admins(admins)
    valid = edit_requests(submission_ids, admins)
    table = {
        **_edit_early_kinds(valid, sids | unknown, team | strangers),
        **_edit_late_kinds((sids, unknown), (team, strangers)),
    }
    return pick_kinds(table, kinds, "invalid_edit_requests")
