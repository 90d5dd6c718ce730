"""The seeded start state of a project: a realistic mix, the same for the same seed.

Over the 120 days before the clock's start: new applicants, returning users who submit
again (same user id and identity, so ``duplicated_users`` fills), different people sharing
one e-mail, re-used selfies, approved and rejected results, and AML either screened with
no match or not yet screened (``Not Screened`` both: the vendor's value for no match).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from idv_mock.fake.factory import IDENTITY_KEYS, SubmissionFactory
from idv_mock.ground.progress import Progress

if TYPE_CHECKING:
    from idv_mock.backend.seed_split import Split

SPAN = timedelta(days=120)
QUIET = timedelta(hours=1)  # the newest seeded result lands before the clock's start
Create = Callable[[dict[str, Any], datetime], dict[str, Any]]


def moments(factory: SubmissionFactory, end: datetime, count: int) -> list[datetime]:
    """``count`` creation times, ascending, spread irregularly over ``SPAN`` before ``end``."""
    gaps = [factory.rng.uniform(0.3, 1.7) for _ in range(count)]
    total = sum(gaps) or 1.0
    step = SPAN / total
    out, at = [], end - QUIET - SPAN
    for gap in gaps:
        at += step * gap
        out.append(at.replace(microsecond=at.microsecond // 1000 * 1000))
    return out


def seed(
    factory: SubmissionFactory,
    end: datetime,
    count: int,
    create: Create,
    progress: Progress,
    split: Split | None = None,
) -> None:
    """Create ``count`` submissions through ``create`` (the project's creation path).

    Of each one only what a later one may re-use is kept (as a tuple of its strings, not
    the submission), so seeding 100k holds no second copy of them. ``split``: from its
    ``start`` on, the rest is walked and indexed here and built by other processes
    (``seed_split.py``), if it can: some may still be building when this returns.
    """
    made: list[Reusable] = []
    task = progress.task("seeding", count, "submissions")
    step = task.add
    times = moments(factory, end, count)
    for at, when in enumerate(times):
        if split is not None and at == split.start and split.run(factory, times[at:], made, step):
            break
        overrides = _mix(factory, made)
        overrides.setdefault("aml", _screened(factory))
        made.append(_reusable(create(overrides, when)))
        step()
    task.end()
    if split is not None:
        split.show(progress)


# userid, email, selfie image, then the IDENTITY_KEYS values (None where absent)
Reusable = tuple[Any, ...]


def _reusable(sub: dict[str, Any]) -> Reusable:
    data = sub["data"]
    return (
        sub["userid"],
        sub["email"],
        sub["image"]["selfieImage"],
        *map(data.get, IDENTITY_KEYS),
    )


def _mix(factory: SubmissionFactory, made: list[Reusable]) -> dict[str, Any]:
    roll = factory.rng.random()
    if not made or roll < 0.62:
        return {}
    userid, email, selfie, *identity = factory.rng.choice(made)
    if roll < 0.82:  # the same user again
        data = {k: v for k, v in zip(IDENTITY_KEYS, identity, strict=True) if v is not None}
        return {"userid": userid, "email": email, "data": data}
    if roll < 0.92:  # someone else with the same e-mail
        return {"email": email}
    return {"image": {"selfieImage": selfie}}


def _screened(factory: SubmissionFactory) -> dict[str, Any]:
    if factory.rng.random() < 0.4:
        return {}
    return {
        "risk_level_summary": "Not Screened",  # the vendor's value for no match
        "currentstatus": "Not Screened",
        "raw_data": {"threshold": 80, "matchCount": 0},
    }
