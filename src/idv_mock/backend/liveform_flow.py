"""The hosted form's flow: an applicant's session, its steps, and the form's own state.

Consent, issuing country, ID type, document, selfie, the tester panel, done. A session
skips the country step when the link fixes the country (``selectedIssuingCountry``, or
one allowed country) and the ID type step with ``selectedIdType``. Pure rules: the service
applies them under its lock, sends the webhooks and creates the submission.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any

from idv_mock.backend.event_codes import FAIL_CODES
from idv_mock.backend.event_codes import RETRY_CODES as RETRY_CODES  # the tester panel's list
from idv_mock.backend.form_state import MAX_SESSIONS as MAX_SESSIONS  # their home: the core
from idv_mock.backend.form_state import STEPS as STEPS  # holds the state without the flow
from idv_mock.backend.form_state import FormState as FormState
from idv_mock.fake import codes
from idv_mock.ground import schemas

if TYPE_CHECKING:  # the links' module loads with the hosted form, not with this state
    from idv_mock.backend.liveform_links import Link

OUTCOMES = schemas.enum("kyc_outcome")
# rejection reasons offered by the tester panel: the vendor's reject codes (the comment
# is the vendor's text for each, ``fake.codes``)
REASONS = codes.REJECT_CODES
# the document step's editable OCR fields (submission data keys)
DOCUMENT_FIELDS = (
    *("full_name", "first_name", "last_name", "date_of_birth", "gender"),
    *("documentNumber", "identityNumber", "idcard_issueDate", "idcard_expireDate"),
)
DATE_FIELDS = ("date_of_birth", "idcard_issueDate", "idcard_expireDate")
REQUIRED_FIELDS = ("full_name", "date_of_birth", "documentNumber")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


class StepInputError(ValueError):
    """A step's form input the page asks the applicant to correct (``field``: which one)."""

    def __init__(self, field_name: str) -> None:
        super().__init__(field_name)
        self.field = field_name


@dataclass(slots=True)
class Session:
    """One applicant's walk through the form, from the link to the completion page."""

    session_id: str
    link: Link
    step: str = "consent"
    country: str = ""
    id_type: str = ""
    submission_id: str = ""  # reserved when the document step starts (``created``)
    created_at: str = ""  # that moment (the submission's ``created_at`` from then on)
    document: dict[str, str] = field(default_factory=dict)
    retries: int = 0
    retry_codes: list[str] = field(default_factory=list)  # each retry's ``retryCode``
    notice: str = ""  # ``retry`` after a failed recognition
    ip: str = ""  # the applicant's address as the form saw it
    kyc_status: str = ""
    injection: bool = False  # a data-injection link (action=addveri) for an existing submission
    failures: dict[str, int] = field(default_factory=dict)  # retryCode -> times seen
    blocked: str = ""  # the loop page the applicant was sent to (no step goes on)

    @property
    def project_id(self) -> str:
        return self.link.project_id

    def returned(self) -> dict[str, str]:
        """What the return URL gets: the link's values, the submission and its status."""
        out = self.link.returned()
        out.update(submissionId=self.submission_id, kycStatus=self.kyc_status)
        return out


# the same error three times: the vendor's loop pages (2026-05 notice); image quality
# codes go to LO-30005, a face comparison to the engine page SE-50022, every other
# recognition failure to LO-30001
LOOP_AFTER = 3
QUALITY_CODES = frozenset(
    {"glare_detected", "image_too_blurry", "recaptured_document", "screen_detected"}
    | {"black_white_document"}
)
LOOP_PAGES = {"face_compare_underscore": "engine-face-compare"}


def count_failure(session: Session, code: str) -> str:
    """Count a failed capture with ``code``; the loop page's slug when it is the third."""
    session.failures[code] = session.failures.get(code, 0) + 1
    if session.failures[code] < LOOP_AFTER:
        return ""
    quality = code in QUALITY_CODES
    session.blocked = LOOP_PAGES.get(code, "loop-image-quality" if quality else "loop-ocr")
    return session.blocked


def first_step(session: Session) -> None:
    """Fix what the link fixes: the country, the ID type."""
    link = session.link
    countries = link.countries()
    session.country = link.get("selectedIssuingCountry") or (
        countries[0] if len(countries) == 1 else ""
    )
    types = link.listed("allowedIdTypes") or []
    session.id_type = link.get("selectedIdType") or (types[0] if len(types) == 1 else "")


def after(session: Session, step: str) -> str:
    """The step that follows ``step``, skipping what the link already decided."""
    following = STEPS[STEPS.index(step) + 1]
    if following == "country" and session.country:
        return after(session, "country")
    if following == "id_type" and session.id_type:
        return after(session, "id_type")
    return following


def choose(value: str, allowed: list[str] | tuple[str, ...], name: str) -> str:
    if value not in allowed:
        raise StepInputError(name)
    return value


def confirmed_fields(link: Link) -> tuple[str, ...]:
    """The OCR fields the document step asks the applicant to confirm: the link's
    ``allowedDocumentFields``, else all of them."""
    allowed = link.listed("allowedDocumentFields")
    return DOCUMENT_FIELDS if allowed is None else tuple(f for f in DOCUMENT_FIELDS if f in allowed)


def edited_document(
    current: dict[str, str], form: dict[str, str], confirmed: tuple[str, ...] = DOCUMENT_FIELDS
) -> dict[str, str]:
    """The document fields as the applicant corrected them (only the ``confirmed`` ones
    are read from the form; the others stay as the document gave them); a bad one is a
    ``StepInputError``."""
    found = {
        k: (form.get(k, current.get(k, "")) if k in confirmed else current.get(k, "")).strip()
        for k in DOCUMENT_FIELDS
    }
    for name in REQUIRED_FIELDS:
        if name in confirmed and not found[name]:
            raise StepInputError(name)
    for name in DATE_FIELDS:
        if name in confirmed and found[name] and not _is_date(found[name]):
            raise StepInputError(name)
    if "gender" in confirmed and found["gender"] not in schemas.enum("gender"):
        raise StepInputError("gender")
    return found


def _is_date(text: str) -> bool:
    if not _DATE.fullmatch(text):
        return False
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return True


def prefill(identity: dict[str, str]) -> dict[str, str]:
    """The OCR fields the form shows for the sample document (Faker's identity)."""
    return {k: identity.get(k, "") for k in DOCUMENT_FIELDS}


ADDRESS_FIELDS = (
    *("address_street", "address_street2", "address_city", "address_state"),
    *("address_zipcode", "address_country"),
)
ADDRESS_REQUIRED = ("address_street", "address_city", "address_country")
INJECTION_SUCCESS = "success"
INJECTION_RESULTS = (INJECTION_SUCCESS, *FAIL_CODES)  # the tester panel's choices


def injected_address(form: dict[str, str], countries: frozenset[str]) -> dict[str, str]:
    """The address the applicant typed at the injection step, with the formatted and input
    forms the submission's data carries; a missing or bad field is a ``StepInputError``."""
    found = {k: form.get(k, "").strip() for k in ADDRESS_FIELDS}
    for name in ADDRESS_REQUIRED:
        if not found[name]:
            raise StepInputError(name)
    found["address_country"] = found["address_country"].upper()
    if found["address_country"] not in countries:
        raise StepInputError("address_country")
    street = ", ".join(v for v in (found["address_street"], found["address_street2"]) if v)
    place = " ".join(v for v in (found["address_state"], found["address_zipcode"]) if v)
    found["address_input"] = street
    found["address_formatted"] = ", ".join(v for v in (street, found["address_city"], place) if v)
    return found


def injected(
    sub: dict[str, Any], address: dict[str, str], cf: dict[str, str], at: str
) -> dict[str, Any]:
    """``sub`` after an address injection at ``at`` (the submission's timestamp form): the
    address replaces the old one (the vendor: "replaces existing category data"), the cf
    values the link carried are written, and the action is recorded in ``Injection_action``."""
    action = {"type": "address", "created_at": at}
    return {
        **sub,
        "data": {**(sub.get("data") or {}), **address, **cf},
        "Injection_action": [*(sub.get("Injection_action") or []), action],
        "updated_at": at,
    }


def kyc_part(
    outcome: str, reason: str, retry_codes: list[str], age_limit: float | None = None
) -> dict[str, Any]:
    """The submission's ``kyc`` as the tester panel decided it: ``retry_codes``, the
    reason of each retry the applicant was asked for, in order."""
    rejected = outcome == "rejected"
    reasons = codes.reject(reason, age_limit) if rejected else {"comment": [], "commentCode": []}
    retry = [codes.retry_entry(n, code) for n, code in enumerate(retry_codes, 1)]
    return {"result": outcome, **reasons, "retry": retry}


# what the tester panel may enter as the applicant's answers (nothing stands in for them)
ENTERED = ("phoneNumber", "ssnNumber")
ADDITIONAL = ("additional_answer", "additional_inputValue")


def entered(form: dict[str, str]) -> dict[str, Any]:
    """The applicant's own answers the tester panel entered: ``phoneNumber``,
    ``ssnNumber`` into ``data``, and one ``additional_list`` item (``answer`` and
    ``inputValue``) when both are given; empty ones are left out."""
    data = {k: form[k].strip() for k in ENTERED if form.get(k, "").strip()}
    out: dict[str, Any] = {"data": data} if data else {}
    answer, value = (form.get(k, "").strip() for k in ADDITIONAL)
    if answer and value:
        out["additional_list"] = [{"answer": answer, "inputValue": value, "blockType": "text"}]
    return out


def submission_overrides(session: Session) -> dict[str, Any]:
    """What the applicant gave: identity from the document step, country and type."""
    data = {k: v for k, v in session.document.items() if v and k in DOCUMENT_FIELDS}
    data.update(idType=session.id_type, idcard_issuingCountry=session.country)
    data.setdefault("nationality", session.country)
    if session.ip:
        data["ip_address"] = session.ip
    return {"data": data, "submission_id": session.submission_id}


def incomplete_view(session: Session) -> dict[str, Any]:
    """The submission between ``created`` and its result, as ``GET /submission`` reads it:
    what the link and the applicant gave so far, ``kyc`` without a ``result`` (the
    schema has no incomplete status). The same values the result will carry."""
    link = session.link
    data = submission_overrides(session)["data"]
    data.update({k: link.values[k] for k in ("cf1", "cf2", "cf3") if k in link.values})
    sub: dict[str, Any] = {"data": data}
    sub.update({k: link.values[k] for k in ("email",) if k in link.values})
    sub["submission_id"] = session.submission_id
    sub.update(created_at=session.created_at, updated_at=session.created_at)
    sub.update({k: link.values[k] for k in ("userid",) if k in link.values})
    retry = kyc_part("", "", session.retry_codes)["retry"]
    sub["kyc"] = {"comment": [], "commentCode": [], "attempts": [], "retry": retry}
    if link.get("token"):
        sub["tokenId"] = link.get("token")
    return sub
