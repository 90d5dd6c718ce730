"""A large seeding on two cores, byte for byte the one-core seeding, answering early.

Seeding is one random stream, so its submissions cannot be drawn side by side. What can
be split is the building: this process walks the stream in order with ``fake/skim.py``
(only the draws the store's indexes and later submissions need: identity, ids, e-mail,
user id, the duplicate checks) and indexes each submission at once, storing it
``PENDING``, while the full submissions (records, derived fields, JSON, packing: about
two thirds of the cost) are built in stretches of ``BATCH`` from the stream's state at
each stretch's start by forked worker processes (``seed_workers.py``): one while the walk
goes on, two once it is done. The walk's end is the seeding's: every id, index and the
stream's end state are known, so the service answers (lists, filters, duplicates, new
submissions) while the rest is built behind; a read of a submission not built yet waits
for its stretch, handed on first (``SubmissionStore.unbuilt``), and a save takes each as
it comes. The workers check each stretch: the same submission ids, and the stream where
the walk left it. Used from ``SPLIT_FROM`` submissions on, where the other processes pay
for themselves, and only where a fork is safe (no other thread running); elsewhere
seeding goes on in one process as before.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

import orjson

from idv_mock.backend import derive, duplicates, seed
from idv_mock.backend.duplicates import Findings
from idv_mock.backend.packing import PACK_FROM
from idv_mock.backend.seed_workers import Crew, Diverged
from idv_mock.backend.store import PENDING
from idv_mock.fake.factory import IDENTITY_KEYS, SubmissionFactory, merge_into
from idv_mock.fake.skim import RANDOM, skim

if TYPE_CHECKING:
    from idv_mock.backend.packing import Packer
    from idv_mock.backend.projects import Project
    from idv_mock.ground.progress import Progress

__all__ = ["BATCH", "SPLIT_FROM", "Builder", "Diverged", "Split", "wanted"]

SPLIT_FROM = 20_000  # seedings of this many or more use other processes
BATCH = 512  # submissions a stretch

Reusable = tuple[Any, ...]  # as seed.py keeps each submission for the later ones
# words of the stream drawn before the submission's build (the mix and the AML draws),
# when, overrides, builds made (a drawn id already stored is drawn again), what the
# duplicate checks found (users, selfie users, custom information), the submission id,
# its identity and the words drawn for it (the first thing a build draws)
Checks = tuple[list[str], list[str], str]
Item = tuple[int, datetime, dict[str, Any], int, Checks, str, dict[str, str], int]
# stretch number, the stream's state at its start and after it, its items
Stretch = tuple[int, Any, Any, list[Item]]


def wanted(count: int) -> bool:
    import os

    return count >= SPLIT_FROM and hasattr(os, "fork")


class Split:
    """Seeds a project's submissions from ``start`` on (the store's packer is trained by
    then, so the workers pack with it); see the module docstring."""

    start = PACK_FROM

    def __init__(self, project: Project, shared: dict[str, Any]) -> None:
        self.project, self.shared = project, shared
        self.crew: Crew | None = None  # the workers building behind, once the walk ran
        self.masked = any(project.options.get(o) for o in derive.MASKING_OPTIONS)

    def run(
        self,
        factory: SubmissionFactory,
        times: list[datetime],
        made: list[Reusable],
        step: Callable[[], None],
    ) -> bool:
        """Walk and index one submission at each of ``times``, as ``seed.seed`` would seed
        them, their builds left to the workers; False (and nothing done) where a fork is
        not safe."""
        if threading.active_count() != 1:  # another thread's locks would stay held
            return False
        store = self.project.store
        store.start_packing()
        assert store.packer is not None
        build = Builder(factory, store.packer, self.project, self.shared)
        try:
            crew = Crew(build, store.blobs)
        except OSError:  # no process to be had (a limit): one process, as before
            return False
        rng = factory.rng
        items: list[Item] = []
        state, last, numbered = rng.getstate(), len(times) - 1, 0
        try:
            for at, when in enumerate(times):
                items.append(self._walk(factory, when, made))
                step()
                if len(items) == BATCH or at == last:
                    end = rng.getstate()
                    crew.add((numbered, state, end, items), factory.filled_pools())
                    items, state, numbered = [], end, numbered + 1
        except BaseException:
            crew.stop()
            raise
        # what the walk made (indexes, the later submissions' identities) is kept: not
        # gone through by the cycle collector before the first answer (about 0.5 s for
        # 100k); the crew puts it back in the oldest generation once all is built
        gc.freeze()
        crew.walked(factory.filled_pools())  # the rest built behind, on both workers
        store.unbuilt = self.crew = crew
        return True

    def show(self, progress: Progress) -> None:
        """Say on the terminal what is still being built behind, and (later) its end."""
        if self.crew is not None:
            self.crew.show(progress)

    def _walk(self, factory: SubmissionFactory, when: datetime, made: list[Reusable]) -> Item:
        """One submission's draws, as ``seed.seed`` and the creation path make them, down
        to what its build needs from here; indexed at once, its bytes to follow."""
        store = self.project.store
        overrides = seed._mix(factory, made)  # then the AML draw, as seed.seed
        words = RANDOM * (3 if overrides else 2)  # the roll, a pick, the AML draw
        overrides.setdefault("aml", seed._screened(factory))
        builds = 0
        while True:  # an id already stored is drawn again, as the creation path does
            builds += 1
            got = skim(factory, when, overrides)
            if got.submission_id not in store.blobs:
                break
        data = {**got.ident, "cf1": got.cf1}
        keys = duplicates.keys_of({"data": data, "image": {"selfieImage": got.selfie}})
        found = store.dups.check(keys)
        sid = got.submission_id
        store.blobs[sid] = PENDING
        store.index(sid, (got.created_at, got.userid, got.email), keys)
        ident = got.ident  # as the stored submission has it (``seed._reusable``)
        if self.masked:
            ident = derive.apply_masking({"data": ident}, self.project.options)["data"]
        made.append((got.userid, got.email, got.selfie, *map(ident.get, IDENTITY_KEYS)))
        checks = (found.users, found.selfie_users, found.custom_information)
        return (words, when, overrides, builds, checks, sid, got.ident, got.ident_words)


class Builder:
    """Builds a stretch's submissions in full, as the creation path does, and packs them."""

    def __init__(
        self, factory: SubmissionFactory, packer: Packer, project: Project, shared: dict[str, Any]
    ) -> None:
        self.factory, self.packer = factory, packer
        self.options, self.shared, self.project_id = project.options, shared, project.project_id

    def __call__(self, stretch: Stretch) -> list[bytes]:
        _, start, end, items = stretch
        factory = self.factory
        rng = factory.rng
        rng.setstate(start)
        blobs = []
        for words, when, overrides, builds, checks, sid, ident, ident_words in items:
            userid = overrides.get("userid")
            if builds == 1:  # the identity as the walk drew it: its draws stepped over
                rng.getrandbits(32 * (words + ident_words))
                built = factory.build(when, overrides, userid=userid, ident=ident)
            else:  # an id drawn again: each build as the walk made it
                rng.getrandbits(32 * words)
                for _ in range(builds):
                    built = factory.build(when, overrides, userid=userid)
            raw = merge_into(built, overrides)
            if raw["submission_id"] != sid:
                raise Diverged(f"built {raw['submission_id']}, skimmed {sid}")
            found = Findings(*checks)
            sub = derive.finished(raw, self.options, self.shared, self.project_id, found)
            blobs.append(orjson.dumps(sub))
        if rng.getstate() != end:
            raise Diverged("the stream is not where the skim left it")
        return self.packer.pack_many(blobs)
