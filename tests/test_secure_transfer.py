"""Secure Data Transfer over real HTTP (api-v3.md 4.1, 4.2, 5; gaps.md "Encryption")."""

from __future__ import annotations

import base64
import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import quote, urlencode

import httpx
import pytest

from conformance import check_response
from conftest import ADMIN, LiveServer, assert_refused
from idv_mock import Service
from idv_mock.ground import crypto

PATH = "/v3/submission"
KEY = "sec-key"
FORM = {"content-type": "application/x-www-form-urlencoded"}
SUCCESS = {"message": "success to edit.", "statusCode": 200}
MISSING_DATA = {"errorCode": "missing_data", "message": "Required input data is missing"}
INVALID_PAYLOAD = {"errorCode": "invalid_payload", "message": "Invalid payload"}
DECRYPTION_FAILED = {
    "errorCode": "decryption_failed",
    "message": "Decryption is Failed. Please check the api-key.",
}
PARSE_ERROR = {
    "errorCode": "parse_error",
    "message": "data parsing error. please check input data.",
}

# sid -> (email, userid, created_at)
SEEDED = {
    "sec-1": ("one@sec.example", "sec-user-a", "2025-06-01-10-00-00-000"),
    "sec-2": ("two@sec.example", "sec-user-b", "2025-07-01-10-00-00-000"),
    "sec-3": ("three@sec.example", "sec-user-a", "2025-08-01-10-00-00-000"),
}


@pytest.fixture
def sec(service: Service) -> Service:
    """The "sec" project (Secure Data Transfer on) with the submissions of SEEDED."""
    service.create_project(
        {
            "project_id": "sec",
            "api_key": KEY,
            "admins": ["admin@example.com"],
            "options": {"secure_transfer": True},
        }
    )
    for sid, (email, userid, created_at) in SEEDED.items():
        service.create_submission(
            "sec",
            {"submission_id": sid, "email": email, "userid": userid, "created_at": created_at},
        )
    return service


@pytest.fixture
def shttp(sec: Service, live: LiveServer) -> Iterator[httpx.Client]:
    """A real HTTP client with the sec project's key; every response is schema-checked."""
    with httpx.Client(
        base_url=f"http://127.0.0.1:{live.port}",
        headers={"x-api-key": KEY},
        event_hooks={"response": [check_response]},
        timeout=10,
    ) as c:
        yield c


# --- helpers ---------------------------------------------------------------------------------


def enc(value: object, key: str = KEY) -> str:
    return crypto.encrypt(value, key)


def tampered(ciphertext: str) -> str:
    """The ciphertext with its last block damaged (the padding no longer checks out)."""
    raw = bytearray(base64.b64decode(ciphertext))
    raw[-1] ^= 0x5A
    raw[-2] ^= 0xA5
    return base64.b64encode(bytes(raw)).decode("ascii")


def decrypted(r: httpx.Response) -> Any:
    """The decrypted body of an encrypted 200 answer."""
    assert r.status_code == 200
    body = r.json()
    assert set(body) == {"data", "isEncrypted"}
    assert body["isEncrypted"] is True
    assert isinstance(body["data"], str)
    base64.b64decode(body["data"], validate=True)
    return crypto.decrypt(body["data"], KEY)


def secure_get(client: httpx.Client, inner: dict[str, str], **plain: str) -> dict[str, Any]:
    r = client.get(PATH, params={**plain, "data": enc(inner)})
    body: dict[str, Any] = decrypted(r)
    return body


def ids(body: dict[str, Any]) -> list[str]:
    return [item["submission_id"] for item in body["Items"]]


def patch_body(sid: str, data: dict[str, str]) -> dict[str, Any]:
    return {"submissionId": sid, "admin": ADMIN, "data": data}


def with_plus(make: Callable[[str], str]) -> tuple[str, str]:
    """A value and the ciphertext ``make(value)`` gives, chosen so the ciphertext has '+'."""
    for i in range(1000):
        value = f"note {i}"
        ciphertext = make(value)
        if "+" in ciphertext:
            return value, ciphertext
    raise AssertionError("no ciphertext with '+' found")


BAD_CIPHERTEXTS: dict[str, Callable[[], str]] = {
    "tampered": lambda: tampered(enc({"submission_id": "sec-1"})),
    "wrong-key": lambda: enc({"submission_id": "sec-1"}, "mock-api-key"),
    "garbage": lambda: base64.b64encode(b"0123456789abcdef" * 2).decode("ascii"),
    "not-base64": lambda: "this is *not* base64!",
    "truncated": lambda: enc({"submission_id": "sec-1"})[:-8],
}


# --- GET /submission ---------------------------------------------------------------------------


def test_encrypted_get_by_submission_id(shttp: httpx.Client) -> None:
    body = secure_get(shttp, {"submission_id": "sec-2"})
    assert ids(body) == ["sec-2"]
    item = body["Items"][0]
    assert item["email"] == "two@sec.example"
    assert item["userid"] == "sec-user-b"


def test_encrypted_get_unknown_submission_is_empty(shttp: httpx.Client) -> None:
    assert secure_get(shttp, {"submission_id": "no-such-id"}) == {"Items": []}


def test_encrypted_get_by_email(shttp: httpx.Client) -> None:
    body = secure_get(shttp, {"email": "three@sec.example"})
    assert ids(body) == ["sec-3"]


def test_encrypted_get_by_dates(shttp: httpx.Client) -> None:
    body = secure_get(shttp, {"start_date": "2025-06-15", "end_date": "2025-07-15"})
    assert ids(body) == ["sec-2"]


def test_plain_userid_next_to_data(shttp: httpx.Client) -> None:
    body = secure_get(shttp, {"start_date": "2025-01-01"}, userid="sec-user-a")
    assert ids(body) == ["sec-3", "sec-1"]


def test_plain_count_next_to_data(shttp: httpx.Client) -> None:
    body = secure_get(shttp, {"start_date": "2025-01-01"}, count="1")
    assert ids(body) == ["sec-3"]
    assert body["nextpageKey"]["id"] == "sec-3"


@pytest.mark.parametrize(
    "params",
    [
        {"submission_id": "sec-1"},
        {"email": "one@sec.example"},
        {"start_date": "2025-01-01", "end_date": "2025-12-31"},
        {"userid": "sec-user-a"},
    ],
    ids=["submission_id", "email", "dates", "userid"],
)
def test_secure_get_with_plain_parameters_and_no_data_is_missing_data(
    shttp: httpx.Client, sec: Service, params: dict[str, str]
) -> None:
    assert_refused(lambda: shttp.get(PATH, params=params), 400, MISSING_DATA, service=sec)


def test_plain_submission_id_next_to_data_is_invalid_parameter(
    shttp: httpx.Client, sec: Service
) -> None:
    params = {"submission_id": "sec-1", "data": enc({"email": "one@sec.example"})}
    assert_refused(
        lambda: shttp.get(PATH, params=params),
        400,
        {"errorCode": "invalid_parameter", "message": "invalid parameter: submission_id"},
        service=sec,
    )


def test_secure_get_without_any_parameter_is_missing_data(
    shttp: httpx.Client, sec: Service
) -> None:
    assert_refused(lambda: shttp.get(PATH), 400, MISSING_DATA, service=sec)


@pytest.mark.parametrize("kind", list(BAD_CIPHERTEXTS))
def test_undecryptable_get_data_is_invalid_payload(
    shttp: httpx.Client, sec: Service, kind: str
) -> None:
    data = BAD_CIPHERTEXTS[kind]()
    assert_refused(
        lambda: shttp.get(PATH, params={"data": data}), 400, INVALID_PAYLOAD, service=sec
    )


@pytest.mark.parametrize("plain", ["submission_id=sec-1", '["sec-1"]'])
def test_get_data_that_is_not_a_json_object_is_invalid_payload(
    shttp: httpx.Client, sec: Service, plain: str
) -> None:
    data = enc(plain)
    assert_refused(
        lambda: shttp.get(PATH, params={"data": data}), 400, INVALID_PAYLOAD, service=sec
    )


def query_with_plus() -> str:
    """Ciphertext of {"submission_id": "sec-1"} (spacing varied) that contains a '+'."""
    _, ciphertext = with_plus(lambda v: enc('{"submission_id":' + " " * int(v[5:]) + '"sec-1"}'))
    return ciphertext


def test_get_data_with_plus_turned_into_space_still_works(shttp: httpx.Client) -> None:
    spaced = query_with_plus().replace("+", " ")
    body = decrypted(shttp.get(PATH, params={"data": spaced}))
    assert ids(body) == ["sec-1"]


def test_get_data_with_raw_plus_in_the_url_still_works(shttp: httpx.Client) -> None:
    raw = query_with_plus().replace("/", "%2F").replace("=", "%3D")  # '+' left as is
    body = decrypted(shttp.get(f"{PATH}?data={raw}"))
    assert ids(body) == ["sec-1"]


# --- PATCH /submission -------------------------------------------------------------------------


def test_encrypted_patch_as_form_body(shttp: httpx.Client) -> None:
    ciphertext = enc(patch_body("sec-1", {"fullName": "Form Body"}))
    r = shttp.patch(PATH, content=urlencode({"data": ciphertext}), headers=FORM)
    assert decrypted(r) == SUCCESS
    item = secure_get(shttp, {"submission_id": "sec-1"})["Items"][0]
    assert item["data"]["full_name"] == "Form Body"
    assert item["updateHistory"]["updateAdmin"] == ADMIN


def test_encrypted_patch_as_json_member(shttp: httpx.Client) -> None:
    ciphertext = enc(patch_body("sec-2", {"kycStatus": "pending", "memo": "json"}))
    r = shttp.patch(PATH, json={"data": ciphertext})
    assert decrypted(r) == SUCCESS
    item = secure_get(shttp, {"submission_id": "sec-2"})["Items"][0]
    assert item["kyc"]["result"] == "pending"
    assert item["memo"]["text"] == "json"


def test_encrypted_patch_as_uri_encoded_json_member(shttp: httpx.Client, sec: Service) -> None:
    """api-v3.md 4.1: the ciphertext is URI-encoded before it is sent as data."""
    ciphertext = quote(enc(patch_body("sec-2", {"memo": "encoded"})), safe="")
    r = shttp.patch(PATH, json={"data": ciphertext})
    assert decrypted(r) == SUCCESS
    assert sec.stored_submission("sec", "sec-2")["memo"]["text"] == "encoded"


def test_encrypted_patch_with_plus_turned_into_space_still_works(
    shttp: httpx.Client, sec: Service
) -> None:
    memo, ciphertext = with_plus(lambda v: enc(patch_body("sec-3", {"memo": v})))
    r = shttp.patch(PATH, content=f"data={ciphertext}", headers=FORM)  # '+' not encoded
    assert decrypted(r) == SUCCESS
    assert sec.stored_submission("sec", "sec-3")["memo"]["text"] == memo


def test_plain_json_patch_on_secure_project_is_decryption_failed(
    shttp: httpx.Client, sec: Service
) -> None:
    body = patch_body("sec-1", {"fullName": "Plain"})
    assert_refused(lambda: shttp.patch(PATH, json=body), 400, DECRYPTION_FAILED, service=sec)


@pytest.mark.parametrize("kind", list(BAD_CIPHERTEXTS))
def test_undecryptable_form_patch_is_decryption_failed(
    shttp: httpx.Client, sec: Service, kind: str
) -> None:
    data = BAD_CIPHERTEXTS[kind]()
    assert_refused(
        lambda: shttp.patch(PATH, content=urlencode({"data": data}), headers=FORM),
        400,
        DECRYPTION_FAILED,
        service=sec,
    )


@pytest.mark.parametrize("kind", list(BAD_CIPHERTEXTS))
def test_undecryptable_json_patch_is_decryption_failed(
    shttp: httpx.Client, sec: Service, kind: str
) -> None:
    data = BAD_CIPHERTEXTS[kind]()
    assert_refused(
        lambda: shttp.patch(PATH, json={"data": data}), 400, DECRYPTION_FAILED, service=sec
    )


@pytest.mark.parametrize("plain", ["submissionId=sec-1&admin=x", "[1, 2]", '"text"'])
def test_patch_ciphertext_of_non_object_is_parse_error(
    shttp: httpx.Client, sec: Service, plain: str
) -> None:
    data = enc(plain)
    assert_refused(
        lambda: shttp.patch(PATH, content=f"data={quote(data, safe='')}", headers=FORM),
        400,
        PARSE_ERROR,
        service=sec,
    )


def test_encrypted_patch_errors_after_decryption_are_plain(
    shttp: httpx.Client, sec: Service
) -> None:
    data = enc(patch_body("sec-1", {"gender": "M"}))
    assert_refused(
        lambda: shttp.patch(PATH, json={"data": data}),
        400,
        {"errorCode": "invalid_gender", "message": "Invalid gender. Please check the gender."},
        service=sec,
    )


def test_default_project_stays_plain_next_to_a_secure_one(
    shttp: httpx.Client, http: httpx.Client
) -> None:
    r = http.get(PATH, params={"count": "1"})
    assert r.status_code == 200
    assert "isEncrypted" not in r.json()
    assert len(r.json()["Items"]) == 1


# --- the CLI helper ----------------------------------------------------------------------------


def run_cli(action: str, stdin: str, key: str = "k") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "idv_mock.cli", "crypto", action, "--api-key", key],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_cli_encrypt_then_decrypt_round_trips() -> None:
    plain = '{"submission_id":"sec-1","email":"one@sec.example"}'
    encrypted = run_cli("encrypt", plain + "\n")
    assert encrypted.returncode == 0, encrypted.stderr
    ciphertext = encrypted.stdout.strip()
    assert crypto.decrypt(ciphertext, "k") == {
        "submission_id": "sec-1",
        "email": "one@sec.example",
    }
    decrypted_run = run_cli("decrypt", ciphertext + "\n")
    assert decrypted_run.returncode == 0, decrypted_run.stderr
    assert decrypted_run.stdout.strip() == plain


def test_cli_ciphertext_works_against_the_server(shttp: httpx.Client) -> None:
    encrypted = run_cli("encrypt", '{"submission_id":"sec-1"}', key=KEY)
    assert encrypted.returncode == 0, encrypted.stderr
    body = decrypted(shttp.get(PATH, params={"data": encrypted.stdout.strip()}))
    assert ids(body) == ["sec-1"]


@pytest.mark.parametrize(
    "stdin", ["not base64 at all!", "AAAAAAAAAAAAAAAAAAAAAA==", crypto.encrypt("x", "other")]
)
def test_cli_bad_ciphertext_exits_1_with_a_message(stdin: str) -> None:
    result = run_cli("decrypt", stdin)
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.strip() != ""
