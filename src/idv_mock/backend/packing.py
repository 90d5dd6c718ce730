"""Stored submissions of a large store kept compressed: 100k of them in a few hundred MB.

A seeded submission is about 7 KB of JSON, most of it what is rarely read one field at a
time (OCR, attempts, checks) and alike from one submission to the next (the same keys,
the same project options, the same check wording). From ``PACK_FROM`` submissions on, a
store trains one zstd dictionary on the submissions it holds and keeps every new one
compressed against it (about 0.9 KB instead of 7 KB). A read decompresses the exact bytes
that were compressed, so every read (one, a page, a webhook, an export) is byte for byte
what the plain store gives. A store below ``PACK_FROM`` (every test's, the default
start's) is never packed and pays nothing.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported on first use: a small store never needs it
    import zstandard

PACK_FROM = 2_000  # a store packs its submissions from this many on
SAMPLES = 256  # submissions the dictionary is trained on (the newest stored)
DICT_SIZE = 16_384  # as small as packs (0.9 KB each) and about a third quicker to pack with
LEVEL = 1  # zstd's fastest level: seeding 100k pays about 4% for it
JSON_START = ord("{")  # every stored JSON object starts so; a zstd frame never does


def is_packed(blob: bytes) -> bool:
    return blob[0] != JSON_START


class Packer:
    """One store's dictionary with its (de)compressors; shared by the store's copies (a
    start snapshot, a reset), since the packed bytes they share need it. zstd contexts are
    not thread-safe, so each thread has its own."""

    def __init__(self, samples: list[Any]) -> None:  # bytes (what zstd types loosely)
        import zstandard

        self._zstd = zstandard
        try:
            trained: zstandard.ZstdCompressionDict | None = zstandard.train_dictionary(
                DICT_SIZE, samples, k=2048, d=8
            )
        except zstandard.ZstdError:  # too few or too small samples: no dictionary
            trained = None
        self._dict = trained
        self._local = threading.local()

    def _contexts(self) -> tuple[Any, Any]:
        found: tuple[Any, Any] | None = getattr(self._local, "contexts", None)
        if found is None:
            zstd, kept = self._zstd, self._dict
            compressor = zstd.ZstdCompressor(
                level=LEVEL, dict_data=kept, write_checksum=False, write_dict_id=False
            )
            found = self._local.contexts = (compressor, zstd.ZstdDecompressor(dict_data=kept))
        return found

    def pack(self, blob: bytes) -> bytes:
        """``blob`` compressed, as an exact-size copy: zstd's own result keeps the room of
        its worst case (the input's size), which would undo the compression."""
        return bytes(memoryview(self._contexts()[0].compress(blob)))

    def unpack(self, packed: bytes) -> bytes:
        blob: bytes = self._contexts()[1].decompress(packed)
        return blob
