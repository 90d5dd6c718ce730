"""Webhook events and their payloads, one shape per trigger (webhooks.md; gaps.md "Webhooks").

Pure functions from a submission (and what happened to it) to the payload the service
POSTs to the project's webhook URL. Each trigger's fields are a table below, in the
vendor's names and nesting; ``schemas/webhooks/<trigger>.json`` says the same as a JSON
Schema. A field the submission has no value for is left out (the vendor sends only what
was entered); timestamps are ISO 8601 UTC with milliseconds (the submission resource's
``YYYY-MM-DD-HH-MM-SS-ZZZ`` stays on the resource). A projection applied to the submission
hides its fields in every trigger that carries them: left out, or null with
``projection_style`` ``null``; the ``projection`` object travels with them.

With ``IDV_MOCK_CHECK_WEBHOOKS=1`` (the test suite sets it) every payload built here is
checked against its schema, so a payload that leaves its shape fails where it is made.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from idv_mock.backend.event_codes import EVENT_NAMES as EVENT_NAMES  # their home: a
from idv_mock.backend.event_codes import FAIL_CODES as FAIL_CODES  # first use reads them
from idv_mock.backend.event_codes import RETRY_CODES as RETRY_CODES  # without the builders
from idv_mock.ground import operations, schemas

Submission = dict[str, Any]
_INDEX = operations.webhooks()  # the webhook table
SCHEMAS = {trigger: entry["schema"] for trigger, entry in _INDEX.items()}
CHECK_ENV = "IDV_MOCK_CHECK_WEBHOOKS"
CF_KEYS = ("cf1", "cf2", "cf3")
# payload key -> (the submission's ``data`` key, the projection field that hides it)
PERSONAL = {
    "age_group": "age_group",
    "gender": "gender",
    "date_of_birth": "date_of_birth",
    "nationality": "nationality",
    "full_name": "full_name",
    "full_name_en": "full_name_en",
    "first_name": "first_name",
    "last_name": "last_name",
    "phoneNumber": "phoneNumber",
    "ssnNumber": "ssnNumber",
    "ipAddress": "ip_address",
    "idType": "idType",
    "issuingCountry": "idcard_issuingCountry",
    "issueDate": "idcard_issueDate",
    "expireDate": "idcard_expireDate",
    "identityNumber": "identityNumber",
    "documentNumber": "documentNumber",
}
# the personal fields each trigger carries, in the vendor's order
APPROVED_PERSONAL = (
    *("age_group", "gender", "date_of_birth", "nationality", "full_name", "full_name_en"),
    *("first_name", "last_name", "phoneNumber", "ssnNumber", "ipAddress", "idType"),
    *("issuingCountry", "issueDate", "expireDate", "identityNumber", "documentNumber"),
)
UPDATED_PERSONAL = (
    *("age_group", "gender", "date_of_birth", "full_name", "full_name_en"),
    *("first_name", "last_name", "nationality"),
)
# PATCH property -> the name ``updated``'s ``data.update`` lists (vendor sample spelling)
UPDATE_NAMES = {"firstName": "first_name", "lastName": "last_name"}


class PayloadError(AssertionError):
    """A built payload left its trigger's schema (only raised when checking is on)."""


@dataclass(frozen=True, slots=True)
class Event:
    trigger: str
    payload: dict[str, Any]

    def __post_init__(self) -> None:
        if os.environ.get(CHECK_ENV) == "1":
            problems = schemas.errors(SCHEMAS[self.trigger], self.payload)
            if problems:
                raise PayloadError(f"{self.trigger} payload: {problems}")

    @property
    def name(self) -> str:
        return EVENT_NAMES[self.trigger]


# --- small parts ---
def webhook_time(stamp: str) -> str:
    """A submission timestamp (``YYYY-MM-DD-HH-MM-SS-ZZZ``) as ISO 8601 (``...T..:..:...ZZZZ``);
    an ISO one is kept; empty stays empty."""
    if len(stamp) != 23 or stamp[10] != "-":
        return stamp
    return f"{stamp[:10]}T{stamp[11:13]}:{stamp[14:16]}:{stamp[17:19]}.{stamp[20:23]}Z"


def _filled(pairs: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    """The pairs that have a value (the vendor leaves out what was never given)."""
    return {k: v for k, v in pairs if v not in (None, "", [], {})}


def _data(sub: Submission) -> dict[str, Any]:
    return sub.get("data") or {}


def _cf(sub: Submission) -> dict[str, Any]:
    data = _data(sub)
    return _filled((k, data.get(k)) for k in CF_KEYS)


def _personal(sub: Submission, keys: Iterable[str]) -> dict[str, Any]:
    data = _data(sub)
    return _filled((k, data.get(PERSONAL[k])) for k in keys)


def _ip(sub: Submission) -> str:
    """The applicant's IP: the one the form saw, else the pre-verification's (masked)."""
    ip = _data(sub).get("ip_address") or (sub.get("pre_verification") or {}).get("ip_address")
    return str(ip or "")


def _status(sub: Submission) -> str:
    return str((sub.get("kyc") or {}).get("result", ""))


def _first(values: Any) -> str:
    """The first of an array (the submission's ``kyc.comment``), or a string as it is."""
    if isinstance(values, list):
        return str(values[0]) if values else ""
    return str(values or "")


def _project(
    payload: dict[str, Any], sub: Submission, hidden: list[str] | None, style: str
) -> dict[str, Any]:
    """Hide what the projection excluded, in the trigger's own fields (top level and
    ``cf``), and carry the ``projection`` object when one applied."""
    if hidden:
        names = {k: PERSONAL.get(k, k) for k in payload}
        payload = _hide(payload, names, hidden, style)
        if "cf" in payload:
            cf = _hide(payload["cf"], {k: k for k in payload["cf"]}, hidden, style)
            if cf:
                payload["cf"] = cf
            else:
                del payload["cf"]
    if sub.get("projection"):
        payload["projection"] = dict(sub["projection"])
    return payload


def _hide(
    obj: dict[str, Any], names: dict[str, str], hidden: list[str], style: str
) -> dict[str, Any]:
    if style == "null":
        return {**obj, **{k: None for k, field in names.items() if field in hidden}}
    return {k: v for k, v in obj.items() if names.get(k, k) not in hidden}


# --- submission triggers ---
def _reference(sub: Submission, applicant: bool = False) -> tuple[tuple[str, Any], ...]:
    """What ``submit`` and ``rejected`` say of the submission after their own head, in the
    vendor's order: who it is without personal data (``applicant``: with ``applicant_id``,
    as the vendor's ``rejected`` sample, when the submission has one: once approved)."""
    return (
        ("submission_id", sub["submission_id"]),
        ("duplicated_information", sub.get("duplicated_information")),
        ("applicant_id", sub.get("applicant_id") if applicant else None),
        ("email", sub.get("email")),
        ("cf", _cf(sub)),
        ("userid", sub.get("userid")),
        ("tokenId", sub.get("tokenId")),
        ("ipAddress", _ip(sub)),
    )


def submit_event(sub: Submission, hidden: list[str] | None = None, style: str = "omit") -> Event:
    """``submit``: the result is pending (a manual review); no personal data."""
    payload = _filled(
        (
            ("webhook_trigger", "submit"),
            ("created_at", webhook_time(str(sub.get("created_at", "")))),
            *_reference(sub),
        )
    )
    return Event("submit", _project(payload, sub, hidden, style))


def approved_event(
    sub: Submission,
    hidden: list[str] | None = None,
    style: str = "omit",
    reviewer: str = "system",
) -> Event:
    """``approved``: the NEW sample's fields and the NEW field list's (gaps.md)."""
    kyc = _filled(
        (
            ("status", "approved"),
            ("updated_at", webhook_time(str(sub.get("updated_at") or sub["created_at"]))),
            ("created_at", webhook_time(str(sub["created_at"]))),
            ("kyc_result_at", webhook_time(str(sub.get("kyc_result_at") or sub["created_at"]))),
            ("pending_at", webhook_time(str(sub.get("pending_at") or ""))),
            ("reviewer", reviewer),
        )
    )
    person = {**_personal(sub, APPROVED_PERSONAL), "ipAddress": _ip(sub)}
    additional = [
        _filled((k, item.get(k)) for k in ("answer", "inputValue", "blockType"))
        for item in sub.get("additional_list") or []
        if isinstance(item, dict)
    ]
    payload = _filled(
        (
            ("submission_id", sub["submission_id"]),
            ("email", sub.get("email")),
            ("cf", _cf(sub)),
            ("applicant_id", sub.get("applicant_id")),
            ("webhook_trigger", "approved"),
            ("kyc_result", kyc),
            *((k, person.get(k)) for k in APPROVED_PERSONAL[:4]),
            ("duplicated_information", sub.get("duplicated_information")),
            *((k, person.get(k)) for k in APPROVED_PERSONAL[4:10]),
            ("additional_list", additional),
            ("tokenId", sub.get("tokenId")),
            ("userid", sub.get("userid")),
            *((k, person.get(k)) for k in APPROVED_PERSONAL[10:]),
        )
    )
    return Event("approved", _project(payload, sub, hidden, style))


def rejected_event(sub: Submission, hidden: list[str] | None = None, style: str = "omit") -> Event:
    """``rejected``: no personal data; the reason as strings, the first of the arrays."""
    kyc = sub.get("kyc") or {}
    result = _filled(
        (
            ("status", "rejected"),
            ("comment", _first(kyc.get("comment"))),
            ("updated_at", webhook_time(str(sub.get("updated_at") or sub["created_at"]))),
            ("commentCode", _first(kyc.get("commentCode"))),
        )
    )
    payload = _filled(
        (
            ("webhook_trigger", "rejected"),
            ("kyc_result", result),
            *_reference(sub, applicant=True),
        )
    )
    return Event("rejected", _project(payload, sub, hidden, style))


def submission_event(
    trigger: str,
    sub: Submission,
    hidden: list[str] | None = None,
    style: str = "omit",
    reviewer: str = "system",
) -> Event:
    """``submit``, ``approved`` or ``rejected`` of ``sub`` (``reviewer``: who decided an
    approval, ``system`` or ``agent``)."""
    if trigger == "approved":
        return approved_event(sub, hidden, style, reviewer)
    if trigger == "rejected":
        return rejected_event(sub, hidden, style)
    return submit_event(sub, hidden, style)


def decision_events(
    sub: Submission, hidden: list[str] | None, style: str, reviewer: str = "system"
) -> list[Event]:
    """What a result sends: ``submit`` for pending, else ``approved`` or ``rejected``
    alone (the vendor sends no ``submit`` before an immediate decision)."""
    result = _status(sub)
    if result in schemas.enum("final_result"):
        return [submission_event(result, sub, hidden, style, reviewer)]
    if result == "pending":
        return [submit_event(sub, hidden, style)]
    return []


def creation_events(sub: Submission, hidden: list[str] | None, style: str) -> list[Event]:
    """A submission completed at once (reviewer ``system``): see ``decision_events``."""
    return decision_events(sub, hidden, style)


def updated_event(
    sub: Submission,
    admin: str,
    when: str,
    changed: Iterable[str],
    hidden: list[str] | None = None,
    style: str = "omit",
    reviewer: str = "agent",
) -> Event:
    """``updated``: ``changed`` holds the PATCH property names (``fullName``, ``kycStatus``,
    ...), listed in the vendor's spelling; ``when``: ISO 8601."""
    names = list(dict.fromkeys(UPDATE_NAMES.get(n, n) for n in changed))
    details = _filled(
        (
            ("update", names),
            ("kyc_result", _status(sub)),
            ("pending_at", webhook_time(str(sub.get("pending_at") or ""))),
            ("reviewer", reviewer),
        )
    )
    payload = _filled(
        (
            ("webhook_trigger", "updated"),
            ("submission_id", sub["submission_id"]),
            ("duplicated_information", sub.get("duplicated_information")),
            ("email", sub.get("email")),
            ("data", details),
            ("admin", admin),
            ("update_time", when),
            *_personal(sub, UPDATED_PERSONAL).items(),
            ("userid", sub.get("userid")),
            ("tokenId", sub.get("tokenId")),
        )
    )
    return Event("updated", _project(payload, sub, hidden, style))


def delete_event(sid: str, admin: str, when: str, comment: str | None = None) -> Event:
    """``delete``: ``when`` ISO 8601; the comment is the mock's own text unless given."""
    text = f"Submission {sid} deleted by {admin}." if comment is None else comment
    payload = _filled(
        (
            ("webhook_trigger", "delete"),
            ("submission_id", sid),
            ("account_email", admin),
            ("delete_time", when),
            ("comment", text),
        )
    )
    return Event("delete", payload)


def aml_event(sub: Submission, hidden: list[str] | None = None, style: str = "omit") -> Event:
    """``aml``: a screening of an approved submission completed."""
    aml = sub.get("aml") or {}
    result = {
        "currentstatus": str(aml.get("currentstatus", "")),
        "risk_level_summary": str(aml.get("risk_level_summary", "")),
    }
    payload = _filled(
        (
            ("webhook_trigger", "aml"),
            ("submission_id", sub["submission_id"]),
            ("duplicated_information", sub.get("duplicated_information")),
            ("email", sub.get("email")),
            ("userid", sub.get("userid")),
            ("cf", _cf(sub)),
            ("aml_result", result),
            ("tokenId", sub.get("tokenId")),
        )
    )
    return Event("aml", _project(payload, sub, hidden, style))


def aml_monitor_event(
    sub: Submission,
    records: list[dict[str, Any]],
    hidden: list[str] | None = None,
    style: str = "omit",
) -> Event:
    """``aml_monitor``: ``sub`` registered as ``records`` of worklists. A record is given in
    the vendor's shape (``recordId``, ``worklistId``, ``created_at``) or as a monitoring
    record (``id``, ``worklist_id``, ``updateTime``)."""
    refs = [
        {
            "recordId": str(r.get("recordId") or r.get("id", "")),
            "worklistId": str(r.get("worklistId") or r.get("worklist_id", "")),
            "created_at": webhook_time(str(r.get("created_at") or r.get("updateTime", ""))),
        }
        for r in records
    ]
    payload = _filled(
        (
            ("webhook_trigger", "aml_monitor"),
            ("submission_id", sub["submission_id"]),
            ("email", sub.get("email")),
            ("records", refs),
            ("userid", sub.get("userid")),
            ("tokenId", sub.get("tokenId")),
            ("cf", _cf(sub)),
        )
    )
    return Event("aml_monitor", _project(payload, sub, hidden, style))


# --- the hosted form ---
def flow_event(
    trigger: str,
    sid: str,
    values: dict[str, Any],
    *,
    retry_code: str = "",
    attempts: int = 0,
    hidden: list[str] | None = None,
    style: str = "omit",
    projection: dict[str, str] | None = None,
) -> Event:
    """``created`` (the submission came into being, incomplete) or ``retry`` (a step must
    be redone): the link's values (``userid``, ``cf1``-``cf3``, ``tokenId``, ``ipAddress``);
    ``retry_code`` and ``attempts`` when a step was redone; ``projection``: the policy the
    link names (its ``hidden`` fields)."""
    cf = _filled((k, values.get(k)) for k in CF_KEYS)
    payload = _filled(
        (
            ("webhook_trigger", trigger),
            ("submission_id", sid),
            ("kyc_result", {"status": "incomplete"}),
            ("cf", cf),
            ("userid", values.get("userid")),
            ("tokenId", values.get("tokenId")),
            ("retryCode", retry_code),
            ("attempts", attempts or None),
            ("ipAddress", values.get("ipAddress")),
        )
    )
    return Event(trigger, _project(payload, {"projection": projection}, hidden, style))


def token_expired_event(token_id: str, condition: str, at: str) -> Event:
    """``token_expired`` of the ID check pipeline: ``at`` (ISO 8601) is ``expired_at`` for
    ``count`` and ``expected_expired_at`` for ``time``, before ``service`` as in the vendor's
    count sample (the time sample is cut before it: the same place, chosen)."""
    field = "expired_at" if condition == "count" else "expected_expired_at"
    payload = {
        "webhook_trigger": "token_expired",
        "token_id": token_id,
        "expired_condition": condition,
        field: at,
        "service": "idCheck",
    }
    return Event("token_expired", payload)


def injection_event(
    sub: Submission, created_at: str, injected: dict[str, str], fail_code: str = ""
) -> Event:
    """``injection`` (or ``injectionFail`` with ``fail_code``): address data injected into
    ``sub`` through the form; ``created_at`` in the submission resource's pattern (the
    vendor's current sample); ``injected``: the cf values the injection carried (flat,
    and only those)."""
    action = {"type": "address", "created_at": created_at}
    status = _status(sub)
    head = (
        ("submission_id", sub["submission_id"]),
        ("email", sub.get("email")),
        ("kyc_status", status),
        ("applicant_id", sub.get("applicant_id") if status == "approved" else ""),
        ("userid", sub.get("userid")),
    )
    pairs: tuple[tuple[str, Any], ...]
    if fail_code:
        pairs = (
            ("webhook_trigger", "injectionFail"),
            ("action", {**action, "failCode": fail_code}),
            *head,
            ("duplicated_information", sub.get("duplicated_information")),
        )
        return Event("injectionFail", _filled(pairs))
    pairs = (
        ("webhook_trigger", "injection"),
        ("action", action),
        *head,
        *((k, injected.get(k)) for k in CF_KEYS),
        ("tokenId", sub.get("tokenId")),
        ("duplicated_information", sub.get("duplicated_information")),
    )
    return Event("injection", _filled(pairs))
