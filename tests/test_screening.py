"""AML screening (issue 5): real, deterministic matching against a fictional watchlist."""

from __future__ import annotations

import json
import re
from datetime import date

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from idv_mock.aml.screening import (
    WATCHLIST_PATH,
    Entry,
    Subject,
    builtin_watchlist,
    name_score,
    normalize,
    score,
    screen,
    subject_of,
)
from idv_mock.ground import schemas

WATCHLIST = builtin_watchlist()
COUNTRIES = schemas.enum("country")


def itself(entry: Entry) -> Subject:
    return Subject(entry.name, entry.birth_date, entry.nationality, entry.aliases)


names = st.text(min_size=0, max_size=40)
subjects = st.builds(
    Subject,
    name=names,
    birth_date=st.one_of(
        st.just(""), st.dates(date(1900, 1, 1), date(2010, 12, 31)).map(date.isoformat)
    ),
    nationality=st.one_of(st.just(""), st.sampled_from(COUNTRIES)),
    aliases=st.lists(names, max_size=2).map(tuple),
)
entries = st.sampled_from(WATCHLIST)


# --- properties ---


@settings(max_examples=200, deadline=None)
@given(subjects, entries)
def test_score_is_deterministic_and_bounded(subject: Subject, entry: Entry) -> None:
    first = score(subject, entry)
    assert first == score(subject, entry)
    assert 0 <= first <= 100


@settings(max_examples=50, deadline=None)
@given(subjects, st.integers(0, 100))
def test_screen_is_deterministic_and_sorted(subject: Subject, threshold: int) -> None:
    found = screen(subject, WATCHLIST, threshold)
    assert found == screen(subject, WATCHLIST, threshold)
    assert all(m.score >= threshold for m in found)
    assert [(-m.score, m.entry.entry_id) for m in found] == sorted(
        (-m.score, m.entry.entry_id) for m in found
    )
    assert {m.entry.entry_id for m in found} == {
        e.entry_id for e in WATCHLIST if score(subject, e) >= threshold
    }


@settings(max_examples=200, deadline=None)
@given(entries)
def test_an_entry_against_itself_scores_100(entry: Entry) -> None:
    assert score(itself(entry), entry) == 100


def test_every_builtin_entry_against_itself_scores_100() -> None:
    for entry in WATCHLIST:
        assert score(itself(entry), entry) == 100, entry.entry_id
        # the name alone is enough, whatever spelling of it the subject carries
        for name in entry.names:
            assert score(Subject(name, entry.birth_date, entry.nationality), entry) == 100


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1, max_size=40).filter(lambda s: any(c.isalpha() for c in s)))
def test_a_name_against_itself_scores_100(name: str) -> None:
    assert name_score(name, name) == 100.0


@settings(max_examples=200, deadline=None)
@given(names, names)
def test_name_score_is_bounded_and_symmetric(a: str, b: str) -> None:
    value = name_score(a, b)
    assert 0.0 <= value <= 100.0
    assert value == name_score(b, a)


# --- examples ---


def test_identical_name_alone_scores_80() -> None:
    entry = next(e for e in WATCHLIST if e.birth_date and e.nationality)
    assert score(Subject(entry.name), entry) == 80
    assert score(Subject(entry.name, entry.birth_date), entry) == 92
    assert score(Subject(entry.name, nationality=entry.nationality), entry) == 88


def test_unknown_birth_date_on_the_list_moves_its_weight_to_the_name() -> None:
    entry = next(e for e in WATCHLIST if not e.birth_date)
    assert score(Subject(entry.name, "1970-01-01", entry.nationality), entry) == 100
    assert score(Subject(entry.name, "1970-01-01"), entry) == 92


@pytest.mark.parametrize(
    ("name", "birth_date", "nationality"),
    [
        ("Emily Johnson", "1990-04-12", "USA"),
        ("김민준", "1985-02-01", "KOR"),
        ("Sophie Martin", "1964-06-09", "FRA"),
        ("Hiroshi Tanaka", "1977-02-11", "JPN"),
        ("Lukas Schneider", "1959-01-27", "DEU"),
        ("Nguyen Van An", "1962-04-22", "VNM"),
    ],
)
def test_an_unrelated_name_scores_low(name: str, birth_date: str, nationality: str) -> None:
    subject = Subject(name, birth_date, nationality)
    assert max(score(subject, e) for e in WATCHLIST) < 60
    assert screen(subject, WATCHLIST, 60) == []


def test_an_alias_matches() -> None:
    entry = next(e for e in WATCHLIST if e.name == "Dravomir Kestrelov")
    found = screen(Subject("Dravomir Kestrelow", "1968-05-01", "RUS"), WATCHLIST, 80)
    assert [m.entry.entry_id for m in found] == [entry.entry_id]
    assert found[0].matched_name == "Dravomir Kestrelow"
    assert found[0].name_score == 100.0
    assert found[0].score == 100


def test_a_subject_alias_matches() -> None:
    entry = next(e for e in WATCHLIST if e.name == "Pyo Dalhyeon")
    subject = Subject("표달현", entry.birth_date, "KOR", aliases=("Dalhyeon Pyo",))
    assert score(subject, entry) == 100
    assert score(Subject("표달현", entry.birth_date, "KOR"), entry) < 60


def test_a_near_spelling_still_scores_high() -> None:
    entry = next(e for e in WATCHLIST if e.name == "Thaddeus Wollencroft")
    assert score(Subject("Thadeus Wolencroft", entry.birth_date, "USA"), entry) >= 90


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("DOE, John", "john doe"),
        ("Clémence Auberval-Rossignac", "clemence auberval rossignac"),
        ("ROSSIGNAC Clémence Auberval", "Clemence Auberval Rossignac"),
        ("Ingeborg Skjærvollen", "INGEBORG SKJAERVOLLEN"),
        ("Cathal Ó Dubhrosáin", "cathal o dubhrosain"),
        ("  Zsigmond   Vadkertészy ", "vadkerteszy zsigmond"),
    ],
)
def test_accents_case_and_order_do_not_matter(a: str, b: str) -> None:
    assert name_score(a, b) == 100.0


def test_normalize() -> None:
    assert normalize("  DOE, John ") == "doe john"
    assert normalize("Peñalcázar-Urdanoz") == "penalcazar urdanoz"
    assert normalize("O'Dubhrosain") == "odubhrosain"
    assert normalize("Bogumił Łęcki") == "bogumil lecki"
    assert normalize("김민준") == "김민준"
    assert normalize("!!!") == ""


def test_one_shared_given_name_is_not_a_match() -> None:
    entry = next(e for e in WATCHLIST if e.name == "Maarten van Duivenhoek")
    assert score(Subject("Martin Gay", "1980-01-01", "NLD"), entry) < 70


def test_a_missing_middle_name_still_matches() -> None:
    assert name_score("Marisol Ybarra", "Marisol Quintaverde Ybarra") == 100.0


def test_empty_names_do_not_match() -> None:
    assert name_score("", "Dravomir Kestrelov") == 0.0
    assert name_score("!!", "??") == 0.0
    assert screen(Subject(""), WATCHLIST, 1) == []


def test_subject_of_a_submission() -> None:
    sub = {
        "submission_id": "s1",
        "data": {
            "full_name": "김민준",
            "full_name_en": "Minjun Kim",
            "date_of_birth": "1990-01-02",
            "nationality": "KOR",
        },
    }
    assert subject_of(sub) == Subject("김민준", "1990-01-02", "KOR", ("Minjun Kim",))
    same = {"data": {"full_name": "John Doe", "full_name_en": "JOHN DOE"}}
    assert subject_of(same) == Subject("John Doe")
    assert subject_of({"data": {"first_name": "John", "last_name": "Doe"}}).name == "John Doe"
    assert subject_of({"data": {"full_name_en": "John Doe"}}).name == "John Doe"
    assert subject_of({"full_name": "Bare Data"}).name == "Bare Data"
    assert subject_of({"data": {"full_name": 5}}) == Subject("")


def test_entry_json_round_trip_and_validation() -> None:
    for entry in WATCHLIST:
        assert Entry.from_json(entry.to_json()) == entry
    with pytest.raises(ValueError, match="list"):
        Entry.from_json({"entry_id": "X", "list": "other", "name": "A B"})
    with pytest.raises(ValueError, match="name"):
        Entry.from_json({"entry_id": "X", "list": "pep"})
    with pytest.raises(ValueError, match="birth_date"):
        Entry.from_json({"entry_id": "X", "list": "pep", "name": "A B", "birth_date": "1990-13-01"})
    with pytest.raises(ValueError, match="aliases"):
        Entry.from_json({"entry_id": "X", "list": "pep", "name": "A B", "aliases": "A"})
    minimal = Entry.from_json({"entry_id": "X", "list": "sanctions", "name": "A B"})
    assert minimal.aliases == () and minimal.birth_date == ""


# --- the watchlist file ---


def test_watchlist_file_is_well_formed() -> None:
    rows = json.loads(WATCHLIST_PATH.read_text(encoding="utf-8"))
    assert 25 <= len(rows) <= 40
    ids = [row["entry_id"] for row in rows]
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"WL-\d{4}", i) for i in ids)
    assert {row["list"] for row in rows} == {"sanctions", "pep"}
    for row in rows:
        assert set(row) == {
            "entry_id",
            "list",
            "name",
            "aliases",
            "birth_date",
            "nationality",
            "details",
            "source",
        }
        assert row["nationality"] in COUNTRIES, row
        assert row["birth_date"] == "" or date.fromisoformat(row["birth_date"]), row
        assert re.fullmatch(r"(\d{4}-\d{2}-\d{2})?", row["birth_date"]), row
        assert 0 <= len(row["aliases"]) <= 3, row
        assert row["source"] == "IDV-MOCK fictional watchlist"
        assert "fictional" in row["details"].lower(), row
        # the report prints every field with a PDF core font (WinAnsi)
        for text in (row["name"], *row["aliases"], row["details"]):
            text.encode("latin-1")
    assert len({row["nationality"] for row in rows}) >= 20
    assert any(row["birth_date"] == "" for row in rows)
    assert [e.to_json() for e in WATCHLIST] == rows


def test_watchlist_entries_do_not_match_each_other() -> None:
    """Distinct entries stay apart, so one screened name gives one clear top match."""
    for entry in WATCHLIST:
        found = screen(itself(entry), WATCHLIST, 80)
        assert [m.entry.entry_id for m in found] == [entry.entry_id]
