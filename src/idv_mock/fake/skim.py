"""What a seeded submission's index needs, drawn without building the submission.

Seeding 100k submissions is one random stream (the same bytes for a seed need it), so the
submissions cannot be built side by side from scratch. But most of a submission's draws
(OCR boxes, scores, attempts, signals) decide nothing a later submission or the store's
indexes look at: :func:`skim` draws only what they do (the identity, ids, e-mail, user id,
the custom field a duplicate check reads) and steps over the rest of the stream in one
call per stretch (``getrandbits`` of the stretch's 32-bit words: what those draws would
have consumed). Where it ends, the stream is where ``SubmissionFactory.build`` leaves it,
so each stretch of submissions can be built in full elsewhere (another process) from the
stream's state at its start (``backend/seed_split.py``). It must follow ``build``'s draws
one for one, and touch the Faker pools in ``build``'s order (a pool is filled on its
first use, from Faker's own stream): the split seeding checks the stream's state after
each stretch against the full build's, and the golden digests pin the bytes.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from idv_mock.fake.checks import IMAGE_HOST
from idv_mock.fake.factory import LOCALES

if TYPE_CHECKING:
    from idv_mock.fake.factory import SubmissionFactory

# 32-bit words of the stream each draw takes: ``random()`` (and so every pick, ``randint``,
# ``choice``, ``score``, ``digits``) two, ``hex(n)`` and ``uuid`` ``ceil(4 * n / 32)``
RANDOM = 2
HEX10, HEX20, HEX24, HEX32, UUID = 2, 3, 3, 4, 4
# build's draws between the submission id and the e-mail: the result, the KYC time's
# offset, the public IP (an octet's pick and three randints)
AFTER_ID = RANDOM * 2 + RANDOM * 4
# ``_data``: street, city, postcode and state picks, two plus codes (10 and 6 symbols),
# the floor; then (``_given_by_applicant``) the SSN (USA only) and the phone
ADDRESS = RANDOM * (4 + 10 + 6 + 1)
# after ``cf1``: the Korean stay (a foreigner registration card only), the OCR (five
# items of five draws and the rotation), the two scores, the placeholder applicant id
OCR_SCORES = RANDOM * (5 * 5 + 1 + 2) + HEX24
# each attempt: step 2's offset, the transaction id, five scores
ATTEMPT = RANDOM + HEX20 + RANDOM * 5
# after the attempts: age check (3), signals (3 scores, an age), liveness score, token id,
# pre-verification (request id, fraud score, connection type)
AFTER_ATTEMPTS = RANDOM * 3 + RANDOM * 4 + RANDOM + HEX32 + UUID + RANDOM * 2


class Skimmed(NamedTuple):
    """What the index and the later submissions need of one seeded submission; and its
    identity with the words its draws took (``build(ident=...)`` steps over them)."""

    ident: dict[str, str]
    ident_words: int
    submission_id: str
    created_at: str
    userid: str
    email: str
    selfie: str
    cf1: str


def skim(factory: SubmissionFactory, when: datetime, overrides: dict[str, Any]) -> Skimmed:
    """``factory.build(when, overrides, userid=overrides.get("userid"))``'s draws (the
    seeding's call), keeping only what :class:`Skimmed` holds, merged with ``overrides``
    as the creation path merges them."""
    rng = factory.rng
    skip = rng.getrandbits  # ``skip(32 * n)``: n words of the stream, in one C call
    given = overrides.get("data")
    given = given if isinstance(given, dict) else None
    ident = factory.identity(when, given)
    sid = factory.uuid()
    skip(32 * AFTER_ID)
    email = factory._email(ident)
    nat = ident["nationality"]
    fk = factory._locale(LOCALES.get(nat, ("en_US", 0))[0])
    # the pools ``_data`` and ``_given_by_applicant`` pick from, first used in this order
    _ = fk.street_address, fk.city, fk.postcode, fk.administrative_unit
    words = ADDRESS
    if nat == "USA":
        _ = factory._locale("en_US").ssn
        words += RANDOM
    _ = fk.phone_number
    skip(32 * (words + RANDOM))
    cf1 = f"CUST-{factory.digits(6)}"
    words = OCR_SCORES + (RANDOM if ident["idType"] == "foreign_registrator" else 0)
    skip(32 * words)
    userid = overrides.get("userid") or f"user_{factory.hex(10)}"  # as build draws it
    _ = factory._locale("en_US").job
    skip(32 * RANDOM)
    tries = rng.weighted((1, 2, 3), (6, 9, 10))
    skip(32 * (ATTEMPT * tries + AFTER_ATTEMPTS))
    image = overrides.get("image")
    selfie = image.get("selfieImage") if isinstance(image, dict) else None
    return Skimmed(
        ident,
        identity_words(ident, given),
        sid,
        factory._stamp_after(when, 0),
        overrides.get("userid", userid),  # merged as the creation path merges them
        overrides.get("email", email),
        f"{IMAGE_HOST}/{sid}/selfie.jpg" if selfie is None else selfie,
        cf1,
    )


def identity_words(ident: dict[str, str], given: dict[str, Any] | None) -> int:
    """The words ``SubmissionFactory.identity`` drew for ``ident`` (``given`` as it had it):
    the nationality and gender unless given, the two names, an English name for a name
    not in ASCII, the issue and birth days and the document type, the document number
    (a letter and eight digits), the identity number (three draws for KOR and USA)."""
    told = {k: v for k, v in given.items() if isinstance(v, str)} if given else {}
    draws = 2 + 3 + 2
    draws += (0 if told.get("nationality") else 1) + (0 if told.get("gender") else 1)
    draws += 0 if ident["full_name"].isascii() else 2
    draws += 3 if ident["nationality"] in ("KOR", "USA") else 1
    return RANDOM * draws
