"""What every part of the service shares, handed to each part explicitly.

The ``Service`` owns one ``Core`` and gives it to each of its parts (``service.delivery``,
``service.tokens``, ...) when it builds them: the lock every read and change of state
takes, the projects, the server's clock, the submission factory, the hosted form's state,
the webhook dispatcher and the count of changes the state file's saver watches. A reset
or an import replaces the projects and the clock here, so a part reads them from the core
each time and never keeps its own reference.
"""

from __future__ import annotations

import threading
from collections.abc import Container
from typing import TYPE_CHECKING, Any

from idv_mock.backend import views
from idv_mock.backend.coverage_counts import CoverageCounts
from idv_mock.backend.exceptions import NotFound
from idv_mock.backend.form_state import FormState
from idv_mock.backend.projects import Project
from idv_mock.delivery.levers import PROMPT
from idv_mock.ground.clock import Clock

if TYPE_CHECKING:
    from idv_mock.backend import events  # the builders load with the first event made
    from idv_mock.backend.routes import Route  # with the first one-shot route added
    from idv_mock.delivery.webhooks import WebhookDispatcher  # built on first use too
    from idv_mock.fake.factory import SubmissionFactory  # built on first use (service.py)

Submission = dict[str, Any]


class Core:
    def __init__(self, factory: SubmissionFactory, webhooks: WebhookDispatcher, clock: Clock):
        self.lock = threading.RLock()  # reached only from backend/ (tests/test_layers.py)
        self.changes = 0  # bumped by every change of lasting state: saves skip an idle state
        self.projects: dict[str, Project] = {}
        self.by_key: dict[str, Project] = {}
        self.clock = clock
        self.factory = factory
        self.forms = FormState()  # the hosted form's sessions, token uses and secrets
        self.webhooks = webhooks
        self.routes: dict[str, list[Route]] = {}  # project id -> one-shot routes (routes.py)
        self.coverage_counts = CoverageCounts()  # what each project showed; kept across resets

    def project(self, project_id: str) -> Project:
        found = self.projects.get(project_id)
        if found is None:
            raise NotFound(f"project {project_id} not found")
        return found

    def live(self, project: Project, sid: str, shared: bool = False) -> Submission:
        """The submission unless deleted; ``shared``: the store's decoded copy, which the
        caller must not change (``SubmissionStore.shared``), else a fresh one."""
        sub = project.store.shared(sid) if shared else project.store.get(sid)
        if sub is None or views.is_deleted(sub):
            raise NotFound(f"submission {sid} not found")
        return sub

    def fire(self, project: Project, batch: list[events.Event]) -> None:
        """Send webhooks to the project's URL (none without one), encrypted on a secure
        project, as the project's delivery levers say; an event a one-shot route takes
        goes where the route says (``routes.py``)."""
        url = project.options.get("webhook_url")
        routes = self.routes.get(project.project_id)
        if not url and not routes:
            return
        derivation = project.derivation
        for event in batch:
            route = next((r for r in routes or () if r.takes(event.payload)), None)
            target = route.url if route is not None and route.url else url
            if not target:
                continue
            body = event.payload
            if project.secure:
                from idv_mock.ground import crypto  # a secure project's first webhook

                body = {
                    "data": crypto.encrypt(body, project.api_key, derivation),
                    "isEncrypted": True,
                }
            levers = PROMPT if route is not None and route.url else project.delivery
            sent = self.webhooks.send(
                project.project_id, str(target), event.name, event.payload, body, levers
            )
            if route is not None:
                route.delivery_id = sent.id

    def fresh_uuid(self, taken: Container[str]) -> str:
        """A factory id not in ``taken``: an imported state may hold the ids the factory's
        sequence is about to draw again."""
        found = self.factory.uuid()
        while found in taken:
            found = self.factory.uuid()
        return found
