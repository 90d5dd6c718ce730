"""PATCH /v3/submission: every message of api-v3.md 7.1, gaps.md's check order, success."""

from __future__ import annotations

import base64
import re
from typing import Any
from urllib.parse import quote

import pytest
from starlette.testclient import TestClient

from conftest import ADMIN, assert_refused, some_submission
from idv_mock import Service
from idv_mock.ground import crypto

PATH = "/v3/submission"
SUCCESS = {"message": "success to edit.", "statusCode": 200}
TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2}-\d{3}$")
PARSE_ERROR = {
    "errorCode": "parse_error",
    "message": "data parsing error. please check input data.",
}
INVALID_GENDER = {
    "errorCode": "invalid_gender",
    "message": "Invalid gender. Please check the gender.",
}
INVALID_ADMIN = {"errorCode": "invalid_admin", "message": "Invalid admin"}
UNKNOWN_SUBMISSION = {
    "errorCode": "invalid_submissionId",
    "message": "Cannot find submission.",
}
DECRYPTION_FAILED = {
    "errorCode": "decryption_failed",
    "message": "Decryption is Failed. Please check the api-key.",
}


# --- helpers ---------------------------------------------------------------------------------


def body_for(sid: str, data: Any, admin: str = ADMIN) -> dict[str, Any]:
    return {"submissionId": sid, "admin": admin, "data": data}


def sid_of(service: Service, index: int = 0) -> str:
    return str(some_submission(service, index)["submission_id"])


def read(client: TestClient, sid: str) -> dict[str, Any]:
    r = client.get(PATH, params={"submission_id": sid})
    assert r.status_code == 200
    items = r.json()["Items"]
    assert len(items) == 1
    item: dict[str, Any] = items[0]
    return item


def refuse_json(client: TestClient, service: Service, body: Any, code: str, message: str) -> None:
    assert_refused(
        lambda: client.patch(PATH, json=body),
        400,
        {"errorCode": code, "message": message},
        service=service,
    )


@pytest.fixture
def sec(service: Service) -> str:
    """A Secure Data Transfer project "sec" with one submission; returns its id."""
    service.create_project(
        {
            "project_id": "sec",
            "api_key": "sec-key",
            "admins": ["admin@example.com"],
            "options": {"secure_transfer": True},
        }
    )
    service.create_submission("sec", {"submission_id": "sec-sub-1"})
    return "sec-sub-1"


def tamper_last_block(ciphertext: str) -> str:
    raw = bytearray(base64.b64decode(ciphertext))
    raw[-1] ^= 0x5A
    raw[-2] ^= 0xA5
    return base64.b64encode(bytes(raw)).decode("ascii")


# --- authentication ----------------------------------------------------------------------------


def test_missing_api_key_header_is_missing_api_key(
    raw_client: TestClient, service: Service
) -> None:
    body = body_for(sid_of(service), {"fullName": "X"})
    assert_refused(
        lambda: raw_client.patch(PATH, json=body),
        400,
        {"errorCode": "missing_api_key", "message": "API-Key is required."},
        service=service,
    )


def test_empty_api_key_header_is_missing_project(client: TestClient, service: Service) -> None:
    body = body_for(sid_of(service), {"fullName": "X"})
    assert_refused(
        lambda: client.patch(PATH, json=body, headers={"x-api-key": ""}),
        400,
        {"errorCode": "missing_project", "message": "projectId or x-api-key is required."},
        service=service,
    )


def test_wrong_api_key_is_invalid_project(client: TestClient, service: Service) -> None:
    body = body_for(sid_of(service), {"fullName": "X"})
    assert_refused(
        lambda: client.patch(PATH, json=body, headers={"x-api-key": "no-such-key"}),
        400,
        {"errorCode": "invalid_project", "message": "The project is not found."},
        service=service,
    )


def test_key_is_checked_before_the_body(client: TestClient, service: Service) -> None:
    assert_refused(
        lambda: client.patch(PATH, content=b"{not json", headers={"x-api-key": "no-such-key"}),
        400,
        {"errorCode": "invalid_project", "message": "The project is not found."},
        service=service,
    )


def test_missing_key_is_checked_before_the_body(raw_client: TestClient, service: Service) -> None:
    assert_refused(
        lambda: raw_client.patch(PATH, content=b"{not json"),
        400,
        {"errorCode": "missing_api_key", "message": "API-Key is required."},
        service=service,
    )


def test_key_of_another_project_cannot_edit_default_submissions(
    client: TestClient, service: Service
) -> None:
    service.create_project(
        {"project_id": "other", "api_key": "other-key", "admins": ["admin@example.com"]}
    )
    body = body_for(sid_of(service), {"fullName": "Intruder"})
    assert_refused(
        lambda: client.patch(PATH, json=body, headers={"x-api-key": "other-key"}),
        400,
        UNKNOWN_SUBMISSION,
        service=service,
    )


# --- body parsing ------------------------------------------------------------------------------


def test_non_json_body_is_parse_error(client: TestClient, service: Service) -> None:
    assert_refused(
        lambda: client.patch(
            PATH, content=b"submissionId=x", headers={"content-type": "application/json"}
        ),
        400,
        PARSE_ERROR,
        service=service,
    )


def test_json_array_body_is_parse_error(client: TestClient, service: Service) -> None:
    refuse_json(
        client,
        service,
        [body_for(sid_of(service), {"fullName": "X"})],
        "parse_error",
        "data parsing error. please check input data.",
    )


def test_unknown_property_in_data_is_parse_error(client: TestClient, service: Service) -> None:
    refuse_json(
        client,
        service,
        body_for(sid_of(service), {"favouriteColour": "blue"}),
        "parse_error",
        "data parsing error. please check input data.",
    )


def test_unknown_property_next_to_known_ones_is_parse_error(
    client: TestClient, service: Service
) -> None:
    refuse_json(
        client,
        service,
        body_for(sid_of(service), {"fullName": "X", "full_name": "X"}),
        "parse_error",
        "data parsing error. please check input data.",
    )


@pytest.mark.parametrize("value", [5, None, True, ["male"], {"v": "male"}])
def test_non_string_value_is_parse_error(
    client: TestClient, service: Service, value: object
) -> None:
    refuse_json(
        client,
        service,
        body_for(sid_of(service), {"gender": value}),
        "parse_error",
        "data parsing error. please check input data.",
    )


# --- required members --------------------------------------------------------------------------


def test_missing_submission_id(client: TestClient, service: Service) -> None:
    refuse_json(
        client,
        service,
        {"admin": ADMIN, "data": {"fullName": "X"}},
        "missing_submissionId",
        "submissionId is required.",
    )


def test_missing_admin(client: TestClient, service: Service) -> None:
    refuse_json(
        client,
        service,
        {"submissionId": sid_of(service), "data": {"fullName": "X"}},
        "missing_admin",
        "admin is required.",
    )


def test_missing_data_is_nothing_to_modify(client: TestClient, service: Service) -> None:
    refuse_json(
        client,
        service,
        {"submissionId": sid_of(service), "admin": ADMIN},
        "nothing_to_modify",
        "At least one property to modify is required.",
    )


def test_empty_data_is_nothing_to_modify(client: TestClient, service: Service) -> None:
    refuse_json(
        client,
        service,
        body_for(sid_of(service), {}),
        "nothing_to_modify",
        "At least one property to modify is required.",
    )


# --- property values ---------------------------------------------------------------------------

INVALID_VALUES = [
    ("idType", "national_id", "invalid_idType", "Invalid idType. Please check the idType."),
    (
        "kycStatus",
        "done",
        "invalid_kycStatus",
        "Invalid kyc status. Please check the kycStatus.",
    ),
    ("gender", "M", "invalid_gender", "Invalid gender. Please check the gender."),
    (
        "issuingCountry",
        "XXX",
        "invalid_issuingCountry",
        "Invalid issuingCountry. Please enter a valid ISO 3166-1 alpha-3.",
    ),
    (
        "issuingCountry",
        "kr",
        "invalid_issuingCountry",
        "Invalid issuingCountry. Please enter a valid ISO 3166-1 alpha-3.",
    ),
    (
        "nationality",
        "XXX",
        "invalid_nationality",
        "Invalid nationality. Please enter a valid ISO 3166-1 alpha-3.",
    ),
    (
        "nationality",
        "KR",
        "invalid_nationality",
        "Invalid nationality. Please enter a valid ISO 3166-1 alpha-3.",
    ),
    (
        "birthDate",
        "1999/01/01",
        "invalid_birthDate",
        "Invalid birthDate. Please enter the date as YYYY-MM-DD",
    ),
    (
        "issueDate",
        "2020-13-01",
        "invalid_issueDate",
        "Invalid issueDate. Please enter the date as YYYY-MM-DD",
    ),
    (
        "expireDate",
        "2030-1-1",
        "invalid_expireDate",
        "Invalid expireDate. Please enter the date as YYYY-MM-DD",
    ),
]


@pytest.mark.parametrize(
    ("prop", "value", "code", "message"),
    INVALID_VALUES,
    ids=[f"{p}={v}" for p, v, _, _ in INVALID_VALUES],
)
def test_invalid_value_answers_its_message(
    client: TestClient, service: Service, prop: str, value: str, code: str, message: str
) -> None:
    refuse_json(client, service, body_for(sid_of(service), {prop: value}), code, message)


def test_date_with_trailing_newline_is_invalid_birth_date(
    client: TestClient, service: Service
) -> None:
    refuse_json(
        client,
        service,
        body_for(sid_of(service), {"birthDate": "1999-01-01\n"}),
        "invalid_birthDate",
        "Invalid birthDate. Please enter the date as YYYY-MM-DD",
    )


def test_birth_date_is_checked_for_format_only(client: TestClient, service: Service) -> None:
    sid = sid_of(service)
    r = client.patch(PATH, json=body_for(sid, {"birthDate": "1999-11-31"}))
    assert r.status_code == 200
    assert r.json() == SUCCESS
    assert read(client, sid)["data"]["date_of_birth"] == "1999-11-31"


# --- order of checks (gaps.md) -----------------------------------------------------------------


def test_submission_id_is_checked_before_admin(client: TestClient, service: Service) -> None:
    refuse_json(client, service, {"data": {}}, "missing_submissionId", "submissionId is required.")


def test_admin_is_checked_before_data(client: TestClient, service: Service) -> None:
    refuse_json(
        client, service, {"submissionId": sid_of(service)}, "missing_admin", "admin is required."
    )


def test_empty_data_is_checked_before_unknown_top_level_admin(
    client: TestClient, service: Service
) -> None:
    refuse_json(
        client,
        service,
        body_for("no-such-submission", {}, admin="nobody@example.com"),
        "nothing_to_modify",
        "At least one property to modify is required.",
    )


def test_unknown_property_is_checked_before_values(client: TestClient, service: Service) -> None:
    refuse_json(
        client,
        service,
        body_for(sid_of(service), {"gender": "M", "shoeSize": "42"}),
        "parse_error",
        "data parsing error. please check input data.",
    )


VALUE_ORDER = [
    ({"gender": "M", "idType": "national_id"}, "invalid_idType"),
    ({"nationality": "XXX", "issuingCountry": "XXX"}, "invalid_issuingCountry"),
    ({"birthDate": "bad", "gender": "M"}, "invalid_gender"),
    ({"nationality": "XXX", "birthDate": "bad"}, "invalid_birthDate"),
    ({"expireDate": "bad", "issueDate": "bad"}, "invalid_issueDate"),
    ({"nationality": "XXX", "expireDate": "bad"}, "invalid_expireDate"),
    ({"kycStatus": "done", "nationality": "XXX"}, "invalid_nationality"),
]
MESSAGES = {
    "invalid_idType": "Invalid idType. Please check the idType.",
    "invalid_issuingCountry": "Invalid issuingCountry. Please enter a valid ISO 3166-1 alpha-3.",
    "invalid_gender": "Invalid gender. Please check the gender.",
    "invalid_birthDate": "Invalid birthDate. Please enter the date as YYYY-MM-DD",
    "invalid_issueDate": "Invalid issueDate. Please enter the date as YYYY-MM-DD",
    "invalid_expireDate": "Invalid expireDate. Please enter the date as YYYY-MM-DD",
    "invalid_nationality": "Invalid nationality. Please enter a valid ISO 3166-1 alpha-3.",
}


@pytest.mark.parametrize(("data", "code"), VALUE_ORDER, ids=[c for _, c in VALUE_ORDER])
def test_values_are_checked_in_the_table_order(
    client: TestClient, service: Service, data: dict[str, str], code: str
) -> None:
    refuse_json(client, service, body_for(sid_of(service), data), code, MESSAGES[code])


def test_bad_value_is_checked_before_unregistered_admin(
    client: TestClient, service: Service
) -> None:
    body = body_for(sid_of(service), {"gender": "X"}, admin="nobody@example.com")
    assert_refused(lambda: client.patch(PATH, json=body), 400, INVALID_GENDER, service=service)


def test_unregistered_admin(client: TestClient, service: Service) -> None:
    body = body_for(sid_of(service), {"fullName": "X"}, admin="nobody@example.com")
    assert_refused(lambda: client.patch(PATH, json=body), 400, INVALID_ADMIN, service=service)


def test_unregistered_admin_is_checked_before_unknown_submission(
    client: TestClient, service: Service
) -> None:
    body = body_for("no-such-submission", {"fullName": "X"}, admin="nobody@example.com")
    assert_refused(lambda: client.patch(PATH, json=body), 400, INVALID_ADMIN, service=service)


def test_unknown_submission(client: TestClient, service: Service) -> None:
    body = body_for("no-such-submission", {"fullName": "X"})
    assert_refused(lambda: client.patch(PATH, json=body), 400, UNKNOWN_SUBMISSION, service=service)


# --- encrypted projects and fault-only ---------------------------------------------------------


def test_tampered_ciphertext_on_secure_project_is_decryption_failed(
    client: TestClient, service: Service, sec: str
) -> None:
    good = crypto.encrypt(body_for(sec, {"fullName": "X"}), "sec-key")
    bad = tamper_last_block(good)
    assert_refused(
        lambda: client.patch(
            PATH,
            content=f"data={quote(bad, safe='')}",
            headers={
                "x-api-key": "sec-key",
                "content-type": "application/x-www-form-urlencoded",
            },
        ),
        400,
        DECRYPTION_FAILED,
        service=service,
    )


# --- success -----------------------------------------------------------------------------------

EDITS = [
    ("idType", "passport", ("data", "idType")),
    ("issuingCountry", "KOR", ("data", "idcard_issuingCountry")),
    ("fullName", "Jane Q Public", ("data", "full_name")),
    ("firstName", "Jane", ("data", "first_name")),
    ("lastName", "Public", ("data", "last_name")),
    ("gender", "female", ("data", "gender")),
    ("birthDate", "2001-02-03", ("data", "date_of_birth")),
    ("nationality", "KOR", ("data", "nationality")),
    ("kycStatus", "rejected", ("kyc", "result")),
    ("issueDate", "2020-01-02", ("data", "idcard_issueDate")),
    ("expireDate", "2030-01-02", ("data", "idcard_expireDate")),
    ("identityNumber", "900101-1234567", ("data", "identityNumber")),
    ("documentNumber", "M12345678", ("data", "documentNumber")),
    ("serialNumber", "SN-0001", ("data", "serialNumber")),
]
STAMPS = {"updated_at", "updateHistory", "kyc_result_at", "pending_at"}
# ids derived from the name, birth date, gender and nationality follow them (docs/gaps.md)
PERSON = {"fullName", "firstName", "lastName", "gender", "birthDate", "nationality"}
PERSON_IDS = {"applicant_id", "duplicated_information"}
NAMES = {"full_name", "first_name", "last_name", "full_name_en"}  # they agree after a PATCH


def without(data: dict[str, Any], keys: set[str]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k not in keys}


@pytest.mark.parametrize(
    ("nationality", "data", "names"),
    [
        (
            "USA",
            {"fullName": "Jane Q Public"},
            ("Jane Q Public", "Jane Q", "Public", "Jane Q Public"),
        ),
        ("KOR", {"fullName": "홍 길동"}, ("홍 길동", "길동", "홍", "Hong Gildong")),
        ("USA", {"firstName": "Ann", "lastName": "Lee"}, ("Ann Lee", "Ann", "Lee", "Ann Lee")),
        ("KOR", {"firstName": "길동", "lastName": "홍"}, ("홍 길동", "길동", "홍", "Hong Gildong")),
        ("USA", {"fullName": "Cher"}, ("Cher", "Cher", "", "Cher")),
    ],
)
def test_names_derived_from_a_patched_name_agree_with_it(
    client: TestClient,
    service: Service,
    nationality: str,
    data: dict[str, str],
    names: tuple[str, str, str, str],
) -> None:
    """docs/gaps.md: after a PATCH of a name, full_name, first_name, last_name and
    full_name_en agree (the family name first for Korean, Japanese and Vietnamese)."""
    sid = sid_of(service)
    assert client.patch(PATH, json=body_for(sid, {"nationality": nationality})).status_code == 200
    assert client.patch(PATH, json=body_for(sid, data)).status_code == 200
    got = read(client, sid)["data"]
    assert (got["full_name"], got["first_name"], got["last_name"], got["full_name_en"]) == names


@pytest.mark.parametrize(("prop", "value", "target"), EDITS, ids=[p for p, _, _ in EDITS])
def test_property_lands_where_the_table_says(
    client: TestClient, service: Service, prop: str, value: str, target: tuple[str, str]
) -> None:
    sid = sid_of(service)
    before = read(client, sid)
    r = client.patch(PATH, json=body_for(sid, {prop: value}))
    assert r.status_code == 200
    assert r.json() == SUCCESS
    after = read(client, sid)
    top, key = target
    names = NAMES if prop in ("fullName", "firstName", "lastName") else set()
    assert without(after[top], names) == without({**before[top], key: value}, names)
    assert after[top][key] == value
    derived = PERSON_IDS if prop in PERSON else set()
    for name in set(before) | set(after):
        if name != top and name not in STAMPS | derived:
            assert after.get(name) == before.get(name), name


def test_success_sets_updated_at_and_update_history(client: TestClient, service: Service) -> None:
    sid = sid_of(service)
    before = read(client, sid)
    r = client.patch(PATH, json=body_for(sid, {"lastName": "Public"}))
    assert r.status_code == 200
    assert r.json() == SUCCESS
    after = read(client, sid)
    assert TIMESTAMP.match(after["updated_at"])
    assert after["updated_at"] != before["updated_at"]
    assert after["updateHistory"] == {"updateAdmin": ADMIN, "updateTime": after["updated_at"]}


def test_edit_never_moves_updated_at_backwards(client: TestClient, service: Service) -> None:
    sid = sid_of(service)
    before = read(client, sid)
    r = client.patch(PATH, json=body_for(sid, {"lastName": "Public"}))
    assert r.status_code == 200
    assert read(client, sid)["updated_at"] >= before["updated_at"]


def test_memo_sets_text_and_its_updated_at(client: TestClient, service: Service) -> None:
    sid = sid_of(service)
    r = client.patch(PATH, json=body_for(sid, {"memo": "called the applicant"}))
    assert r.status_code == 200
    assert r.json() == SUCCESS
    after = read(client, sid)
    assert after["memo"]["text"] == "called the applicant"
    assert TIMESTAMP.match(after["memo"]["updated_at"])
    assert after["memo"]["updated_at"] == after["updated_at"]


@pytest.mark.parametrize("status", ["pending", "approved", "rejected"])
def test_every_kyc_status_of_the_table_is_accepted(
    client: TestClient, service: Service, status: str
) -> None:
    sid = sid_of(service, 1)
    r = client.patch(PATH, json=body_for(sid, {"kycStatus": status}))
    assert r.status_code == 200
    assert r.json() == SUCCESS
    assert read(client, sid)["kyc"]["result"] == status


def test_several_properties_in_one_call(client: TestClient, service: Service) -> None:
    sid = sid_of(service, 2)
    data = {"firstName": "Ann", "lastName": "Lee", "nationality": "KOR", "memo": "m"}
    r = client.patch(PATH, json=body_for(sid, data))
    assert r.status_code == 200
    assert r.json() == SUCCESS
    after = read(client, sid)
    assert after["data"]["first_name"] == "Ann"
    assert after["data"]["last_name"] == "Lee"
    assert after["data"]["nationality"] == "KOR"
    assert after["memo"]["text"] == "m"


def test_success_touches_only_the_named_submission(client: TestClient, service: Service) -> None:
    sid, other = sid_of(service, 0), sid_of(service, 1)
    other_before = read(client, other)
    r = client.patch(PATH, json=body_for(sid, {"fullName": "Only Me"}))
    assert r.status_code == 200
    assert read(client, other) == other_before
