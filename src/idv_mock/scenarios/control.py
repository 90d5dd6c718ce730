"""How ``given`` reaches a service: calling it in-process, or through the control API."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from idv_mock.backend import InvalidInput, Service
from idv_mock.ground import crypto, operations


class Control(Protocol):
    """The control operations ``given`` needs: the Service in-process, or ``/__admin``."""

    def describe(self, pid: str) -> dict[str, Any] | None: ...
    def create_project(self, spec: dict[str, Any]) -> None: ...
    def update_project(self, pid: str, changes: dict[str, Any]) -> None: ...
    def submission(self, pid: str, overrides: dict[str, Any], fire: bool) -> str: ...
    def hosted(self, pid: str, token: str, outcome: str, overrides: dict[str, Any]) -> str: ...
    def projection(self, pid: str, name: str, mode: str, fields: list[str]) -> str: ...
    def watch(self, pid: str, entry: dict[str, Any]) -> None: ...
    def watchlist_submission(self, pid: str, entry_id: str, overrides: dict[str, Any]) -> str: ...
    def worklist(self, pid: str, spec: dict[str, Any]) -> str: ...
    def tokens(self, pid: str, ids: list[str]) -> None: ...
    def delivery(self, pid: str, levers: dict[str, Any]) -> None: ...


class Refused(Exception):
    """The control API refused a call."""


@dataclass(slots=True)
class ServiceControl:
    service: Service

    def describe(self, pid: str) -> dict[str, Any] | None:
        found = self.service.projects.get(pid)
        return found.describe() if found is not None else None

    def create_project(self, spec: dict[str, Any]) -> None:
        self.service.create_project(spec)

    def update_project(self, pid: str, changes: dict[str, Any]) -> None:
        self.service.update_project(pid, changes)

    def submission(self, pid: str, overrides: dict[str, Any], fire: bool) -> str:
        sub = self.service.create_submission(pid, overrides, fire_webhooks=fire)
        return str(sub["submission_id"])

    def hosted(self, pid: str, token: str, outcome: str, overrides: dict[str, Any]) -> str:
        return str(
            self.service.liveform.hosted_submission(pid, token, outcome, overrides)["submission_id"]
        )

    def projection(self, pid: str, name: str, mode: str, fields: list[str]) -> str:
        project = self.service.project(pid)
        return self.service.create_projection(project, name, mode, fields).projection_id

    def watch(self, pid: str, entry: dict[str, Any]) -> None:
        self.service.screening.add_watchlist_entry(pid, entry)

    def watchlist_submission(self, pid: str, entry_id: str, overrides: dict[str, Any]) -> str:
        sub = self.service.screening.watchlist_submission(pid, entry_id, overrides)
        return str(sub["submission_id"])

    def worklist(self, pid: str, spec: dict[str, Any]) -> str:
        return str(self.service.screening.create_worklist(pid, spec)["id"])

    def tokens(self, pid: str, ids: list[str]) -> None:
        self.service.tokens.register(self.service.project(pid), ids)

    def delivery(self, pid: str, levers: dict[str, Any]) -> None:
        self.service.delivery.set_levers(pid, levers)


@dataclass(slots=True)
class HttpControl:
    http: httpx.Client

    def call(self, method: str, path: str, body: Any = None, **kw: Any) -> Any:
        response = self.http.request(method, path, json=body, **kw)
        if response.status_code >= 300:
            raise Refused(f"{method} {path} answered {response.status_code}: {response.text}")
        return response.json()

    def describe(self, pid: str) -> dict[str, Any] | None:
        response = self.http.get(f"/__admin/projects/{pid}", params={"show_keys": "true"})
        found: dict[str, Any] | None = response.json() if response.status_code == 200 else None
        return found

    def create_project(self, spec: dict[str, Any]) -> None:
        self.call("POST", "/__admin/projects", spec)

    def update_project(self, pid: str, changes: dict[str, Any]) -> None:
        self.call("PATCH", f"/__admin/projects/{pid}", changes)

    def submission(self, pid: str, overrides: dict[str, Any], fire: bool) -> str:
        params = {"fire_webhooks": "true"} if fire else {}
        path = f"/__admin/projects/{pid}/submissions"
        return str(self.call("POST", path, overrides, params=params)["submission_id"])

    def hosted(self, pid: str, token: str, outcome: str, overrides: dict[str, Any]) -> str:
        body = {"token": token, "outcome": outcome, "overrides": overrides}
        path = f"/__admin/projects/{pid}/hosted-submissions"
        return str(self.call("POST", path, body)["submission_id"])

    def projection(self, pid: str, name: str, mode: str, fields: list[str]) -> str:
        info = self.describe(pid) or {}
        body: dict[str, Any] = {"name": name, "mode": mode, "fields": fields}
        if info.get("options", {}).get("secure_transfer"):
            body = {"data": cipher(info)(body)}
        headers = {"x-api-key": str(info.get("api_key", ""))}
        return str(
            self.call("POST", operations.path("postProjection"), body, headers=headers)[
                "projection_id"
            ]
        )

    def watch(self, pid: str, entry: dict[str, Any]) -> None:
        self.call("POST", f"/__admin/projects/{pid}/watchlist", entry)

    def watchlist_submission(self, pid: str, entry_id: str, overrides: dict[str, Any]) -> str:
        body = {"entry_id": entry_id, "overrides": overrides}
        path = f"/__admin/projects/{pid}/watchlist-submissions"
        return str(self.call("POST", path, body)["submission_id"])

    def worklist(self, pid: str, spec: dict[str, Any]) -> str:
        return str(self.call("POST", f"/__admin/projects/{pid}/worklists", spec)["id"])

    def tokens(self, pid: str, ids: list[str]) -> None:
        """Through the API itself (the control API has no token call), with the key."""
        info = self.describe(pid) or {}
        body: dict[str, Any] = {"tokenId": ids}
        if info.get("options", {}).get("secure_transfer"):
            body = {"data": cipher(info)(body)}
        headers = {"x-api-key": str(info.get("api_key", ""))}
        self.call("POST", operations.path("postSubmissionTokens"), body, headers=headers)

    def delivery(self, pid: str, levers: dict[str, Any]) -> None:
        self.call("PUT", f"/__admin/projects/{pid}/webhook-delivery", levers)


def cipher(info: Mapping[str, Any]) -> Callable[[Any], str]:
    key, derivation = str(info["api_key"]), str(info["options"].get("key_derivation", "sha256"))
    return lambda value: crypto.encrypt(value, key, derivation)


def reason(exc: Exception) -> str:
    """Why a control call failed (with the first problems of an ``InvalidInput``)."""
    problems = exc.problems if isinstance(exc, InvalidInput) else []
    return "; ".join([str(exc), *problems[:5]])
