"""A submission's images (``GET /v3/image``, ``PUT /v3/submission/image``; endpoints.md 6, 7).

A submission made by the factory or the hosted form carries image URLs; the mock serves
each one as a PNG drawn from the submission id and the slot, in the hosted form's sample
style (an ID card with a photo box and text lines, or a selfie), so the same seed gives
the same bytes. ``PUT`` stores the integrator's own images, which then win. A slot the
submission no longer names (partial delete, deletion) has no image.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import struct
import zlib
from typing import Any

from idv_mock.fake.checks import IMAGE_HOST
from idv_mock.ground import schemas

# the slots, and the ID document's among them (one given needs idType): defs.json's lists
SLOTS = schemas.enum("image_slot")
ID_SLOTS = schemas.enum("id_image_slot")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
JPEG_MAGIC = b"\xff\xd8\xff"
Pixel = tuple[int, int, int]


def media_type(image: bytes) -> str | None:
    """``image/png`` or ``image/jpeg`` by the file's magic bytes (the vendor's formats:
    jpg, jpeg, png), else None."""
    if image.startswith(PNG_MAGIC):
        return "image/png"
    if image.startswith(JPEG_MAGIC):
        return "image/jpeg"
    return None


def decode(text: str) -> bytes | None:
    """The image in a Base64 field (a ``data:image/...;base64,`` prefix allowed), or None
    when it is not Base64 of a PNG or JPEG file."""
    if text.startswith("data:") and "," in text:
        text = text.split(",", 1)[1]
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None
    return raw if media_type(raw) else None


def url(sid: str, slot: str) -> str:
    return f"{IMAGE_HOST}/{sid}/{slot}.png"


def sample(sid: str, slot: str) -> bytes:
    """The slot's sample image for a submission: the same bytes for the same id."""
    digest = hashlib.blake2b(f"{sid}/{slot}".encode(), digest_size=12).digest()
    tint: Pixel = (digest[0] // 2 + 96, digest[1] // 2 + 96, digest[2] // 2 + 96)
    if slot == "selfieImage":
        return _png(240, 320, _selfie(tint))
    return _png(320, 200, _card(tint, digest, back=slot == "idBackImage"))


def _card(tint: Pixel, digest: bytes, back: bool) -> list[list[Pixel]]:
    rows = [[tint] * 320 for _ in range(200)]
    ink: Pixel = (40, 40, 60)
    if not back:
        _box(rows, 16, 40, 96, 136, (230, 230, 230))  # the photo
        _box(rows, 36, 60, 56, 76, (150, 120, 100))  # a face in it
    left = 16 if back else 120
    for line in range(5):
        width = 80 + digest[3 + line] % 100
        _box(rows, left, 48 + line * 24, min(left + width, 304), 56 + line * 24, ink)
    _box(rows, 0, 0, 320, 24, (30, 60, 120))  # the header band
    return rows


def _selfie(tint: Pixel) -> list[list[Pixel]]:
    rows = [[(220, 224, 232)] * 240 for _ in range(320)]
    _box(rows, 70, 60, 170, 180, (200, 160, 130))  # the head
    _box(rows, 40, 190, 200, 320, tint)  # the shoulders
    return rows


def _box(rows: list[list[Pixel]], x0: int, y0: int, x1: int, y1: int, color: Pixel) -> None:
    for y in range(y0, y1):
        rows[y][x0:x1] = [color] * (x1 - x0)


def _png(width: int, height: int, rows: list[list[Pixel]]) -> bytes:
    raw = b"".join(b"\x00" + bytes(v for px in row for v in px) for row in rows)
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        PNG_MAGIC
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(raw, 9))
        + (_chunk(b"IEND", b""))
    )


def _chunk(kind: bytes, data: bytes) -> bytes:
    crc = zlib.crc32(kind + data) & 0xFFFFFFFF
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)


def export(images: dict[str, dict[str, bytes]]) -> dict[str, Any]:
    """Stored images for the state document, as Base64."""
    return {
        sid: {slot: base64.b64encode(b).decode() for slot, b in slots.items()}
        for sid, slots in images.items()
    }


def restore(doc: dict[str, Any]) -> dict[str, dict[str, bytes]]:
    return {
        sid: {slot: base64.b64decode(text) for slot, text in slots.items()}
        for sid, slots in doc.items()
    }
