"""The AML report PDF (api-v3.md 4.6): a real, readable, byte-stable document."""

from __future__ import annotations

import io
from typing import Any

from pypdf import PdfReader

from idv_mock.aml.report import NOTICE, render_aml_report
from idv_mock.aml.screening import Subject, builtin_watchlist, screen

RESOURCE_ID = "aml-0f3c2a9e-1b7d-4c55-9e21-6a8d0c4b7f10"
SUBMISSION_ID = "3d7f1e2a-9c4b-4a8e-b5f6-0e1d2c3b4a59"


def report_info(**overrides: Any) -> dict[str, Any]:
    """The info of a Red Flag for a builtin entry, built the way the backend screens."""
    entry = next(e for e in builtin_watchlist() if e.name == "Clémence Auberval-Rossignac")
    subject = Subject(entry.name, entry.birth_date, entry.nationality)
    found = screen(subject, builtin_watchlist(), 60)
    top = found[0]
    info: dict[str, Any] = {
        "resource_id": RESOURCE_ID,
        "submission_id": SUBMISSION_ID,
        "subject_name": subject.name,
        "subject_name_en": "",
        "birth_date": subject.birth_date,
        "nationality": subject.nationality,
        "screened_at": "2026-01-01T09:00:05.000Z",
        "threshold": 60,
        "result": "Red Flag",
        "match": {
            **top.entry.to_json(),
            "score": top.score,
            "name_score": top.name_score,
            "matched_name": top.matched_name,
        },
        "other_matches": [
            {
                "resource_id": "aml-other-1",
                "entry_id": "WL-0002",
                "name": "M. Q. Ybarra",
                "score": 61,
            }
        ],
    }
    info.update(overrides)
    return info


def text_of(data: bytes) -> str:
    reader = PdfReader(io.BytesIO(data))
    return "\n".join(page.extract_text() for page in reader.pages)


def test_report_is_a_pdf_with_the_facts() -> None:
    info = report_info()
    data = render_aml_report(info)
    assert data.startswith(b"%PDF-")
    text = text_of(data)
    assert "AML screening report" in text
    assert NOTICE in text
    for needle in (
        "Clémence Auberval-Rossignac",
        RESOURCE_ID,
        SUBMISSION_ID,
        info["match"]["entry_id"],
        str(info["match"]["score"]),
        "Red Flag",
        "2026-01-01T09:00:05.000Z",
        "aml-other-1",
        "Subject",
        "Screening",
        "Match",
        "Other matches",
    ):
        assert needle in text, needle
    assert info["match"]["score"] == 100


def test_report_bytes_are_deterministic() -> None:
    assert render_aml_report(report_info()) == render_aml_report(report_info())
    other = render_aml_report(report_info(screened_at="2026-02-03-04-05-06-007"))
    assert other == render_aml_report(report_info(screened_at="2026-02-03-04-05-06-007"))
    assert other != render_aml_report(report_info())
    assert b"D:20260203040506" in other


def test_hangul_name_does_not_crash_and_the_english_name_is_shown() -> None:
    data = render_aml_report(report_info(subject_name="김민준", subject_name_en="Minjun Kim"))
    text = text_of(data)
    assert "Minjun Kim" in text
    assert RESOURCE_ID in text


def test_sparse_info_still_renders() -> None:
    data = render_aml_report({"resource_id": "r1", "match": None, "other_matches": None})
    text = text_of(data)
    assert "r1" in text
    assert "None." in text
    assert render_aml_report({}).startswith(b"%PDF-")
