"""A large seeding on two cores, byte for byte the one-core seeding.

Seeding is one random stream, so its submissions cannot be drawn side by side. What can
be split is the building: this process walks the stream in order with ``fake/skim.py``
(only the draws the store's indexes and later submissions need: identity, ids, e-mail,
user id, the duplicate checks) and indexes each submission at once, while the full
submissions (records, derived fields, JSON, packing: about three quarters of the cost) are
built in stretches of ``BATCH`` from the stream's state at each stretch's start, by a
forked worker process and, once the walk is done, by this process too, from the other
end. The worker checks each stretch: the same submission ids, and the stream where the
walk left it. Used from ``SPLIT_FROM`` submissions on, where the second process pays
for itself, and only where a fork is safe (no other thread running); elsewhere seeding
goes on in one process as before.
"""

from __future__ import annotations

import collections
import os
import queue
import threading
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

import orjson

from idv_mock.backend import derive, duplicates, seed
from idv_mock.backend.duplicates import Findings
from idv_mock.backend.packing import PACK_FROM
from idv_mock.fake.factory import IDENTITY_KEYS, SubmissionFactory, merge_into
from idv_mock.fake.skim import RANDOM, skim

if TYPE_CHECKING:
    from multiprocessing.context import ForkProcess

    from idv_mock.backend.packing import Packer
    from idv_mock.backend.projects import Project

SPLIT_FROM = 20_000  # seedings of this many or more use a second process
BATCH = 512  # submissions a stretch
AHEAD = 3  # stretches handed to the worker and not yet back (it never waits for one)
LEAD = 4  # stretches walked and not handed on: past it, this process builds one too
PENDING = b""  # a submission's bytes until its stretch comes back built

Reusable = tuple[Any, ...]  # as seed.py keeps each submission for the later ones
# words of the stream drawn before the submission's build (the mix and the AML draws),
# when, overrides, builds made (a drawn id already stored is drawn again), what the
# duplicate checks found (users, selfie users, custom information), the submission id,
# its identity and the words drawn for it (the first thing a build draws)
Checks = tuple[list[str], list[str], str]
Item = tuple[int, datetime, dict[str, Any], int, Checks, str, dict[str, str], int]
# stretch number, the stream's state at its start and after it, its items
Stretch = tuple[int, Any, Any, list[Item]]
Pools = list[tuple[str, str, list[str]]]  # as SubmissionFactory.filled_pools gives them


class Diverged(RuntimeError):
    """The skim and the full build drew differently: a bug (see ``fake/skim.py``)."""


def wanted(count: int) -> bool:
    return count >= SPLIT_FROM and hasattr(os, "fork")


class Split:
    """Seeds a project's submissions from ``start`` on (the store's packer is trained by
    then, so the worker packs with it) in two processes; see the module docstring."""

    start = PACK_FROM

    def __init__(self, project: Project, shared: dict[str, Any]) -> None:
        self.project, self.shared = project, shared

    def run(
        self,
        factory: SubmissionFactory,
        times: list[datetime],
        made: list[Reusable],
        step: Callable[[], None],
    ) -> bool:
        """Seed one submission at each of ``times``, as ``seed.seed`` would; False (and
        nothing done) where a fork is not safe."""
        if threading.active_count() != 1:  # another thread's locks would stay held
            return False
        store = self.project.store
        store.start_packing()
        assert store.packer is not None
        build = Builder(factory, store.packer, self.project, self.shared)
        try:
            worker = Worker(build)
        except OSError:  # no process to be had (a limit): one process, as before
            return False
        rng = factory.rng
        ready: collections.deque[Stretch] = collections.deque()
        items: list[Item] = []
        state, last, numbered = rng.getstate(), len(times) - 1, 0
        try:
            for at, when in enumerate(times):
                items.append(self._walk(factory, when, made))
                if len(items) == BATCH or at == last:
                    end = rng.getstate()
                    ready.append((numbered, state, end, items))
                    items, state, numbered = [], end, numbered + 1
                    worker.feed(ready, store.blobs, step)
                    if len(ready) > LEAD:  # the walk is ahead: build one here too
                        newest = ready.pop()
                        _put_back(newest, build(newest), store.blobs, step)
                        rng.setstate(state)  # and walk on from where it was
            while ready:  # the walk is done: build from the other end too
                stretch = ready.pop()
                _put_back(stretch, build(stretch), store.blobs, step)
                worker.feed(ready, store.blobs, step)
            worker.finish(store.blobs, step)
        finally:
            worker.stop()
        rng.setstate(state)  # where the walk left it (the builds here moved it)
        return True

    def _walk(self, factory: SubmissionFactory, when: datetime, made: list[Reusable]) -> Item:
        """One submission's draws, as ``seed.seed`` and the creation path make them, down
        to what its build needs from here; indexed at once, its bytes to follow."""
        store, options = self.project.store, self.project.options
        overrides = seed._mix(factory, made)  # then the AML draw, as seed.seed
        words = RANDOM * (3 if overrides else 2)  # the roll, a pick, the AML draw
        overrides.setdefault("aml", seed._screened(factory))
        builds = 0
        while True:  # an id already stored is drawn again, as the creation path does
            builds += 1
            got = skim(factory, when, overrides)
            if got.submission_id not in store:
                break
        data = {**got.ident, "cf1": got.cf1}
        keys = duplicates.keys_of({"data": data, "image": {"selfieImage": got.selfie}})
        found = store.dups.check(keys)
        sid = got.submission_id
        store.blobs[sid] = PENDING
        store.index(sid, (got.created_at, got.userid, got.email), keys)
        ident = got.ident  # as the stored submission has it (``seed._reusable``)
        if any(options.get(option) for option in derive.MASKING_OPTIONS):
            ident = derive.apply_masking({"data": ident}, options)["data"]
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


class Worker:
    """The forked process building stretches handed to it, oldest first."""

    def __init__(self, build: Builder) -> None:
        import multiprocessing

        context = multiprocessing.get_context("fork")
        self._tasks: Any = context.Queue()  # put by a thread: this process never waits
        self._results: Any = context.Queue()
        self._process: ForkProcess = context.Process(
            target=_work, args=(build, self._tasks, self._results), daemon=True
        )
        self._process.start()
        self._factory = build.factory
        # the Faker pools the worker has (filled before the fork or handed to it since)
        self._shipped = {(loc, name) for loc, name, _ in build.factory.filled_pools()}
        self._out: dict[int, Stretch] = {}  # handed to the worker, by number

    def feed(
        self, ready: collections.deque[Stretch], blobs: dict[str, bytes], step: Callable[[], None]
    ) -> None:
        """Take back what is built; hand on the oldest ready stretches."""
        self._collect(blobs, step, wait=False)
        while ready and len(self._out) < AHEAD:
            stretch = ready.popleft()
            self._out[stretch[0]] = stretch
            # every pool filled so far: those the stretch's walk filled among them
            pools = [p for p in self._factory.filled_pools() if p[:2] not in self._shipped]
            self._shipped.update(p[:2] for p in pools)
            self._tasks.put((stretch, pools))

    def finish(self, blobs: dict[str, bytes], step: Callable[[], None]) -> None:
        while self._out:
            self._collect(blobs, step, wait=True)

    def stop(self) -> None:
        if self._process.is_alive():
            self._tasks.put(None)
        self._process.join(5)
        if self._process.is_alive():
            self._process.kill()
            self._process.join()
        for channel in (self._tasks, self._results):
            channel.close()
            channel.join_thread()

    def _collect(self, blobs: dict[str, bytes], step: Callable[[], None], wait: bool) -> None:
        while self._out:
            try:
                got = self._results.get(timeout=1.0) if wait else self._results.get_nowait()
            except queue.Empty:
                if wait and not self._process.is_alive():
                    raise RuntimeError("the seeding worker ended early") from None
                if not wait:
                    return
                continue
            number, packed = got
            if isinstance(packed, str):
                raise Diverged(packed)
            _put_back(self._out.pop(number), packed, blobs, step)
            wait = False  # one was waited for: take the rest that are there


def _put_back(
    stretch: Stretch, packed: list[bytes], blobs: dict[str, bytes], step: Callable[[], None]
) -> None:
    for item, blob in zip(stretch[3], packed, strict=True):
        blobs[item[5]] = blob
        step()


def _work(build: Builder, tasks: Any, results: Any) -> None:
    """The worker's loop (in the forked process): build each stretch handed to it. A
    Ctrl-C is the seeding process's to handle (it stops this one)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    build.factory.pools_only()
    while (task := tasks.get()) is not None:
        stretch, pools = task
        try:
            build.factory.install_pools(pools)
            results.put((stretch[0], build(stretch)))
        except Exception as error:  # handed back: the seeding process raises it
            said = str(error) if isinstance(error, Diverged) else f"{type(error).__name__}: {error}"
            results.put((stretch[0], said))
            return
