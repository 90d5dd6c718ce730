"""The schema files themselves, and Faker output against them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from idv_mock import Service, ServiceConfig, make_submission
from idv_mock.ground import schemas

FORBIDDEN = {
    "prefixItems",
    "unevaluatedProperties",
    "unevaluatedItems",
    "$dynamicRef",
    "$dynamicAnchor",
}


def walk(node: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield key, value
            yield from walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from walk(value)


@pytest.mark.parametrize("name", sorted(schemas.all_schemas()))
def test_schema_is_valid_2020_12(name: str) -> None:
    if name == "api.json":
        return
    Draft202012Validator.check_schema(schemas.load(name))


@pytest.mark.parametrize("name", sorted(schemas.all_schemas()))
def test_schema_uses_only_draft_07_compatible_keywords(name: str) -> None:
    assert not {key for key, _ in walk(schemas.load(name))} & FORBIDDEN


@pytest.mark.parametrize("name", sorted(schemas.all_schemas()))
def test_every_ref_resolves(name: str) -> None:
    registry: Registry[Any] = Registry().with_resources(
        (schemas.BASE_URI + n, Resource.from_contents(s)) for n, s in schemas.all_schemas().items()
    )
    resolver = registry.resolver(base_uri=schemas.BASE_URI + name)
    for key, value in walk(schemas.load(name)):
        if key == "$ref":
            assert resolver.lookup(value).contents is not None


def test_operation_index_names_existing_schemas() -> None:
    index = schemas.load("api.json")
    known = set(schemas.all_schemas())
    for op in index["operations"] + index["admin_operations"]:
        names = [op.get("query"), *op.get("body", [])]
        names += [n for listed in op["responses"].values() for n in listed]
        assert {n for n in names if n} <= known, op["path"]


@pytest.mark.parametrize("seed", range(12))
def test_seeded_submissions_validate(seed: int) -> None:
    service = Service(ServiceConfig(seed_count=25, random_seed=seed))
    for sub in service.project("default").store:
        assert schemas.errors("submission.json", sub) == []
    assert schemas.errors("submission.json", make_submission(seed=seed)) == []


def test_make_submission_is_deterministic_per_seed() -> None:
    assert make_submission(seed=3) == make_submission(seed=3)
    assert make_submission(seed=3) != make_submission(seed=4)


def test_make_submission_overrides_reach_dependent_parts() -> None:
    sub = make_submission(
        {"userid": "u1", "data": {"full_name": "Ann Lee", "date_of_birth": "1990-01-02"}}
    )
    assert sub["userid"] == "u1"
    assert sub["data"]["full_name"] == sub["ocr"]["fullName"] == "Ann Lee"
    assert sub["ocr"]["birthDate"] == sub["OCR_raw"]["birth_date"]["value"] == "1990-01-02"
    assert sub["kyc"]["attempts"][0]["verificationParams"]["birthDate"] == "1990-01-02"
    assert schemas.errors("submission.json", sub) == []


def test_make_submission_merges_nested_objects() -> None:
    base = make_submission(seed=1)
    sub = make_submission({"kyc": {"result": "rejected"}}, seed=1)
    assert sub["kyc"]["result"] == "rejected"
    assert sub["kyc"]["attempts"] == base["kyc"]["attempts"]


def test_submission_schema_refuses_a_bad_timestamp() -> None:
    sub = make_submission()
    sub["created_at"] = "2024-01-01T00:00:00Z"
    assert schemas.errors("submission.json", sub)
