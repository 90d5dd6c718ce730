"""Webhook payloads as the mock (and the vendor) sends them, for an integrator's handler.

``webhook_payloads()`` draws a payload of any trigger (or of the ones named), built by the
same code that sends them (``idv_mock.backend.events``) from a drawn submission, so a
handler tested with it sees every shape, with and without optional fields, with and
without a projection: the fields with no value left out, or a projection's null; a
rejection carries any of the vendor's reject codes with its comment text.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

from hypothesis import strategies as st

from idv_mock.backend import events
from idv_mock.backend.projections import FIELDS
from idv_mock.backend.samples import make_submission
from idv_mock.fake import codes
from idv_mock.ground import schemas
from idv_mock.ground.clock import iso, stamp

S = st.SearchStrategy
TRIGGERS: tuple[str, ...] = tuple(events.SCHEMAS)
_START = 1_767_225_600.0  # 2026-01-01T00:00:00Z
_WHEN = st.integers(0, 10**9).map(lambda s: _START + s)


def webhook_payloads(triggers: Sequence[str] | None = None) -> S[dict[str, Any]]:
    """Payloads of ``triggers`` (default: every one), each valid against its schema."""
    chosen = tuple(triggers or TRIGGERS)
    unknown = set(chosen) - set(TRIGGERS)
    if unknown:
        raise ValueError(f"unknown triggers {sorted(unknown)}; known: {', '.join(TRIGGERS)}")
    return st.builds(
        _payload,
        trigger=st.sampled_from(chosen),
        seed=st.integers(0, 2**16),
        result=st.sampled_from(schemas.enum("kyc_outcome")),
        hidden=st.one_of(st.none(), st.lists(st.sampled_from(FIELDS), unique=True)),
        style=st.sampled_from(("omit", "null")),
        attempts=st.integers(1, 5),
        retry_code=st.sampled_from(events.RETRY_CODES),
        reject_code=st.sampled_from(codes.REJECT_CODES),
        fail_code=st.sampled_from(events.FAIL_CODES),
        condition=st.sampled_from(("count", "time")),
        when=_WHEN,
    )


def _payload(
    trigger: str,
    seed: int,
    result: str,
    hidden: list[str] | None,
    style: str,
    attempts: int,
    retry_code: str,
    reject_code: str,
    fail_code: str,
    condition: str,
    when: float,
) -> dict[str, Any]:
    moment = datetime.fromtimestamp(when, tz=timezone.utc)
    result = {"approved": "approved", "rejected": "rejected"}.get(trigger, result)
    reason = codes.reject(reject_code) if result == "rejected" else {}
    sub = make_submission({"kyc": {"result": result, **reason}}, seed=seed)
    if hidden is not None:
        sub["projection"] = {"projectionId": f"p-{seed}", "projectionName": "drawn"}
    flow = {**sub["data"], "userid": sub["userid"], "tokenId": sub["tokenId"]}
    record = {"recordId": f"r-{seed}", "worklistId": "w-1", "created_at": iso(moment)}
    build = {
        "created": lambda: events.flow_event("created", sub["submission_id"], flow),
        "retry": lambda: events.flow_event(
            "retry", sub["submission_id"], flow, retry_code=retry_code, attempts=attempts
        ),
        "submit": lambda: events.submit_event(sub, hidden, style),
        "approved": lambda: events.approved_event(sub, hidden, style),
        "rejected": lambda: events.rejected_event(sub, hidden, style),
        "updated": lambda: events.updated_event(
            sub, "admin@example.com", iso(moment), ["kycStatus"], hidden, style
        ),
        "delete": lambda: events.delete_event(
            sub["submission_id"], "admin@example.com", iso(moment)
        ),
        "injection": lambda: events.injection_event(sub, stamp(moment), {"cf1": "x"}),
        "injectionFail": lambda: events.injection_event(sub, stamp(moment), {}, fail_code),
        "aml": lambda: events.aml_event(sub, hidden, style),
        "aml_monitor": lambda: events.aml_monitor_event(sub, [record], hidden, style),
        "token_expired": lambda: events.token_expired_event(f"tok-{seed}", condition, iso(moment)),
    }
    return build[trigger]().payload
