"""Derived fields every creation path applies (gaps.md, "Submissions: derived fields")."""

from __future__ import annotations

import hashlib
import math
import unicodedata
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from idv_mock.backend.duplicates import Findings

Submission = dict[str, Any]

AUTO_REVIEW_SCORE = 90.0
REVIEW_FROM_OCR = (
    "birthDate",
    "fullName",
    "gender",
    "nationality",
    "issueDate",
    "expireDate",
    "identityNumber",
)
REVIEW_FROM_DATA = ("documentNumber",)  # OCR has no document number


def mask(value: str) -> str:
    """Asterisks for all but the last four characters."""
    return "*" * max(len(value) - 4, 0) + value[-4:]


def mask_ip(ip: str) -> str:
    head, _, _ = ip.rpartition(".")
    return f"{head}.***" if head else ip


MASKING_OPTIONS = ("option_mask_documentNumber", "option_mask_idNumber")


def apply_masking(sub: Submission, options: dict[str, Any]) -> Submission:
    """Mask document and identity numbers where the project's options say so."""
    data = dict(sub.get("data") or {})
    for option, key in zip(MASKING_OPTIONS, ("documentNumber", "identityNumber"), strict=True):
        if options.get(option) and data.get(key):
            data[key] = mask(str(data[key]))
    return {**sub, "data": data}


def auto_review(sub: Submission) -> Submission:
    """Fill ``review`` from OCR and mark the reviewer ``system`` when recognition is high
    (in ``sub`` itself: ``derive`` hands it its own copy)."""
    try:
        score = float(sub.get("recognition_score") or 0)
    except ValueError:
        score = 0.0
    if not math.isfinite(score) or score < AUTO_REVIEW_SCORE:
        return sub
    ocr, data = sub.get("ocr") or {}, sub.get("data") or {}
    review = {k: ocr[k] for k in REVIEW_FROM_OCR if k in ocr}
    review.update({k: data[k] for k in REVIEW_FROM_DATA if k in data})
    sub["review"], sub["reviewer"] = review, "system"
    return sub


def derive(sub: Submission, options: dict[str, Any], project_options: dict[str, Any]) -> Submission:
    """Every derived field except the duplicate checks, which need the project's store.
    A new top level; the parts it does not change are shared with ``sub``."""
    masked = any(options.get(option) for option in MASKING_OPTIONS)
    sub = auto_review(apply_masking(sub, options) if masked else dict(sub))
    pre = sub.get("pre_verification")
    if isinstance(pre, dict) and isinstance(pre.get("ip_address"), str):
        sub["pre_verification"] = {**pre, "ip_address": mask_ip(pre["ip_address"])}
    sub["project_options"] = project_options
    kyc = sub.get("kyc")
    if isinstance(kyc, dict) and kyc.get("result") == "pending" and not sub.get("pending_at"):
        sub["pending_at"] = sub.get("kyc_result_at") or sub.get("created_at") or ""
    return sub


def finished(
    raw: Submission,
    options: dict[str, Any],
    project_options: dict[str, Any],
    project_id: str,
    found: Findings,
) -> Submission:
    """A created submission as stored: ``raw`` derived, with the duplicate checks'
    ``found`` and the identity ids (the creation path's, and a split seeding's builder's:
    one function, so both give the same bytes)."""
    sub = derive(raw, options, project_options)
    sub["duplicated_users"] = found.users
    sub["duplicated_selfie_users"] = found.selfie_users
    sub["custom_duplicated_information"] = found.custom_information
    return identity_ids(sub, project_id)


# --- the vendor's duplicate-check ids (gaps.md "Values an integrator branches on") ---
PERSON_FIELDS = ("full_name", "date_of_birth", "gender", "nationality")


def person(sub: Submission) -> tuple[str, ...] | None:
    """The four values both ids are made from, normalised (NFKC, case and spacing of the
    name; upper-case nationality), or None when one is not known."""
    data = sub.get("data") or {}
    name, birth, gender, nationality = [str(data.get(k) or "") for k in PERSON_FIELDS]
    four = (
        " ".join(unicodedata.normalize("NFKC", name).casefold().split()),
        birth.strip(),
        gender.strip().casefold(),
        nationality.strip().upper(),
    )
    return four if all(four) else None


def opaque_id(*parts: str) -> str:
    """24 hex digits no one can read the parts back from (the vendor's ids are opaque)."""
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:24]


def identity_ids(sub: Submission, project_id: str, before: Submission | None = None) -> Submission:
    """``duplicated_information`` (the same four values give the same id within a project;
    ``""`` when one is not known) and ``applicant_id`` (the four plus a selfie: one id for
    the same person's submissions; without them the vendor's "random" id, here one drawn
    from the submission id, so it stays put). ``applicant_id`` is given once a submission
    is approved (vendor: "only for approved KYC submissions") and then kept (``before``:
    the submission before an edit), following its data."""
    four = person(sub)
    sub["duplicated_information"] = opaque_id("information", project_id, *four) if four else ""
    approved = (sub.get("kyc") or {}).get("result") == "approved"
    if approved or (before is not None and before.get("applicant_id")):
        selfie = (sub.get("image") or {}).get("selfieImage")
        basis = four if four and selfie else (str(sub["submission_id"]),)
        sub["applicant_id"] = opaque_id("applicant", project_id, *basis)
    else:
        sub["applicant_id"] = ""
    return sub
