"""What a read returns of a stored submission (api-v3.md 4.2, gaps.md "GET /submission")."""

from __future__ import annotations

from typing import Any

from idv_mock.backend.projections import hide

Submission = dict[str, Any]

DELETED = "Deleted Submission"
REDUCED_DATA = (
    ("name", "full_name"),
    ("gender", "gender"),
    ("nationality", "nationality"),
    ("date_of_birth", "date_of_birth"),
)
REDUCED_KEYS = (
    "email",
    "submission_id",
    "created_at",
    "userid",
    "reviewer",
    "recognition_score",
    "service_score",
)
REDUCED_OPTIONAL = ("image", "memo", "pending_at", "duplicated_information", "pre_verification")
PERSONAL = ("kyc", "aml", "data")


def is_deleted(sub: Submission) -> bool:
    return sub.get("status") == DELETED


def retained(sub: Submission) -> Submission:
    """What a deletion keeps: nothing that identifies a person (api-v3.md 4.3)."""
    data = sub.get("data") or {}
    kyc = sub.get("kyc") or {}
    return {
        "submission_id": sub["submission_id"],
        "created_at": sub["created_at"],
        "data": {"idType": data["idType"]} if "idType" in data else {},
        "kyc": {"result": kyc["result"]} if "result" in kyc else {},
        "status": DELETED,
    }


def reduced(sub: Submission) -> Submission:
    """The user-id list's object: a summary of each submission."""
    data = sub.get("data") or {}
    view: Submission = {"data": {out: data[key] for out, key in REDUCED_DATA if key in data}}
    view.update({k: sub[k] for k in REDUCED_KEYS if k in sub})
    kyc = sub.get("kyc") or {}
    view["kyc"] = {k: kyc[k] for k in ("result", "comment", "commentCode") if k in kyc}
    view.update({k: sub[k] for k in REDUCED_OPTIONAL if _has(sub.get(k))})
    return view


def _has(value: Any) -> bool:
    """Whether an optional part carries anything (an unset memo is ``{"text": ""}``)."""
    if isinstance(value, dict) and "text" in value:
        return bool(value["text"])
    return value not in (None, "", {}, [])


def projected(view: Submission, hidden: list[str], style: str, *, reduced: bool) -> Submission:
    """A view with the fields a projection excluded omitted (or null, ``style`` "null")."""
    if "data" not in view:
        return view
    names = ["name" if reduced and f == "full_name" else f for f in hidden]
    return {**view, "data": hide(view["data"], names, style)}


def by_request_type(view: Submission, request_type: str | None) -> Submission:
    """Narrow a view to kyc, aml, data or others; ``None`` keeps it whole."""
    if request_type is None:
        return view
    if request_type == "others":
        narrowed = {k: v for k, v in view.items() if k not in PERSONAL}
    else:
        narrowed = {"submission_id": view["submission_id"]}
        if request_type in view:
            narrowed[request_type] = view[request_type]
    if is_deleted(view):
        narrowed["status"] = DELETED
    return narrowed
