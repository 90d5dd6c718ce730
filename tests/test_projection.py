"""Projection policies (api-v3.md 2.6, 3, 4.8, 7.6; gaps.md "Projection") and the hosted form.

The API side: create, list, read, delete, every 7.6 status and message, the 403 of a
missing or wrong key, encrypted bodies on a secure project, and per-project isolation.
The hosted-form side (issue 4): submissions arriving through the control API with an
encrypted token naming a policy are filtered in GET /submission but kept whole in the store.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from starlette.testclient import TestClient

from conformance import check_response
from conftest import API_KEY, assert_refused, snapshot
from idv_mock import Service, create_app
from idv_mock.ground import crypto, schemas

URL = "/v3/projection"
HOSTED = "/__admin/projects/default/hosted-submissions"
ADMIN_SUBMISSIONS = "/__admin/projects/default/submissions"
SEC_KEY = "sec-key"
OTHER_KEY = "other-key"
EXCLUDED = ["full_name", "gender", "cf1"]
BODY: dict[str, Any] = {"name": "hide_names", "mode": "exclude", "fields": EXCLUDED}
ITEM_KEYS = {"projection_id", "name", "mode", "fields", "created_at"}
INVALID_BODY = "Invalid request body: name, mode, fields"

Call = Callable[[], httpx.Response]


# --- helpers ---


def create(client: TestClient, **changes: Any) -> str:
    r = client.post(URL, json={**BODY, **changes})
    assert r.status_code == 200, r.text
    body = r.json()
    pid = body.get("projection_id")
    assert isinstance(pid, str) and pid
    assert body == {"message": "Create projection success", "projection_id": pid}
    return pid


def listed(client: TestClient) -> list[dict[str, Any]]:
    r = client.get(URL)
    assert r.status_code == 200, r.text
    body = r.json()
    assert set(body) == {"items", "message"}
    assert body["message"] == "Get projection list success"
    items: list[dict[str, Any]] = body["items"]
    return items


def refused(service: Service, call: Call, status: int, message: str) -> httpx.Response:
    """The call answers ``status`` with exactly ``{"message": message}`` and changes nothing."""
    return assert_refused(call, status, {"message": message}, service=service)


def schema_checked(service: Service, key: str) -> Iterator[TestClient]:
    with TestClient(create_app(service), headers={"x-api-key": key}) as c:
        c.event_hooks["response"] = [check_response]
        yield c


def token(claims: Any, key: str = API_KEY) -> str:
    return crypto.encrypt(claims, key)


def hosted(client: TestClient, claims: dict[str, Any], outcome: str = "approved") -> dict[str, Any]:
    r = client.post(HOSTED, json={"token": token(claims), "outcome": outcome})
    assert r.status_code == 201, r.text
    sub: dict[str, Any] = r.json()
    return sub


def read(client: TestClient, **params: str) -> list[dict[str, Any]]:
    r = client.get("/v3/submission", params=params)
    assert r.status_code == 200, r.text
    items: list[dict[str, Any]] = r.json()["Items"]
    return items


def stored(client: TestClient, sid: str) -> dict[str, Any]:
    r = client.get(f"{ADMIN_SUBMISSIONS}/{sid}")
    assert r.status_code == 200, r.text
    sub: dict[str, Any] = r.json()
    return sub


def without(data: dict[str, Any], hidden: list[str]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k not in hidden}


# EXCLUDED's values stand again in ocr (fullName, gender), review and OCR_raw (gender)
TWINS = {"ocr": ["fullName", "gender"], "review": ["fullName", "gender"], "OCR_raw": ["gender"]}


def filtered(sub: dict[str, Any], null: bool = False) -> dict[str, Any]:
    """What a read of a submission under the hide_names policy returns."""

    def hide(part: dict[str, Any], keys: list[str]) -> dict[str, Any]:
        present = [k for k in keys if k in part]
        return {**part, **dict.fromkeys(present)} if null else without(part, keys)

    out = {**sub, "data": hide(sub["data"], EXCLUDED)}
    for part, keys in TWINS.items():
        out[part] = without(sub[part], keys)  # the repeats are omitted in either style
    return out


# --- fixtures ---


@pytest.fixture
def sec_client(service: Service) -> Iterator[TestClient]:
    """A client of the "sec" project, which has Secure Data Transfer on."""
    service.create_project(
        {
            "project_id": "sec",
            "api_key": SEC_KEY,
            "admins": ["admin@example.com"],
            "options": {"secure_transfer": True},
        }
    )
    yield from schema_checked(service, SEC_KEY)


@pytest.fixture
def other_client(service: Service) -> Iterator[TestClient]:
    """A client of a second, plain project."""
    service.create_project(
        {"project_id": "other", "api_key": OTHER_KEY, "admins": ["admin@example.com"]}
    )
    yield from schema_checked(service, OTHER_KEY)


# --- create, list, read, delete ---


def test_create_answers_the_new_id(client: TestClient, service: Service) -> None:
    pid = create(client)
    policy = service.project("default").projections.policies[pid]
    assert (policy.name, policy.mode, policy.fields) == ("hide_names", "exclude", EXCLUDED)


def test_list_is_empty_before_any_policy(client: TestClient) -> None:
    assert listed(client) == []


def test_created_policy_is_listed(client: TestClient) -> None:
    first = create(client)
    second = create(client, name="hide_ids_2", fields=["identityNumber", "documentNumber"])
    items = listed(client)
    assert [i["projection_id"] for i in items] == [first, second]
    for item in items:
        assert set(item) == ITEM_KEYS
        assert isinstance(item["created_at"], str) and item["created_at"]
    assert [(i["name"], i["mode"], i["fields"]) for i in items] == [
        ("hide_names", "exclude", EXCLUDED),
        ("hide_ids_2", "exclude", ["identityNumber", "documentNumber"]),
    ]


def test_created_policy_is_read_by_id(client: TestClient) -> None:
    pid = create(client)
    r = client.get(f"{URL}/{pid}")
    assert r.status_code == 200, r.text
    body = r.json()
    assert body == {"item": listed(client)[0], "message": "Get projection success"}
    assert body["item"]["projection_id"] == pid
    assert body["item"]["name"] == "hide_names"
    assert body["item"]["mode"] == "exclude"
    assert body["item"]["fields"] == EXCLUDED


def test_delete_removes_the_policy(client: TestClient, service: Service) -> None:
    pid = create(client)
    r = client.delete(f"{URL}/{pid}")
    assert r.status_code == 200, r.text
    assert r.json() == {"message": "Delete projection success"}
    assert listed(client) == []
    assert service.project("default").projections.policies == {}
    refused(service, lambda: client.get(f"{URL}/{pid}"), 404, "Projection not found")
    refused(service, lambda: client.delete(f"{URL}/{pid}"), 404, "Projection not found")


def test_read_unknown_id_is_not_found(client: TestClient, service: Service) -> None:
    create(client)
    refused(service, lambda: client.get(f"{URL}/no-such-id"), 404, "Projection not found")


def test_delete_unknown_id_is_not_found(client: TestClient, service: Service) -> None:
    pid = create(client)
    refused(service, lambda: client.delete(f"{URL}/no-such-id"), 404, "Projection not found")
    assert [i["projection_id"] for i in listed(client)] == [pid]


def test_every_allowed_field_is_accepted(client: TestClient) -> None:
    fields = [
        "first_name", "last_name", "full_name", "full_name_en", "gender", "nationality",
        "date_of_birth", "ip_address", "idType", "idcard_issuingCountry", "idcard_issueDate",
        "idcard_expireDate", "identityNumber", "documentNumber", "address_city",
        "address_country", "address_state", "address_street", "address_street2",
        "address_zipcode", "address_globalCode", "address_compoundCode", "address_formatted",
        "address_input", "address_detail", "cf1", "cf2", "cf3", "age_group", "ssnNumber",
        "phoneNumber",
    ]  # fmt: skip
    pid = create(client, name="all_fields_0", fields=fields)
    assert client.get(f"{URL}/{pid}").json()["item"]["fields"] == fields


def test_name_may_use_digits_and_underscore(client: TestClient) -> None:
    create(client, name="a_1_b_2")
    assert [i["name"] for i in listed(client)] == ["a_1_b_2"]


# --- 400: body ---


@pytest.mark.parametrize("missing", ["name", "mode", "fields"])
def test_missing_member_is_an_invalid_body(
    client: TestClient, service: Service, missing: str
) -> None:
    body = {k: v for k, v in BODY.items() if k != missing}
    refused(service, lambda: client.post(URL, json=body), 400, INVALID_BODY)


@pytest.mark.parametrize(
    "body",
    [
        {},
        {**BODY, "name": 5},
        {**BODY, "name": None},
        {**BODY, "mode": ["exclude"]},
        {**BODY, "fields": "full_name"},
        {**BODY, "fields": [1]},
        {**BODY, "fields": []},
        [BODY],
        "hide_names",
        None,
    ],
    ids=[
        "empty-object",
        "name-number",
        "name-null",
        "mode-list",
        "fields-string",
        "fields-number-entry",
        "fields-empty",
        "array",
        "string",
        "null",
    ],
)
def test_wrong_shape_is_an_invalid_body(client: TestClient, service: Service, body: Any) -> None:
    raw = json.dumps(body).encode()  # json=None would send no body at all
    headers = {"content-type": "application/json"}
    refused(service, lambda: client.post(URL, content=raw, headers=headers), 400, INVALID_BODY)


def test_unknown_members_are_ignored_as_the_document_says(client: TestClient) -> None:
    """The request schema (and so the OpenAPI document) allows other members; an empty
    ``fields`` is refused above, and the schema says so with ``minItems``."""
    r = client.post(URL, json={**BODY, "comment": "ignored"})
    assert r.status_code == 200, r.text
    assert set(listed(client)[0]) == {"projection_id", "name", "mode", "fields", "created_at"}
    schema = schemas.load("projection_request.json")
    assert "additionalProperties" not in schema
    assert schema["properties"]["fields"]["minItems"] == 1
    assert schemas.errors("projection_request.json", {**BODY, "fields": []})


@pytest.mark.parametrize("name", ["Hide_names", "hide-names", "hide names", "", "hide.names"])
def test_bad_name_charset(client: TestClient, service: Service, name: str) -> None:
    body = {**BODY, "name": name}
    refused(service, lambda: client.post(URL, json=body), 400, "Invalid request body: name")


@pytest.mark.parametrize("mode", ["include", "Exclude", ""])
def test_mode_other_than_exclude_is_echoed(client: TestClient, service: Service, mode: str) -> None:
    body = {**BODY, "mode": mode}
    refused(service, lambda: client.post(URL, json=body), 400, f"Invalid mode: {mode}")


def test_invalid_fields_listed_in_given_order(client: TestClient, service: Service) -> None:
    body = {**BODY, "fields": ["email", "full_name", "foo"]}
    refused(
        service, lambda: client.post(URL, json=body), 400, "Invalid fields detected: email, foo"
    )


@pytest.mark.parametrize(
    ("fields", "listed_as"),
    [
        (["idtype"], "idtype"),  # names are case-sensitive: idType is allowed
        (["name"], "name"),  # allowed is full_name; name is only the reduced view's key
        (["gender", "serialNumber", "OCR_raw"], "serialNumber, OCR_raw"),
    ],
)
def test_fields_outside_the_allowed_list(
    client: TestClient, service: Service, fields: list[str], listed_as: str
) -> None:
    body = {**BODY, "fields": fields}
    message = f"Invalid fields detected: {listed_as}"
    refused(service, lambda: client.post(URL, json=body), 400, message)


@pytest.mark.parametrize("raw", [b"{not json", b"", b'{"name": "a",}', b"\xff\xfe"])
def test_body_that_is_not_json(client: TestClient, service: Service, raw: bytes) -> None:
    headers = {"content-type": "application/json"}
    refused(
        service,
        lambda: client.post(URL, content=raw, headers=headers),
        400,
        "Invalid JSON body",
    )


# --- 405 ---


@pytest.mark.parametrize("method", ["PUT", "PATCH", "DELETE", "TRACE"])
def test_other_methods_on_the_collection(client: TestClient, service: Service, method: str) -> None:
    create(client)
    r = refused(
        service,
        lambda: client.request(method, URL, json=BODY),
        405,
        "Method not allowed for /projections path",
    )
    assert r.headers["allow"] == "GET, POST"


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "TRACE"])
def test_other_methods_on_an_item(client: TestClient, service: Service, method: str) -> None:
    pid = create(client)
    r = refused(
        service,
        lambda: client.request(method, f"{URL}/{pid}", json=BODY),
        405,
        "Method not allowed for /projections/projectionId path",
    )
    assert r.headers["allow"] == "GET, DELETE"


# --- 409 ---


def test_name_clash(client: TestClient, service: Service) -> None:
    pid = create(client)
    body = {**BODY, "fields": ["cf2"]}
    refused(service, lambda: client.post(URL, json=body), 409, "Projection name already exists")
    assert [(i["projection_id"], i["fields"]) for i in listed(client)] == [(pid, EXCLUDED)]


def test_name_is_free_again_after_delete(client: TestClient) -> None:
    pid = create(client)
    assert client.delete(f"{URL}/{pid}").status_code == 200
    again = create(client, fields=["cf2"])
    assert again != pid
    assert [(i["name"], i["fields"]) for i in listed(client)] == [("hide_names", ["cf2"])]


def test_eleventh_policy_is_refused(client: TestClient, service: Service) -> None:
    ids = [create(client, name=f"policy_{n}") for n in range(10)]
    body = {**BODY, "name": "policy_10"}
    refused(service, lambda: client.post(URL, json=body), 409, "Projection count limit exceeded")
    assert [i["projection_id"] for i in listed(client)] == ids


def test_room_again_after_delete(client: TestClient) -> None:
    ids = [create(client, name=f"policy_{n}") for n in range(10)]
    assert client.delete(f"{URL}/{ids[3]}").status_code == 200
    new = create(client, name="policy_10")
    assert len(listed(client)) == 10
    assert new not in ids


# --- 500 ---


def test_internal_error_through_a_fault_rule(client: TestClient, service: Service) -> None:
    rule = {"match": {"method": "POST", "path": URL}, "error": "Internal server error"}
    r = client.post("/__admin/projects/default/faults", json=rule)
    assert r.status_code == 201, r.text
    refused(service, lambda: client.post(URL, json=BODY), 500, "Internal server error")
    assert listed(client) == []
    assert client.get("/__admin/projects/default/faults").json()["faults"][0]["hits"] == 1


# --- 403 ---


def _calls(client: TestClient, pid: str, headers: dict[str, str]) -> dict[str, Call]:
    return {
        "POST": lambda: client.post(URL, json={**BODY, "name": "x_1"}, headers=headers),
        "GET list": lambda: client.get(URL, headers=headers),
        "GET item": lambda: client.get(f"{URL}/{pid}", headers=headers),
        "DELETE": lambda: client.delete(f"{URL}/{pid}", headers=headers),
    }


@pytest.mark.parametrize("call", ["POST", "GET list", "GET item", "DELETE"])
def test_missing_key_is_forbidden(
    client: TestClient, raw_client: TestClient, service: Service, call: str
) -> None:
    pid = create(client)
    refused(service, _calls(raw_client, pid, {})[call], 403, "Forbidden")


@pytest.mark.parametrize("key", ["wrong-key", ""])
@pytest.mark.parametrize("call", ["POST", "GET list", "GET item", "DELETE"])
def test_wrong_key_is_forbidden(client: TestClient, service: Service, call: str, key: str) -> None:
    pid = create(client)
    refused(service, _calls(client, pid, {"x-api-key": key})[call], 403, "Forbidden")


def test_forbidden_before_body_checks(raw_client: TestClient, service: Service) -> None:
    refused(service, lambda: raw_client.post(URL, content=b"{not json"), 403, "Forbidden")


# --- secure project ---


def test_secure_project_takes_an_encrypted_body(sec_client: TestClient, service: Service) -> None:
    r = sec_client.post(URL, json={"data": crypto.encrypt(BODY, SEC_KEY)})
    assert r.status_code == 200, r.text
    pid = r.json()["projection_id"]
    assert r.json() == {"message": "Create projection success", "projection_id": pid}
    assert list(service.project("sec").projections.policies) == [pid]
    assert [(i["projection_id"], i["fields"]) for i in listed(sec_client)] == [(pid, EXCLUDED)]
    r = sec_client.get(f"{URL}/{pid}")
    assert r.status_code == 200
    assert r.json()["message"] == "Get projection success"
    r = sec_client.delete(f"{URL}/{pid}")
    assert r.json() == {"message": "Delete projection success"}


def test_secure_project_takes_uri_encoded_ciphertext(sec_client: TestClient) -> None:
    data = quote(crypto.encrypt({**BODY, "name": "uri_1"}, SEC_KEY), safe="")
    r = sec_client.post(URL, json={"data": data})
    assert r.status_code == 200, r.text
    assert [i["name"] for i in listed(sec_client)] == ["uri_1"]


@pytest.mark.parametrize(
    "body",
    [
        BODY,
        {"data": 5},
        {"data": "not-base64!"},
        {"data": "QUJD"},
        {"data": crypto.encrypt(BODY, "mock-api-key")},
        {"data": crypto.encrypt([BODY], SEC_KEY)},
        {"data": crypto.encrypt("hide_names", SEC_KEY)},
        {"data": crypto.encrypt(None, SEC_KEY)},
    ],
    ids=[
        "plain-body",
        "data-number",
        "not-base64",
        "short-ciphertext",
        "other-key",
        "array-inside",
        "not-json-inside",
        "null-inside",
    ],
)
def test_secure_project_refuses_a_bad_encrypted_body(
    sec_client: TestClient, service: Service, body: Any
) -> None:
    refused(service, lambda: sec_client.post(URL, json=body), 400, "Invalid encrypted body")


def test_secure_project_refuses_non_json(sec_client: TestClient, service: Service) -> None:
    refused(service, lambda: sec_client.post(URL, content=b"{oops"), 400, "Invalid JSON body")


def test_secure_project_checks_the_decrypted_body(sec_client: TestClient, service: Service) -> None:
    body = {"data": crypto.encrypt({**BODY, "mode": "include"}, SEC_KEY)}
    refused(service, lambda: sec_client.post(URL, json=body), 400, "Invalid mode: include")
    body = {"data": crypto.encrypt({"name": "x_1"}, SEC_KEY)}
    refused(service, lambda: sec_client.post(URL, json=body), 400, INVALID_BODY)


# --- per project ---


def test_other_project_cannot_read_or_delete(
    client: TestClient, other_client: TestClient, service: Service
) -> None:
    pid = create(client)
    refused(service, lambda: other_client.get(f"{URL}/{pid}"), 404, "Projection not found")
    refused(service, lambda: other_client.delete(f"{URL}/{pid}"), 404, "Projection not found")
    assert listed(other_client) == []
    assert [i["projection_id"] for i in listed(client)] == [pid]


def test_names_may_repeat_across_projects(client: TestClient, other_client: TestClient) -> None:
    mine = create(client)
    theirs = create(other_client)
    assert mine != theirs
    assert [i["projection_id"] for i in listed(client)] == [mine]
    assert [i["projection_id"] for i in listed(other_client)] == [theirs]


def test_limit_counts_per_project(
    client: TestClient, other_client: TestClient, service: Service
) -> None:
    for n in range(10):
        create(client, name=f"policy_{n}")
    for n in range(10):
        create(other_client, name=f"policy_{n}")
    body = {**BODY, "name": "policy_10"}
    refused(
        service, lambda: other_client.post(URL, json=body), 409, "Projection count limit exceeded"
    )
    assert len(listed(client)) == len(listed(other_client)) == 10


# --- hosted form: submissions filtered by a policy ---


def test_hosted_submission_records_the_policy(client: TestClient, service: Service) -> None:
    pid = create(client)
    claims = {"userid": "u1", "email": "a@b.co", "cf1": "c-1", "projectionId": pid}
    sub = hosted(client, claims)  # cf1 from the link: the form invents none
    assert sub["projection"] == {"projectionId": pid, "projectionName": "hide_names"}
    assert (sub["userid"], sub["email"], sub["kyc"]["result"]) == ("u1", "a@b.co", "approved")
    for field in EXCLUDED:
        assert isinstance(sub["data"][field], str) and sub["data"][field]
    assert stored(client, sub["submission_id"]) == sub
    assert service.stored_submission("default", sub["submission_id"]) == sub


def test_read_by_id_omits_excluded_fields(client: TestClient) -> None:
    pid = create(client)
    sub = hosted(client, {"userid": "u1", "email": "a@b.co", "projectionId": pid})
    [item] = read(client, submission_id=sub["submission_id"])
    assert item == filtered(sub)
    assert "fullName" not in item["ocr"] and "gender" not in item["OCR_raw"]
    assert item["projection"] == {"projectionId": pid, "projectionName": "hide_names"}
    assert "first_name" in item["data"] and "nationality" in item["data"]


def test_every_read_filters(client: TestClient) -> None:
    pid = create(client)
    sub = hosted(client, {"userid": "u_lists", "email": "lists@b.co", "projectionId": pid})
    sid = sub["submission_id"]
    by_email = read(client, email="lists@b.co")
    paged = [i for i in read(client, count="2000") if i["submission_id"] == sid]
    expected = filtered(sub)
    assert by_email == [expected]
    assert paged == [expected]


def test_null_style_returns_excluded_fields_as_null(client: TestClient) -> None:
    r = client.patch("/__admin/projects/default", json={"options": {"projection_style": "null"}})
    assert r.status_code == 200, r.text
    pid = create(client)
    sub = hosted(client, {"userid": "u1", "email": "a@b.co", "projectionId": pid})
    [item] = read(client, submission_id=sub["submission_id"])
    assert item == filtered(sub, null=True)


def test_userid_view_hides_name_when_full_name_excluded(client: TestClient) -> None:
    pid = create(client)
    sub = hosted(client, {"userid": "u_reduced", "email": "a@b.co", "projectionId": pid})
    [item] = read(client, userid="u_reduced")
    data = sub["data"]
    # full_name is the reduced view's "name"; gender is excluded too
    assert item["data"] == {
        "nationality": data["nationality"],
        "date_of_birth": data["date_of_birth"],
    }
    assert item["submission_id"] == sub["submission_id"]


def test_userid_view_with_null_style(client: TestClient) -> None:
    client.patch("/__admin/projects/default", json={"options": {"projection_style": "null"}})
    pid = create(client)
    sub = hosted(client, {"userid": "u_reduced", "email": "a@b.co", "projectionId": pid})
    [item] = read(client, userid="u_reduced")
    data = sub["data"]
    assert item["data"] == {
        "name": None,
        "gender": None,
        "nationality": data["nationality"],
        "date_of_birth": data["date_of_birth"],
    }


def test_request_type_data_is_filtered(client: TestClient) -> None:
    pid = create(client)
    sub = hosted(client, {"userid": "u1", "email": "a@b.co", "projectionId": pid})
    sid = sub["submission_id"]
    items = read(client, submission_id=sid, request_type="data")
    assert items == [{"submission_id": sid, "data": without(sub["data"], EXCLUDED)}]


def test_admin_view_keeps_everything(client: TestClient) -> None:
    pid = create(client)
    claims = {"userid": "u1", "email": "a@b.co", "cf1": "c-1", "projectionId": pid}
    sub = hosted(client, claims)
    view = stored(client, sub["submission_id"])
    assert view == sub
    assert all(view["data"][f] for f in EXCLUDED)


def test_projection_name_in_token_works_the_same(client: TestClient) -> None:
    pid = create(client)
    sub = hosted(client, {"userid": "u1", "email": "a@b.co", "projectionName": "hide_names"})
    assert sub["projection"] == {"projectionId": pid, "projectionName": "hide_names"}
    [item] = read(client, submission_id=sub["submission_id"])
    assert item == filtered(sub)


def test_uri_encoded_token_works(client: TestClient) -> None:
    pid = create(client)
    claims = {"userid": "u1", "email": "a@b.co", "projectionId": pid}
    r = client.post(HOSTED, json={"token": quote(token(claims), safe=""), "outcome": "approved"})
    assert r.status_code == 201, r.text
    assert r.json()["projection"] == {"projectionId": pid, "projectionName": "hide_names"}


def test_edited_submission_stays_filtered(client: TestClient) -> None:
    pid = create(client)
    sub = hosted(client, {"userid": "u1", "email": "a@b.co", "projectionId": pid})
    sid = sub["submission_id"]
    edit = {"submissionId": sid, "admin": "admin@example.com", "data": {"fullName": "New Name"}}
    r = client.patch("/v3/submission", json=edit)
    assert r.status_code == 200, r.text
    assert stored(client, sid)["data"]["full_name"] == "New Name"
    [item] = read(client, submission_id=sid)
    assert "full_name" not in item["data"]
    assert "gender" not in item["data"]
    # the first name follows the new full name (the family name first for some nations)
    assert item["data"]["first_name"] == stored(client, sid)["data"]["first_name"]
    assert item["data"]["first_name"] in ("New", "Name")


def test_token_without_projection_is_not_filtered(client: TestClient) -> None:
    create(client)
    sub = hosted(client, {"userid": "u1", "email": "a@b.co"})
    assert "projection" not in sub
    assert read(client, submission_id=sub["submission_id"]) == [sub]


def test_rejected_outcome_is_filtered_too(client: TestClient) -> None:
    pid = create(client)
    sub = hosted(client, {"userid": "u1", "email": "a@b.co", "projectionId": pid}, "rejected")
    assert sub["kyc"]["result"] == "rejected"
    [item] = read(client, submission_id=sub["submission_id"])
    assert item["data"] == without(sub["data"], EXCLUDED)


def test_two_policies_filter_their_own_submissions(client: TestClient) -> None:
    names = create(client)
    ids = create(client, name="hide_ids", fields=["identityNumber", "documentNumber"])
    a = hosted(client, {"userid": "u_a", "email": "a@b.co", "projectionId": names})
    b = hosted(client, {"userid": "u_b", "email": "b@b.co", "projectionId": ids})
    [item_a] = read(client, submission_id=a["submission_id"])
    [item_b] = read(client, submission_id=b["submission_id"])
    assert item_a["data"] == without(a["data"], EXCLUDED)
    assert item_b["data"] == without(b["data"], ["identityNumber", "documentNumber"])


def test_deleting_the_policy_keeps_existing_submissions_filtered(
    client: TestClient, service: Service
) -> None:
    pid = create(client)
    sub = hosted(client, {"userid": "u1", "email": "a@b.co", "projectionId": pid})
    before = read(client, submission_id=sub["submission_id"])
    assert client.delete(f"{URL}/{pid}").status_code == 200
    assert read(client, submission_id=sub["submission_id"]) == before
    assert before[0]["data"] == without(sub["data"], EXCLUDED)
    assert stored(client, sub["submission_id"]) == sub


def test_recreating_the_name_does_not_change_existing_submissions(client: TestClient) -> None:
    pid = create(client)
    sub = hosted(client, {"userid": "u1", "email": "a@b.co", "projectionId": pid})
    assert client.delete(f"{URL}/{pid}").status_code == 200
    create(client, fields=["nationality"])
    [item] = read(client, submission_id=sub["submission_id"])
    assert item["data"] == without(sub["data"], EXCLUDED)
    assert item["projection"] == {"projectionId": pid, "projectionName": "hide_names"}


@pytest.mark.parametrize("by", ["projectionId", "projectionName"])
def test_deleted_policy_cannot_be_named_by_new_submissions(
    client: TestClient, service: Service, by: str
) -> None:
    pid = create(client)
    assert client.delete(f"{URL}/{pid}").status_code == 200
    claims = {"userid": "u1", "email": "a@b.co", by: pid if by == "projectionId" else "hide_names"}
    before = snapshot(service)
    r = client.post(HOSTED, json={"token": token(claims), "outcome": "approved"})
    assert r.status_code == 400, r.text
    assert snapshot(service) == before


def test_plain_admin_creation_is_never_filtered(client: TestClient) -> None:
    create(client)
    r = client.post(ADMIN_SUBMISSIONS, json={"userid": "u_plain", "email": "plain@b.co"})
    assert r.status_code == 201, r.text
    sub = r.json()
    assert "projection" not in sub
    assert read(client, submission_id=sub["submission_id"]) == [sub]
    [item] = read(client, userid="u_plain")
    assert item["data"]["name"] == sub["data"]["full_name"]
    assert item["data"]["gender"] == sub["data"]["gender"]


def test_plain_admin_creation_cannot_claim_a_projection(
    client: TestClient, service: Service
) -> None:
    pid = create(client)
    body = {"projection": {"projectionId": pid, "projectionName": "hide_names"}}
    before = snapshot(service)
    r = client.post(ADMIN_SUBMISSIONS, json=body)
    assert r.status_code == 400, r.text
    assert snapshot(service) == before


def test_hosted_submission_on_another_project(
    client: TestClient, other_client: TestClient, service: Service
) -> None:
    pid = create(other_client)
    claims = {"userid": "u_other", "email": "o@b.co", "projectionId": pid}
    r = client.post(
        "/__admin/projects/other/hosted-submissions",
        json={"token": token(claims, OTHER_KEY), "outcome": "approved"},
    )
    assert r.status_code == 201, r.text
    sub = r.json()
    [item] = read(other_client, submission_id=sub["submission_id"])
    assert item["data"] == without(sub["data"], EXCLUDED)
    assert read(client, submission_id=sub["submission_id"]) == []


def test_hosted_submission_cannot_use_another_projects_policy(
    client: TestClient, other_client: TestClient, service: Service
) -> None:
    theirs = create(other_client)
    before = snapshot(service)
    for claims in (
        {"userid": "u1", "email": "a@b.co", "projectionId": theirs},
        {"userid": "u1", "email": "a@b.co", "projectionName": "hide_names"},
    ):
        r = client.post(HOSTED, json={"token": token(claims), "outcome": "approved"})
        assert r.status_code == 400, r.text
    assert snapshot(service) == before


def test_hosted_submission_on_a_secure_project(
    sec_client: TestClient, client: TestClient, service: Service
) -> None:
    r = sec_client.post(URL, json={"data": crypto.encrypt(BODY, SEC_KEY)})
    pid = r.json()["projection_id"]
    claims = {"userid": "u_sec", "email": "s@b.co", "projectionId": pid}
    r = client.post(
        "/__admin/projects/sec/hosted-submissions",
        json={"token": token(claims, SEC_KEY), "outcome": "approved"},
    )
    assert r.status_code == 201, r.text
    sub = r.json()
    assert sub["projection"] == {"projectionId": pid, "projectionName": "hide_names"}
    assert service.project("sec").hidden_fields(sub["submission_id"]) == EXCLUDED


# --- hosted form: refused requests ---


def _refused_hosted(pid: str) -> dict[str, tuple[dict[str, Any], dict[str, str]]]:
    """name -> (request body, query parameters) the hosted form must refuse with a 400."""
    plain = {"userid": "u1", "email": "a@b.co"}
    return {
        "projectionId-top-level": (
            {"token": token(plain), "outcome": "approved", "projectionId": pid},
            {},
        ),
        "projectionName-top-level": (
            {"token": token(plain), "outcome": "approved", "projectionName": "hide_names"},
            {},
        ),
        "projectionId-plain-query": (
            {"token": token(plain), "outcome": "approved"},
            {"projectionId": pid},
        ),
        "projection-in-overrides": (
            {
                "token": token(plain),
                "overrides": {"projection": {"projectionId": pid, "projectionName": "x"}},
            },
            {},
        ),
        "both-in-token": (
            {"token": token({**plain, "projectionId": pid, "projectionName": "hide_names"})},
            {},
        ),
        "unknown-id": ({"token": token({**plain, "projectionId": "no-such-id"})}, {}),
        "unknown-name": ({"token": token({**plain, "projectionName": "no_such_name"})}, {}),
        "id-not-a-string": ({"token": token({**plain, "projectionId": 5})}, {}),
        "token-plain-json": (
            {"token": json.dumps({**plain, "projectionId": pid})},
            {},
        ),
        "token-other-key": ({"token": token({**plain, "projectionId": pid}, "other")}, {}),
        "token-array": ({"token": token([plain])}, {}),
        "token-missing": ({"outcome": "approved"}, {}),
        "outcome-maybe": ({"token": token({**plain, "projectionId": pid}), "outcome": "maybe"}, {}),
    }


REFUSED_HOSTED = list(_refused_hosted("x"))


@pytest.mark.parametrize("case", REFUSED_HOSTED)
def test_hosted_submission_refused(client: TestClient, service: Service, case: str) -> None:
    pid = create(client)
    body, query = _refused_hosted(pid)[case]
    before = snapshot(service)
    r = client.post(HOSTED, json=body, params=query)
    assert r.status_code == 400, r.text
    message = r.json().get("message")
    assert isinstance(message, str) and message
    assert snapshot(service) == before
