"""Compact storage, start snapshots and bulk seeding (issue 8): what a user would notice is
that reads, resets and seeds give exactly what they gave before, only cheaper."""

from __future__ import annotations

import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import orjson
from hypothesis import given
from hypothesis import strategies as st

from idv_mock import Service, ServiceConfig
from idv_mock.fake.factory import POOL_FROM
from idv_mock.ground import schemas
from idv_mock.ground.clock import iso, stamp


def _export(service: Service) -> bytes:
    return orjson.dumps(service.export_state())


def test_stored_submissions_are_exact_size_json() -> None:
    service = Service(ServiceConfig(seed_count=20, random_seed=3))
    store = service.project("default").store
    for sid, blob in store.blobs.items():
        assert orjson.loads(blob)["submission_id"] == sid
        # no spare buffer room kept beside each submission (bytes overhead is 33 bytes)
        assert sys.getsizeof(blob) - len(blob) <= 40


def test_a_read_copy_can_be_changed_without_touching_the_store() -> None:
    service = Service(ServiceConfig(seed_count=5, random_seed=3))
    store = service.project("default").store
    sid = next(iter(store.blobs))
    before = store.blobs[sid]
    copy = store.get(sid)
    assert copy is not None
    copy["data"]["full_name"] = "Changed Name"
    copy["userid"] = "someone-else"
    assert store.blobs[sid] == before
    assert store.get(sid) == orjson.loads(before)
    assert store.get("no-such-id") is None


def test_reset_after_every_kind_of_change_gives_the_seeded_state_back() -> None:
    service = Service(ServiceConfig(seed_count=12, random_seed=5))
    start = _export(service)
    project = service.project("default")
    sids = list(project.store.blobs)
    service.edit(project, sids[0], "admin@example.com", {"fullName": "Renamed Person"})
    service.delete(project, sids[1], None)
    service.delete_parts(project, sids[2], ["data"], ["identityNumber"])
    service.create_submission("default", {"email": "new@example.com"})
    service.create_project({"project_id": "extra", "api_key": "extra-key", "admins": []})
    assert _export(service) != start
    service.reset()
    assert _export(service) == start
    assert service.project_for_key("extra-key") is None


def test_the_snapshot_survives_live_changes_to_shared_indexes() -> None:
    """Duplicates and e-mail indexes are shared by value with the start snapshot: a change
    to the live ones must not leak into what a reset restores."""
    service = Service(ServiceConfig(seed_count=10, random_seed=2))
    project = service.project("default")
    first = project.store.get(next(iter(project.store.blobs)))
    assert first is not None
    twin = {k: first["data"][k] for k in ("full_name", "date_of_birth", "nationality")}
    made = service.create_submission("default", {"email": first["email"], "data": twin})
    assert first["submission_id"] in made["duplicated_users"]
    service.reset_project("default")
    fresh = service.project("default")
    assert made["submission_id"] not in fresh.store.blobs
    assert made["submission_id"] not in fresh.store.by_email.get(first["email"], ())
    again = service.create_submission("default", {"data": twin})
    assert again["duplicated_users"] == made["duplicated_users"]


def test_reset_project_restores_one_project_only() -> None:
    service = Service(ServiceConfig(seed_count=8, random_seed=4))
    service.create_project({"project_id": "other", "api_key": "other-key", "admins": []})
    service.create_submission("other", {})
    default = service.project("default")
    start = default.store.blobs.copy()
    service.delete(default, next(iter(start)), None)
    service.reset_project("default")
    assert service.project("default").store.blobs == start
    assert len(service.project("other").store) == 1


def test_bulk_seeding_is_deterministic_valid_and_mixed() -> None:
    """From POOL_FROM submissions on, Faker values come from pools: still the same state
    for the same seed, still valid, still realistic (repeat users, shared e-mails)."""
    config = ServiceConfig(seed_count=POOL_FROM, random_seed=11)
    one, two = Service(config), Service(config)
    assert _export(one) == _export(two)
    store = one.project("default").store
    subs = list(store)
    for sub in subs[::50]:
        assert schemas.errors("submission.json", sub) == []
    assert len({s["data"]["full_name"] for s in subs}) > POOL_FROM // 2
    assert any(len(ids) > 1 for ids in store.by_user.values())
    assert any(s["duplicated_users"] for s in subs)
    assert len({s["data"]["nationality"] for s in subs}) == 11


def test_creation_after_a_bulk_seed_is_the_same_after_a_reset() -> None:
    service = Service(ServiceConfig(seed_count=POOL_FROM, random_seed=1))
    made = service.create_submission("default", {})
    service.reset(new_ids=False)
    assert service.create_submission("default", {}) == made


@given(st.datetimes(timezones=st.just(timezone.utc)) | st.datetimes())
def test_timestamps_match_strftime(moment: datetime) -> None:
    """The hand-made formatting gives what strftime gave, for every date there is."""
    millis = f"{moment.microsecond // 1000:03d}"
    year = f"{moment.year:04d}"
    assert stamp(moment) == year + moment.strftime("-%m-%d-%H-%M-%S-") + millis
    assert iso(moment) == year + moment.strftime("-%m-%dT%H:%M:%S.") + millis + "Z"


def test_timestamps_of_a_known_moment() -> None:
    moment = datetime(2026, 3, 4, 5, 6, 7, 89_999, tzinfo=timezone(timedelta(hours=9)))
    assert stamp(moment) == "2026-03-04-05-06-07-089"
    assert iso(moment) == "2026-03-04T05:06:07.089Z"


def test_a_cached_user_id_summary_follows_an_edit() -> None:
    from idv_mock.backend.store import Selection

    service = Service(ServiceConfig(seed_count=6, random_seed=9))
    project = service.project("default")
    sid = next(iter(project.store.blobs))
    userid = project.store.meta[sid][1]

    def names() -> list[str]:
        live = service.project("default")  # a reset installs a new project object
        items, _ = service.read(live, Selection(userid=userid), reduced=True, request_type=None)
        return [
            orjson.loads(i)["data"]["name"]
            for i in items
            if orjson.loads(i)["submission_id"] == sid
        ]

    assert names() == names() != ["Renamed Person"]  # the second read comes from the cache
    service.edit(project, sid, "admin@example.com", {"fullName": "Renamed Person"})
    assert names() == ["Renamed Person"]
    service.reset()
    assert names() != ["Renamed Person"]


_SMALL = Service(ServiceConfig(seed_count=40, random_seed=12))
_DAYS = sorted({m[0][:10] for m in _SMALL.project("default").store.meta.values()})


@given(
    start=st.none() | st.sampled_from(_DAYS),
    end=st.none() | st.sampled_from(_DAYS),
    after=st.none() | st.integers(0, 39),
    count=st.integers(1, 45),
)
def test_a_page_is_what_filtering_everything_gives(
    start: str | None, end: str | None, after: int | None, count: int
) -> None:
    """The bisect-and-slice page against the definition: every submission, newest first,
    filtered by the dates and the paging key, cut at ``count``."""
    from idv_mock.backend.store import Selection

    store = _SMALL.project("default").store
    keys = sorted(((m[0], sid) for sid, m in store.meta.items()), reverse=True)
    after_key = None if after is None else keys[after]
    wanted = [
        k
        for k in keys
        if (start is None or k[0] >= start)
        and (end is None or k[0][:10] <= end)
        and (after_key is None or k < after_key)
    ]
    found, next_key = store.select(Selection(None, None, None, start, end, after_key, count))
    assert found == [sid for _, sid in wanted[:count]]
    assert next_key == (wanted[count - 1] if len(wanted) > count else None)


_EXPORT_DIGEST = """
import hashlib, sys, orjson
from idv_mock import Service, ServiceConfig
service = Service(ServiceConfig(seed_count=int(sys.argv[1]), random_seed=5))
service.create_submission("default", {"data": {"nationality": "ITA"}})
print(hashlib.sha256(orjson.dumps(service.export_state())).hexdigest())
"""


def test_the_same_seed_gives_the_same_state_in_every_process() -> None:
    """String hashing differs per process (PYTHONHASHSEED); the seeded data must not:
    Faker's it_IT cities came from a set and once made two runs of one seed differ."""
    import os
    import subprocess

    def digest(hash_seed: str, count: int) -> str:
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        cmd = [sys.executable, "-c", _EXPORT_DIGEST, str(count)]
        return subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout

    for count in (60, POOL_FROM):
        assert digest("1", count) == digest("2", count)


def test_the_state_as_json_is_the_document_dumped() -> None:
    """Saves and GET /__admin/state put the stored bytes in as they are: the result must be
    exactly what dumping the decoded document gives, after edits and deletions too."""
    service = Service(ServiceConfig(seed_count=15, random_seed=6))
    project = service.project("default")
    sids = list(project.store.blobs)
    service.edit(project, sids[0], "admin@example.com", {"memo": "checked"})
    service.delete(project, sids[1], None)
    service.create_project({"project_id": "empty", "api_key": "empty-key", "admins": []})
    assert service.export_state_json() == orjson.dumps(service.export_state())


def test_ids_are_not_drawn_again_after_a_restart_from_a_state_file(tmp_path: Path) -> None:
    """A restarted service's factory starts its sequence again: what it creates must not
    take the id of something the state file brought back."""
    from idv_mock.backend.store import Selection
    from idv_mock.tools import persistence

    config = ServiceConfig(seed_count=5, random_seed=2)
    first = Service(config)
    made = first.create_submission("default", {"userid": "before-restart"})
    policy = first.create_projection(first.project("default"), "p1", "exclude", ["gender"])
    persistence.save(first, tmp_path / "state.json")

    again = Service(config)
    assert persistence.load(again, tmp_path / "state.json")
    project = again.project("default")
    later = again.create_submission("default", {"userid": "after-restart"})
    other = again.create_projection(project, "p2", "exclude", ["gender"])
    assert later["submission_id"] != made["submission_id"]
    assert other.projection_id != policy.projection_id
    assert len(project.store) == len(project.store.order) == 7
    for userid in ("before-restart", "after-restart"):
        items, _ = again.read(project, Selection(userid=userid), reduced=True, request_type=None)
        assert [orjson.loads(i)["userid"] for i in items] == [userid]


def test_an_exported_state_is_the_callers_own() -> None:
    service = Service(ServiceConfig(seed_count=3, random_seed=2))
    service.update_project("default", {"options": {"policy_blacklistCountries": ["PRK"]}})
    before = service.export_state_json()
    doc = service.export_state()
    doc["projects"][0]["project"]["options"]["policy_blacklistCountries"].append("IRN")
    doc["projects"][0]["submissions"][0]["data"]["full_name"] = "Changed"
    described = service.project("default").describe()
    described["options"]["policy_blacklistCountries"].append("CUB")
    assert service.export_state_json() == before


def test_a_reset_project_is_freed_once_replaced(client: Any, service: Service) -> None:
    """The journal's reader once held its project in a cycle that gc.freeze() kept alive:
    each reset then leaked the whole previous state."""
    import gc
    import weakref

    gone = []
    for _ in range(5):
        assert client.get("/v3/submission", params={"count": "1"}).status_code == 200
        gone.append(weakref.ref(service.project("default").journal.entries))
        service.reset()
    gc.collect()
    assert [r() for r in gone] == [None] * 5
