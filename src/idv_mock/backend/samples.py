"""One submission without a service: what the README's examples, the OpenAPI document's
example and tests use when they need a realistic record and no store."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from idv_mock.backend import derive
from idv_mock.backend.projects import Project
from idv_mock.fake.factory import SubmissionFactory, deep_merge
from idv_mock.ground.clock import DEFAULT_START


def make_submission(
    overrides: dict[str, Any] | None = None,
    *,
    seed: int = 0,
    when: datetime = DEFAULT_START,
    options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One complete, schema-valid Faker submission, ``overrides`` deep-merged over it.

    Derived fields follow a project with default (or the given) ``options``; there is no
    store, so the duplicate lists stay empty (the duplicate-check ids are made as a
    project named ``factory`` would make them). Use ``Service.create_submission`` for those.
    """
    project = Project.from_input(
        {"project_id": "factory", "api_key": "factory-key", "options": options or {}},
        "2026-01-01T00:00:00.000Z",
    )
    overrides = overrides or {}
    raw = SubmissionFactory(seed).build(when, overrides, userid=overrides.get("userid"))
    sub = derive.derive(deep_merge(raw, overrides), project.options, project.project_options())
    return derive.identity_ids(sub, project.project_id)
