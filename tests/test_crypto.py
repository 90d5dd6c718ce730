"""Tests for idv_mock.ground.crypto (Secure Data Transfer: AES-256-ECB, PKCS#7, base64)."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import shutil
import subprocess
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from idv_mock.ground.crypto import (
    KEY_DERIVATIONS,
    CryptoError,
    decrypt,
    decrypt_bytes,
    decrypt_object,
    decrypt_text,
    derive_key,
    encrypt,
    normalize_ciphertext,
)

API_KEY = "mock-api-key"
KAT_PLAINTEXT = '{"submission_id":"abc","email":"a@b.c"}'
KAT_OBJECT = {"submission_id": "abc", "email": "a@b.c"}
# Obtained once with OpenSSL 3.0 (not with idv_mock.ground.crypto):
#   printf '%s' "$KAT_PLAINTEXT" | openssl enc -aes-256-ecb -nosalt -base64 -A \
#     -K 86889d85c83da4bc124abb76f608c77b3606d14f2fb5bc91df5e521bc90e6e72
# where the -K value is sha256("mock-api-key").
KAT_CIPHERTEXT = "qRWazX6PwUcpQZfMH6HzlAgf0SSdz0n2kRU+ryVxgN046Bo46yNFp1sRNbNSzjDj"
KAT_SHA256_KEY_HEX = "86889d85c83da4bc124abb76f608c77b3606d14f2fb5bc91df5e521bc90e6e72"
# Same plaintext, md5hex derivation: key = ASCII of md5("mock-api-key") hex digest
# ("b68a805e990955cc4d2e2bcfa74a9f7c"), encrypted with openssl.
KAT_MD5HEX_CIPHERTEXT = "DsdzDKmoAvMgR99dCDWXAJVLEDDl1KHxqSza01HBtnj07UMqjwkWySFWHxsOZ7hS"
# Plain text "x" (sha256 derivation of API_KEY), encrypted with openssl.
KAT_X_CIPHERTEXT = "RCQehS8n4OJC6PaL4Bovog=="
# Raw derivation, 32-char key, plaintext "hello", encrypted with openssl.
RAW_KEY = "0123456789abcdef0123456789abcdef"
KAT_RAW_HELLO_CIPHERTEXT = "pZwJZBLuy3mDACEQT4YTBw=="

NON_RAW_DERIVATIONS = ("sha256", "md5hex")

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(), children, max_size=5)
    ),
    max_leaves=15,
)
# A top-level str is encrypted as its raw UTF-8 bytes, not JSON-quoted (see test_text_roundtrip),
# so only non-str top-level values round-trip through decrypt().
json_documents = json_values.filter(lambda v: not isinstance(v, str))
api_keys = st.text(min_size=1)


def test_key_derivations_listed() -> None:
    assert KEY_DERIVATIONS == ("sha256", "raw", "md5hex")


def test_derive_key_known_values() -> None:
    assert derive_key(API_KEY).hex() == KAT_SHA256_KEY_HEX
    assert derive_key(API_KEY, "md5hex") == b"b68a805e990955cc4d2e2bcfa74a9f7c"
    assert derive_key(RAW_KEY, "raw") == b"0123456789abcdef0123456789abcdef"


def test_unknown_derivation_rejected() -> None:
    with pytest.raises(CryptoError):
        derive_key(API_KEY, "sha1")
    with pytest.raises(CryptoError):
        decrypt(KAT_CIPHERTEXT, API_KEY, "nope")


@pytest.mark.parametrize("derivation", NON_RAW_DERIVATIONS)
@settings(max_examples=100, deadline=None)
@given(value=json_documents, api_key=api_keys)
def test_json_roundtrip(derivation: str, value: Any, api_key: str) -> None:
    assert decrypt(encrypt(value, api_key, derivation), api_key, derivation) == value


@pytest.mark.parametrize("derivation", NON_RAW_DERIVATIONS)
@settings(max_examples=100, deadline=None)
@given(text=st.text(), api_key=api_keys)
def test_text_roundtrip(derivation: str, text: str, api_key: str) -> None:
    assert decrypt_text(encrypt(text, api_key, derivation), api_key, derivation) == text


@settings(max_examples=100, deadline=None)
@given(data=st.binary())
def test_bytes_roundtrip(data: bytes) -> None:
    assert decrypt_bytes(encrypt(data, API_KEY), API_KEY) == data


@settings(max_examples=200, deadline=None)
@given(text=st.text() | st.binary(max_size=64).map(lambda b: base64.b64encode(b).decode()))
def test_decrypt_arbitrary_input_only_raises_crypto_error(text: str) -> None:
    with contextlib.suppress(CryptoError):
        decrypt_object(text, API_KEY)


def test_known_answer_literal() -> None:
    assert encrypt(KAT_PLAINTEXT, API_KEY) == KAT_CIPHERTEXT
    assert encrypt(KAT_OBJECT, API_KEY) == KAT_CIPHERTEXT
    assert encrypt(KAT_PLAINTEXT.encode(), API_KEY) == KAT_CIPHERTEXT
    assert decrypt_object(KAT_CIPHERTEXT, API_KEY) == KAT_OBJECT
    assert encrypt("x", API_KEY) == KAT_X_CIPHERTEXT
    assert decrypt_text(KAT_X_CIPHERTEXT, API_KEY) == "x"


def test_known_answer_md5hex() -> None:
    assert encrypt(KAT_OBJECT, API_KEY, "md5hex") == KAT_MD5HEX_CIPHERTEXT
    assert decrypt_object(KAT_MD5HEX_CIPHERTEXT, API_KEY, "md5hex") == KAT_OBJECT


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl not on PATH")
def test_known_answer_openssl() -> None:
    key_hex = hashlib.sha256(API_KEY.encode()).hexdigest()
    result = subprocess.run(
        ["openssl", "enc", "-aes-256-ecb", "-K", key_hex, "-nosalt", "-base64", "-A"],
        input=KAT_PLAINTEXT.encode(),
        capture_output=True,
        check=True,
        timeout=10,
    )
    expected = result.stdout.decode().strip()
    assert expected == KAT_CIPHERTEXT
    assert encrypt(KAT_OBJECT, API_KEY) == expected


def test_wrong_key() -> None:
    with pytest.raises(CryptoError):
        decrypt(KAT_CIPHERTEXT, "other-api-key")


@pytest.mark.parametrize("index", [0, 20, 47])
def test_tampered_ciphertext(index: int) -> None:
    raw = bytearray(base64.b64decode(KAT_CIPHERTEXT))
    raw[index] ^= 0x01
    with pytest.raises(CryptoError):
        decrypt(base64.b64encode(bytes(raw)).decode(), API_KEY)


@pytest.mark.parametrize(
    "text",
    [
        "%%%",
        "",
        "   ",
        "AAAA",  # 3 bytes
        "AAAAAAAAAAAAAAAAAAAAAAA=",  # 17 bytes
        KAT_CIPHERTEXT[:-1],  # broken base64 padding
        KAT_CIPHERTEXT[:-4],  # 44 bytes, not a multiple of 16
        "qRWazX6PwUcpQZfMH6HzlAgf0SSdz0n2kRU+ryVxgN046Bo46yNFp1sRNbNSzjDé",
        "\uff51\uff32\uff37\uff41" * 6,  # full-width letters
        KAT_CIPHERTEXT + "\x00",
    ],
)
def test_malformed_ciphertext(text: str) -> None:
    for func in (decrypt_bytes, decrypt_text, decrypt, decrypt_object):
        with pytest.raises(CryptoError):
            func(text, API_KEY)


def test_non_json_plaintext() -> None:
    ciphertext = encrypt("hello world", API_KEY)
    assert decrypt_text(ciphertext, API_KEY) == "hello world"
    with pytest.raises(CryptoError):
        decrypt(ciphertext, API_KEY)
    with pytest.raises(CryptoError):
        decrypt_object(ciphertext, API_KEY)


def test_non_utf8_plaintext() -> None:
    ciphertext = encrypt(b"\xff\xfe\x00", API_KEY)
    assert decrypt_bytes(ciphertext, API_KEY) == b"\xff\xfe\x00"
    with pytest.raises(CryptoError):
        decrypt_text(ciphertext, API_KEY)
    with pytest.raises(CryptoError):
        decrypt(ciphertext, API_KEY)


def test_decrypt_object_rejects_list() -> None:
    ciphertext = encrypt([1, 2, 3], API_KEY)
    assert decrypt(ciphertext, API_KEY) == [1, 2, 3]
    with pytest.raises(CryptoError):
        decrypt_object(ciphertext, API_KEY)


def test_normalize_ciphertext() -> None:
    assert normalize_ciphertext("  a b+c \n") == "a+b+c"
    assert "+" in KAT_CIPHERTEXT
    mangled = "\n " + KAT_CIPHERTEXT.replace("+", " ") + " \r\n"
    assert decrypt_object(mangled, API_KEY) == KAT_OBJECT


def test_raw_derivation() -> None:
    assert encrypt("hello", RAW_KEY, "raw") == KAT_RAW_HELLO_CIPHERTEXT
    assert decrypt_text(KAT_RAW_HELLO_CIPHERTEXT, RAW_KEY, "raw") == "hello"
    assert decrypt(encrypt({"a": 1}, RAW_KEY, "raw"), RAW_KEY, "raw") == {"a": 1}
    with pytest.raises(CryptoError):
        encrypt("hello", "too-short-key", "raw")
    with pytest.raises(CryptoError):
        decrypt(KAT_RAW_HELLO_CIPHERTEXT, "too-short-key", "raw")


def test_unencodable_api_key() -> None:
    with pytest.raises(CryptoError):
        decrypt(KAT_CIPHERTEXT, "\ud800")
