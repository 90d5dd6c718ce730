"""The seeded bytes pinned (issue 37): seeding made cheaper must give the very same data.

Each case seeds (or creates through the control API's path) and digests every stored
submission's JSON in store order, plus the whole exported state (duplicate index keys
included). The digests were recorded from the code before seeding was sped up; they hold
for one Faker version (its providers' values feed the pools), so another version skips.
Record again only for a deliberate change of the data: ``python tests/test_seed_golden.py``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from importlib.metadata import version

import orjson
import pytest

from idv_mock import Service, ServiceConfig

BLOCK = 100  # submissions per digest: a failure says where the data first differs


def _digests(service: Service) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for pid in service.project_ids():
        blocks, digest = [], hashlib.sha256()
        for i, blob in enumerate(service.project(pid).store.all_json(), 1):
            digest.update(hashlib.sha256(blob).digest())
            if i % BLOCK == 0:
                blocks.append(digest.hexdigest()[:16])
        blocks.append(digest.hexdigest()[:16])
        out[pid] = blocks
    state = orjson.dumps(service.export_state())
    out["export_state"] = [hashlib.sha256(state).hexdigest()[:16]]
    return out


def _large() -> Service:
    return Service(ServiceConfig(seed_count=2_500))  # past PACK_FROM: packed


def _seed_seven() -> Service:
    return Service(ServiceConfig(seed_count=300, random_seed=7))


def _masked() -> Service:
    options = {
        "option_mask_documentNumber": True,
        "option_mask_idNumber": True,
        "webhook_url": "https://hooks.example.com/idv",
    }
    cfg = ServiceConfig(seed_count=200, random_seed=3, options=options, admins=("a@b.co",))
    return Service(cfg)


def _created() -> Service:
    """The control API's creation path, with the overrides the seeding mix and users give."""
    service = Service(ServiceConfig(seed_count=5, random_seed=11))
    service.create_project(
        {
            "project_id": "p",
            "api_key": "pk",
            "admins": ["x@y.co"],
            "options": {"option_mask_idNumber": True},
        }
    )
    overrides: list[dict[str, object]] = [
        {},
        {"data": {"full_name": "Kim Minjun", "nationality": "KOR", "gender": "male"}},
        {"userid": "user_fixed", "email": "same@example.com"},
        {"email": "same@example.com"},
        {"image": {"selfieImage": "https://storage.idv-mock.local/x/selfie.jpg"}},
        {"data": {"nationality": "ITA", "cf1": "CUST-000001"}},
        {"recognition_score": "50.00", "kyc": {"result": "rejected"}},
        {"data": {"nationality": "XYZ", "date_of_birth": "2011-02-03"}},
        {"data": {"first_name": "José", "last_name": "Núñez", "nationality": "ESP"}},
        {"data": {"full_name": "木村 京助", "nationality": "JPN"}},
    ]
    for pid in ("default", "p"):
        for given in overrides:
            service.create_submission(pid, given)
        for _ in range(20):
            service.create_submission(pid)
    return service


def _form() -> Service:
    """The hosted form's creations: nothing invented that only the link or applicant gives,
    the applicant's tries (none: no selfie either)."""
    service = Service(ServiceConfig(seed_count=3, random_seed=13))
    project = service.project("default")
    given: list[dict[str, object]] = [
        {"userid": "form_user", "email": "form@example.com"},
        {"data": {"full_name": "손 예준", "nationality": "KOR", "phoneNumber": "010-1234-5678"}},
        {"data": {"nationality": "VNM", "idType": "foreign_registrator"}},
    ]
    for tries in (0, 1, 2, 3):
        for overrides in given:
            service._create_checked(project, dict(overrides), invent=False, tries=tries)
    return service


CASES: dict[str, Callable[[], Service]] = {
    "seed0-2500": _large,
    "seed7-300": _seed_seven,
    "masked-200": _masked,
    "created": _created,
    "form": _form,
}

# Faker version -> case -> project id (or "export_state") -> block digests
GOLDEN: dict[str, dict[str, dict[str, list[str]]]] = {
    "40.63.0": {
        "seed0-2500": {
            "default": [
                "fddb16398d40cc4b",
                "dcd7e01cdcf5cb41",
                "1a42c3688a909b30",
                "0d29d5b27151b931",
                "fe430e00b7a3e5ef",
                "dd68eb4409655e65",
                "0ebd5c641e43ee67",
                "40df14ac6335fd4f",
                "05b63d036f2c1079",
                "d5414f29290e1a30",
                "1222e98439855343",
                "e16fd6a29d684b40",
                "d15737792c767672",
                "441f69d2021e8598",
                "7ddfbeb49d7fbca2",
                "ff01d343dc0c946a",
                "99d99399dbefc63d",
                "56ee057f5fe99fad",
                "769d9be9fe90f72e",
                "28d6fd19d510d61b",
                "70e55debfc0ee72c",
                "0d99c733c049751c",
                "9e6b5b010fa3aa0b",
                "7430703a6281f90f",
                "0d0ddcf5605a8611",
                "0d0ddcf5605a8611",
            ],
            "export_state": ["0e01dec3bf09148d"],
        },
        "seed7-300": {
            "default": [
                "01d7de36570f6f7c",
                "8e5f37a1128f7500",
                "e86fcb3e48a675d4",
                "e86fcb3e48a675d4",
            ],
            "export_state": ["97642fdd4c8b90f4"],
        },
        "masked-200": {
            "default": ["236897bde194a240", "c34eb903ad981d40", "c34eb903ad981d40"],
            "export_state": ["2ab6a2fe576bfa77"],
        },
        "created": {
            "default": ["b37832d7728ce2c8"],
            "p": ["1e88231fcca478a6"],
            "export_state": ["c70f03648ce72514"],
        },
        "form": {"default": ["269c375268f77f43"], "export_state": ["8324d8defff521db"]},
    }
}


@pytest.mark.parametrize("case", list(CASES))
def test_seeded_bytes_are_the_recorded_ones(case: str) -> None:
    faker = version("faker")
    if faker not in GOLDEN:
        pytest.skip(f"digests recorded for Faker {', '.join(GOLDEN)}, not {faker}")
    service = CASES[case]()
    try:
        assert _digests(service) == GOLDEN[faker][case]
    finally:
        service.close()


if __name__ == "__main__":  # print the digests of the current code, to record them
    print(repr({version("faker"): {case: _digests(make()) for case, make in CASES.items()}}))


def test_round2_is_round_to_two_places() -> None:
    """The seeded scores' rounding (``draws.round2``) gives ``round(x, 2)``'s float for
    every value: random ones over the ranges drawn, and those at and next to each tie."""
    import math
    import random

    from idv_mock.fake.draws import round2

    rng = random.Random(37)
    values = [rng.uniform(0, 100) for _ in range(300_000)]
    values += [rng.uniform(0, 1) for _ in range(100_000)]
    for n in range(0, 100_000, 7):
        tie = (n + 0.5) / 100
        values += [tie, math.nextafter(tie, 0), math.nextafter(tie, math.inf)]
    differ = [x for x in values if round2(x) != round(x, 2) or str(round2(x)) != str(round(x, 2))]
    assert differ == []
