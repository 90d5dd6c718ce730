"""Derived fields every creation path applies (gaps.md, "Submissions: derived fields")."""

from __future__ import annotations

import math
from typing import Any

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


def apply_masking(sub: Submission, options: dict[str, Any]) -> Submission:
    """Mask document and identity numbers where the project's options say so."""
    data = dict(sub.get("data") or {})
    for option, key in (
        ("option_mask_documentNumber", "documentNumber"),
        ("option_mask_idNumber", "identityNumber"),
    ):
        if options.get(option) and data.get(key):
            data[key] = mask(str(data[key]))
    return {**sub, "data": data}


def auto_review(sub: Submission) -> Submission:
    """Fill ``review`` from OCR and mark the reviewer ``system`` when recognition is high."""
    try:
        score = float(sub.get("recognition_score") or 0)
    except ValueError:
        score = 0.0
    if not math.isfinite(score) or score < AUTO_REVIEW_SCORE:
        return sub
    ocr, data = sub.get("ocr") or {}, sub.get("data") or {}
    review = {k: ocr[k] for k in REVIEW_FROM_OCR if k in ocr}
    review.update({k: data[k] for k in REVIEW_FROM_DATA if k in data})
    return {**sub, "review": review, "reviewer": "system"}


def derive(sub: Submission, options: dict[str, Any], project_options: dict[str, Any]) -> Submission:
    """Every derived field except the duplicate checks, which need the project's store."""
    sub = auto_review(apply_masking(sub, options))
    pre = sub.get("pre_verification")
    if isinstance(pre, dict) and isinstance(pre.get("ip_address"), str):
        sub["pre_verification"] = {**pre, "ip_address": mask_ip(pre["ip_address"])}
    sub["project_options"] = project_options
    kyc = sub.get("kyc")
    if isinstance(kyc, dict) and kyc.get("result") == "pending" and not sub.get("pending_at"):
        sub["pending_at"] = sub.get("kyc_result_at") or sub.get("created_at") or ""
    return sub
