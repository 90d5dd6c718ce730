"""The rules of PATCH /submission and DELETE /submission/partial, as tables.

``PATCH_PROPERTIES`` is gaps.md's table "PATCH /submission: what each property changes", in
its order, which is also the order in which values are checked. ``PARTS`` maps each name
of the ``fields`` parameter to what it removes (gaps.md, partial-delete field mapping).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from idv_mock.backend import duplicates as dup
from idv_mock.fake.factory import FAMILY_NAME_FIRST
from idv_mock.fake.romanize import romanize
from idv_mock.ground import schemas

Submission = dict[str, Any]

_DATE = re.compile(schemas.definition("date")["pattern"])
_COUNTRIES = schemas.countries()
_ID_TYPES = frozenset(schemas.enum("id_type"))
_GENDERS = frozenset(schemas.enum("gender"))
_KYC = frozenset(schemas.enum("kyc_result"))
_ID_SLOTS = schemas.enum("id_image_slot")  # what a partial delete of the ID removes


def _any(value: str) -> bool:
    return True


@dataclass(frozen=True, slots=True)
class Rule:
    prop: str
    target: tuple[str, str]  # (top-level key, key inside it)
    valid: Callable[[str], bool]


PATCH_PROPERTIES: tuple[Rule, ...] = (
    Rule("idType", ("data", "idType"), _ID_TYPES.__contains__),
    Rule("issuingCountry", ("data", "idcard_issuingCountry"), _COUNTRIES.__contains__),
    Rule("fullName", ("data", "full_name"), _any),
    Rule("firstName", ("data", "first_name"), _any),
    Rule("lastName", ("data", "last_name"), _any),
    Rule("gender", ("data", "gender"), _GENDERS.__contains__),
    Rule("birthDate", ("data", "date_of_birth"), lambda v: bool(_DATE.fullmatch(v))),
    Rule("issueDate", ("data", "idcard_issueDate"), lambda v: bool(_DATE.fullmatch(v))),
    Rule("expireDate", ("data", "idcard_expireDate"), lambda v: bool(_DATE.fullmatch(v))),
    Rule("nationality", ("data", "nationality"), _COUNTRIES.__contains__),
    Rule("kycStatus", ("kyc", "result"), _KYC.__contains__),
    Rule("identityNumber", ("data", "identityNumber"), _any),
    Rule("documentNumber", ("data", "documentNumber"), _any),
    Rule("serialNumber", ("data", "serialNumber"), _any),
    Rule("memo", ("memo", "text"), _any),
)
PATCH_NAMES = frozenset(r.prop for r in PATCH_PROPERTIES)


def first_invalid(changes: dict[str, str]) -> str | None:
    """The first property, in the table's order, whose value its rule refuses."""
    for rule in PATCH_PROPERTIES:
        if rule.prop in changes and not rule.valid(changes[rule.prop]):
            return rule.prop
    return None


NAME_PROPERTIES = frozenset({"fullName", "firstName", "lastName"})


def apply_changes(sub: Submission, changes: dict[str, str]) -> Submission:
    """A copy of ``sub`` with the PATCH properties written where the table says, and the
    names derived from a changed name made to agree with it (docs/gaps.md)."""
    new = dict(sub)
    for rule in PATCH_PROPERTIES:
        if rule.prop in changes:
            top, key = rule.target
            new[top] = {**(new.get(top) or {}), key: changes[rule.prop]}
    if NAME_PROPERTIES & changes.keys():
        new["data"] = names_agree(dict(new.get("data") or {}), changes)
    return new


def names_agree(data: dict[str, Any], changes: dict[str, str]) -> dict[str, Any]:
    """``full_name``, ``first_name``, ``last_name`` and ``full_name_en`` after a PATCH of a
    name, agreeing as a document's do: a full name given is split (the family name first
    for Korean, Japanese and Vietnamese nationals, as seeded names are written, else last;
    one word is the first name and the last name is empty); a first or last name alone
    makes the full name; ``full_name_en`` is the full name in Latin letters."""
    family_first = data.get("nationality") in FAMILY_NAME_FIRST
    if "fullName" in changes:
        words = changes["fullName"].split()
        if len(words) < 2:
            first, last = changes["fullName"], ""
        elif family_first:
            first, last = " ".join(words[1:]), words[0]
        else:
            first, last = " ".join(words[:-1]), words[-1]
        data["first_name"] = changes.get("firstName", first)
        data["last_name"] = changes.get("lastName", last)
    else:
        first, last = str(data.get("first_name", "")), str(data.get("last_name", ""))
        parts = (last, first) if family_first else (first, last)
        data["full_name"] = " ".join(p for p in parts if p)
    data["full_name_en"] = romanize(str(data["full_name"]), family_first=family_first)
    return data


def changed_properties(old: Submission, new: Submission, changes: dict[str, str]) -> list[str]:
    """The PATCH properties of ``changes`` whose stored value differs after the edit."""
    found = []
    for rule in PATCH_PROPERTIES:
        if rule.prop in changes:
            top, key = rule.target
            if (old.get(top) or {}).get(key) != (new.get(top) or {}).get(key):
                found.append(rule.prop)
    return found


# --- partial delete ---------------------------------------------------------------------------

# the data_fields list of api-v3.md 4.4
DATA_FIELDS = frozenset(
    (
        *("age_group", "first_name", "last_name", "full_name", "full_name_en", "name"),
        *("gender", "nationality", "date_of_birth", "address_city", "address_country"),
        *("address_state", "address_street", "address_street2", "address_zipcode"),
        *("address_globalCode", "address_compoundCode", "address_formatted", "address_input"),
        *("address_detail", "ip_address", "idcard_issuingCountry", "idcard_issueDate"),
        *("idcard_expireDate", "idType", "documentNumber", "identityNumber", "ssnNumber"),
        *("phoneNumber", "cf1", "cf2", "cf3"),
    )
)
PLAIN_PARTS = {
    "data": "data",
    "OCR_raw": "OCR_raw",
    "ocr": "ocr",
    "review": "review",
    "applicant_id": "applicant_id",
    "email": "email",
    "userid": "userid",
    "additional_list": "additional_list",
    "duplicated_information": "duplicated_information",
    "custom_duplicated_information": "custom_duplicated_information",
    "injection_action": "Injection_action",
}
PARTS = frozenset({*PLAIN_PARTS, "id_image", "selfie_image"})
# which duplicate checks a deleted data sub-field takes part in (rule 7)
_CHECK_OF_DATA_FIELD = {
    "full_name": dup.IDENTITY,
    "date_of_birth": dup.IDENTITY,
    "nationality": dup.IDENTITY,
    "identityNumber": dup.ID_NUMBER,
    "cf1": dup.CUSTOM,
    "cf2": dup.CUSTOM,
    "cf3": dup.CUSTOM,
}


def remove_parts(
    sub: Submission, parts: list[str], data_fields: list[str] | None
) -> tuple[Submission, set[str]]:
    """A copy of ``sub`` without the named parts, and the duplicate checks they end."""
    new = dict(sub)
    ended: set[str] = set()
    for part in parts:
        if part == "data" and data_fields is not None:
            names = {"full_name" if f == "name" else f for f in data_fields}
            new["data"] = {k: v for k, v in (new.get("data") or {}).items() if k not in names}
            ended.update(_CHECK_OF_DATA_FIELD[n] for n in names if n in _CHECK_OF_DATA_FIELD)
        elif part == "data":
            new["data"] = {}
            ended.update(_CHECK_OF_DATA_FIELD.values())
        elif part == "id_image":
            new["image"] = _without(new.get("image"), _ID_SLOTS)
        elif part == "selfie_image":
            new["image"] = _without(new.get("image"), ("selfieImage",))
            new["kyc"] = _without_attempt_selfies(new.get("kyc"))
            ended.add(dup.SELFIE)
        else:
            new.pop(PLAIN_PARTS[part], None)
    return new, ended


def _without(obj: dict[str, Any] | None, keys: tuple[str, ...]) -> dict[str, Any]:
    return {k: v for k, v in (obj or {}).items() if k not in keys}


def _without_attempt_selfies(kyc: dict[str, Any] | None) -> dict[str, Any]:
    kyc = dict(kyc or {})
    if "attempts" in kyc:
        kyc["attempts"] = [_without(a, ("selfieImage",)) for a in kyc["attempts"]]
    return kyc
