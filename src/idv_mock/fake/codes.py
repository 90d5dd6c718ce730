"""The vendor's reject and retry codes with their texts, as ``schemas/`` lists them.

A reject code (``kyc.commentCode``, ``commentCode`` of the ``rejected`` webhook) always
travels with the vendor's comment for it, and a retry code (``retryCode``) with the
vendor's ``retryMsg`` where one is published, so no text of the mock's own reaches an
integrator's code. The age texts say 13 where the vendor's table does: that number stands
for the project's age limit (the FAQ writes ``{13}``), which ``reject`` puts in its place.
"""

from __future__ import annotations

from typing import Any

from idv_mock.ground import schemas

_REJECT = schemas.definition("reject_code")
REJECT_CODES: tuple[str, ...] = tuple(_REJECT["enum"])
REJECT_COMMENTS: dict[str, str] = dict(_REJECT["x-idv-comments"])
_RETRY = schemas.load("webhooks/common.json")["$defs"]["retry_code"]
RETRY_CODES: tuple[str, ...] = tuple(_RETRY["enum"])
RETRY_MESSAGES: dict[str, str] = dict(_RETRY["x-idv-messages"])
AGE_CODES = ("under_ageLimit", "id_info_notOfAge")
VENDOR_AGE = "under 13 years old"
# the flow's tries: the third failed attempt rejects (vendor: "3 times maximum (1st try +
# 2 retries)"; the old step API's retryCount up to 3; the 2026-05 notice's three errors)
MAX_ATTEMPTS = 3
SELFIE_CODES = ("face_compare_underscore",)  # the old step API's Step 2 (the selfie)
TOO_MANY = "too_many_retry"


def comment(code: str, age_limit: float | None = None) -> str:
    """The vendor's comment for ``code`` (``age_limit``: the project's, for the age codes)."""
    text = REJECT_COMMENTS[code]
    if code in AGE_CODES and age_limit:
        return text.replace(VENDOR_AGE, f"under {age_limit:g} years old")
    return text


def reject(code: str, age_limit: float | None = None) -> dict[str, list[str]]:
    """A submission's ``kyc`` reason fields for a rejection with ``code``."""
    return {"comment": [comment(code, age_limit)], "commentCode": [code]}


def retry_entry(count: int, code: str) -> dict[str, Any]:
    """One ``kyc.retry`` entry: the ``count``-th retry asked for, for ``code`` (with the
    vendor's message when it publishes one; left out otherwise)."""
    step = "step2" if code in SELFIE_CODES else "step1"
    entry: dict[str, Any] = {"type": step, "retryCnt": count, "retryCode": code}
    if code in RETRY_MESSAGES:
        entry["retryMessage"] = RETRY_MESSAGES[code]
    return entry
