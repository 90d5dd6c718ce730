"""Wrong POST /submission/aml requests and their exact errors."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any

from hypothesis import strategies as st

from idv_mock.ground import errors
from idv_mock.strategies.common import (
    ABSENT,
    AML_PATH,
    NOT_NULL,
    THRESHOLD_SCHEMA,
    THRESHOLDS,
    Invalid,
    Kinds,
    S,
    given_values,
    json_non_objects,
    make_request,
    maybe,
    non_json_bodies,
    pick_kinds,
    screening_body,
    unknown_ids,
    wrong_keys,
)
from idv_mock.strategies.valid import aml_requests

_BAD_THRESHOLDS = (
    st.integers(max_value=THRESHOLD_SCHEMA["minimum"] - 1)
    | st.integers(min_value=THRESHOLD_SCHEMA["maximum"] + 1)
    | st.sampled_from([50.5, "50", True, False, [], {}, "high"])
)


def _aml(kind: str, code: str, **request: Any) -> Invalid:
    error = errors.AML_SCREENING.error(code)
    return Invalid(make_request("POST", AML_PATH, **request), error.status, error.body, kind)


def _aml_json(kind: str, code: str) -> Callable[[dict[str, Any]], Invalid]:
    return lambda body: _aml(kind, code, json=body)


def _aml_kinds(submission_ids: Sequence[str], project_threshold: bool) -> Kinds:
    """Each failure kind of the screening call, by name."""
    sids = given_values(submission_ids, "submission_ids")
    threshold = maybe(THRESHOLDS)
    table: Kinds = {
        "wrong_api_key": st.builds(
            lambda h, b: _aml("wrong_api_key", "invalid_project", headers=h, json=b),
            wrong_keys(),
            aml_requests(submission_ids),
        ),
        "not_json": non_json_bodies().map(lambda r: _aml("not_json", "invalid_payload", content=r)),
        "not_object": json_non_objects().map(
            lambda r: _aml("not_object", "invalid_payload", content=r)
        ),
        "bad_threshold": st.builds(
            screening_body, maybe(sids | st.just("") | NOT_NULL), _BAD_THRESHOLDS
        ).map(_aml_json("bad_threshold", "invalid_payload")),
        "missing_submissionId": st.builds(
            screening_body, st.sampled_from([ABSENT, ""]), threshold
        ).map(_aml_json("missing_submissionId", "missing_parameter")),
        "wrong_type": st.builds(screening_body, NOT_NULL, threshold).map(
            _aml_json("wrong_type", "invalid_payload")
        ),
        "unknown_submission": st.builds(screening_body, unknown_ids(submission_ids), threshold).map(
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
    """Wrong POST /submission/aml requests and their errors (api-v3.md 7.4, docs/gaps.md's order).

    Kinds: wrong_api_key, not_json, not_object, bad_threshold (``submissionId`` then may
    be anything), missing_submissionId, wrong_type (``submissionId`` not a string),
    unknown_submission, and no_threshold (a live submission without ``amlThreshold``;
    left out when ``project_threshold`` says the project has the option ``aml_threshold``).
    """
    return pick_kinds(_aml_kinds(submission_ids, project_threshold), kinds, "invalid_aml_requests")
