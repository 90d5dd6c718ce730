"""Cheap seeded draws: what every generated value is made of.

A submission takes dozens of random draws and, when many are seeded, most of the time goes
to them and to Faker's providers; these keep each draw to one ``random()`` call and
Faker's values to a pool filled once. Deterministic for a seed, like ``random.Random``.
"""

from __future__ import annotations

import random
from bisect import bisect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from _typeshed import SupportsLenAndGetItem

T = TypeVar("T")
PUBLIC_FIRST_OCTETS = (23, 34, 45, 52, 61, 77, 91, 103, 110, 121, 175, 182, 203, 211, 218)


class FastRandom(random.Random):
    """``randint`` and ``choice`` from one ``random()`` draw: several times cheaper than the
    standard rejection sampling, and a submission makes dozens of them (the bias is below
    2**-40 for every range used here)."""

    def randint(self, a: int, b: int) -> int:
        return a + int(self.random() * (b - a + 1))

    def choice(self, seq: SupportsLenAndGetItem[T]) -> T:
        return seq[int(self.random() * len(seq))]

    def weighted(
        self, population: tuple[T, ...] | list[T], cum_weights: tuple[int, ...] | list[int]
    ) -> T:
        """``choices(population, cum_weights=cum_weights)[0]``: the same one draw and the
        same pick, without building a list per call."""
        return population[
            bisect(cum_weights, self.random() * cum_weights[-1], 0, len(population) - 1)
        ]

    def symbols(self, alphabet: str, k: int) -> str:
        """``"".join(choices(alphabet, k=k))``: the same draws, one per symbol."""
        draw, n = self.random, len(alphabet)
        return "".join([alphabet[int(draw() * n)] for _ in range(k)])


POOL_FROM = 2_000  # seeding this many or more draws Faker values from pools
POOL_SIZE = 200  # values per Faker method and locale (fewer for smaller counts)


class PooledLocale:
    """A Faker locale whose values come from a pool filled on first use: Faker's providers
    cost tens of microseconds a value, most of the time of seeding 100k submissions."""

    def __init__(self, faker: Any, rng: random.Random, size: int) -> None:
        self._faker, self._rng, self._size = faker, rng, size
        self.filled: dict[str, list[str]] = {}  # each method's pool, in the order filled

    def __getattr__(self, name: str) -> Callable[[], str]:
        """Called once per method: the picker it makes is then an ordinary attribute."""
        if name.startswith("_"):  # not a Faker method (copy, pickle and the like ask)
            raise AttributeError(name)
        make = getattr(self._faker, name)
        return self.install(name, [make() for _ in range(self._size)])

    def forget_faker(self) -> None:
        """Fill no more pools (``SubmissionFactory.pools_only``)."""
        self._faker = None

    def install(self, name: str, pool: list[str]) -> Callable[[], str]:
        """Pick ``name``'s values from ``pool`` (filled here or, for a process building a
        seeding's submissions, by the process that drew them: ``backend/seed_split.py``)."""
        draw, size = self._rng.random, len(pool)

        def pick() -> str:
            return pool[int(draw() * size)]

        self.filled[name] = pool
        setattr(self, name, pick)
        return pick


def round2(x: float) -> float:
    """``round(x, 2)`` for ``0 <= x < 1e6``: the same float, without the decimal string
    ``round`` writes and reads back (about a third of a microsecond, twenty times a seeded
    submission). ``x * 100`` is then within 1e-8 of the exact product, so a fraction clear
    of one half decides the rounding, and ``n / 100`` is the float nearest to the decimal
    ``n / 100``, as ``round``'s is; close to a half, ``round`` itself decides."""
    scaled = x * 100.0
    whole = int(scaled)
    fraction = scaled - whole
    if fraction < 0.4999:
        return whole / 100
    if fraction > 0.5001:
        return (whole + 1) / 100
    return round(x, 2)


class Draws:
    """The small random helpers the generators share; ``rng`` is a seeded ``FastRandom``."""

    rng: FastRandom
    _id_salt = 0  # XORed into every uuid; the factory sets it per state-file start (epoch)

    def hex(self, n: int) -> str:
        return f"{self.rng.getrandbits(4 * n):0{n}x}"

    def digits(self, n: int) -> str:
        return f"{int(self.rng.random() * 10**n):0{n}d}"

    def uuid(self) -> str:
        h = f"{self.rng.getrandbits(128) ^ self._id_salt:032x}"  # hex(32)'s draw when unsalted
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) % 4]}{h[17:20]}-{h[20:]}"

    def score(self, low: float, high: float) -> float:
        return round2(low + (high - low) * self.rng.random())  # what uniform() computes

    def public_ip(self) -> str:
        """An address from well-known public blocks (Faker's own is slow to warm up)."""
        # choice, randint(0, 255) twice and randint(1, 254), as FastRandom draws them
        draw = self.rng.random
        first = PUBLIC_FIRST_OCTETS[int(draw() * len(PUBLIC_FIRST_OCTETS))]
        return f"{first}.{int(draw() * 256)}.{int(draw() * 256)}.{1 + int(draw() * 254)}"
