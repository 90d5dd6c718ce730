"""Valid requests: the bodies and queries the mock accepts, one strategy per call.

They are built from :mod:`idv_mock.strategies.common`'s valid parts (PATCH data,
partial-delete queries, policy and screening bodies, id lists), which the invalid
strategies reuse."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any

from hypothesis import strategies as st

from idv_mock.strategies.common import (
    ABSENT,
    COUNTRIES,
    GENDERS,
    ID_TYPES,
    IDENTIFIERS,
    KYC_RESULTS,
    POLICY_NAMES,
    PROJECTION_FIELDS,
    THRESHOLDS,
    S,
    dates,
    emails,
    given_values,
    id_lists,
    make_body,
    maybe,
    partial_query,
    patch_data,
    policy_body,
    screening_body,
    some_of,
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
            "idcard_issueDate": dates(),
            "idcard_expireDate": dates(),
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
            "email": emails(),
            "kyc": st.fixed_dictionaries({"result": st.sampled_from(KYC_RESULTS)}),
        },
    )


# --- PATCH /submission ---------------------------------------------------------------------


def edit_requests(submission_ids: Sequence[str], admins: Sequence[str]) -> S[dict[str, Any]]:
    """PATCH /submission bodies the mock accepts: 1-5 properties with valid values.

    ``submission_ids`` are live submissions of the project, ``admins`` its registered
    administrators; ``projectId`` (accepted and ignored) is sometimes present.
    """
    return st.builds(
        make_body,
        submissionId=given_values(submission_ids, "submission_ids"),
        admin=given_values(admins, "admins"),
        data=patch_data(),
        projectId=maybe(IDENTIFIERS),
    )


# --- DELETE /submission/partial ------------------------------------------------------------


def partial_delete_queries(submission_ids: Sequence[str]) -> S[dict[str, str]]:
    """DELETE /submission/partial queries the mock accepts (api-v3.md 4.4, gaps.md).

    The id as ``submission_id`` or ``submissionId``; ``fields`` names 1-5 parts (blanks
    around names allowed); ``data_fields`` only with ``data``; sometimes ``admin_name``.
    """
    return partial_query(given_values(submission_ids, "submission_ids"))


# --- projection ----------------------------------------------------------------------------


def projection_requests() -> S[dict[str, Any]]:
    """POST /projection bodies the mock accepts: a name of lowercase letters, digits and
    underscores, mode ``exclude``, 1-5 allowed fields (schemas/projection_request.json)."""
    return st.builds(policy_body, POLICY_NAMES, st.just("exclude"), some_of(PROJECTION_FIELDS))


# --- POST /submission/aml ------------------------------------------------------------------


def aml_requests(
    submission_ids: Sequence[str], *, threshold: bool | None = None
) -> S[dict[str, Any]]:
    """POST /submission/aml bodies: ``submissionId`` and an ``amlThreshold`` of 0-100.

    ``threshold``: None draws one sometimes (without it the project needs the option
    ``aml_threshold``), True always, False never. The ids must be live submissions with a
    real nationality code (seeded and Faker-made ones have one).
    """
    values = {None: maybe(THRESHOLDS), True: THRESHOLDS, False: st.just(ABSENT)}[threshold]
    return st.builds(screening_body, given_values(submission_ids, "submission_ids"), values)


# --- ongoing monitoring --------------------------------------------------------------------


def monitor_requests(submission_ids: Sequence[str], admins: Sequence[str]) -> S[dict[str, Any]]:
    """POST /submission/aml/monitor/{worklistId} bodies: 1-25 ids and an administrator.

    The call answers 200 when at least one id is an approved submission with a valid full
    name and birth date; when none is, the spec's 500 ``all_submissions_failed``.
    """
    return st.builds(
        lambda ids, admin: {"submissionIds": ids, "admin": admin},
        id_lists(given_values(submission_ids, "submission_ids")),
        given_values(admins, "admins"),
    )
