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


# where the same value stands again outside ``data``: part -> {data field: key there}
TWINS: dict[str, dict[str, str]] = {
    "ocr": {
        "full_name": "fullName",
        "first_name": "firstName",
        "last_name": "lastName",
        "date_of_birth": "birthDate",
        "gender": "gender",
        "nationality": "nationality",
        "identityNumber": "identityNumber",
        "idcard_issueDate": "issueDate",
        "idcard_expireDate": "expireDate",
    },
    "review": {
        "full_name": "fullName",
        "date_of_birth": "birthDate",
        "gender": "gender",
        "nationality": "nationality",
        "identityNumber": "identityNumber",
        "documentNumber": "documentNumber",
        "idcard_issueDate": "issueDate",
        "idcard_expireDate": "expireDate",
    },
    "OCR_raw": {
        "identityNumber": "number",
        "date_of_birth": "birth_date",
        "full_name_en": "name_eng",
        "gender": "gender",
        "idcard_issueDate": "issue_date",
    },
}


def projected(view: Submission, hidden: list[str], style: str, *, reduced: bool) -> Submission:
    """A view with the fields a projection excluded omitted (or null, ``style`` "null") in
    ``data``, and omitted where OCR and review repeat them, so the value shows nowhere."""
    out = dict(view)
    if "data" in view:
        names = ["name" if reduced and f == "full_name" else f for f in hidden]
        out["data"] = hide(view["data"], names, style)
    for part, twins in TWINS.items():
        if isinstance(view.get(part), dict):
            out[part] = hide(view[part], [twins[f] for f in hidden if f in twins], "omit")
    return out


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
