"""Applying a scenario's ``given`` state through a control, binding each entry's ``id``."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any

import httpx

from idv_mock.backend import BackendError, Service
from idv_mock.ground import crypto
from idv_mock.scenarios.control import Control, Refused, ServiceControl, cipher, reason
from idv_mock.scenarios.matching import expand
from idv_mock.scenarios.records import DEFAULT_PROJECT, GivenError, Scenario, StepFailure


class Given:
    """Applies a scenario's ``given`` through a control, binding each entry's ``id``."""

    def __init__(self, control: Control, scenario: Scenario, default_key: str | None) -> None:
        self.control, self.scenario, self.default_key = control, scenario, default_key
        self.bound: dict[str, Any] = {}
        self._info: dict[str, dict[str, Any]] = {}

    def info(self, pid: str) -> dict[str, Any]:
        """The project as the control API describes it (cached until ``forget``)."""
        if pid not in self._info:
            found = self.control.describe(pid)
            if found is None and pid == DEFAULT_PROJECT and self.default_key:
                found = {"api_key": self.default_key, "options": {}}
            if found is None:
                raise StepFailure(f"project {pid} does not exist")
            if pid == DEFAULT_PROJECT and self.default_key:
                found["api_key"] = self.default_key
            self._info[pid] = found
        return self._info[pid]

    def forget(self) -> None:
        self._info.clear()

    @contextmanager
    def _entry(self, where: str) -> Iterator[None]:
        try:
            yield
        except (BackendError, Refused, StepFailure, crypto.CryptoError, httpx.HTTPError) as exc:
            line = self.scenario.lines.get(where, 0)
            raise GivenError(self.scenario.file, line, f"{where}: {reason(exc)}") from None

    def _each(self, kind: str, apply: Callable[[dict[str, Any], str], None]) -> None:
        for i, entry in enumerate(self.scenario.given.get(kind, [])):
            with self._entry(f"given.{kind}[{i}]"):
                spec = expand(entry, self.bound)
                apply(spec, spec.get("project", self.scenario.project))

    def projects(self) -> None:
        self._each("projects", self._project)

    def rest(self) -> dict[str, Any]:
        """Every other entry, in ``GIVEN_ORDER``; answers the bound ids."""
        self._each("projections", self._projection)
        self._each("watchlist", lambda spec, pid: self.control.watch(pid, spec["entry"]))
        self._each("worklists", self._worklist)
        self._each("tokens", lambda spec, pid: self.control.tokens(pid, spec["ids"]))
        self._each("webhook_delivery", lambda spec, pid: self.control.delivery(pid, spec["levers"]))
        self._each("submissions", self._submission)
        self._each("watchlist_submissions", self._watchlist_submission)
        return self.bound

    def _project(self, spec: dict[str, Any], _: str) -> None:
        pid, found = spec["project_id"], self.control.describe(spec["project_id"])
        if found is None:
            if "api_key" not in spec:
                raise Refused(f"project {pid} does not exist; give its api_key to create it")
            self.control.create_project(spec)
        elif spec.get("api_key", found["api_key"]) != found["api_key"]:
            raise Refused(f"project {pid} exists with another api_key")
        else:
            changes: dict[str, Any] = {k: spec[k] for k in ("admins", "options") if k in spec}
            if changes:
                self.control.update_project(pid, changes)

    def _projection(self, spec: dict[str, Any], pid: str) -> None:
        mode = spec.get("mode", "exclude")
        found = self.control.projection(pid, spec["name"], mode, spec["fields"])
        self.bound[spec.get("id", spec["name"])] = found

    def _worklist(self, spec: dict[str, Any], pid: str) -> None:
        body = {"id": spec["id"], "name": spec["name"], "active": spec.get("active", True)}
        self.bound[spec["id"]] = self.control.worklist(pid, body)

    def _submission(self, spec: dict[str, Any], pid: str) -> None:
        overrides, hosted = _overrides(spec), spec.get("hosted")
        if hosted is None:
            sid = self.control.submission(pid, overrides, bool(spec.get("fire_webhooks")))
        else:
            token = cipher(self.info(pid))(hosted["token"])
            outcome = hosted.get("outcome", "approved")
            sid = self.control.hosted(pid, token, outcome, overrides)
        self._bind(spec, sid)

    def _watchlist_submission(self, spec: dict[str, Any], pid: str) -> None:
        sid = self.control.watchlist_submission(pid, spec["entry_id"], _overrides(spec))
        self._bind(spec, sid)

    def _bind(self, spec: dict[str, Any], sid: str) -> None:
        if "id" in spec:
            self.bound[spec["id"]] = sid

    def wire(self, url: str) -> dict[str, Any]:
        """Point every project of the scenario at ``url``/<project>; the URLs they had."""
        before = {}
        for pid in self.scenario.projects:
            found = self.control.describe(pid)
            if found is not None:
                before[pid] = found["options"].get("webhook_url")
                self.control.update_project(pid, {"options": {"webhook_url": f"{url}/{pid}"}})
        return before

    def unwire(self, before: dict[str, Any]) -> None:
        for pid, url in before.items():
            with suppress(BackendError, Refused, httpx.HTTPError):  # gone after a reset step
                self.control.update_project(pid, {"options": {"webhook_url": url}})


def _overrides(spec: dict[str, Any]) -> dict[str, Any]:
    overrides = dict(spec.get("overrides", {}))
    if "id" in spec:
        overrides.setdefault("submission_id", f"sub-{spec['id']}")
    return overrides


def apply_given(service: Service, scenario: Scenario) -> dict[str, Any]:
    """Put the scenario's ``given`` into ``service``; answers the ids bound by name."""
    given = Given(ServiceControl(service), scenario, None)
    given.projects()
    return given.rest()
