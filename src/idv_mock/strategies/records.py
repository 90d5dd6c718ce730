"""Client review, PUT image and migration (endpoints.md 5, 7, 8): valid requests, and wrong
ones with their exact errors, in each call's check order (the modules' docstrings in
``idv_mock.api``; docs/gaps.md).

Review's state rules (the submission is pending; the project's reviewer is the client)
depend on the state, not the request, so they are left to tests."""

from __future__ import annotations

import base64
from collections.abc import Collection, Sequence
from typing import Any

from hypothesis import strategies as st

from idv_mock.backend.images import ID_SLOTS, SLOTS, sample
from idv_mock.ground import errors, operations, schemas
from idv_mock.strategies.common import (
    COUNTRIES,
    GENDERS,
    ID_TYPES,
    NOT_NULL,
    Invalid,
    Kinds,
    S,
    bad_dates,
    dates,
    emails,
    given_values,
    json_non_objects,
    make_request,
    non_json_bodies,
    not_in,
    pick_kinds,
    texts,
    unknown_ids,
    unregistered_admins,
    wrong_keys,
)

REVIEW_PATH = operations.path("postSubmissionReview")
IMAGE_PATH = operations.path("putSubmissionImage")
MIGRATION_PATH = operations.path("postSubmissionMigration")
FINAL = schemas.enum("final_result")  # a review's status, a migration's kycStatus
_PNG = base64.b64encode(sample("strategy", "selfieImage")).decode()

# --- review ---------------------------------------------------------------------------------


@st.composite
def review_requests(
    draw: st.DrawFn, pending_ids: Sequence[str], admins: Sequence[str]
) -> dict[str, Any]:
    """A decision on one of ``pending_ids`` (JSON body), sometimes with ``updateFields``."""
    status = draw(st.sampled_from(FINAL))
    body: dict[str, Any] = {
        "admin": draw(given_values(admins, "admins")),
        "submissionId": draw(given_values(pending_ids, "pending_ids")),
        "status": status,
    }
    if status == "rejected":
        body["rejectComment"] = draw(texts().filter(str.strip))
    if draw(st.booleans()):
        fields = {
            "fullName": texts(),
            "gender": st.sampled_from(GENDERS),
            "birthDate": dates(),
            "idType": st.sampled_from(ID_TYPES),
        }
        body["updateFields"] = draw(st.fixed_dictionaries({}, optional=fields))
    return body


def _review(kind: str, key: str, **request: Any) -> Invalid:
    error = errors.REVIEW.error(key)
    return Invalid(make_request("POST", REVIEW_PATH, **request), error.status, error.body, kind)


def _review_kinds(pending_ids: Sequence[str], admins: Sequence[str]) -> Kinds:
    valid = review_requests(pending_ids, admins)

    def changed(kind: str, key: str, **change: Any) -> S[Invalid]:
        def apply(body: dict[str, Any]) -> Invalid:
            sent = {k: v for k, v in {**body, **change}.items() if v is not None}
            return _review(kind, key, json=sent)

        return valid.map(apply)

    return {
        "wrong_api_key": st.builds(
            lambda h, b: _review("wrong_api_key", "project_not_found", headers=h, json=b),
            wrong_keys(),
            valid,
        ),
        "not_json": non_json_bodies()
        .filter(bytes.strip)
        .map(lambda r: _review("not_json", "invalid_data_format", content=r)),
        "not_object": json_non_objects().map(
            lambda r: _review("not_object", "invalid_data_format", content=r)
        ),
        "missing_admin": changed("missing_admin", "admin_required", admin=None),
        "missing_submissionId": changed(
            "missing_submissionId", "submission_id_required", submissionId=None
        ),
        "bad_status": st.builds(
            lambda b, s: _review("bad_status", "invalid_status", json={**b, "status": s}),
            valid,
            not_in(FINAL) | NOT_NULL,
        ),
        "missing_rejectComment": changed(
            "missing_rejectComment",
            "reject_comment_required",
            status="rejected",
            rejectComment=None,
        ),
        "bad_updateFields": changed(
            "bad_updateFields", "invalid_data_format", updateFields={"birthDate": "1990/01/01"}
        ),
        "unregistered_admin": st.builds(
            lambda b, a: _review("unregistered_admin", "admin_denied", json={**b, "admin": a}),
            valid,
            unregistered_admins(admins),
        ),
        "unknown_submission": st.builds(
            lambda b, s: _review(
                "unknown_submission", "invalid_submission_id", json={**b, "submissionId": s}
            ),
            valid,
            unknown_ids(pending_ids),
        ),
    }


def invalid_review_requests(
    pending_ids: Sequence[str], admins: Sequence[str], *, kinds: Collection[str] | None = None
) -> S[Invalid]:
    """Wrong POST /submission/review requests and their errors.

    Kinds: wrong_api_key, not_json, not_object, missing_admin, missing_submissionId,
    bad_status, missing_rejectComment, bad_updateFields, unregistered_admin,
    unknown_submission. None changes state.
    """
    table = _review_kinds(pending_ids, admins)
    return pick_kinds(table, kinds, "invalid_review_requests")


# --- PUT image ------------------------------------------------------------------------------


@st.composite
def put_image_requests(
    draw: st.DrawFn, submission_ids: Sequence[str], admins: Sequence[str]
) -> dict[str, Any]:
    """``files=`` for httpx (multipart Base64 fields): 1-4 images, ``idType`` when needed."""
    slots = draw(st.lists(st.sampled_from(SLOTS), min_size=1, max_size=4, unique=True))
    fields = {
        "submissionId": draw(given_values(submission_ids, "submission_ids")),
        "admin": draw(given_values(admins, "admins")),
        **{slot: _PNG for slot in slots},
    }
    typed: bool = draw(st.booleans())
    if typed or any(slot in ID_SLOTS for slot in slots):
        fields["idType"] = draw(st.sampled_from(ID_TYPES))
    return {name: (None, value) for name, value in fields.items()}


def _put(kind: str, key: str, files: dict[str, Any], **request: Any) -> Invalid:
    error = errors.PUT_IMAGE.error(key)
    req = make_request("PUT", IMAGE_PATH, files=files, **request)
    return Invalid(req, error.status, error.body, kind)


def _put_kinds(submission_ids: Sequence[str], admins: Sequence[str]) -> Kinds:
    valid = put_image_requests(submission_ids, admins)

    def changed(kind: str, key: str, drop: tuple[str, ...] = (), **add: Any) -> S[Invalid]:
        def apply(files: dict[str, Any]) -> Invalid:
            sent = {k: v for k, v in files.items() if k not in drop}
            sent.update({k: (None, v) for k, v in add.items()})
            return _put(kind, key, sent)

        return valid.map(apply)

    return {
        "wrong_api_key": st.builds(
            lambda h, f: _put("wrong_api_key", "invalid_project", f, headers=h), wrong_keys(), valid
        ),
        "missing_submissionId": changed("missing_submissionId", "missing_data", ("submissionId",)),
        "missing_admin": changed("missing_admin", "missing_data", ("admin",)),
        "no_image": changed("no_image", "invalid_data", SLOTS),
        "id_image_without_type": changed(
            "id_image_without_type", "missing_idType", ("idType",), idImage=_PNG
        ),
        "bad_id_type": changed("bad_id_type", "invalid_idType", idType="library_card"),
        "bad_image": changed(
            "bad_image", "invalid_payload", ("idType", *ID_SLOTS), selfieImage="%%%"
        ),
        "unregistered_admin": st.builds(
            lambda f, a: _put("unregistered_admin", "invalid_admin", {**f, "admin": (None, a)}),
            valid,
            unregistered_admins(admins),
        ),
        "unknown_submission": st.builds(
            lambda f, s: _put(
                "unknown_submission", "invalid_submission", {**f, "submissionId": (None, s)}
            ),
            valid,
            unknown_ids(submission_ids),
        ),
    }


def invalid_put_image_requests(
    submission_ids: Sequence[str], admins: Sequence[str], *, kinds: Collection[str] | None = None
) -> S[Invalid]:
    """Wrong PUT /submission/image requests (multipart) and their errors.

    Kinds: wrong_api_key, missing_submissionId, missing_admin, no_image,
    id_image_without_type, bad_id_type, bad_image (not Base64 of a jpg or png),
    unregistered_admin, unknown_submission. None changes state.
    """
    return pick_kinds(_put_kinds(submission_ids, admins), kinds, "invalid_put_image_requests")


# --- migration ------------------------------------------------------------------------------


def migration_requests(admins: Sequence[str]) -> S[dict[str, Any]]:
    """Bodies POST /submission/migration accepts: the required fields and some optional."""
    required = {
        "admin": given_values(admins, "admins"),
        "email": emails(),
        "fullName": texts(),
        "birthDate": dates(),
        "kycStatus": st.sampled_from(FINAL),
    }
    optional = {
        "idType": st.sampled_from(ID_TYPES),
        "issuingCountry": st.sampled_from(COUNTRIES),
        "nationality": st.sampled_from(COUNTRIES),
        "gender": st.sampled_from(GENDERS),
        "issueDate": dates(),
        "expireDate": dates(),
        "cf1": texts(),
        "userid": texts(),
    }
    return st.fixed_dictionaries(required, optional=optional)


def _migration(kind: str, key: str, *args: str, **request: Any) -> Invalid:
    error = errors.MIGRATION.error(key, *args)
    req = make_request("POST", MIGRATION_PATH, **request)
    return Invalid(req, error.status, error.body, kind)


def _migration_kinds(admins: Sequence[str]) -> Kinds:
    valid = migration_requests(admins)
    required = st.sampled_from(["admin", "email", "fullName", "birthDate", "kycStatus"])
    return {
        "wrong_api_key": st.builds(
            lambda h, b: _migration("wrong_api_key", "invalid_project", headers=h, json=b),
            wrong_keys(),
            valid,
        ),
        "not_json": non_json_bodies().map(
            lambda r: _migration("not_json", "invalid_payload", content=r)
        ),
        "not_object": json_non_objects().map(
            lambda r: _migration("not_object", "invalid_payload", content=r)
        ),
        "unknown_parameter": st.builds(
            lambda b, n: _migration(
                "unknown_parameter", "invalid_parameter", n, json={**b, n: "x"}
            ),
            valid,
            st.sampled_from(["nickname", "full_name", "kyc_status", "submissionId"]),
        ),
        "missing_required": st.builds(
            lambda b, n: _migration(
                "missing_required", "missing_data", json={k: v for k, v in b.items() if k != n}
            ),
            valid,
            required,
        ),
        "bad_date": st.builds(
            lambda b, d: _migration(
                "bad_date", "invalid_format", "birthDate", json={**b, "birthDate": d}
            ),
            valid.map(
                lambda b: {k: v for k, v in b.items() if k not in ("issueDate", "expireDate")}
            ),
            bad_dates().filter(bool),
        ),
        "bad_status": st.builds(
            lambda b, s: _migration(
                "bad_status", "invalid_format", "kycStatus", json={**b, "kycStatus": s}
            ),
            valid,
            not_in(FINAL).filter(bool),
        ),
        "unregistered_admin": st.builds(
            lambda b, a: _migration("unregistered_admin", "invalid_admin", json={**b, "admin": a}),
            valid,
            emails().filter(lambda a: a not in admins),
        ),
    }


def invalid_migration_requests(
    admins: Sequence[str], *, kinds: Collection[str] | None = None
) -> S[Invalid]:
    """Wrong POST /submission/migration requests and api-v3.md 7.2's errors.

    Kinds: wrong_api_key, not_json, not_object, unknown_parameter, missing_required,
    bad_date, bad_status, unregistered_admin. None creates a submission.
    """
    return pick_kinds(_migration_kinds(admins), kinds, "invalid_migration_requests")
