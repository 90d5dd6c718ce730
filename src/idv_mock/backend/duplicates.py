"""Duplicate checks of new submissions (gaps.md, "Submissions: derived fields").

The index maps each checked value to the submissions holding it. Keys are made from the
values as they arrived, before a project's masking, and hold a digest rather than the
value, so two masked numbers that end alike are not taken for duplicates and no raw
number is kept beside its masked copy. A new submission is compared on creation; PATCH
re-indexes what it changed; a (partial) delete of a checked part *excludes* the
submission from that check for good (api-v3.md 4.4 rule 7), even if identical data
reaches it again later.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from idv_mock.ground.by_value import ByValue

IDENTITY = "identity"  # full_name + date_of_birth + nationality
ID_NUMBER = "identityNumber"
SELFIE = "selfie"
CUSTOM = "custom"  # cf1, cf2, cf3
KINDS = (IDENTITY, ID_NUMBER, SELFIE, CUSTOM)
CUSTOM_FIELDS = ("cf1", "cf2", "cf3")
# which PATCH property changes which check's key
KIND_OF_PROPERTY = {
    "fullName": IDENTITY,
    "birthDate": IDENTITY,
    "nationality": IDENTITY,
    "identityNumber": ID_NUMBER,
}

Key = tuple[str, ...]  # (kind, digest) or (custom, field name, digest)


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:24]


def keys_of(sub: dict[str, Any]) -> list[Key]:
    """Every index key the submission's (unmasked) data yields."""
    data = sub.get("data") or {}
    get = data.get
    keys: list[Key] = []
    name, birth, nationality = get("full_name"), get("date_of_birth"), get("nationality")
    if name and birth and nationality:  # a value that is there has a non-empty str()
        keys.append((IDENTITY, _digest(str(name), str(birth), str(nationality))))
    number = get("identityNumber")
    if number:
        keys.append((ID_NUMBER, _digest(str(number))))
    selfie = (sub.get("image") or {}).get("selfieImage")
    if selfie:
        keys.append((SELFIE, _digest(str(selfie))))
    for cf in CUSTOM_FIELDS:
        value = get(cf)
        if value:
            keys.append((CUSTOM, cf, _digest(str(value))))
    return keys


class Findings(ByValue):
    """What a new submission duplicates. Equal and shown by value, read-only by
    convention (``ByValue``: not a frozen dataclass, whose generated methods were compiled
    at import, on every first use)."""

    __slots__ = ("custom_information", "selfie_users", "users")
    FIELDS = ("users", "selfie_users", "custom_information")  # hashing one: a TypeError (lists)

    def __init__(self, users: list[str], selfie_users: list[str], custom_information: str):
        self.users, self.selfie_users = users, selfie_users
        self.custom_information = custom_information


class DuplicateIndex:
    """Every value held is immutable (tuples, frozensets), so a copy is a few shallow dict
    copies: a project's start snapshot and its resets cost little at 100k submissions. A
    plain class, not a dataclass (its methods were compiled at import, on every first
    use): indexes are never compared or printed whole."""

    __slots__ = ("entries", "excluded", "indexed", "seq")

    def __init__(
        self,
        entries: dict[Key, tuple[str, ...]] | None = None,
        indexed: dict[str, list[Key]] | None = None,
        excluded: dict[str, frozenset[str]] | None = None,
        seq: dict[str, int] | None = None,
    ) -> None:
        self.entries = {} if entries is None else entries
        self.indexed = {} if indexed is None else indexed
        self.excluded = {} if excluded is None else excluded
        self.seq = {} if seq is None else seq  # creation order, for stable lists

    def check(self, keys: list[Key]) -> Findings:
        """What existing submissions a new one with these keys duplicates."""
        users: list[str] = []
        selfies: list[str] = []
        custom: list[str] = []
        for key in keys:
            found = self.entries.get(key, ())
            if not found:
                continue
            kind = key[0]
            if kind == SELFIE:
                selfies.extend(found)
            elif kind == CUSTOM:
                custom.append(key[1])
            else:
                users.extend(found)
        return Findings(self._ordered(users), self._ordered(selfies), ",".join(custom))

    def add(self, sid: str, keys: Iterable[Key]) -> None:
        self.seq.setdefault(sid, len(self.seq))
        skip = self.excluded.get(sid, frozenset())
        kept = [tuple(k) for k in keys if k[0] not in skip]
        self.indexed[sid] = kept
        entries = self.entries
        for key in kept:
            entries[key] = (*entries.get(key, ()), sid)

    def remove(self, sid: str) -> list[Key]:
        keys = self.indexed.pop(sid, [])
        for key in keys:
            holders = tuple(h for h in self.entries[key] if h != sid)
            if holders:
                self.entries[key] = holders
            else:
                del self.entries[key]
        return keys

    def update(self, sid: str, fresh: list[Key], kinds: set[str]) -> None:
        """Replace the keys of ``kinds`` by ``fresh`` ones (after an edit of those parts)."""
        old = self.remove(sid)
        kept = [k for k in old if k[0] not in kinds]
        self.add(sid, kept + [k for k in fresh if k[0] in kinds])

    def exclude(self, sid: str, kinds: Iterable[str]) -> None:
        """Stop checking ``kinds`` against this submission, now and later."""
        self.excluded[sid] = self.excluded.get(sid, frozenset()).union(kinds)
        self.add(sid, self.remove(sid))

    def copy(self) -> DuplicateIndex:
        """An independent index sharing every (immutable) value."""
        return DuplicateIndex(
            dict(self.entries), dict(self.indexed), dict(self.excluded), dict(self.seq)
        )

    def _ordered(self, ids: list[str]) -> list[str]:
        if not ids:  # most new submissions duplicate nothing
            return []
        return sorted(set(ids), key=self.seq.__getitem__)

    def export_exclusions(self) -> dict[str, list[str]]:
        return {sid: sorted(kinds) for sid, kinds in self.excluded.items() if kinds}

    def export_keys(self) -> dict[str, list[list[str]]]:
        return {sid: [list(k) for k in keys] for sid, keys in self.indexed.items()}
