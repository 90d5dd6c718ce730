"""Webhook events and their payloads (api-v3.md 6; gaps.md "Webhooks").

Pure functions from a submission (and what happened to it) to the payload the service
POSTs to the project's webhook URL. Projection filtering applies to the submission events.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from idv_mock.backend.projections import hide

Submission = dict[str, Any]

# webhook_trigger -> the X-Idv-Event header
EVENT_NAMES = {
    "submit": "submission.submit",
    "approved": "submission.approved",
    "rejected": "submission.rejected",
    "updated": "submission.updated",
    "delete": "submission.deleted",
    "aml": "submission.aml",
    "created": "submission.created",
    "retry": "submission.retry",
    "token_expired": "token.expired",
}
DATA_KEYS = (
    "age_group",
    "gender",
    "date_of_birth",
    "nationality",
    "full_name",
    "full_name_en",
    "first_name",
    "last_name",
    "phoneNumber",
    "ssnNumber",
)


@dataclass(frozen=True, slots=True)
class Event:
    trigger: str
    payload: dict[str, Any]

    @property
    def name(self) -> str:
        return EVENT_NAMES[self.trigger]


def submission_event(
    trigger: str, sub: Submission, hidden: list[str] | None, style: str = "omit"
) -> Event:
    """``submit``, ``approved`` or ``rejected``: the submission's fields, projection applied."""
    data, kyc = sub.get("data") or {}, sub.get("kyc") or {}
    payload: dict[str, Any] = {
        "submission_id": sub["submission_id"],
        "email": sub.get("email", ""),
        "userid": sub.get("userid", ""),
        "cf": hide({k: data.get(k, "") for k in ("cf1", "cf2", "cf3")}, hidden or [], style),
        "applicant_id": sub.get("applicant_id", ""),
        "webhook_trigger": trigger,
        "kyc_result": {
            "status": kyc.get("result", ""),
            "updated_at": sub.get("updated_at", ""),
            "created_at": sub["created_at"],
            "kyc_result_at": sub.get("kyc_result_at", ""),
            "reviewer": sub.get("reviewer", ""),
        },
        **{k: data.get(k, "") for k in DATA_KEYS},
        "duplicated_information": sub.get("duplicated_information", ""),
        "additional_list": sub.get("additional_list", []),
    }
    if hidden:
        payload = hide(payload, hidden, style)
    if "projection" in sub:
        payload["projection"] = sub["projection"]
    return Event(trigger, payload)


def creation_events(sub: Submission, hidden: list[str] | None, style: str) -> list[Event]:
    """``submit``, then ``approved`` or ``rejected`` by the KYC result (nothing when pending)."""
    events = [submission_event("submit", sub, hidden, style)]
    result = (sub.get("kyc") or {}).get("result")
    if result in ("approved", "rejected"):
        events.append(submission_event(result, sub, hidden, style))
    return events


def updated_event(sid: str, admin: str, when: str, changes: dict[str, str]) -> Event:
    payload = {
        "webhook_trigger": "updated",
        "submission_id": sid,
        "admin": admin,
        "update_time": when,
        "data": {"update": dict(changes)},
    }
    return Event("updated", payload)


def delete_event(sid: str, admin: str, when: str) -> Event:
    payload = {
        "webhook_trigger": "delete",
        "submission_id": sid,
        "account_email": admin,
        "delete_time": when,
        "comment": f"Submission {sid} deleted by {admin}.",
    }
    return Event("delete", payload)


def aml_event(sub: Submission) -> Event:
    aml = sub.get("aml") or {}
    payload = {
        "webhook_trigger": "aml",
        "submission_id": sub["submission_id"],
        "email": sub.get("email", ""),
        "userid": sub.get("userid", ""),
        "aml_result": {
            "currentstatus": aml.get("currentstatus", ""),
            "risk_level_summary": aml.get("risk_level_summary", ""),
        },
    }
    return Event("aml", payload)


def flow_event(trigger: str, sid: str, values: dict[str, Any]) -> Event:
    """``created`` (the applicant reached the document step) or ``retry`` (a failed
    recognition): the submission's id, reserved, and the link's values (gaps.md)."""
    payload = {"webhook_trigger": trigger, "submission_id": sid}
    payload.update({k: values.get(k, "") for k in ("userid", "email", "cf1", "cf2", "cf3")})
    if "retry_count" in values:
        payload["retry_count"] = values["retry_count"]
    return Event(trigger, payload)


def token_expired_event(token_id: str, condition: str, at: str) -> Event:
    """``token_expired``: the token, ``time`` or ``count``, and the instant it expired.

    Minimal version (issue 25); the vendor's exact shape comes with issue 24."""
    payload = {
        "webhook_trigger": "token_expired",
        "token_id": token_id,
        "expired_condition": condition,
        "expired_at": at,
        "expected_expired_at": at,
        "service": "liveform",
    }
    return Event("token_expired", payload)


EVENT_NAMES.setdefault("aml_monitor", "submission.aml_monitor")


def aml_monitor_event(
    sub: dict[str, Any],
    records: list[dict[str, Any]],
    hidden: list[str] | None = None,
    style: str = "omit",
) -> Event:
    """``aml_monitor``: a search cycle found something new for the submission's records
    (``recordId``, ``worklistId``, ``created_at``). Minimal version (issue 25); the
    vendor's exact shape comes with issue 24."""
    data = sub.get("data") or {}
    payload: dict[str, Any] = {
        "webhook_trigger": "aml_monitor",
        "submission_id": sub["submission_id"],
        "email": sub.get("email", ""),
        "userid": sub.get("userid", ""),
        "tokenId": sub.get("tokenId", ""),
        "cf": {k: data.get(k, "") for k in ("cf1", "cf2", "cf3")},
        "records": [dict(r) for r in records],
    }
    if hidden:
        payload = hide(payload, hidden, style)
    return Event("aml_monitor", payload)
