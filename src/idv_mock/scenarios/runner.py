"""Running a scenario's steps: send each request, check the response and the webhooks."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import ExitStack
from typing import Any

import httpx
import orjson

from idv_mock.backend import BackendError, Service, ServiceConfig
from idv_mock.delivery.receiver import WebhookReceiver
from idv_mock.ground import crypto
from idv_mock.scenarios.control import Control, HttpControl, Refused, ServiceControl, cipher, reason
from idv_mock.scenarios.given import Given
from idv_mock.scenarios.matching import MISSING, compare, differences, dig, expand, prepared, show
from idv_mock.scenarios.records import GivenError, Scenario, StepFailure, StepResult

SETTLE_SECONDS = 0.5  # how long a webhook count is watched for late deliveries


class _Runner:
    """Plays the steps of a scenario over ``http``, once its ``given`` is applied."""

    def __init__(self, scenario: Scenario, given: Given, http: httpx.Client) -> None:
        self.scenario, self.given, self.http = scenario, given, http
        self.receiver: WebhookReceiver | None = None
        self._webhooks: list[tuple[str, str, Any]] = []  # (project, event, payload)

    def run(self, stack: ExitStack) -> list[StepResult]:
        try:
            self.given.projects()
            if self.scenario.uses_webhooks:
                self.receiver = stack.enter_context(WebhookReceiver())
                stack.callback(self.given.unwire, self.given.wire(self.receiver.url))
            self.given.rest()
        except GivenError as exc:
            return [StepResult("given", False, (exc.problem,), line=exc.line)]
        except (BackendError, Refused, httpx.HTTPError) as exc:
            return [StepResult("given", False, (f"webhook receiver: {reason(exc)}",))]
        return [self._step(i, step) for i, step in enumerate(self.scenario.steps)]

    def _step(self, index: int, step: dict[str, Any]) -> StepResult:
        problems: list[str] = []
        status = None
        pid = step.get("project", self.scenario.project)
        try:
            if "request" in step or "advance" in step:
                response = self._send(step.get("request") or _advance(step["advance"], pid), pid)
                status = response.status_code
                self._check(step, response, pid, problems)
            for expectation in step.get("webhooks", []):
                problems += self._webhook(expectation, expectation.get("project", pid))
        except (StepFailure, httpx.HTTPError) as exc:
            problems.append(str(exc))
        line = self.scenario.lines.get(f"steps[{index}]", 0)
        return StepResult(step["name"], not problems, tuple(problems), status, line)

    def _send(self, spec: dict[str, Any], pid: str) -> httpx.Response:
        req = expand(spec, self.given.bound)
        seal = cipher(self.given.info(pid)) if req.get("encrypt") else None
        headers = dict(req.get("headers", {}))
        key = req["api_key"] if "api_key" in req else self.given.info(pid)["api_key"]
        if key is not None:
            headers["x-api-key"] = str(key)
        kw: dict[str, Any] = {"headers": headers}
        params = [(k, v) for k, vs in req.get("query", {}).items() for v in _texts(vs, seal)]
        if params:
            kw["params"] = params
        if "json" in req:
            kw["json"] = {"data": seal(req["json"])} if seal else req["json"]
        elif "form" in req:
            kw["data"] = {k: _texts(v, seal)[0] for k, v in req["form"].items()}
        elif "content" in req:
            kw["content"] = req["content"].encode("utf-8")
        path = req["path"]
        if not path.startswith(("/__admin", "/v3/")):
            path = "/v3" + path
        if path.startswith("/__admin"):
            self.given.forget()  # the control API may change a project's key derivation
        try:
            return self.http.request(req["method"], path, **kw)
        except httpx.HTTPError as exc:
            raise StepFailure(f"{req['method']} {path}: {exc}") from None

    def _check(
        self, step: dict[str, Any], response: httpx.Response, pid: str, out: list[str]
    ) -> None:
        expect = prepared(step.get("expect", {}), self.given.bound)
        status, wanted = response.status_code, expect.get("status")
        allowed = wanted if isinstance(wanted, list) else [wanted]
        ok = 200 <= status < 300 if wanted is None else status in allowed
        if not ok:
            shown = "2xx" if wanted is None else " or ".join(map(str, allowed))
            out.append(f"status: expected {shown}, got {status} {response.text[:300]}")
        media = response.headers.get("content-type", "").split(";")[0].strip()
        if "content_type" in expect and media.lower() != expect["content_type"].lower():
            out.append(f"content_type: expected {expect['content_type']}, got {media or 'none'}")
        for name, value in expect.get("headers", {}).items():
            compare(value, response.headers.get(name, MISSING), f"headers.{name}", out)
        if "body" not in expect and not step.get("save"):
            return
        body = self._body(response, pid, bool(expect.get("decrypt")))
        if "body" in expect:
            compare(expect["body"], body, "body", out)
        for name, path in step.get("save", {}).items():
            try:
                self.given.bound[name] = dig(body, path)
            except StepFailure as exc:
                out.append(f"save {name}: {exc}")

    def _body(self, response: httpx.Response, pid: str, decrypt: bool) -> Any:
        try:
            body = orjson.loads(response.content)
        except orjson.JSONDecodeError:
            media = response.headers.get("content-type", "none")
            raise StepFailure(f"body: not JSON ({media}, {len(response.content)} bytes)") from None
        return self._decrypted(body, pid) if decrypt else body

    def _decrypted(self, body: Any, pid: str) -> Any:
        if not (isinstance(body, dict) and body.get("isEncrypted") is True):
            raise StepFailure(f"body: not encrypted: {show(body)}")
        info = self.given.info(pid)
        derivation = str(info["options"].get("key_derivation", "sha256"))
        try:
            return crypto.decrypt(str(body.get("data")), str(info["api_key"]), derivation)
        except crypto.CryptoError as exc:
            raise StepFailure(f"body: does not decrypt with {pid}'s key: {exc}") from None

    # --- webhooks ---
    def _webhook(self, spec: dict[str, Any], pid: str) -> list[str]:
        event, count = spec["event"], spec.get("count")
        payload = prepared(spec.get("payload", {}), self.given.bound)
        deadline = time.monotonic() + float(spec.get("timeout", 5))
        found = self._matching(pid, event, payload)
        while len(found) < (1 if count is None else count) and time.monotonic() < deadline:
            time.sleep(0.02)
            found = self._matching(pid, event, payload)
        if count is not None:
            time.sleep(SETTLE_SECONDS)
            found = self._matching(pid, event, payload)
            if len(found) != count:
                return [f"webhook {event}: expected {count} matching, got {len(found)}"]
            return []
        if found:
            return []
        same = [p for proj, ev, p in self._webhooks if (proj, ev) == (pid, event)]
        if not same:
            seen = sorted({f"{ev} ({proj})" for proj, ev, _ in self._webhooks}) or ["nothing"]
            return [f"webhook {event}: none sent to {pid}; received {', '.join(seen)}"]
        closest = min((differences(payload, p) for p in same), key=len)
        return [f"webhook {event}: none of {len(same)} matched; closest: {'; '.join(closest[:4])}"]

    def _matching(self, pid: str, event: str, payload: Any) -> list[Any]:
        assert self.receiver is not None
        for item in self.receiver.received[len(self._webhooks) :]:
            proj = item.path.rstrip("/").rsplit("/", 1)[-1]
            body = item.body
            if isinstance(body, dict) and body.get("isEncrypted") is True:
                body = self._decrypted(body, proj)
            self._webhooks.append((proj, item.event, body))
        return [
            p
            for proj, ev, p in self._webhooks
            if (proj, ev) == (pid, event) and not differences(payload, p)
        ]


def _texts(value: Any, seal: Callable[[Any], str] | None) -> list[str]:
    """Query or form values as text: objects encrypted (or JSON), lists repeated."""
    if isinstance(value, list):
        return [t for v in value for t in _texts(v, seal)]
    if isinstance(value, dict):
        return [seal(value) if seal else orjson.dumps(value).decode()]
    if isinstance(value, bool):
        return ["true" if value else "false"]
    return [str(value)]


def _root(base_url: str) -> str:
    root = base_url.rstrip("/")
    return root[: -len("/v3")] if root.endswith("/v3") else root


def _in_process_client(service: Service) -> httpx.Client:
    """The ``idv_client`` fixture's client on the app, answering 500s as responses."""
    from idv_mock.api.app import create_app
    from idv_mock.transport import ASGITransport, InProcessClient

    transport = ASGITransport(create_app(service), raise_app_exceptions=False)
    return InProcessClient(transport=transport, base_url="http://testserver")


def _connect(
    stack: ExitStack, base_url: str | None, api_key: str | None, service: Service | None
) -> tuple[httpx.Client, Control]:
    """The client the steps use and the control ``given`` goes through, closed by ``stack``."""
    if base_url is not None:
        http = stack.enter_context(httpx.Client(base_url=_root(base_url), timeout=30))
        return http, HttpControl(http)
    if service is None:
        config = ServiceConfig(webhook_backoff=(0.05, 0.1))
        if api_key:
            config.api_key = api_key
        service = Service(config)
        stack.callback(service.close)
    return stack.enter_context(_in_process_client(service)), ServiceControl(service)


def run(
    scenario: Scenario,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    service: Service | None = None,
    reset: bool = False,
    on_response: Callable[[httpx.Response], None] | None = None,
    reset_all: bool = False,
) -> list[StepResult]:
    """Apply ``given`` and play the steps; one result per step (or one failed ``given``).

    Without ``base_url``: in-process, on ``service`` or a fresh one (``api_key`` is then
    the default project's key). With it (``http://host:port/v3``): against that server,
    ``given`` through its control API, ``api_key`` the default project's key there.
    ``reset`` first puts back the projects the scenario uses (``POST
    /__admin/projects/{id}/reset`` for each one the server has), leaving the server's
    others alone; ``reset_all`` first calls ``POST /__admin/reset`` (every project);
    ``on_response`` sees every response.
    """
    with ExitStack() as stack:
        http, control = _connect(stack, base_url, api_key, service)
        if on_response is not None:
            http.event_hooks["response"] = [on_response]
        if reset or reset_all:
            try:
                _reset(HttpControl(http), scenario, reset_all)
            except (Refused, httpx.HTTPError) as exc:
                return [StepResult("reset", False, (str(exc),))]
        results = _Runner(scenario, Given(control, scenario, api_key), http).run(stack)
    if base_url is not None and not (reset or reset_all) and results and results[0].name == "given":
        hint = "the server may hold an earlier run's state: reset=True (--reset) starts afresh"
        results[0] = StepResult("given", False, (*results[0].problems, hint), line=results[0].line)
    return results


def _reset(control: HttpControl, scenario: Scenario, everything: bool) -> None:
    """Every project of the server back to its start, or only the scenario's (a project
    an earlier run created goes back to how it was created)."""
    if everything:
        control.call("POST", "/__admin/reset")
        return
    for pid in scenario.projects:
        if control.describe(pid) is not None:
            control.call("POST", f"/__admin/projects/{pid}/reset")


UNIT_SECONDS = {"seconds": 1, "minutes": 60, "hours": 3600, "days": 86400}


def _advance(spec: dict[str, Any], pid: str) -> dict[str, Any]:
    """An ``advance`` step as the control API's call: the units summed, or ``to``."""
    if "to" in spec:
        body: dict[str, Any] = {"to": spec["to"]}
    else:
        body = {"seconds": sum(UNIT_SECONDS[k] * v for k, v in spec.items())}
    return {"method": "POST", "path": f"/__admin/projects/{pid}/clock/advance", "json": body}
