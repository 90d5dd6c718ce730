"""Stored submissions of a large store kept compressed: 100k of them in a few hundred MB.

A seeded submission is about 7 KB of JSON, most of it what is rarely read one field at a
time (OCR, attempts, checks) and alike from one submission to the next (the same keys,
the same project options, the same check wording). From ``PACK_FROM`` submissions on, a
store trains one zstd dictionary on the submissions it holds and keeps every new one
compressed against it (about 1.1 KB instead of 7 KB). A read decompresses the exact bytes
that were compressed, so every read (one, a page, a webhook, an export) is byte for byte
what the plain store gives. A store below ``PACK_FROM`` (every test's, the default
start's) is never packed and pays nothing.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported on first use: a small store never needs it
    from concurrent.futures import Executor, Future

    import zstandard

PACK_FROM = 2_000  # a store packs its submissions from this many on
SAMPLES = 256  # submissions the dictionary is trained on (the newest stored)
DICT_SIZE = 16_384  # as small as packs (a 64 KB one) and about a third quicker to pack with
# zstd's fastest strategy (level 1's parameters) with its literals stored raw (zstd does so
# for the fast strategy when target_length > 0) and matches of 7 bytes or more: a page of
# 50 decompresses a third quicker (3.6 against 5.5 us a submission) for about 0.2 KB more
# a submission, at the same packing cost
# (docs/performance.md, "Paging at depth (session 13, s13-depth)")
MIN_MATCH = 7
TARGET_LENGTH = 1
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
            params = zstd.ZstdCompressionParameters.from_level(
                1,
                min_match=MIN_MATCH,
                target_length=TARGET_LENGTH,
                write_checksum=False,
                write_dict_id=False,
            )
            compressor = zstd.ZstdCompressor(dict_data=kept, compression_params=params)
            found = self._local.contexts = (compressor, zstd.ZstdDecompressor(dict_data=kept))
        return found

    def pack(self, blob: bytes) -> bytes:
        """``blob`` compressed, as an exact-size copy: zstd's own result keeps the room of
        its worst case (the input's size), which would undo the compression."""
        return bytes(memoryview(self._contexts()[0].compress(blob)))

    def unpack(self, packed: bytes) -> bytes:
        blob: bytes = self._contexts()[1].decompress(packed)
        return blob

    def unpacker(self) -> Callable[[bytes], bytes]:
        """``unpack`` for this thread, for a loop over a page: spares a look-up per item."""
        found: Callable[[bytes], bytes] = self._contexts()[1].decompress
        return found

    def pack_many(self, blobs: list[bytes]) -> list[bytes]:
        """Each of ``blobs`` packed, as ``pack`` packs it (the same bytes), in one call that
        holds no GIL: on a second thread it runs beside the thread building submissions."""
        compressor = self._contexts()[0]
        if self._zstd.backend != "cext":  # the batch call is the C extension's only
            return [bytes(memoryview(compressor.compress(blob))) for blob in blobs]
        found = compressor.multi_compress_to_buffer(blobs, threads=1)
        return [found[i].tobytes() for i in range(len(blobs))]


PutBack = Callable[[list[tuple[Any, bytes]], list[bytes]], None]


class Behind:
    """Packing done on a worker thread while a store is filled (seeding, a state file's
    lines): the filling thread stores each submission plain and hands it on in batches;
    ``put_back`` gets each batch with its packed blobs when it comes back. By default
    (``blobs``) a packed one replaces its plain one only if nothing replaced it meanwhile.
    Reads see the same JSON either way. ``pool``: a worker shared with other work (kept
    open); else one of its own, shut down by ``close``."""

    BATCH = 512

    def __init__(
        self,
        packer: Packer,
        blobs: dict[str, bytes] | None = None,
        put_back: PutBack | None = None,
        pool: Executor | None = None,
    ) -> None:
        from concurrent.futures import ThreadPoolExecutor

        if put_back is None:
            assert blobs is not None, "Behind needs blobs or put_back"
            put_back = functools.partial(_replace_unchanged, blobs)
        self._packer, self._put_back = packer, put_back
        self._owned = pool is None
        self._pool = (
            ThreadPoolExecutor(1, thread_name_prefix="idv-mock-pack") if pool is None else pool
        )
        self._batch: list[tuple[Any, bytes]] = []
        self._running: tuple[list[tuple[Any, bytes]], Future[list[bytes]]] | None = None

    def add(self, key: Any, blob: bytes) -> None:
        self._batch.append((key, blob))
        if len(self._batch) >= self.BATCH:
            self._send()

    def close(self) -> None:
        """Pack what is left and wait for it: afterwards every submission is packed."""
        self._send()
        self._settle()
        if self._owned:
            self._pool.shutdown()

    def _send(self) -> None:
        self._settle()  # at most one batch in flight: memory stays bounded
        if self._batch:
            batch, self._batch = self._batch, []
            future = self._pool.submit(self._packer.pack_many, [blob for _, blob in batch])
            self._running = (batch, future)

    def _settle(self) -> None:
        if self._running is None:
            return
        (batch, future), self._running = self._running, None
        self._put_back(batch, future.result())


def _replace_unchanged(
    blobs: dict[str, bytes], batch: list[tuple[Any, bytes]], packed: list[bytes]
) -> None:
    for (sid, blob), done in zip(batch, packed, strict=True):
        if blobs.get(sid) is blob:
            blobs[sid] = done
