"""AML screening: fuzzy matching of a subject against a watchlist, with no I/O or state.

The mock's screening has to be *real matching, not a coin toss* (issue 5): compliance teams
test their escalation flows with it, so the same subject must always get the same score, a
watchlist name must find itself, and an unrelated name must stay well below any sensible
threshold. Everything here is a pure function of its arguments (the built-in watchlist is a
packaged, read-only JSON file), which is what makes screening deterministic and lets the
backend store, replay and export results byte for byte.

Scoring (gaps.md "AML": fuzzy name, plus birth year and nationality as boosters)::

    score = min(100, round(w_name * best_name + 12 * same_birth_year + 8 * same_nationality))

``best_name`` (0-100) is the best :func:`name_score` between any name of the subject and any
name of the entry. ``w_name`` is 0.8, plus the weight of each booster the *entry* cannot
offer (0.12 when its birth date is unknown, 0.08 when its nationality is unknown): a list
entry with a missing birth date must still be able to reach 100 against itself, and a
subject must not be penalised for what the list does not know. So an identical name alone
scores 80 against a fully described entry, and every entry screened against itself scores
exactly 100.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import orjson

WATCHLIST_PATH = Path(__file__).parent / "watchlist.json"
LISTS = ("sanctions", "pep")
BIRTH_YEAR_BOOST = 12
NATIONALITY_BOOST = 8
NAME_WEIGHT = 0.8

# Latin letters that NFKD does not decompose into a base letter plus accents.
_FOLD = str.maketrans(
    {
        "ł": "l",
        "ø": "o",
        "đ": "d",
        "ð": "d",
        "\u0131": "i",
        "ħ": "h",
        "þ": "th",
        "æ": "ae",
        "œ": "oe",
    }
)
# Apostrophes join name parts (O'Brien = OBrien); every other separator splits them.
_APOSTROPHES = str.maketrans("", "", "'`\u2019\u02bc")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_NATIONALITY = re.compile(r"[A-Z]{3}")
NORMALIZED_KEPT = 65536  # names whose normal form is kept: a re-screen normalizes each once


@functools.lru_cache(maxsize=NORMALIZED_KEPT)
def normalize(name: str) -> str:
    """Casefold, strip accents, keep letters, digits and single spaces.

    Names reach the mock in every spelling ("DOE, John", "Clémence", "Jean-Luc"), so this is
    the one place that decides which differences never matter. Combining marks are dropped
    after NFKD and the rest is recomposed (NFC) so that scripts like Hangul stay syllables.
    Kept per name (a pure function): the watchlist's names and a worklist's are normalized
    once, not once per pair, which was nine tenths of a re-screen.
    """
    text = name.casefold().translate(_APOSTROPHES)
    text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    text = unicodedata.normalize("NFC", text).translate(_FOLD)
    kept = "".join(c if c.isalnum() else " " for c in text)
    return " ".join(kept.split())


def name_score(a: str, b: str) -> float:
    """Similarity of two names, 0-100, rounded to 2 decimals.

    ``token_sort_ratio`` ignores word order ("Doe John" = "John Doe"). On top of it, a
    token-set comparison forgives a missing middle name or second surname: two or more
    shared words that make up one whole name score 100, and otherwise the shared words are
    put first before comparing. Unlike rapidfuzz's ``token_set_ratio`` it never compares the
    shared words alone with a whole name, because then one common given name ("Martin")
    would be enough to score 75 against every entry that has it. Rounding keeps stored
    results readable and stable.
    """
    na, nb = normalize(a), normalize(b)
    if na == nb and (na or (a == b and any(c.isalnum() for c in a))):
        return 100.0
    if not na or not nb:
        return 0.0
    fuzz = _fuzz()
    best = float(fuzz.token_sort_ratio(na, nb))
    ta, tb = _words(na), _words(nb)
    shared = sorted(ta & tb)
    if shared:
        only_a, only_b = sorted(ta - tb), sorted(tb - ta)
        if len(shared) >= 2 and (not only_a or not only_b):
            return 100.0
        best = max(best, float(fuzz.ratio(" ".join(shared + only_a), " ".join(shared + only_b))))
    return round(min(100.0, max(0.0, best)), 2)


@functools.lru_cache(maxsize=NORMALIZED_KEPT)
def _words(normal: str) -> frozenset[str]:
    """The words of a normalized name, kept as its normal form is."""
    return frozenset(normal.split())


@functools.cache
def _fuzz() -> Any:
    """rapidfuzz's ``fuzz``, loaded on the first comparison (not with every server)."""
    from rapidfuzz import fuzz

    return fuzz


@functools.lru_cache(maxsize=NORMALIZED_KEPT)
def _birth_year(value: str) -> str:
    """The year of a YYYY-MM-DD date, or "" when unknown or malformed."""
    text = value.strip()[:10]
    return text[:4] if _DATE.fullmatch(text) else ""


@dataclass(frozen=True, slots=True)
class Subject:
    """The person being screened: a name, its other spellings, and the two boosters."""

    name: str
    birth_date: str = ""
    nationality: str = ""
    aliases: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)


@dataclass(frozen=True, slots=True)
class Entry:
    """One watchlist entry; the fields mirror the JSON of ``watchlist.json``."""

    entry_id: str
    list: str
    name: str
    aliases: tuple[str, ...] = ()
    birth_date: str = ""
    nationality: str = ""
    details: str = ""
    source: str = ""

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Entry:
        """Build an entry from its JSON form, rejecting what would break screening.

        Raises ``ValueError`` with a readable reason, so a control API that accepts
        project-specific entries can pass it on. Only ``entry_id``, ``list`` and ``name``
        are required; the nationality is checked for shape only (three capital letters),
        the ISO code list lives with the schemas.
        """
        if not isinstance(data, Mapping):
            raise ValueError("a watchlist entry must be an object")
        values: dict[str, Any] = {}
        for key in ("entry_id", "list", "name", "birth_date", "nationality", "details", "source"):
            value = data.get(key, "")
            if not isinstance(value, str):
                raise ValueError(f"{key} must be a string")
            values[key] = value.strip()
        for key in ("entry_id", "name"):
            if not values[key]:
                raise ValueError(f"{key} is required")
        if values["list"] not in LISTS:
            raise ValueError(f"list must be one of {', '.join(LISTS)}")
        if values["birth_date"]:
            try:
                date.fromisoformat(values["birth_date"])
            except ValueError:
                raise ValueError("birth_date must be YYYY-MM-DD or empty") from None
            if not _DATE.fullmatch(values["birth_date"]):
                raise ValueError("birth_date must be YYYY-MM-DD or empty")
        if values["nationality"] and not _NATIONALITY.fullmatch(values["nationality"]):
            raise ValueError("nationality must be an ISO 3166-1 alpha-3 code or empty")
        aliases = data.get("aliases", [])
        if not isinstance(aliases, (list, tuple)) or not all(isinstance(a, str) for a in aliases):
            raise ValueError("aliases must be an array of strings")
        return cls(aliases=tuple(a.strip() for a in aliases if a.strip()), **values)

    def to_json(self) -> dict[str, Any]:
        """The JSON form, the same keys and order as the watchlist file."""
        return {
            "entry_id": self.entry_id,
            "list": self.list,
            "name": self.name,
            "aliases": [*self.aliases],
            "birth_date": self.birth_date,
            "nationality": self.nationality,
            "details": self.details,
            "source": self.source,
        }


@dataclass(frozen=True, slots=True)
class Match:
    """An entry at or above the threshold, with how it matched (for reports and raw_data)."""

    entry: Entry
    score: int
    name_score: float
    matched_name: str


@functools.cache
def builtin_watchlist() -> tuple[Entry, ...]:
    """The packaged fictional watchlist, read once (the entries are immutable)."""
    rows = orjson.loads(WATCHLIST_PATH.read_bytes())
    return tuple(Entry.from_json(row) for row in rows)


def _best_name(subject: Subject, entry: Entry) -> tuple[float, str]:
    """The best name score and the entry name (or alias) that gave it; first one on ties."""
    best, matched = 0.0, entry.name
    for entry_name in entry.names:
        for subject_name in subject.names:
            value = name_score(subject_name, entry_name)
            if value > best:
                best, matched = value, entry_name
    return best, matched


def _score(subject: Subject, entry: Entry, best_name: float) -> int:
    weight = NAME_WEIGHT
    boost = 0
    entry_year = _birth_year(entry.birth_date)
    if not entry_year:
        weight += BIRTH_YEAR_BOOST / 100
    elif entry_year == _birth_year(subject.birth_date):
        boost += BIRTH_YEAR_BOOST
    entry_nat = entry.nationality.strip().upper()
    if not entry_nat:
        weight += NATIONALITY_BOOST / 100
    elif entry_nat == subject.nationality.strip().upper():
        boost += NATIONALITY_BOOST
    return max(0, min(100, round(weight * best_name + boost)))


def score(subject: Subject, entry: Entry) -> int:
    """The match score of ``subject`` against ``entry``, 0-100 (see the module docstring)."""
    return _score(subject, entry, _best_name(subject, entry)[0])


def screen(subject: Subject, entries: Iterable[Entry], threshold: int) -> list[Match]:
    """Every entry scoring at or above ``threshold``, best first, then by entry id.

    The order is total (score, then ``entry_id``, then the input order), so the same
    inputs always give the same list and the same resource ids downstream.
    """
    found: list[tuple[int, str, int, Match]] = []
    for index, entry in enumerate(entries):
        best, matched = _best_name(subject, entry)
        value = _score(subject, entry, best)
        if value >= threshold:
            found.append((-value, entry.entry_id, index, Match(entry, value, best, matched)))
    found.sort(key=lambda row: row[:3])
    return [row[3] for row in found]


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def subject_of(submission: Mapping[str, Any]) -> Subject:
    """The subject of a stored submission (its ``data``, 2.2), or of a bare data object.

    ``full_name`` is the screened name (``name`` and first + last name as fallbacks);
    ``full_name_en`` becomes an alias when it is a different name, so a Hangul or
    accented name still meets the Latin spelling of a list entry.
    """
    data = submission.get("data")
    source: Mapping[str, Any] = data if isinstance(data, Mapping) else submission
    full = _text(source.get("full_name")) or _text(source.get("name"))
    if not full:
        full = " ".join(
            p for p in (_text(source.get("first_name")), _text(source.get("last_name"))) if p
        )
    english = _text(source.get("full_name_en"))
    if not full:
        full, english = english, ""
    aliases = (english,) if english and normalize(english) != normalize(full) else ()
    return Subject(
        name=full,
        birth_date=_text(source.get("date_of_birth")),
        nationality=_text(source.get("nationality")).upper(),
        aliases=aliases,
    )
