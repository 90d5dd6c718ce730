"""A project's token pool: the Liveform private-mode token IDs an integrator registers
(``POST/GET/DELETE /v3/submission/tokens``; endpoints.md 1-4, 10.1).

Pure rules and the pool itself; the service applies them under its lock and knows each
token's uses (``liveform.TokenUse``), from which a token's life is told: ``registered``
(in the pool, never used), ``used`` (a link opened with it), ``expired`` (a submission
carries it, or its time ran out) and ``deleted`` (kept in a short record for the
dashboard, no longer in the pool).
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the links' module loads with the first token's life asked
    from idv_mock.backend.liveform_links import TokenUse

TOKEN_ID = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")
MIN_LENGTH, MAX_LENGTH = 8, 64
DELETED_KEPT = 1000  # deleted tokens remembered for the dashboard (oldest dropped)


class TokenIdError(ValueError):
    """A token ID that breaks the vendor's rules: ``code`` is the errorCode to answer."""

    def __init__(self, code: str, token: str) -> None:
        super().__init__(code)
        self.code, self.token = code, token


def check_token_id(token: str) -> None:
    """Raise ``TokenIdError`` for a token ID outside 8-64 bytes or ``[A-Za-z0-9._-]``
    with a letter or digit at both ends (length is checked first)."""
    if not MIN_LENGTH <= len(token.encode()) <= MAX_LENGTH:
        raise TokenIdError("invalid_token_id_length", token)
    if not TOKEN_ID.fullmatch(token):
        raise TokenIdError("invalid_token_id_format", token)


def is_expired(use: TokenUse | None, now: datetime, lifetime: timedelta) -> bool:
    """Whether a token has expired at ``now`` (the project's clock) after ``lifetime``
    (option ``token_expiry_seconds``): the hosted form's rule, the one place that says so."""
    from idv_mock.backend.liveform_links import token_expiry  # with the first token asked of

    return token_expiry(use, now, lifetime) is not None


def life(use: TokenUse | None, now: datetime, lifetime: timedelta) -> str:
    """``registered``, ``used`` or ``expired``, for a token in the pool."""
    if is_expired(use, now, lifetime):
        return "expired"
    return "used" if use is not None else "registered"


@dataclass(slots=True)
class TokenPool:
    """Token ID -> its ``updateTime``, in registration order (oldest first)."""

    entries: OrderedDict[str, str] = field(default_factory=OrderedDict)
    deleted: OrderedDict[str, str] = field(default_factory=OrderedDict)  # id -> when

    def __len__(self) -> int:
        return len(self.entries)

    def __contains__(self, token: object) -> bool:
        return token in self.entries

    def room_for(self, tokens: list[str]) -> int:
        """How many pool entries the tokens would add (ones already in it are overwritten)."""
        return len({t for t in tokens if t not in self.entries})

    def register(self, tokens: list[str], when: str) -> None:
        for token in tokens:
            self.entries.pop(token, None)  # overwritten: newest registration last
            self.entries[token] = when
            self.deleted.pop(token, None)

    def delete(self, tokens: list[str], when: str) -> list[str]:
        """Remove the tokens found; answers the ones not found, in the order given."""
        missing = []
        for token in dict.fromkeys(tokens):
            if self.entries.pop(token, None) is None:
                missing.append(token)
            else:
                self._remember(token, when)
        return missing

    def delete_oldest(self, count: int, when: str) -> list[str]:
        gone = list(self.entries)[:count]
        for token in gone:
            del self.entries[token]
            self._remember(token, when)
        return gone

    def _remember(self, token: str, when: str) -> None:
        self.deleted[token] = when
        while len(self.deleted) > DELETED_KEPT:
            self.deleted.popitem(last=False)

    def page(self, after: str | None, size: int) -> tuple[list[tuple[str, str]], str | None]:
        """Up to ``size`` entries after the token ``after``; the last one's id when more follow."""
        items = list(self.entries.items())
        start = 0
        if after is not None:
            ids = list(self.entries)
            start = ids.index(after) + 1 if after in self.entries else len(ids)
        chunk = items[start : start + size]
        more = start + size < len(items)
        return chunk, chunk[-1][0] if more and chunk else None

    def export(self) -> dict[str, Any]:
        return {"entries": dict(self.entries), "deleted": dict(self.deleted)}

    @classmethod
    def restore(cls, doc: dict[str, Any]) -> TokenPool:
        return cls(OrderedDict(doc.get("entries", {})), OrderedDict(doc.get("deleted", {})))
