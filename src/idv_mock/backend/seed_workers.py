"""The processes building a large seeding's submissions, and where the store finds them.

A split seeding (``seed_split.py``) walks the random stream in this process and hands
each stretch of walked submissions to a forked worker to build. Both workers are forked
before the walk (no other thread runs then): one builds while the walk runs (the walk has
the other core), both once it is done. The walk's end is the seeding's end: from then on
a thread of this process takes the built stretches back (``built``) and hands the rest
on, while the service answers. A store holding a submission ``PENDING`` asks ``blob``
for it (``SubmissionStore.unbuilt``): its stretch is handed on first if no worker has it
yet, and the read waits for it (a stretch is about 60 ms of a worker's time).
"""

from __future__ import annotations

import atexit
import gc
import os
import pickle
import queue
import sys
import threading
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from multiprocessing.context import ForkContext, ForkProcess

    from idv_mock.backend.seed_split import Builder, Stretch
    from idv_mock.ground.progress import Progress

WORKERS = 2
AHEAD = 3  # stretches handed to a worker and not yet back (it never waits for one)
PARENT_CHECK_S = 0.5  # how often a worker looks whether the seeding process is still there
Pools = list[tuple[str, str, list[str]]]  # as SubmissionFactory.filled_pools gives them
# a stretch as it waits for a worker: its number, its submission ids and the stretch
# pickled (not its tens of objects a submission: a walk far ahead of the builds holds half
# of 100k, which the cycle collector would go through after seeding, about 0.5 s)
Parcel = tuple[int, list[str], bytes]


class Diverged(RuntimeError):
    """The skim and the full build drew differently: a bug (see ``fake/skim.py``)."""


class Crew:
    """The workers, the stretches walked and not built, and the built ones' bytes."""

    def __init__(self, build: Builder, blobs: dict[str, bytes]) -> None:
        import multiprocessing

        context = multiprocessing.get_context("fork")
        self._results: Any = context.Queue()
        self._workers: list[Worker] = []
        try:
            for index in range(WORKERS):
                self._workers.append(Worker(context, index, build, self._results))
        except OSError:
            self.stop()
            raise
        self._blobs = blobs  # while the walk runs, built bytes go straight to the store
        self._walking, self._active = True, 1  # workers handed stretches: one in the walk
        self._cond = threading.Condition()
        self._ready: dict[int, Parcel] = {}  # walked, not handed on (oldest first)
        self._out: dict[int, Parcel] = {}  # handed on, not back
        self._of: dict[str, int] = {}  # each submission not built yet: its stretch
        self.built: dict[str, bytes] = {}  # built after the walk (the store keeps PENDING)
        self._pools: Pools = []
        self._error: BaseException | None = None
        self._done = False
        self._out_to: Any = None  # the terminal told what is built behind
        self._walked_at = 0.0
        self._closing = False

    # --- the walk (the seeding's thread, no other running) ---
    def add(self, stretch: Stretch, pools: Pools) -> None:
        """A walked stretch (``pools``: every Faker pool filled so far); takes back what
        is built and hands on what a worker has room for, never waiting."""
        number, sids = stretch[0], [item[5] for item in stretch[3]]
        for sid in sids:
            self._of[sid] = number
        self._ready[number] = (number, sids, pickle.dumps(stretch, pickle.HIGHEST_PROTOCOL))
        self._pools = pools
        while True:
            try:
                got = self._results.get_nowait()
            except queue.Empty:
                break
            self._take(got)
        self._feed()

    def walked(self, pools: Pools) -> None:
        """The walk is done: the rest is built on every worker, taken back by a thread."""
        with self._cond:
            self._pools, self._walking = pools, False
            self._active = len(self._workers)
            self._walked_at = time.monotonic()
            self._feed()
        atexit.register(self._exiting)  # before multiprocessing's: it stops the workers
        threading.Thread(target=self._receive, name="idv-mock-seed-receive", daemon=True).start()

    # --- what a store asks (any thread) ---
    def blob(self, sid: str) -> bytes:
        with self._cond:
            while (found := self.built.get(sid)) is None:
                if self._error is not None:
                    raise self._error
                number = self._of[sid]
                if number in self._ready:  # no worker has it yet: first in line
                    self._hand(min(self._workers, key=Worker.load), number)
                if self._done:  # cannot be: every stretch came back or failed
                    raise RuntimeError(f"seeding ended with {sid} not built")
                self._cond.wait(1.0)
            return found

    def wait(self) -> None:
        with self._cond:
            while not self._done:
                self._cond.wait(1.0)
            if self._error is not None:
                raise self._error

    @property
    def left(self) -> int:
        """Submissions not built yet."""
        return len(self._of)

    def show(self, progress: Progress) -> None:
        """On a terminal: what is built behind now, and a line when it is done."""
        out = progress.out
        if out is None:
            return
        with self._cond:
            left = len(self._of)
            if self._done or not left:
                return
            self._out_to = out
        out.write(f"seeding: all indexed; building the last {left:,} in the background\n")
        out.flush()

    # --- inside ---
    def _feed(self) -> None:
        for worker in self._workers[: self._active]:
            while self._ready and worker.load() < AHEAD:
                self._hand(worker, next(iter(self._ready)))

    def _hand(self, worker: Worker, number: int) -> None:
        parcel = self._out[number] = self._ready.pop(number)
        worker.give(parcel, self._pools)

    def _take(self, got: tuple[int, int, list[bytes] | str]) -> None:
        index, number, packed = got
        self._workers[index].back()
        if isinstance(packed, str):
            raise Diverged(packed)
        sids = self._out.pop(number)[1]
        into = self._blobs if self._walking else self.built
        of = self._of
        for sid, blob in zip(sids, packed, strict=True):
            into[sid] = blob
            del of[sid]

    def _receive(self) -> None:
        """The thread taking built stretches back after the walk, until none is left."""
        try:
            while True:
                with self._cond:
                    if not self._ready and not self._out:
                        break
                    self._feed()
                try:
                    got = self._results.get(timeout=1.0)
                except queue.Empty:
                    if self._closing:  # the process ends: the workers are stopped with it
                        return
                    if not all(w.alive() for w in self._workers if w.load()):
                        raise RuntimeError("a seeding worker ended early") from None
                    continue
                with self._cond:
                    self._take(got)
                    self._cond.notify_all()
        except Exception as error:  # kept: a read of an unbuilt submission raises it
            if self._closing:
                return
            print(f"idv-mock: seeding failed: {error}", file=sys.stderr, flush=True)
            with self._cond:
                self._error = error
        finally:
            self.stop()
            gc.unfreeze()  # frozen at the walk's end (seed_split.py): collected as usual again
            with self._cond:
                self._done = True
                self._cond.notify_all()
                out, spent = self._out_to, time.monotonic() - self._walked_at
        if out is not None and self._error is None:
            out.write(f"seeding: all built, {spent:.1f} s after the last was indexed\n")
            out.flush()

    def _exiting(self) -> None:
        self._closing = True

    def stop(self) -> None:
        for worker in self._workers:
            worker.stop()
        self._results.close()
        self._results.cancel_join_thread()  # this process only reads it


class Worker:
    """One forked process building the stretches handed to it, oldest first."""

    def __init__(self, context: ForkContext, index: int, build: Builder, results: Any) -> None:
        self._tasks: Any = context.Queue()  # put by a thread: this process never waits
        # a process ending while its workers build: what is not sent yet is dropped (its
        # pipe has no reader once the worker is stopped, so the sending thread would hang)
        self._tasks.cancel_join_thread()
        self._process: ForkProcess = context.Process(
            target=_work, args=(index, build, self._tasks, results, os.getpid()), daemon=True
        )
        self._process.start()
        # the Faker pools the worker has (filled before the fork or handed to it since)
        self._shipped = {(loc, name) for loc, name, _ in build.factory.filled_pools()}
        self._handed = 0

    def load(self) -> int:
        """Stretches handed to it and not back."""
        return self._handed

    def give(self, parcel: Parcel, pools: Pools) -> None:
        new = [p for p in pools if p[:2] not in self._shipped]
        self._shipped.update(p[:2] for p in new)
        self._tasks.put((parcel, new))
        self._handed += 1

    def back(self) -> None:
        self._handed -= 1

    def alive(self) -> bool:
        return self._process.is_alive()

    def stop(self) -> None:
        if self._process.is_alive():
            self._tasks.put(None)
        self._process.join(5)
        if self._process.is_alive():
            self._process.kill()
            self._process.join()
        self._tasks.close()
        self._tasks.join_thread()


def _work(index: int, build: Builder, tasks: Any, results: Any, parent: int) -> None:
    """A worker's loop (in the forked process): build each stretch handed to it. A Ctrl-C
    is the seeding process's to handle (it stops this one). ``parent``: the seeding
    process's id, taken before the fork (one killed before this runs is then noticed)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(
        target=_end_with, args=(parent,), name="idv-mock-lifeline", daemon=True
    ).start()
    build.factory.pools_only()
    while (task := tasks.get()) is not None:
        (number, _, pickled), pools = task
        try:
            build.factory.install_pools(pools)
            results.put((index, number, build(pickle.loads(pickled))))
        except Exception as error:  # handed back: the seeding process raises it
            said = str(error) if isinstance(error, Diverged) else f"{type(error).__name__}: {error}"
            results.put((index, number, said))
            return


def _end_with(parent: int) -> None:
    """Ends this worker once the seeding process is gone. One killed outright (SIGKILL, the
    OOM killer) runs no ``atexit`` and stops no worker, and may die halfway through writing
    a stretch to it: the worker would wait for the rest for ever (it holds the pipe's other
    end itself, so no end of file comes). Nobody reads what it builds: it leaves at once,
    with no queue to flush."""
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK_S)
    os._exit(0)
