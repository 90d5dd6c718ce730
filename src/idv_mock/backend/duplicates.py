"""Duplicate checks of new submissions (gaps.md, "Submissions: derived fields").

The index maps each checked value to the submissions holding it now. A new submission is
compared against it on creation; PATCH re-indexes the edited submission; a partial delete
of a checked part *excludes* the submission from that check for good (api-v3.md 4.4 rule
7), even if identical data reaches it again later.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

IDENTITY = "identity"  # full_name + date_of_birth + nationality
ID_NUMBER = "identityNumber"
SELFIE = "selfie"
CUSTOM = "custom"  # cf1, cf2, cf3
KINDS = (IDENTITY, ID_NUMBER, SELFIE, CUSTOM)
CUSTOM_FIELDS = ("cf1", "cf2", "cf3")

Key = tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Findings:
    users: list[str]
    selfie_users: list[str]
    information: str
    custom_information: str


def keys_of(sub: dict[str, Any]) -> list[Key]:
    """Every index key the submission's current data yields."""
    data = sub.get("data") or {}
    keys: list[Key] = []
    ident = tuple(str(data.get(k) or "") for k in ("full_name", "date_of_birth", "nationality"))
    if all(ident):
        keys.append((IDENTITY, *ident))
    if data.get("identityNumber"):
        keys.append((ID_NUMBER, str(data["identityNumber"])))
    selfie = (sub.get("image") or {}).get("selfieImage")
    if selfie:
        keys.append((SELFIE, str(selfie)))
    keys.extend((CUSTOM, cf, str(data[cf])) for cf in CUSTOM_FIELDS if data.get(cf))
    return keys


@dataclass(slots=True)
class DuplicateIndex:
    entries: dict[Key, list[str]] = field(default_factory=dict)
    indexed: dict[str, list[Key]] = field(default_factory=dict)
    excluded: dict[str, set[str]] = field(default_factory=dict)
    seq: dict[str, int] = field(default_factory=dict)  # creation order, for stable lists

    def check(self, sub: dict[str, Any]) -> Findings:
        """What existing submissions the new one duplicates."""
        users: list[str] = []
        selfies: list[str] = []
        info: list[str] = []
        custom: list[str] = []
        for key in keys_of(sub):
            found = self.entries.get(key, [])
            if not found:
                continue
            kind = key[0]
            if kind == SELFIE:
                selfies.extend(found)
            elif kind == CUSTOM:
                custom.append(key[1])
            else:
                users.extend(found)
                info.append("name,birth,nationality" if kind == IDENTITY else ID_NUMBER)
        return Findings(
            self._ordered(users), self._ordered(selfies), ",".join(info), ",".join(custom)
        )

    def add(self, sub: dict[str, Any]) -> None:
        sid = sub["submission_id"]
        self.seq.setdefault(sid, len(self.seq))
        skip = self.excluded.get(sid, set())
        keys = [k for k in keys_of(sub) if k[0] not in skip]
        self.indexed[sid] = keys
        for key in keys:
            self.entries.setdefault(key, []).append(sid)

    def remove(self, sid: str) -> None:
        for key in self.indexed.pop(sid, []):
            holders = self.entries[key]
            holders.remove(sid)
            if not holders:
                del self.entries[key]

    def reindex(self, sub: dict[str, Any]) -> None:
        self.remove(sub["submission_id"])
        self.add(sub)

    def exclude(self, sub: dict[str, Any], kinds: Iterable[str]) -> None:
        """Stop checking ``kinds`` against this submission, now and later."""
        sid = sub["submission_id"]
        self.excluded.setdefault(sid, set()).update(kinds)
        self.reindex(sub)

    def _ordered(self, ids: list[str]) -> list[str]:
        return sorted(set(ids), key=self.seq.__getitem__)

    def export_exclusions(self) -> dict[str, list[str]]:
        return {sid: sorted(kinds) for sid, kinds in self.excluded.items() if kinds}
