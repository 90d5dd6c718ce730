"""Valid requests: the bodies and queries the mock accepts, one strategy per call."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any

from hypothesis import strategies as st

from idv_mock import schemas
from idv_mock.strategies.common import (
    _ASCII,
    _IDENTIFIERS,
    _PATCH_DATA,
    _THRESHOLD,
    ABSENT,
    COUNTRIES,
    GENDERS,
    ID_TYPES,
    KYC_RESULTS,
    MAX_IDS,
    PARTIAL_DATA_FIELDS,
    PARTIAL_FIELDS,
    PATCH_CHECK_ORDER,
    PROJECTION_FIELDS,
    PROJECTION_NAME,
    S,
    _body,
    _dates,
    _emails,
    _given,
    _joined,
    _maybe,
    _some,
    _texts,
)


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


_VALID_VALUES = {prop: _valid_value(prop) for prop in PATCH_CHECK_ORDER}


@st.composite
def _patch_data(draw: st.DrawFn) -> dict[str, str]:
    """1-5 properties of gaps.md's table, each with a value its rule accepts."""
    return {name: draw(_VALID_VALUES[name]) for name in draw(_some(PATCH_CHECK_ORDER))}


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


# --- DELETE /submission/partial ------------------------------------------------------------


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


# --- projection ----------------------------------------------------------------------------

_POLICY_NAMES = st.from_regex(PROJECTION_NAME, fullmatch=True, alphabet=_ASCII).filter(
    lambda n: len(n) <= 40
)


def _policy(name: Any = ABSENT, mode: Any = ABSENT, fields: Any = ABSENT) -> dict[str, Any]:
    return _body(name=name, mode=mode, fields=fields)


def projection_requests() -> S[dict[str, Any]]:
    """POST /projection bodies the mock accepts: a name of lowercase letters, digits and
    underscores, mode ``exclude``, 1-5 allowed fields (schemas/projection_request.json)."""
    return st.builds(_policy, _POLICY_NAMES, st.just("exclude"), _some(PROJECTION_FIELDS))


# --- POST /submission/aml ------------------------------------------------------------------

_THRESHOLDS = st.integers(_THRESHOLD["minimum"], _THRESHOLD["maximum"])


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
