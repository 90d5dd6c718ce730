"""Secure Data Transfer on the wire (api-v3.md 4.1, 4.2, 5; gaps.md "Encryption").

Requests carry the ciphertext as ``data`` (query parameter, form field or JSON member);
successful responses go back as ``{"data": <ciphertext>, "isEncrypted": true}``.
Every secure endpoint uses these helpers, so all of them behave alike.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs

import orjson

from idv_mock.backend import Project
from idv_mock.ground.jsondepth import too_deep


class BadCiphertext(ValueError):
    """Missing, not base64, or not decryptable with the project's key."""


class BadPlaintext(ValueError):
    """Decrypted, but not a JSON object."""


def is_secure(project: Project) -> bool:
    return bool(project.options.get("secure_transfer"))


def ciphertext_from_body(raw: bytes) -> str:
    """The ``data`` member of a JSON body or the ``data`` field of a form body."""
    try:
        doc = orjson.loads(raw)
    except orjson.JSONDecodeError:
        doc = None
    if isinstance(doc, dict) and isinstance(doc.get("data"), str):
        return str(doc["data"])
    try:
        form = parse_qs(raw.decode("utf-8"), keep_blank_values=True)
    except UnicodeDecodeError as exc:
        raise BadCiphertext("body is not UTF-8") from exc
    values = form.get("data")
    if values is None or len(values) != 1:
        raise BadCiphertext("no data field")
    return values[0]


def decrypt_object(text: str, project: Project) -> dict[str, Any]:
    """The JSON object inside ``text``, telling a bad ciphertext from bad plaintext."""
    from idv_mock.ground import crypto  # a secure project's calls only

    derivation = project.derivation
    try:
        plain = crypto.decrypt_text(text, project.api_key, derivation)
    except crypto.CryptoError as exc:
        raise BadCiphertext(str(exc)) from exc
    try:
        doc = orjson.loads(plain)
    except orjson.JSONDecodeError as exc:
        raise BadPlaintext("not JSON") from exc
    if not isinstance(doc, dict) or too_deep(doc):
        raise BadPlaintext("not a JSON object, or nested too deep")
    return doc


def encrypted(body: Any, project: Project) -> dict[str, Any]:
    from idv_mock.ground import crypto  # a secure project's calls only

    derivation = project.derivation
    return {"data": crypto.encrypt(body, project.api_key, derivation), "isEncrypted": True}
