"""The token pool as operations of the service (``/v3/submission/tokens``; endpoints.md 1-4).

``service.tokens``, a part of :class:`~idv_mock.backend.Service` given the service's
``Core`` (its lock, clock and the hosted form's state). A token's uses are the hosted
form's (``FormState.tokens``), so what the form did with a token shows in its life here.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from idv_mock.backend.core import Core
from idv_mock.backend.exceptions import BackendError, NotFound
from idv_mock.backend.projects import Project
from idv_mock.ground.clock import iso


class PoolFull(BackendError):
    """Registering the tokens would put more than the option ``token_pool_limit`` in the pool."""

    def __init__(self, limit: int) -> None:
        super().__init__(limit)
        self.limit = limit


class Tokens:
    """Register, read and delete each project's pool tokens."""

    def __init__(self, core: Core) -> None:
        self.core = core

    def register(self, project: Project, ids: list[str]) -> dict[str, int]:
        """Add (or overwrite) the tokens; all or none (``PoolFull``). Answers the summary."""
        with self.core.lock:
            limit = int(project.options["token_pool_limit"])
            if len(project.tokens) + project.tokens.room_for(ids) > limit:
                raise PoolFull(limit)
            self.core.changes += 1
            project.tokens.register(ids, iso(project.clock.now()))
            submitted = len(ids)
            return {
                "totalSubmitted": submitted,
                "currentCount": len(project.tokens),
                "processed": submitted,
                "failed": 0,
            }

    def get(self, project: Project, token_id: str) -> dict[str, Any]:
        """One pool token with its life; ``NotFound`` when it is not in the pool."""
        with self.core.lock:
            when = project.tokens.entries.get(token_id)
            if when is None:
                raise NotFound(f"token {token_id} not found")
            return self._described(project, token_id, when)

    def page(self, project: Project, after: str | None) -> dict[str, Any]:
        """A page of the pool (oldest first) and, when more follow, where the next starts."""
        with self.core.lock:
            size = int(project.options["token_page_size"])
            chunk, last = project.tokens.page(after, size)
            body: dict[str, Any] = {
                "success": True,
                "count": len(project.tokens),
                "data": [self._described(project, t, when) for t, when in chunk],
            }
            if last is not None:
                body["nextPageKeyId"] = last
                body["nextPageKeyTime"] = project.tokens.entries[last]
            return body

    def count(self, project: Project) -> int:
        with self.core.lock:
            return len(project.tokens)

    def delete(self, project: Project, ids: list[str]) -> tuple[int, list[str]]:
        """Remove the tokens found: how many went, and the ones not in the pool. When none
        is in the pool, ``NotFound`` and nothing changes."""
        with self.core.lock:
            if not any(t in project.tokens for t in ids):
                raise NotFound("none of the tokens is in the pool")
            self.core.changes += 1
            missing = project.tokens.delete(ids, iso(project.clock.now()))
            return len(set(ids)) - len(missing), missing

    def delete_oldest(self, project: Project, count: int) -> list[str]:
        """Time-based N deletion: the ``count`` tokens registered first."""
        with self.core.lock:
            self.core.changes += 1
            return project.tokens.delete_oldest(count, iso(project.clock.now()))

    def lives(self, project_id: str, limit: int = 200) -> list[dict[str, Any]]:
        """The newest pool tokens and the recently deleted ones, for the dashboard."""
        with self.core.lock:
            project = self.core.project(project_id)
            entries = list(project.tokens.entries.items())[-limit:][::-1]
            found = [self._described(project, t, when) for t, when in entries]
            gone = list(project.tokens.deleted.items())[-limit:][::-1]
            found += [{"tokenId": t, "updateTime": w, "status": "deleted"} for t, w in gone]
            return found

    def _token_now(self, project: Project) -> datetime:
        """The time a token's expiry is judged at: the project's own clock."""
        return project.clock.peek()

    def _described(self, project: Project, token_id: str, when: str) -> dict[str, Any]:
        use = self.core.forms.tokens.get((project.project_id, token_id))
        lifetime = timedelta(seconds=project.seconds("token_expiry_seconds"))
        from idv_mock.backend import token_pool  # with the first token read

        status = token_pool.life(use, self._token_now(project), lifetime)
        found: dict[str, Any] = {
            "tokenId": token_id,
            "updateTime": when,
            "expired": status == "expired",
            "status": status,
        }
        if use is not None:
            found["firstUsedAt"] = iso(use.first_used)
            if use.submission_id:
                found["submissionId"] = use.submission_id
        return found
