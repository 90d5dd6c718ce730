"""The hosted form's URL contract and token rules (gaps.md "Hosted form (Liveform)").

Pure rules: what a Liveform link says (plain parameters, the ``encrypted=`` JSON object,
encryption-only mode), which names are unknown or ignored, and when a token has expired.
The service owns the state these rules read (token uses, secrets, sessions); the web layer
renders what they refuse. A refusal names an entry of ``errors.LIVEFORM``, whose key is
also the slug of the error page the form shows.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any
from urllib.parse import urlencode

from idv_mock.backend.exceptions import BackendError
from idv_mock.ground import schemas
from idv_mock.ground.errors import LIVEFORM

# Read whatever the mode: the project, the language and the encrypted object.
ALWAYS = ("pid", "lang", "encrypted")
# Plain parameters (vendor guide); also accepted inside ``encrypted``.
PLAIN = (
    *("email", "userid", "sid", "action", "cf1", "cf2", "cf3"),
    *("blacklistCountries", "approvePeriod", "rejectPeriod", "ageLimit"),
    *("rejectDuplicateUser", "mainColor", "innerColor"),
    *("allowedIdTypes", "allowedDocumentFields"),
)
# the ID types ``allowedIdTypes`` may name (the vendor's old API: "id type must be
# passport, government_id or drivers_license")
ALLOWED_ID_TYPES = ("passport", "government_id", "drivers_license")
# the OCR fields ``allowedDocumentFields`` may name: the document step's fields
DOCUMENT_FIELD_NAMES = (
    *("full_name", "first_name", "last_name", "date_of_birth", "gender"),
    *("documentNumber", "identityNumber", "idcard_issueDate", "idcard_expireDate"),
)
LISTS = ("allowedCountries", "allowedIdTypes", "allowedDocumentFields")
# names apps send for the user id that the vendor's form ignores: its name is ``userid``
USERID_NEAR_MISSES = frozenset({"customUserId", "userId", "custom_user_id", "user_id", "uid"})
# Accepted only inside ``encrypted``: in plain text they are refused.
SECRET = (
    *("allowedCountries", "selectedIssuingCountry", "selectedIdType"),
    *("projectionId", "projectionName", "token", "startValidUntil"),
    *("knowledgeField", "knowledgePrefill", "auxidField"),
)
LANGS = ("en", "ko")
# Switches that only turn a policy off, and the submission policy each one empties.
OFF_SWITCHES = {
    "blacklistCountries": ("policy_blacklistCountries", []),
    "approvePeriod": ("policy_approvePeriod", 0),
    "rejectPeriod": ("policy_rejectPeriod", 0),
    "ageLimit": ("policy_ageLimit", 0),
}
RETURNED = ("userid", "cf1", "cf2", "cf3", "email")  # carried back to the return URL
TOKEN_LIFETIME = timedelta(minutes=3)
_COLOR = re.compile(r"#?[0-9A-Fa-f]{6}")


class Refused(BackendError):
    """The form refuses the link or step: ``key`` names the ``errors.LIVEFORM`` entry.

    ``known`` holds the return-URL values read before the refusal, so the error page can
    send the applicant back with them.
    """

    def __init__(self, key: str, *args: str, known: dict[str, str] | None = None) -> None:
        entry = LIVEFORM.entry(key)
        super().__init__(entry.message.format(*args) if args else entry.message)
        self.key, self.code, self.known = key, entry.code, dict(known or {})
        self.detail = args[0] if args else ""  # the parameter a message names


@dataclass(slots=True)
class Link:
    """What a Liveform URL says once read: values as strings, and what was not used."""

    project_id: str
    lang: str = "en"
    values: dict[str, str] = field(default_factory=dict)
    unknown: list[str] = field(default_factory=list)  # names the form does not know
    ignored: list[str] = field(default_factory=list)  # known names it did not read

    def get(self, name: str) -> str:
        return self.values.get(name, "")

    def returned(self) -> dict[str, str]:
        return {k: self.get(k) for k in RETURNED}

    def listed(self, name: str) -> list[str] | None:
        """A comma-separated list parameter's items, or None when the link has none."""
        if name not in self.values:
            return None
        return [v.strip() for v in self.values[name].split(",") if v.strip()]

    def countries(self) -> list[str]:
        """The issuing countries offered: ``allowedCountries``, else every country."""
        allowed = self.get("allowedCountries")
        return allowed.split(",") if allowed else list(schemas.enum("country"))

    def hints(self) -> list[str]:
        """What the link probably meant by a name the vendor's form ignores."""
        return [
            f"{name} is not a parameter of the vendor's form (it ignores it): "
            "the vendor's name for the user id is userid"
            for name in self.unknown
            if name.removeprefix("encrypted.") in USERID_NEAR_MISSES
        ]

    def describe(self) -> dict[str, Any]:
        out = {
            "pid": self.project_id,
            "lang": self.lang,
            "parameters": dict(self.values),
            "unknown_parameters": list(self.unknown),
            "ignored_parameters": list(self.ignored),
        }
        hints = self.hints()
        if hints:
            out["hints"] = hints
        return out


Decrypt = Callable[[str], Any]


def read_link(
    project_id: str,
    pairs: Iterable[tuple[str, str]],
    decrypt: Decrypt,
    *,
    encrypted_only: bool,
    now: datetime,
) -> Link:
    """The link's parameters; raises ``Refused`` for what the form refuses.

    ``startValidUntil`` (compared with ``now``) is checked before anything else the link
    carries; the first value of a repeated name counts; a value inside ``encrypted`` wins
    over the same name in plain.
    """
    plain = first_values(pairs)
    link = Link(project_id, plain.get("lang", "en") if plain.get("lang") in LANGS else "en")
    readable = {} if encrypted_only else plain
    inner = _decrypted(plain.get("encrypted"), decrypt, _known(readable))
    _check_start(inner.get("startValidUntil"), _known({**readable, **inner}), now)
    for name, value in plain.items():
        _take_plain(link, name, value, encrypted_only)
    for name, value in inner.items():
        _take_inner(link, name, value)
    _check_values(link)
    return link


def first_values(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Each name's first value, as a form or a query string of repeated names is read."""
    found: dict[str, str] = {}
    for name, value in pairs:
        found.setdefault(name, value)
    return found


def _known(values: dict[str, Any]) -> dict[str, str]:
    """The return-URL values known so far."""
    return {k: values[k] for k in RETURNED if isinstance(values.get(k), str)}


def _decrypted(text: str | None, decrypt: Decrypt, known: dict[str, str]) -> dict[str, Any]:
    if not text:
        return {}
    try:
        inner = decrypt(text)
    except Refused:
        raise
    except ValueError:  # crypto's CryptoError (base64, key, UTF-8, JSON): the link is unreadable
        raise Refused("decryption", known=known) from None
    if not isinstance(inner, dict):
        raise Refused("decryption", known=known)
    return inner


def _check_start(value: Any, known: dict[str, str], now: datetime) -> None:
    """``startValidUntil`` (UTC) in the past refuses the link before anything else."""
    if value is None:
        return
    until = parse_utc(value) if isinstance(value, str) else None
    if until is None:
        raise Refused("invalid-parameter", "startValidUntil", known=known)
    if until < now:
        raise Refused("expired-start-valid-until", known=known)


def parse_utc(text: str) -> datetime | None:
    """An ISO 8601 instant; without an offset it is UTC."""
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def _take_plain(link: Link, name: str, value: str, encrypted_only: bool) -> None:
    if name in ALWAYS:
        return
    if name not in PLAIN and name not in SECRET:
        link.unknown.append(name)
    elif encrypted_only:
        link.ignored.append(name)
    elif name in SECRET:
        raise Refused("plain", name, known=link.returned())
    else:
        _store(link, name, value)


def _take_inner(link: Link, name: str, value: Any) -> None:
    if name not in PLAIN and name not in SECRET:
        link.unknown.append(f"encrypted.{name}")
    elif value is not None:
        _store(link, name, _as_text(name, value, link))


def _as_text(name: str, value: Any, link: Link) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)) and name not in ("projectionId", "projectionName"):
        return str(value)
    if isinstance(value, list) and name in LISTS:
        return ",".join(str(v) for v in value)
    if isinstance(value, str):
        return value
    raise Refused("invalid-parameter", name, known=link.returned())


def _store(link: Link, name: str, value: str) -> None:
    """Keep a value the form reads; switches and colours it cannot use are ignored."""
    if (
        (name in OFF_SWITCHES and value != "false")
        or (name == "rejectDuplicateUser" and value not in ("true", "false"))
        or (name in ("mainColor", "innerColor") and not _COLOR.fullmatch(value))
    ):
        link.ignored.append(name)
    else:
        link.values[name] = value
        if name in ("mainColor", "innerColor") and not value.startswith("#"):
            link.values[name] = f"#{value}"


def _check_values(link: Link) -> None:
    allowed = link.get("allowedCountries")
    if allowed and not set(allowed.split(",")) <= schemas.countries():
        raise Refused("invalid-parameter", "allowedCountries", known=link.returned())
    chosen = link.get("selectedIssuingCountry")
    if chosen and chosen not in link.countries():
        raise Refused("invalid-parameter", "selectedIssuingCountry", known=link.returned())
    choices: tuple[tuple[str, tuple[str, ...]], ...] = (
        ("allowedIdTypes", ALLOWED_ID_TYPES),
        ("allowedDocumentFields", DOCUMENT_FIELD_NAMES),
    )
    for name, names in choices:
        items = link.listed(name)
        if items is not None and (not items or not set(items) <= set(names)):
            raise Refused("invalid-parameter", name, known=link.returned())
    id_type = link.get("selectedIdType")
    types = link.listed("allowedIdTypes")
    if id_type and (id_type not in schemas.enum("id_type") or (types and id_type not in types)):
        raise Refused("invalid-parameter", "selectedIdType", known=link.returned())
    if "projectionId" in link.values and "projectionName" in link.values:
        raise Refused("both", known=link.returned())


def policies(mirrored: dict[str, Any], link: Link) -> dict[str, Any]:
    """The submission's ``project_options`` with the link's switches applied."""
    out = dict(mirrored)
    for switch, (policy, off) in OFF_SWITCHES.items():
        if link.get(switch) == "false" and policy in out:
            out[policy] = off
    return out


def with_query(url: str, values: dict[str, str]) -> str:
    """``url`` with ``values`` appended to its query (the return URL's own query kept)."""
    return f"{url}{'&' if '?' in url else '?'}{urlencode(values)}"


# --- tokens (private mode) ---


@dataclass(slots=True)
class TokenUse:
    """A token's first use and the submission that carries it (once one does)."""

    first_used: datetime
    submission_id: str = ""
    expiry_sent: bool = False


def token_expiry(
    use: TokenUse | None, now: datetime, lifetime: timedelta = TOKEN_LIFETIME
) -> str | None:
    """``time`` or ``count`` when the token has expired (time wins), else None."""
    if use is None:
        return None
    if now - use.first_used >= lifetime:
        return "time"
    return "count" if use.submission_id else None


# --- building links (the integrator's side: the plugin, the docs) ---


def link_query(
    project_id: str,
    params: dict[str, Any],
    encrypt: Callable[[dict[str, Any]], str],
    *,
    encrypted_only: bool = False,
) -> dict[str, str]:
    """A link's query for ``params``: ``lang`` and plain parameters in plain text (none in
    encryption-only mode), the encrypted-only ones and any other name inside ``encrypted``."""
    query = {"pid": project_id}
    inner: dict[str, Any] = {}
    for name, value in params.items():
        if name == "lang":
            query["lang"] = str(value)
        elif name in PLAIN and not encrypted_only:
            query[name] = _plain_text(value)
        else:
            inner[name] = value
    if inner:
        query["encrypted"] = encrypt(inner)
    return query


def _plain_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
