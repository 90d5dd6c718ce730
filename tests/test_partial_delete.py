"""DELETE /submission/partial (api-v3.md 4.4, 7.3; gaps.md field mapping and triggers)."""

from __future__ import annotations

from typing import Any
from unittest.mock import ANY

import orjson
import pytest
from starlette.testclient import TestClient

from conftest import assert_refused, some_submission
from idv_mock import Service

URL = "/v3/submission/partial"
ADMIN = "admin@example.com"
Params = dict[str, str] | list[tuple[str, str]]

# a made-up person no seeded submission shares, for the duplicate checks of rule 7
IDENTITY = {"full_name": "Zelda Quarrington", "date_of_birth": "1990-02-03", "nationality": "GBR"}
ID_NUMBER = {"identityNumber": "ZQ-77001122"}
CUSTOM = {"cf1": "CUST-ZQ-001"}
SELFIE = "https://storage.idv-mock.local/zq-original/selfie.jpg"


def copy(sub: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = orjson.loads(orjson.dumps(sub))
    return result


def stored(service: Service, sid: str) -> dict[str, Any]:
    return copy(service.stored_submission("default", sid))


def delete_ok(client: TestClient, sid: str, fields: str, data_fields: str | None = None) -> None:
    params = {"submission_id": sid, "fields": fields}
    if data_fields is not None:
        params["data_fields"] = data_fields
    r = client.delete(URL, params=params)
    assert r.status_code == 200, r.text
    assert r.json() == {
        "message": "success",
        "content": f"Submission {sid} fields deleted: {fields}",
        "statusCode": 200,
    }


def refused(client: TestClient, service: Service, params: Params, **kw: Any) -> str:
    """Send a refused call; check status, body shape and unchanged state; return the message."""
    r = assert_refused(
        lambda: client.request("DELETE", URL, params=params, **kw),
        400,
        {"message": ANY, "statusCode": 400},
        service=service,
    )
    message: str = r.json()["message"]
    return message


def json_body(doc: dict[str, Any]) -> dict[str, Any]:
    return {"content": orjson.dumps(doc), "headers": {"content-type": "application/json"}}


def sid_of(service: Service, index: int = 0) -> str:
    sid: str = some_submission(service, index)["submission_id"]
    return sid


# --- success and field mapping --------------------------------------------------------------


@pytest.mark.parametrize("name", ["submission_id", "submissionId"])
def test_success_body_with_either_id_name(client: TestClient, service: Service, name: str) -> None:
    sid = sid_of(service)
    r = client.delete(URL, params={name: sid, "fields": "email"})
    assert r.status_code == 200
    assert r.json() == {
        "message": "success",
        "content": f"Submission {sid} fields deleted: email",
        "statusCode": 200,
    }
    assert "email" not in stored(service, sid)


def test_success_content_repeats_fields_as_given(client: TestClient, service: Service) -> None:
    sid = sid_of(service)
    delete_ok(client, sid, "userid, email,applicant_id")
    assert not {"userid", "email", "applicant_id"} & set(stored(service, sid))


def test_admin_name_is_accepted(client: TestClient, service: Service) -> None:
    sid = sid_of(service)
    r = client.delete(URL, params={"submission_id": sid, "fields": "ocr", "admin_name": ADMIN})
    assert r.status_code == 200
    assert r.json() == {
        "message": "success",
        "content": f"Submission {sid} fields deleted: ocr",
        "statusCode": 200,
    }


@pytest.mark.parametrize(
    ("field", "key"),
    [
        ("OCR_raw", "OCR_raw"),
        ("ocr", "ocr"),
        ("review", "review"),
        ("applicant_id", "applicant_id"),
        ("email", "email"),
        ("userid", "userid"),
        ("additional_list", "additional_list"),
        ("duplicated_information", "duplicated_information"),
        ("custom_duplicated_information", "custom_duplicated_information"),
        ("injection_action", "Injection_action"),
    ],
)
def test_plain_field_removes_only_its_key(
    client: TestClient, service: Service, field: str, key: str
) -> None:
    # rules 5: every other item stays exactly as it was
    sid = sid_of(service)
    before = stored(service, sid)
    assert key in before
    delete_ok(client, sid, field)
    assert stored(service, sid) == {k: v for k, v in before.items() if k != key}


def test_id_image_removes_front_and_back_images_only(client: TestClient, service: Service) -> None:
    sid = sid_of(service)
    before = stored(service, sid)
    delete_ok(client, sid, "id_image")
    after = stored(service, sid)
    assert after["image"] == {
        k: v for k, v in before["image"].items() if k not in ("idImage", "idBackImage")
    }
    assert after["image"]["selfieImage"] == before["image"]["selfieImage"]
    assert {k: v for k, v in after.items() if k != "image"} == {
        k: v for k, v in before.items() if k != "image"
    }


def test_selfie_image_removes_image_and_every_attempt_selfie(
    client: TestClient, service: Service
) -> None:
    sid = sid_of(service)
    before = stored(service, sid)
    assert any("selfieImage" in a for a in before["kyc"]["attempts"])
    delete_ok(client, sid, "selfie_image")
    after = stored(service, sid)
    assert after["image"] == {k: v for k, v in before["image"].items() if k != "selfieImage"}
    assert after["kyc"]["attempts"] == [
        {k: v for k, v in a.items() if k != "selfieImage"} for a in before["kyc"]["attempts"]
    ]
    assert {k: v for k, v in after["kyc"].items() if k != "attempts"} == {
        k: v for k, v in before["kyc"].items() if k != "attempts"
    }
    assert {k: v for k, v in after.items() if k not in ("image", "kyc")} == {
        k: v for k, v in before.items() if k not in ("image", "kyc")
    }


def test_deleted_parts_are_absent_from_reads(client: TestClient, service: Service) -> None:
    sid = sid_of(service)
    before = stored(service, sid)
    delete_ok(client, sid, "email,OCR_raw")
    r = client.get("/v3/submission", params={"submission_id": sid})
    assert r.status_code == 200
    (item,) = r.json()["Items"]
    assert "email" not in item
    assert "OCR_raw" not in item
    assert item["data"] == before["data"]


# --- the rules of 4.4 ----------------------------------------------------------------------


def test_rule1_data_fields_without_data_is_refused(client: TestClient, service: Service) -> None:
    params = {"submission_id": sid_of(service), "fields": "email", "data_fields": "gender"}
    message = refused(client, service, params)
    assert message == "data_fields parameter is not allowed when fields does not include data"


def test_rule2_data_without_data_fields_deletes_all_sub_data(
    client: TestClient, service: Service
) -> None:
    sid = sid_of(service)
    before = stored(service, sid)
    assert before["data"]
    delete_ok(client, sid, "data")
    after = stored(service, sid)
    assert after.get("data", {}) == {}
    assert {k: v for k, v in after.items() if k != "data"} == {
        k: v for k, v in before.items() if k != "data"
    }


def test_rule3_data_fields_deletes_only_named_sub_fields(
    client: TestClient, service: Service
) -> None:
    sid = sid_of(service)
    before = stored(service, sid)
    delete_ok(client, sid, "data", "gender,address_city,cf1")
    after = stored(service, sid)
    gone = ("gender", "address_city", "cf1")
    assert after["data"] == {k: v for k, v in before["data"].items() if k not in gone}
    assert {k: v for k, v in after.items() if k != "data"} == {
        k: v for k, v in before.items() if k != "data"
    }


@pytest.mark.parametrize("name", ["name", "full_name"])
def test_rule4_name_and_full_name_delete_the_same_field(
    client: TestClient, service: Service, name: str
) -> None:
    sid = sid_of(service)
    before = stored(service, sid)
    assert before["data"]["full_name"]
    delete_ok(client, sid, "data", name)
    assert stored(service, sid)["data"] == {
        k: v for k, v in before["data"].items() if k != "full_name"
    }


def test_rule5_items_not_named_stay(client: TestClient, service: Service) -> None:
    sid = sid_of(service)
    before = stored(service, sid)
    delete_ok(client, sid, "review,additional_list")
    after = stored(service, sid)
    assert after == {k: v for k, v in before.items() if k not in ("review", "additional_list")}


def test_rule6_deleted_parts_stay_deleted(client: TestClient, service: Service) -> None:
    sub = copy(some_submission(service))
    sid = sub["submission_id"]
    delete_ok(client, sid, "email,data", "documentNumber")
    delete_ok(client, sid, "ocr")
    after = stored(service, sid)
    assert "email" not in after
    assert "documentNumber" not in after["data"]
    r = client.get("/v3/submission", params={"email": sub["email"]})
    assert r.status_code == 200
    assert sid not in [item["submission_id"] for item in r.json()["Items"]]


# --- rule 7: deleted duplicate-check targets end the checks ---------------------------------


def original(service: Service) -> str:
    data = {**IDENTITY, **ID_NUMBER, **CUSTOM}
    sub = service.create_submission("default", {"data": data, "image": {"selfieImage": SELFIE}})
    sid: str = sub["submission_id"]
    return sid


SAME_IDENTITY = {"data": IDENTITY}
SAME_ID_NUMBER = {"data": ID_NUMBER}
SAME_SELFIE = {"image": {"selfieImage": SELFIE}}
RULE7_CASES = [
    pytest.param("data", "identityNumber", SAME_ID_NUMBER, "duplicated_users", id="identityNumber"),
    pytest.param("data", "full_name", SAME_IDENTITY, "duplicated_users", id="full_name"),
    pytest.param("data", "name", SAME_IDENTITY, "duplicated_users", id="name"),
    pytest.param("data", "date_of_birth", SAME_IDENTITY, "duplicated_users", id="date_of_birth"),
    pytest.param("data", "nationality", SAME_IDENTITY, "duplicated_users", id="nationality"),
    pytest.param("data", None, SAME_IDENTITY, "duplicated_users", id="data-identity"),
    pytest.param("data", None, SAME_ID_NUMBER, "duplicated_users", id="data-idnumber"),
    pytest.param("selfie_image", None, SAME_SELFIE, "duplicated_selfie_users", id="selfie"),
]


@pytest.mark.parametrize(("fields", "data_fields", "newcomer", "listed_in"), RULE7_CASES)
def test_rule7_control_without_delete_lists_the_original(
    service: Service, fields: str, data_fields: str | None, newcomer: Any, listed_in: str
) -> None:
    sid = original(service)
    assert sid in service.create_submission("default", newcomer)[listed_in]


@pytest.mark.parametrize(("fields", "data_fields", "newcomer", "listed_in"), RULE7_CASES)
def test_rule7_deleted_target_is_no_longer_listed(
    client: TestClient,
    service: Service,
    fields: str,
    data_fields: str | None,
    newcomer: Any,
    listed_in: str,
) -> None:
    sid = original(service)
    delete_ok(client, sid, fields, data_fields)
    new = service.create_submission("default", newcomer)
    assert sid not in new[listed_in]


def test_rule7_control_custom_field_is_checked(service: Service) -> None:
    original(service)
    assert (
        service.create_submission("default", {"data": CUSTOM})["custom_duplicated_information"]
        == "cf1"
    )


def test_rule7_deleted_custom_field_is_no_longer_checked(
    client: TestClient, service: Service
) -> None:
    sid = original(service)
    delete_ok(client, sid, "data", "cf1")
    patch(client, sid, {"memo": "cf1 removed on request"})
    new = service.create_submission("default", {"data": CUSTOM})
    assert new["custom_duplicated_information"] == ""


@pytest.mark.parametrize(
    ("fields", "data_fields"),
    [("email", None), ("id_image", None), ("data", "gender"), ("data", "address_city")],
)
def test_rule7_deleting_a_non_target_keeps_the_checks(
    client: TestClient, service: Service, fields: str, data_fields: str | None
) -> None:
    sid = original(service)
    delete_ok(client, sid, fields, data_fields)
    assert sid in service.create_submission("default", SAME_IDENTITY)["duplicated_users"]
    assert sid in service.create_submission("default", SAME_SELFIE)["duplicated_selfie_users"]


def patch(client: TestClient, sid: str, data: dict[str, str]) -> None:
    r = client.patch("/v3/submission", json={"submissionId": sid, "admin": ADMIN, "data": data})
    assert r.status_code == 200, r.text
    assert r.json() == {"message": "success to edit.", "statusCode": 200}


def test_rule7_control_patch_reindexes_an_undeleted_submission(
    client: TestClient, service: Service
) -> None:
    sid = original(service)
    patch(client, sid, {"fullName": "Yorick Vantablack"})
    new = service.create_submission(
        "default", {"data": {**IDENTITY, "full_name": "Yorick Vantablack"}}
    )
    assert sid in new["duplicated_users"]


@pytest.mark.parametrize(
    ("fields", "data_fields", "readd", "newcomer"),
    [
        ("data", "full_name", {"fullName": IDENTITY["full_name"]}, SAME_IDENTITY),
        ("data", "name", {"fullName": IDENTITY["full_name"]}, SAME_IDENTITY),
        ("data", "identityNumber", ID_NUMBER, SAME_ID_NUMBER),
        (
            "data",
            None,
            {
                "fullName": IDENTITY["full_name"],
                "birthDate": IDENTITY["date_of_birth"],
                "nationality": IDENTITY["nationality"],
                **ID_NUMBER,
            },
            {"data": {**IDENTITY, **ID_NUMBER}},
        ),
    ],
    ids=["full_name", "name", "identityNumber", "all-data"],
)
def test_rule7_patch_readding_data_does_not_restore_the_check(
    client: TestClient,
    service: Service,
    fields: str,
    data_fields: str | None,
    readd: dict[str, str],
    newcomer: dict[str, Any],
) -> None:
    sid = original(service)
    delete_ok(client, sid, fields, data_fields)
    patch(client, sid, readd)
    after = stored(service, sid)["data"]
    assert after["full_name"] == IDENTITY["full_name"]
    new = service.create_submission("default", newcomer)
    assert sid not in new["duplicated_users"]


# --- errors of 7.3 -------------------------------------------------------------------------


def test_missing_submission_id_is_refused(client: TestClient, service: Service) -> None:
    assert refused(client, service, {"fields": "email"}) == "submission_id is required"


def test_absent_fields_is_refused(client: TestClient, service: Service) -> None:
    message = refused(client, service, {"submission_id": sid_of(service)})
    assert message == "fields parameter is required and cannot be empty"


@pytest.mark.parametrize("fields", ["", ",", " , ,", "   ", ",,,"])
def test_empty_fields_is_refused(client: TestClient, service: Service, fields: str) -> None:
    message = refused(client, service, {"submission_id": sid_of(service), "fields": fields})
    assert message == "fields cannot be empty"


def test_fields_twice_is_refused(client: TestClient, service: Service) -> None:
    params = [("submission_id", sid_of(service)), ("fields", "email"), ("fields", "userid")]
    assert refused(client, service, params) == "fields must be a string"


def test_data_fields_twice_is_refused(client: TestClient, service: Service) -> None:
    params = [
        ("submission_id", sid_of(service)),
        ("fields", "data"),
        ("data_fields", "gender"),
        ("data_fields", "cf1"),
    ]
    assert refused(client, service, params) == "data_fields must be a string"


NON_STRINGS = [
    pytest.param(["email"], id="list"),
    pytest.param(5, id="number"),
    pytest.param(True, id="bool"),
    pytest.param({"email": True}, id="object"),
    pytest.param(None, id="null"),
]


@pytest.mark.parametrize("value", NON_STRINGS)
def test_json_body_non_string_fields_is_refused(
    client: TestClient, service: Service, value: Any
) -> None:
    params = {"submission_id": sid_of(service)}
    message = refused(client, service, params, **json_body({"fields": value}))
    assert message == "fields parameter is not in string format"


@pytest.mark.parametrize(
    "value",
    [
        pytest.param(["gender"], id="list"),
        pytest.param(5, id="number"),
        pytest.param(False, id="bool"),
        pytest.param({"gender": True}, id="object"),
        pytest.param(None, id="null"),
    ],
)
def test_json_body_non_string_data_fields_is_refused(
    client: TestClient, service: Service, value: Any
) -> None:
    params = {"submission_id": sid_of(service)}
    body = json_body({"fields": "data", "data_fields": value})
    assert (
        refused(client, service, params, **body) == "data_fields parameter is not in string format"
    )


def test_json_body_string_parameters_are_accepted(client: TestClient, service: Service) -> None:
    sid = sid_of(service)
    before = stored(service, sid)
    body = json_body({"fields": "data", "data_fields": "gender"})
    r = client.request("DELETE", URL, params={"submission_id": sid}, **body)
    assert r.status_code == 200
    assert r.json() == {
        "message": "success",
        "content": f"Submission {sid} fields deleted: data",
        "statusCode": 200,
    }
    assert stored(service, sid)["data"] == {
        k: v for k, v in before["data"].items() if k != "gender"
    }


def test_json_body_may_carry_the_submission_id(client: TestClient, service: Service) -> None:
    sid = sid_of(service)
    r = client.request("DELETE", URL, **json_body({"submission_id": sid, "fields": "email"}))
    assert r.status_code == 200
    assert r.json() == {
        "message": "success",
        "content": f"Submission {sid} fields deleted: email",
        "statusCode": 200,
    }
    assert "email" not in stored(service, sid)


@pytest.mark.parametrize(
    ("fields", "listed"),
    [
        ("foo,bar", "foo, bar"),
        ("zz,aa", "zz, aa"),
        ("email,ocr_raw,nope", "ocr_raw, nope"),
        ("ocr_raw", "ocr_raw"),
        ("Email,data", "Email"),
        ("injection_Action", "injection_Action"),
    ],
)
def test_unknown_fields_are_listed_in_order(
    client: TestClient, service: Service, fields: str, listed: str
) -> None:
    message = refused(client, service, {"submission_id": sid_of(service), "fields": fields})
    assert message == f"invalid fields found in fields: {listed}"


@pytest.mark.parametrize(
    ("data_fields", "listed"),
    [
        ("nick,zip", "nick, zip"),
        ("gender,zip,Full_name", "zip, Full_name"),
        ("typeOfPermit", "typeOfPermit"),
    ],
)
def test_unknown_data_fields_are_listed_in_order(
    client: TestClient, service: Service, data_fields: str, listed: str
) -> None:
    params = {"submission_id": sid_of(service), "fields": "data", "data_fields": data_fields}
    assert refused(client, service, params) == f"invalid fields found in data_fields: {listed}"


@pytest.mark.parametrize("fields", ["email,,userid", ",email", "ema il", "data,first name"])
def test_bad_fields_format_is_refused(client: TestClient, service: Service, fields: str) -> None:
    message = refused(client, service, {"submission_id": sid_of(service), "fields": fields})
    prefix = "invalid format for fields: "
    assert message.startswith(prefix)
    assert len(message) > len(prefix)


@pytest.mark.parametrize("data_fields", ["gender,,cf1", "cf1,", "first name", "gen der,cf1"])
def test_bad_data_fields_format_is_refused(
    client: TestClient, service: Service, data_fields: str
) -> None:
    params = {"submission_id": sid_of(service), "fields": "data", "data_fields": data_fields}
    message = refused(client, service, params)
    prefix = "invalid format for data_fields: "
    assert message.startswith(prefix)
    assert len(message) > len(prefix)


def test_wrong_key_is_refused(raw_client: TestClient, service: Service) -> None:
    params = {"submission_id": sid_of(service), "fields": "email"}
    message = refused(raw_client, service, params, headers={"x-api-key": "wrong-key"})
    assert message == "invalid API key for this project"


def test_missing_key_is_refused(raw_client: TestClient, service: Service) -> None:
    params = {"submission_id": sid_of(service), "fields": "email"}
    assert refused(raw_client, service, params) == "not Exist Project Data"


def test_unknown_submission_is_refused(client: TestClient, service: Service) -> None:
    params = {"submission_id": "no-such-id", "fields": "email"}
    assert refused(client, service, params) == "not Exist Submission Data"


def test_deleted_submission_is_refused(client: TestClient, service: Service) -> None:
    sid = sid_of(service)
    assert client.delete("/v3/submission", params={"submission_id": sid}).status_code == 200
    params = {"submission_id": sid, "fields": "email"}
    assert refused(client, service, params) == "not Exist Submission Data"


def test_key_of_another_project_finds_no_submission(
    raw_client: TestClient, service: Service
) -> None:
    service.create_project({"project_id": "other", "api_key": "other-key", "admins": ["a@b.co"]})
    params = {"submission_id": sid_of(service), "fields": "email"}
    message = refused(raw_client, service, params, headers={"x-api-key": "other-key"})
    assert message == "not Exist Submission Data"
