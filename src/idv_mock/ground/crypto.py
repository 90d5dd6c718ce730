"""Secure Data Transfer: AES-256-ECB encryption of request/response payloads.

The provider's spec fixes the cipher (AES-256, ECB mode) and the transport form (standard
base64 with ``+``/``/`` and ``=`` padding), but leaves open how the 32-byte key is derived from
the API key and how the plaintext is padded. This module makes these choices, and keeps the key
derivation switchable because client libraries in the wild disagree:

* key derivation: ``sha256`` (default) = SHA-256 of the UTF-8 API key; ``raw`` = the UTF-8 API
  key itself, which must be exactly 32 bytes; ``md5hex`` = the 32-character lowercase hex MD5
  digest of the API key, used as 32 ASCII key bytes;
* padding: PKCS#7 (block size 16);
* plaintext: JSON values serialized compactly with ``orjson``; a ``str`` is encrypted as its
  UTF-8 bytes as-is (not JSON-quoted) and ``bytes`` as-is.

Every decryption failure (bad base64, bad length, wrong key, bad padding, not UTF-8, not JSON)
raises :class:`CryptoError`, so request handlers need to catch one exception type only.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

import orjson

if TYPE_CHECKING:  # cryptography loads on the first encryption or decryption, not here
    from cryptography.hazmat.primitives.ciphers import Cipher, modes

__all__ = [
    "KEY_DERIVATIONS",
    "CryptoError",
    "decrypt",
    "decrypt_bytes",
    "decrypt_gcm",
    "decrypt_gcm_text",
    "decrypt_object",
    "decrypt_text",
    "derive_key",
    "encrypt",
    "encrypt_gcm",
    "normalize_ciphertext",
]

_BLOCK_BYTES = 16
_KEY_BYTES = 32


class CryptoError(ValueError):
    """ciphertext not base64, wrong key/padding, not UTF-8, or not JSON"""


def _utf8(text: str, what: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise CryptoError(f"{what} is not encodable as UTF-8") from exc


def _sha256(key: bytes) -> bytes:
    return hashlib.sha256(key).digest()


def _raw(key: bytes) -> bytes:
    if len(key) != _KEY_BYTES:
        raise CryptoError(f"raw key derivation needs a {_KEY_BYTES}-byte API key, got {len(key)}")
    return key


def _md5hex(key: bytes) -> bytes:
    return hashlib.md5(key, usedforsecurity=False).hexdigest().encode("ascii")


_DERIVERS: dict[str, Callable[[bytes], bytes]] = {
    "sha256": _sha256,
    "raw": _raw,
    "md5hex": _md5hex,
}

KEY_DERIVATIONS: tuple[str, ...] = tuple(_DERIVERS)


def derive_key(api_key: str, derivation: str = "sha256") -> bytes:
    """Return the 32-byte AES key for ``api_key`` using the named derivation."""
    deriver = _DERIVERS.get(derivation)
    if deriver is None:
        raise CryptoError(f"unknown key derivation {derivation!r}; use one of {KEY_DERIVATIONS}")
    return deriver(_utf8(api_key, "API key"))


@functools.lru_cache(maxsize=256)
def _cipher(api_key: str, derivation: str) -> Cipher[modes.ECB]:
    """One cipher per key: a Cipher is reusable, each call makes its own (en|de)cryptor."""
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    return Cipher(algorithms.AES(derive_key(api_key, derivation)), modes.ECB())


def _plaintext(value: object) -> bytes:
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8")
    return orjson.dumps(value)


def encrypt(value: object, api_key: str, derivation: str = "sha256") -> str:
    """Encrypt ``value`` and return the ciphertext as standard base64 text.

    Raises ``TypeError`` (``orjson.JSONEncodeError``) if ``value`` is not JSON-serializable.
    """
    from cryptography.hazmat.primitives import padding

    padder = padding.PKCS7(_BLOCK_BYTES * 8).padder()
    padded = padder.update(_plaintext(value)) + padder.finalize()
    encryptor = _cipher(api_key, derivation).encryptor()
    return base64.b64encode(encryptor.update(padded) + encryptor.finalize()).decode("ascii")


def normalize_ciphertext(text: str) -> str:
    """Undo URL/form damage: percent-decode (base64 has no ``%``), spaces back into ``+``."""
    if "%" in text:
        text = unquote(text)
    return text.strip().replace(" ", "+")


def _b64(text: str) -> bytes:
    """The bytes of a (possibly URL-damaged) base64 ciphertext, ECB or GCM."""
    try:
        return base64.b64decode(normalize_ciphertext(text).encode("ascii"), validate=True)
    except (UnicodeEncodeError, binascii.Error) as exc:
        raise CryptoError("ciphertext is not valid base64") from exc


def _json(plaintext: str) -> Any:
    try:
        return orjson.loads(plaintext)
    except orjson.JSONDecodeError as exc:
        raise CryptoError("plaintext is not JSON") from exc


def _b64decode(text: str) -> bytes:
    raw = _b64(text)
    if not raw or len(raw) % _BLOCK_BYTES:
        raise CryptoError(f"ciphertext length {len(raw)} is not a positive multiple of 16")
    return raw


def decrypt_bytes(text: str, api_key: str, derivation: str = "sha256") -> bytes:
    """Decrypt base64 ``text`` and return the unpadded plaintext bytes."""
    from cryptography.hazmat.primitives import padding

    raw = _b64decode(text)
    decryptor = _cipher(api_key, derivation).decryptor()
    unpadder = padding.PKCS7(_BLOCK_BYTES * 8).unpadder()
    try:
        padded = decryptor.update(raw) + decryptor.finalize()
        return unpadder.update(padded) + unpadder.finalize()
    except ValueError as exc:
        raise CryptoError("bad padding: wrong key or corrupted ciphertext") from exc


def decrypt_text(text: str, api_key: str, derivation: str = "sha256") -> str:
    """Decrypt base64 ``text`` and decode the plaintext as UTF-8."""
    try:
        return decrypt_bytes(text, api_key, derivation).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CryptoError("plaintext is not UTF-8: wrong key or corrupted ciphertext") from exc


def decrypt(text: str, api_key: str, derivation: str = "sha256") -> Any:
    """Decrypt base64 ``text`` and parse the plaintext as JSON."""
    return _json(decrypt_text(text, api_key, derivation))


def decrypt_object(text: str, api_key: str, derivation: str = "sha256") -> dict[str, Any]:
    """Decrypt base64 ``text`` whose plaintext must be a JSON object."""
    value = decrypt(text, api_key, derivation)
    if not isinstance(value, dict):
        raise CryptoError(f"plaintext is JSON {type(value).__name__}, not an object")
    return value


# AES-256-GCM for the hosted form (gaps.md "Hosted form"): the vendor does not publish its
# byte layout, so the mock fixes one: base64(nonce 12 bytes || ciphertext || tag 16 bytes),
# no associated data, the key derived as for ECB.
GCM_NONCE_BYTES = 12
GCM_TAG_BYTES = 16


def encrypt_gcm(
    value: object, api_key: str, derivation: str = "sha256", nonce: bytes | None = None
) -> str:
    """GCM ciphertext of ``value``; a fresh random nonce unless one is given (tests)."""
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    nonce = os.urandom(GCM_NONCE_BYTES) if nonce is None else nonce
    if len(nonce) != GCM_NONCE_BYTES:
        raise CryptoError(f"a GCM nonce has {GCM_NONCE_BYTES} bytes")
    sealed = AESGCM(derive_key(api_key, derivation)).encrypt(nonce, _plaintext(value), None)
    return base64.b64encode(nonce + sealed).decode("ascii")


def decrypt_gcm_text(text: str, api_key: str, derivation: str = "sha256") -> str:
    """The UTF-8 text sealed by :func:`encrypt_gcm`; any failure is a ``CryptoError``."""
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    raw = _b64(text)
    if len(raw) < GCM_NONCE_BYTES + GCM_TAG_BYTES:
        raise CryptoError("GCM ciphertext shorter than nonce and tag")
    aes = AESGCM(derive_key(api_key, derivation))
    try:
        return aes.decrypt(raw[:GCM_NONCE_BYTES], raw[GCM_NONCE_BYTES:], None).decode("utf-8")
    except InvalidTag as exc:
        raise CryptoError("GCM tag mismatch: wrong key or corrupted ciphertext") from exc
    except UnicodeDecodeError as exc:
        raise CryptoError("plaintext is not UTF-8") from exc


def decrypt_gcm(text: str, api_key: str, derivation: str = "sha256") -> Any:
    """The JSON value sealed by :func:`encrypt_gcm`."""
    return _json(decrypt_gcm_text(text, api_key, derivation))
