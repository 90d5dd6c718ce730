"""The state every part of the benchmark serves, built the same way in every process.

The mock server runs in a child process (so ``taskset`` can pin it), while the in-process
and profiling parts run here; both call :func:`build_service`, and the seeded data is
deterministic (random seed 0), so the ids, user ids and ciphertexts picked here are the
ones the child serves. The requests themselves are described once, in :data:`CALLS`, and
turned into wrk scripts or client calls elsewhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

import orjson

from idv_mock import Service, ServiceConfig
from idv_mock.ground import crypto

API_KEY = "mock-api-key"
ADMIN = "admin@example.com"
SECURE_KEY = "secure-bench-key"
SECURE_SEED = 20  # submissions created in the secure project
PROJECTION_PROJECTS = 32  # one per wrk connection: each alternates POST/DELETE on its own
PROJECTION_FIELD = "date_of_birth"


def projection_key(index: int) -> str:
    return f"proj-bench-key-{index:02d}"


def build_service(seed_count: int = 50) -> Service:
    """The default project (as ``idv-mock serve`` seeds it) plus the benchmark's own projects.

    A secure project (Secure Data Transfer on) for the encrypted GET, and empty projects
    for the projection create/delete loop, so that no connection ever meets the limit
    of 10 policies per project.
    """
    service = Service(ServiceConfig(seed_count=seed_count))
    service.create_project(
        {
            "project_id": "secure-bench",
            "api_key": SECURE_KEY,
            "admins": [ADMIN],
            "options": {"secure_transfer": True},
        }
    )
    for _ in range(SECURE_SEED):
        service.create_submission("secure-bench")
    for i in range(PROJECTION_PROJECTS):
        service.create_project(
            {"project_id": f"proj-bench-{i:02d}", "api_key": projection_key(i), "admins": [ADMIN]}
        )
    return service


@dataclass(frozen=True, slots=True)
class Call:
    """One benchmarked API call: what wrk sends and what the in-process clients send."""

    name: str
    label: str
    method: str
    path: str  # under /v3, with its query string
    api_key: str = API_KEY
    body: bytes | None = None
    lua: str | None = None  # the name of a special wrk script (see loadgen.py)


@dataclass(frozen=True, slots=True)
class Picks:
    """Ids and values taken from the seeded state, shared by every part."""

    submission_id: str
    patch_id: str
    userid: str
    secure_submission_id: str
    secure_data: str  # encrypted {"submission_id": ...}, URL-quoted for a query string


def picks(service: Service) -> Picks:
    """Stable choices: the newest submission (read), the one before it (edited), a returning
    user, and the secure project's newest submission as an encrypted query."""
    store = service.project("default").store
    newest = store.order[-1][1]
    older = store.order[-2][1]
    userid = max(sorted(store.by_user), key=lambda u: len(store.by_user[u]))
    secure_store = service.project("secure-bench").store
    secure_id = secure_store.order[-1][1]
    cipher = crypto.encrypt({"submission_id": secure_id}, SECURE_KEY)
    return Picks(newest, older, userid, secure_id, quote(cipher, safe=""))


def calls(p: Picks) -> list[Call]:
    """The six mock workloads of issue 8, in the order they are run and reported."""
    patch = {"submissionId": p.patch_id, "admin": ADMIN, "data": {"memo": "benchmark"}}
    return [
        Call(
            "get_by_id",
            "GET ?submission_id= (full item)",
            "GET",
            f"/submission?submission_id={p.submission_id}",
        ),
        Call("get_by_userid", "GET ?userid=", "GET", f"/submission?userid={quote(p.userid)}"),
        Call("get_page", "GET ?count=50 (one page)", "GET", "/submission?count=50"),
        Call("patch", "PATCH /submission", "PATCH", "/submission", body=orjson.dumps(patch)),
        Call(
            "get_secure",
            "GET secure project (encrypted)",
            "GET",
            f"/submission?data={p.secure_data}",
            api_key=SECURE_KEY,
        ),
        Call("projection", "POST+DELETE /projection", "POST", "/projection", lua="projection"),
    ]


def projection_body(name: str) -> bytes:
    return orjson.dumps({"name": name, "mode": "exclude", "fields": [PROJECTION_FIELD]})
