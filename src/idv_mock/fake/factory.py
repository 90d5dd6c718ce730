"""Realistic, deterministic submissions built with Faker.

One :class:`SubmissionFactory` owns a seeded ``random.Random`` (``draws.FastRandom``) and
a seeded multi-locale Faker, so the same seed yields the same submissions byte for byte.
The factory builds the raw record (what the applicant's verification flow produced;
``checks.py`` makes its check parts); the backend then applies the project's
derived-field rules (review, masking, duplicates, ``project_options``).
Identity fields given in ``overrides["data"]`` are used *before* the dependent parts (OCR,
review, attempts) are built, so an overridden name shows up everywhere a real one would.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import hashlib
import itertools
import operator
import string
import threading
from collections.abc import Iterator
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, Any

from idv_mock.fake.checks import IMAGE_HOST, CheckParts, real_country
from idv_mock.fake.draws import POOL_FROM, POOL_SIZE, FastRandom, PooledLocale, round2
from idv_mock.fake.romanize import romanize
from idv_mock.ground import compat, schemas
from idv_mock.ground.clock import stamp

if TYPE_CHECKING:  # imported on first use: Faker and its providers cost most of a second
    from faker import Faker

__all__ = [
    "IDENTITY_KEYS",
    "POOL_FROM",
    "SubmissionFactory",
    "deep_merge",
    "merge_into",
    "not_screened",
    "real_country",
]

# nationality (ISO alpha-3) -> Faker locale, with a weight for the seeded mix
LOCALES: dict[str, tuple[str, int]] = {
    "KOR": ("ko_KR", 30),
    "USA": ("en_US", 20),
    "GBR": ("en_GB", 8),
    "DEU": ("de_DE", 6),
    "FRA": ("fr_FR", 6),
    "JPN": ("ja_JP", 8),
    "IND": ("en_IN", 8),
    "BRA": ("pt_BR", 5),
    "VNM": ("vi_VN", 5),
    "ESP": ("es_ES", 2),
    "ITA": ("it_IT", 2),
}
FAMILY_NAME_FIRST = frozenset({"KOR", "JPN", "VNM"})
GENDERS = schemas.enum("gender")
FINAL = schemas.enum("final_result")  # a seeded submission's decision
ID_TYPES_BY_NATION: dict[str, tuple[str, ...]] = {
    "KOR": ("government_id", "drivers_license", "passport"),
    "VNM": ("passport", "foreign_registrator", "residence_permit"),
    "IND": ("aadhaar", "pancard", "passport", "drivers_license"),
    "USA": ("drivers_license", "passport", "identification_card"),
}
DEFAULT_ID_TYPES = (
    "passport",
    "identification_card",
    "residence_permit",
    "drivers_license",
    "visa",
)
IDENTITY_KEYS = (
    "first_name",
    "last_name",
    "full_name",
    "full_name_en",
    "gender",
    "nationality",
    "date_of_birth",
    "idType",
    "documentNumber",
    "identityNumber",
    "idcard_issuingCountry",
    "idcard_issueDate",
    "idcard_expireDate",
)


_PROTOTYPE_LOCK = threading.Lock()


def _prototype() -> Faker:
    """The one Faker of the mock's locales; a server's warm-up thread and a request (or two
    services' threads) asking at once wait for one build instead of making two."""
    with _PROTOTYPE_LOCK:
        return _made_prototype()


@functools.cache
def _made_prototype() -> Faker:
    """Faker's internals this touches (the listing of locale folders, it_IT's city order)
    are behind ``idv_mock.ground.compat``."""
    from faker import Faker

    with compat.faker_listing_cached():
        faker = Faker([loc for loc, _ in LOCALES.values()])
    for locale, _ in LOCALES.values():
        for provider in faker[locale].providers:
            compat.faker_cities_sorted(provider)
    return faker


class SubmissionFactory(CheckParts):
    """Seeded source of raw submissions; see the module docstring."""

    def __init__(self, seed: int = 0) -> None:
        self.rng = FastRandom(seed)
        # made on first use (a service started from a saved start state may never need it)
        self._faker: Faker | None = None
        self._faker_seed = seed
        # the warm-up thread (warm) and a request build one Faker, seeded as the last reseed
        self._faker_lock = threading.Lock()
        self._nations = list(LOCALES)
        self._cum_weights = list(itertools.accumulate(w for _, w in LOCALES.values()))
        self._pools: dict[str, PooledLocale] | None = None
        self._pool_size = POOL_SIZE
        self._epoch, self._generation, self._id_salt = 0, 0, 0

    @property
    def faker(self) -> Faker:
        """The seeded Faker, built on first use: a copy of the prototype (building a Faker
        costs ~30 ms per locale), seeded as the last ``reseed`` asked."""
        found = self._faker
        if found is None:
            with self._faker_lock:
                if self._faker is None:
                    made = copy.deepcopy(_prototype())
                    made.seed_instance(self._faker_seed)
                    self._faker = made
                found = self._faker
        return found

    def warm(self) -> None:
        """Build the Faker now, off any request (``idv-mock serve`` calls this on a daemon
        thread once it accepts), so the first creation does not load it (seconds on a busy
        machine); a creation arriving before it ends waits for this one build."""
        _ = self.faker

    def reseed(self, seed: int, *, new_ids: bool = False) -> None:
        """Start the same sequence again as a new factory with ``seed`` would (cheaply).

        In an epoch (see :meth:`set_epoch`), or when asked (``new_ids``: a reset of a
        server with no state file), each reseed also moves the ids to a sequence of their
        own (the count of resets, which survives them), so ids handed out before the reset
        are not handed out again.
        """
        self.rng.seed(seed)
        with self._faker_lock:  # not between a build's copy and its seeding
            self._faker_seed = seed
            if self._faker is not None:
                self._faker.seed_instance(seed)
        if self._epoch or new_ids:
            self._generation += 1
            self._id_salt = _id_salt(self._epoch, self._generation)

    def set_epoch(self, epoch: int) -> None:
        """Mix ``epoch`` (a state file's start counter, 1 and up) into every id drawn from now.

        The same draws (and so the same data) as without it, only each id XORed with 128
        bits derived from the epoch: ids stay unique within a start, deterministic for a
        seed and history, and no two starts of one state file share their sequence, even
        when a crash lost the writes of the last one. Epoch 0 changes nothing.
        """
        self._epoch, self._generation = epoch, 0
        self._id_salt = _id_salt(epoch, 0) if epoch else 0

    @contextlib.contextmanager
    def pooled(self, count: int) -> Iterator[None]:
        """Draw Faker values from pools while ``count`` (POOL_FROM or more) are built: the
        same seed and count still give the same submissions."""
        if count < POOL_FROM:
            yield
            return
        self._pools, self._pool_size = {}, min(POOL_SIZE, count // 20)
        try:
            yield
        finally:
            self._pools = None

    def _locale(self, name: str) -> Any:
        if self._pools is None:
            return self.faker[name]
        found = self._pools.get(name)
        if found is None:
            size = self._pool_size
            found = self._pools[name] = PooledLocale(self.faker[name], self.rng, size)
        return found

    def filled_pools(self) -> list[tuple[str, str, list[str]]]:
        """Every Faker pool filled so far in this ``pooled`` stretch: (locale, method,
        values), in the order filled per locale."""
        pools = self._pools or {}
        return [(loc, name, pool) for loc, p in pools.items() for name, pool in p.filled.items()]

    def install_pools(self, pools: list[tuple[str, str, list[str]]]) -> None:
        """Pick from pools another factory filled (``filled_pools``), without Faker: a
        process building a stretch of the same seeding (``backend/seed_split.py``)."""
        assert self._pools is not None, "install_pools outside pooled()"
        for loc, name, pool in pools:
            found = self._pools.get(loc)
            if found is None:
                found = self._pools[loc] = PooledLocale(None, self.rng, self._pool_size)
            found.install(name, pool)

    def pools_only(self) -> None:
        """From now on pick from the pools already here or installed only: a pool not
        filled yet raises instead of filling from this factory's Faker, whose values would
        not be the ones the seeding's own process draws (a split seeding's worker)."""
        for found in (self._pools or {}).values():
            found.forget_faker()
        self._faker = _NO_FAKER

    def nationality(self) -> str:
        return self.rng.weighted(self._nations, self._cum_weights)

    # --- identity ---
    def identity(self, when: datetime, given: dict[str, Any] | None = None) -> dict[str, str]:
        """Personal and document fields, honouring the ones ``given``."""
        given = {k: v for k, v in given.items() if isinstance(v, str)} if given else {}
        nat = given.get("nationality") or self.nationality()
        fk = self._locale(LOCALES.get(nat, _EN_US)[0])
        gender = given.get("gender") or self.rng.choice(GENDERS)
        first = fk.first_name_male() if gender == "male" else fk.first_name_female()
        last = fk.last_name()
        if given:
            first, last = given.get("first_name", first), given.get("last_name", last)
        family_first = nat in FAMILY_NAME_FIRST
        full = f"{last} {first}" if family_first else f"{first} {last}"
        if given:
            full = given.get("full_name", given.get("name", full))
        if not full.isascii():
            self._english_name(gender)  # drawn as before 0.3 and unused: the rest of a seed stays
        day = when.date()
        issued = day - timedelta(days=self.rng.randint(30, 3000))
        id_type = self.rng.choice(ID_TYPES_BY_NATION.get(nat, DEFAULT_ID_TYPES))
        born = day - timedelta(days=self.rng.randint(19 * 366, 75 * 365))  # 19 to 75 years old
        ident = {
            "first_name": first,
            "last_name": last,
            "full_name": full,
            "full_name_en": romanize(full, family_first=family_first),
            "gender": gender,
            "nationality": nat,
            "date_of_birth": born.isoformat(),
            "idType": id_type,
            "documentNumber": self.rng.choice(string.ascii_uppercase) + self.digits(8),
            "identityNumber": self._identity_number(nat),
            "idcard_issuingCountry": real_country(nat),
            "idcard_issueDate": issued.isoformat(),
            "idcard_expireDate": _years_later(issued, 10).isoformat(),
        }
        if given:
            ident.update({k: v for k, v in given.items() if k in IDENTITY_KEYS})
        return ident

    def _english_name(self, gender: str) -> str:
        en = self._locale("en_US")
        first = en.first_name_male() if gender == "male" else en.first_name_female()
        return f"{first} {en.last_name()}"

    def _identity_number(self, nat: str) -> str:
        if nat == "KOR":
            return f"{self.digits(6)}-{self.rng.choice('1234')}{self.digits(6)}"
        if nat == "USA":
            return f"{self.digits(3)}-{self.digits(2)}-{self.digits(4)}"
        return self.digits(12)

    # --- the whole record ---
    def build(
        self,
        when: datetime,
        overrides: dict[str, Any] | None = None,
        *,
        userid: str | None = None,
        invent: bool = True,
        tries: int | None = None,
        ident: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        """A complete raw submission created at ``when`` (derived fields still to apply).

        ``invent=False`` (the hosted form) leaves out what only the link, the token or the
        applicant gives (``userid``, ``email``, ``tokenId``, ``cf1``-``cf3``,
        ``phoneNumber``, ``ssnNumber``, ``additional_list``): the caller's overrides bring
        what was given, and nothing stands in for the rest. ``tries``: the attempts the
        applicant made (id and selfie), else a draw; none leaves no selfie either.
        ``ident``: the identity already drawn, its draws stepped over (``fake/skim.py``).
        """
        overrides = overrides or {}
        if ident is None:
            given_data = overrides.get("data")
            ident = self.identity(when, given_data if isinstance(given_data, dict) else None)
        sid = self.uuid()
        result = self.rng.weighted(FINAL, (7, 10))  # 7:3
        kyc_at = stamp(when + timedelta(milliseconds=self.rng.randint(50, 900)))  # < next tick
        ip = self.public_ip()
        email = self._email(ident) if invent else None
        sub: dict[str, Any] = {
            "data": self._data(ident, ip, when, invent),
            "OCR_raw": self._ocr_raw(ident),
            "ocr": _ocr(ident),
            "review": {},
            "image": self._images(sid, selfie=tries != 0),
            "memo": {"text": "", "updated_at": ""},
            "duplicated_users": [],
            "duplicated_selfie_users": [],
            "email": email,
            "submission_id": sid,
            "recognition_score": f"{self.score(72, 99.9):.2f}",
            "service_score": f"{self.score(60, 99.9):.2f}",
            "duplicated_information": "",
            "custom_duplicated_information": "",
            "applicant_id": self.hex(24),  # replaced by the project's (derive.identity_ids)
            "created_at": self._stamp_after(when, 0),
            "kyc_result_at": kyc_at,
            "updated_at": kyc_at,
            "pending_at": "",
            "userid": userid or (f"user_{self.hex(10)}" if invent else None),
            "reviewer": "",
            "project_options": {},
            "additional_list": self._additional() if invent else [],
            "kyc": self._kyc(ident, result, when, sid, tries),
            "aml": not_screened(),
            "verification": self._verification(ident, when),
            "signals": self._signals(when),
            "updateHistory": {},
            "warning": [],
            "Injection_action": [],
            "id_LivenessScore": {"score": self.score(0.8, 1.0), "result": "live"},
            "tokenId": self.hex(32) if invent else None,
            "pre_verification": self._pre_verification(ip, ident, when),
        }
        if invent:  # every value is there: only what the form leaves out can be None
            return sub
        return {k: v for k, v in sub.items() if v is not None}

    def _email(self, ident: dict[str, str]) -> str:
        en = self._locale("en_US")
        local = ".".join(map(_email_word, ident["full_name_en"].split(" ")))
        return f"{local or 'user'}{self.rng.randint(1, 999)}@{en.free_email_domain()}"

    def _data(
        self, ident: dict[str, str], ip: str, when: datetime, invent: bool = True
    ) -> dict[str, str]:
        nat = ident["nationality"]
        fk = self._locale(LOCALES.get(nat, _EN_US)[0])
        street = fk.street_address().replace("\n", ", ")
        city, zipcode, state = fk.city(), fk.postcode(), fk.administrative_unit()
        data = {"age_group": age_group(ident["date_of_birth"], when.date())}
        data.update(zip(_DATA_IDENTITY, _data_identity(ident), strict=True))
        data.update({
            "address_city": city,
            "address_country": nat,
            "address_state": state,
            "address_street": street,
            "address_street2": "",
            "address_zipcode": zipcode,
            "address_globalCode": self._plus_code(8),
            "address_compoundCode": f"{self._plus_code(4)} {city}",
            "address_formatted": f"{street}, {city}, {state} {zipcode}",
            "address_input": street,
            "address_detail": f"{self.rng.randint(1, 30)}F",
            "ip_address": ip,
            "idType": ident["idType"],
            "documentNumber": ident["documentNumber"],
        })  # fmt: skip
        if invent:
            data.update(self._given_by_applicant(fk, nat))
        if ident["idType"] == "foreign_registrator":
            data.update(self._korean_stay(ident, when))
        return data

    def _given_by_applicant(self, fk: Any, nat: str) -> dict[str, str]:
        """What a seeded applicant's link and answers gave (a past applicant's values)."""
        return {
            "ssnNumber": self._locale("en_US").ssn() if nat == "USA" else "",
            "phoneNumber": fk.phone_number(),
            "cf1": f"CUST-{self.digits(6)}",
            "cf2": "",
            "cf3": "",
        }

    def _korean_stay(self, ident: dict[str, str], when: datetime) -> dict[str, str]:
        """Residence-permit fields, present only for a Korean foreigner registration card."""
        if ident["idType"] != "foreign_registrator":
            return {}
        stay = when.date() + timedelta(days=self.rng.randint(90, 1500))
        return {
            "typeOfPermit": "F-2",
            "typeOfPermitGovKor": "F-2",
            "expiryDateOfStayKor": stay.isoformat(),
            "nationalityGovKor": ident["nationality"],
        }

    def _plus_code(self, n: int) -> str:
        code = self.rng.symbols("23456789CFGHJMPQRVWX", n + 2)
        return f"{code[:n]}+{code[n:]}"

    def _ocr_raw(self, ident: dict[str, str]) -> dict[str, Any]:
        item = self._ocr_item
        return {
            "number": item(ident["identityNumber"]),
            "birth_date": item(ident["date_of_birth"]),
            "name_eng": item(ident["full_name_en"]),
            "gender": item(ident["gender"][0].upper()),
            "issue_date": item(ident["idcard_issueDate"]),
            "rotate": {"value": self.rng.choice(("0", "0", "0", "90"))},
        }

    def _ocr_item(self, value: str) -> dict[str, Any]:
        # randint(20, 400), randint(20, 250), randint(80, 300), randint(18, 40) and
        # score(0.7, 1.0), as FastRandom draws them, inlined: five of these a submission
        draw = self.rng.random
        x = 20 + int(draw() * 381)
        y = 20 + int(draw() * 231)
        right = x + (80 + int(draw() * 221))
        bottom = y + (18 + int(draw() * 23))
        return {
            "value": value,
            "score": round2(0.7 + _OCR_SCORE_SPAN * draw()),
            "accepted": True,
            "coordinates": {
                "first": {"x": x, "y": y},
                "second": {"x": right, "y": y},
                "third": {"x": right, "y": bottom},
                "fourth": {"x": x, "y": bottom},
            },
        }

    def _images(self, sid: str, selfie: bool = True) -> dict[str, str]:
        base = f"{IMAGE_HOST}/{sid}"
        return {
            "idImage": f"{base}/id_front.jpg",
            "idBackImage": f"{base}/id_back.jpg",
            "selfieImage": f"{base}/selfie.jpg" if selfie else "",
            "addressImage": "",
        }

    def _additional(self) -> list[dict[str, str]]:
        job = self._locale("en_US").job()
        return [{"answer": "Occupation", "inputValue": job, "blockType": "text"}]


class _NoFaker:
    def __getitem__(self, locale: str) -> Any:
        raise LookupError(f"no Faker here: pool {locale} was not installed")


_NO_FAKER: Any = _NoFaker()
_OCR_SCORE_SPAN = 1.0 - 0.7  # score(0.7, 1.0)'s factor, computed as it computes it
_EN_US = ("en_US", 0)  # the locale of a nationality the mock has none for
# ``data``'s identity fields, in their order (the document's type and number come later)
_DATA_IDENTITY = tuple(k for k in IDENTITY_KEYS if k not in {"idType", "documentNumber"})
_data_identity = operator.itemgetter(*_DATA_IDENTITY)


@functools.lru_cache(maxsize=8192)  # the words of pooled names, asked again and again
def _email_word(word: str) -> str:
    """A name's word as an e-mail's local part has it: lower-case ASCII letters, digits
    and dots (the words are joined by dots)."""
    return "".join(c for c in word.lower() if c.isascii() and (c.isalnum() or c == "."))


def _id_salt(epoch: int, generation: int) -> int:
    digest = hashlib.blake2b(f"idv-mock ids {epoch}.{generation}".encode(), digest_size=16)
    return int.from_bytes(digest.digest(), "big")


# the vendor's age groups (webhooks.md "age_group"): upper age of each, in whole years
AGE_GROUPS = ((13, "minor"), (15, "early-teen"), (17, "teen"))


def age_group(birth_date: str, on: date) -> str:
    """The vendor's ``age_group`` of someone born on ``birth_date`` (YYYY-MM-DD), on the day
    ``on``; ``N/A`` (the vendor's sample value) when the date is not one."""
    try:
        born = date.fromisoformat(birth_date)
    except ValueError:
        return "N/A"
    age = on.year - born.year - ((on.month, on.day) < (born.month, born.day))
    if age > AGE_GROUPS[-1][0]:  # every seeded applicant: no loop
        return "adult"
    return next((name for upper, name in AGE_GROUPS if age <= upper), "adult")


def _years_later(day: date, years: int) -> date:
    if day.month == 2 and day.day == 29:
        day = day.replace(day=28)
    return day.replace(year=day.year + years)


def _ocr(ident: dict[str, str]) -> dict[str, str]:
    return {
        "birthDate": ident["date_of_birth"],
        "expireDate": ident["idcard_expireDate"],
        "issueDate": ident["idcard_issueDate"],
        "firstName": ident["first_name"],
        "lastName": ident["last_name"],
        "fullName": ident["full_name"],
        "identityNumber": ident["identityNumber"],
        "nationality": ident["nationality"],
        "gender": ident["gender"],
        "typeOfPermit": "",
    }


def not_screened() -> dict[str, Any]:
    return {
        "raw_data": {},
        "matches": [],
        "risk_level_summary": "Not Screened",
        "currentstatus": "Not Screened",
    }


def merge_into(base: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """``deep_merge`` done in ``base`` itself (a freshly built submission no one else
    holds), without copying it: the same keys in the same order."""
    for key, value in overrides.items():
        found = base.get(key)
        if isinstance(value, dict) and isinstance(found, dict):
            merge_into(found, value)
        else:
            base[key] = value
    return base


def deep_merge(base: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """``overrides`` over ``base``: objects merge key by key, everything else replaces."""
    merged = dict(base)
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged
