"""``idv-mock trigger EVENT``: one vendor webhook at your endpoint, from a real flow.

Stripe users type ``stripe trigger payment_intent.succeeded``; here each of the vendor's
triggers (``api.json``'s webhook table) is caused the way an integration causes it, against
a running mock: the hosted form walked over HTTP (``formwalk``), the API with the project's
key, the control API, the project's clock.
So the payload is the one a real flow sends, not a sample.

Which delivery is the event's: before acting, the command asks the control API for a
one-shot route (``POST /__admin/projects/{id}/webhook-routes``) naming the trigger and a
value only this run's flow carries (a fresh ``userid``, the submission it made, a fresh
token). The route records the delivery it made, which is read back with the receiver's
answer. ``--forward-to URL`` puts that URL in the route: the one event goes there instead
of the project's webhook URL, and every other delivery (the preceding ``approved`` of an
``updated`` run, anyone else's events) goes where it always goes.
"""

from __future__ import annotations

import secrets
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

import orjson

from idv_mock.ground import crypto, operations
from idv_mock.tools import formwalk

if TYPE_CHECKING:
    import httpx

TRIGGERS = operations.triggers()  # the webhook table of schemas/api.json
WITH_REASON = ("retry", "rejected", "injectionFail")  # the events a --reason chooses a code of
SETTLED = ("delivered", "failed", "dropped", "cancelled")
WAIT_SECONDS = 30.0  # a delivery's retries take 1.5 s by default; a slow receiver 5 s each


class TriggerError(Exception):
    """The mock refused a step of the flow (the message says which and why)."""


class BadUse(Exception):
    """A request the command cannot make sense of (exit 2)."""


@dataclass
class Mock:
    """A running mock and one of its projects, through its API and control API."""

    client: httpx.Client
    url: str
    project_id: str
    api_key: str
    project: dict[str, Any]

    @property
    def options(self) -> dict[str, Any]:
        return dict(self.project["options"])

    def admin(self, method: str, path: str, body: Any = None) -> Any:
        """A control-API call; its JSON answer, or TriggerError with its message."""
        full = f"{self.url}/__admin/projects/{self.project_id}{path}"
        response = self.client.request(method, full, json=body)
        return _answer(response, f"{method} {path or '/'}")

    def api(self, method: str, op: str, body: Any = None, query: Any = None, **path: str) -> Any:
        """An API call with the project's key, encrypted on a secure project."""
        secure = bool(self.options.get("secure_transfer"))
        derivation = str(self.options.get("key_derivation", "sha256"))
        if secure and body is not None:
            body = {"data": crypto.encrypt(body, self.api_key, derivation)}
        if secure and query is not None:
            query = {"data": crypto.encrypt(query, self.api_key, derivation)}
        where = operations.fill(operations.path(op), **path)
        response = self.client.request(
            method,
            f"{self.url}{where}",
            json=body,
            params=query,
            headers={"x-api-key": self.api_key},
        )
        return _answer(response, f"{method} {where}")

    def link(self, **params: Any) -> str:
        """A hosted-form link of the project, as ``idv_project.liveform_url`` builds it."""
        from idv_mock.backend.liveform_links import link_query

        options = self.options
        if options.get("liveform_key") == "secret":
            raise TriggerError(
                f"project {self.project_id} signs its form links with an issued secret "
                "(liveform_key: secret); trigger the form's events on a project using its "
                "API key"
            )
        seal = crypto.encrypt_gcm if options.get("liveform_cipher") == "gcm" else crypto.encrypt
        derivation = str(options.get("key_derivation", "sha256"))

        def encrypt(inner: dict[str, Any]) -> str:
            return seal(inner, self.api_key, derivation)

        only = bool(options.get("liveform_encrypted_only"))
        query = link_query(self.project_id, params, encrypt, encrypted_only=only)
        return f"{self.url}/liveform/?{urlencode(query)}"

    def walk(self, outcome: str, reason: str | None = None, **params: Any) -> formwalk.Walked:
        stop_at = params.pop("stop_at", None)
        if self.options.get("liveform_private_mode"):  # private mode: a link needs a token
            params.setdefault("token", _marker("token"))
        try:
            return formwalk.walk(self.client, self.link(**params), outcome, reason, stop_at=stop_at)
        except formwalk.Refused as exc:
            raise TriggerError(f"the hosted form refused: {exc}") from None

    def decrypted(self, body: Any) -> Any:
        """A delivery's body as the receiver reads it (a secure project's decrypted)."""
        if isinstance(body, dict) and body.get("isEncrypted") and isinstance(body.get("data"), str):
            derivation = str(self.options.get("key_derivation", "sha256"))
            return orjson.loads(crypto.decrypt_text(body["data"], self.api_key, derivation))
        return body


def _answer(response: httpx.Response, what: str) -> Any:
    found = response.json() if response.content else {}
    if response.status_code >= 400:
        detail = found.get("message", "") if isinstance(found, dict) else ""
        raise TriggerError(f"{what} answered {response.status_code} {detail}".rstrip())
    return found


@dataclass(frozen=True)
class Run:
    """What a trigger's flow made: the route's match, and the action that fires it."""

    match: dict[str, str]
    act: Callable[[], None]


def _marker(event: str) -> str:
    """A user id (or token) only this run uses, so its route takes no one else's event."""
    return f"trigger-{event.lower()}-{secrets.token_hex(4)}"


def _approved(mock: Mock) -> str:
    """A submission through the form, approved: what the later triggers act on."""
    walked = mock.walk("approved", userid=_marker("subject"))
    return walked.submission_id


def _admin_email(mock: Mock) -> str:
    admins = mock.project.get("admins") or []
    if not admins:
        raise TriggerError(f"project {mock.project_id} has no administrator e-mail")
    return str(admins[0])


def plan(event: str, mock: Mock, reason: str | None) -> Run:
    """How ``event`` is caused, and the payload values that single out its delivery."""
    user = _marker(event)
    if event in ("created", "retry", "submit", "approved", "rejected"):
        outcome = {"created": "approved", "submit": "pending"}.get(event, event)
        stop = {"created": "document", "retry": "document"}.get(event)
        why = reason if event in ("retry", "rejected") else None
        return Run({"userid": user}, lambda: _walk(mock, outcome, why, user, stop))
    if event == "token_expired":
        return Run({"token_id": user}, lambda: _expire_token(mock, user))
    sid = _approved(mock)
    actions: dict[str, Callable[[], None]] = {
        "updated": lambda: _update(mock, sid),
        "delete": lambda: _delete(mock, sid),
        "injection": lambda: _inject(mock, sid, None),
        "injectionFail": lambda: _inject(mock, sid, reason, fail=True),
        "aml": lambda: _screen(mock, sid),
        "aml_monitor": lambda: _monitor(mock, sid),
    }
    return Run({"submission_id": sid}, actions[event])


def _walk(mock: Mock, outcome: str, reason: str | None, user: str, stop: str | None) -> None:
    mock.walk(outcome, reason, userid=user, stop_at=stop)


def _update(mock: Mock, sid: str) -> None:
    body = {"submissionId": sid, "admin": _admin_email(mock), "data": {"memo": "idv-mock trigger"}}
    mock.api("PATCH", "patchSubmission", body)


def _delete(mock: Mock, sid: str) -> None:
    query = {"submission_id": sid, "admin_name": _admin_email(mock)}
    mock.api("DELETE", "deleteSubmission", query=query)


def _inject(mock: Mock, sid: str, reason: str | None, fail: bool = False) -> None:
    """The data-injection link walked to its tester panel's result: success, or a failCode
    (``reason``, else the first the panel offers after success)."""
    link = mock.link(action="addveri", sid=sid)
    choice = reason
    if fail and choice is None:
        page = formwalk.read_page(mock.client.get(link, follow_redirects=True))
        offered = next((f.choices("result") for f in page.forms if f.choices("result")), [])
        if len(offered) < 2:
            raise TriggerError("the injection form offers no failing result")
        choice = offered[1]
    try:
        formwalk.walk(mock.client, link, "rejected" if choice else "approved", choice)
    except formwalk.Refused as exc:
        if not fail:
            raise TriggerError(f"the hosted form refused: {exc}") from None
        # a failed injection ends on the form's error page: that is the flow


def _screen(mock: Mock, sid: str) -> None:
    body: dict[str, Any] = {"submissionId": sid}
    if mock.options.get("aml_threshold") is None:
        body["amlThreshold"] = 80  # the project's default threshold (docs/aml.md)
    mock.api("POST", "postSubmissionAml", body)


def _monitor(mock: Mock, sid: str) -> None:
    """Registers the submission in the project's first active worklist (one is made
    through the control API when there is none)."""
    found = mock.admin("GET", "/worklists").get("worklists", [])
    active = [w for w in found if w.get("active")]
    if active:
        wid = str(active[0]["id"])
    else:
        made = mock.admin("POST", "/worklists", {"name": "idv-mock trigger"})
        wid = str(made["id"])
    body = {"submissionIds": [sid], "admin": _admin_email(mock)}
    answer = mock.api("POST", "postSubmissionAmlMonitorWorklistId", body, worklistId=wid)
    if isinstance(answer, dict) and answer.get("failedCount"):
        raise TriggerError(f"the monitoring POST failed: {answer.get('failedResults')}")


def _expire_token(mock: Mock, token: str) -> None:
    """A private-mode token's link opened once, then the project's clock moved past the
    token's lifetime (``token_expiry_seconds``): the vendor's expiry by time."""
    options = mock.options
    switched = not options.get("token_expiry_webhook")
    if switched:  # the webhook is the project's option; on only for this run
        mock.admin("PATCH", "", {"options": {"token_expiry_webhook": True}})
    try:
        opened = mock.client.get(mock.link(userid=token, token=token), follow_redirects=True)
        page = formwalk.read_page(opened)
        if "error-code" in page.shown:
            raise TriggerError(f"the hosted form refused the token: {page.shown['error-code']}")
        seconds = int(options.get("token_expiry_seconds", 180))
        mock.admin("POST", "/clock/advance", {"seconds": seconds})
    finally:
        if switched:
            mock.admin("PATCH", "", {"options": {"token_expiry_webhook": False}})


def wait_for(mock: Mock, route_id: str, timeout: float = WAIT_SECONDS) -> dict[str, Any]:
    """The route's delivery once settled (delivered, failed after its retries, dropped)."""
    deadline = time.monotonic() + timeout
    while True:
        found = mock.admin("GET", f"/webhook-routes/{route_id}")
        delivery = found.get("delivery")
        if delivery is not None and delivery.get("state") in SETTLED:
            return dict(delivery)
        if time.monotonic() > deadline:
            state = delivery.get("state") if delivery else "never sent"
            raise TriggerError(
                f"the {found['webhook_trigger']} webhook is {state} after {timeout:g} s"
            )
        time.sleep(0.05)


def run(
    client: httpx.Client,
    url: str,
    project_id: str,
    event: str,
    *,
    api_key: str | None = None,
    forward_to: str | None = None,
    reason: str | None = None,
    timeout: float = WAIT_SECONDS,
) -> tuple[dict[str, Any], Any]:
    """Cause ``event`` and answer its delivery record and payload (decrypted)."""
    if event not in TRIGGERS:
        raise BadUse(f"EVENT must be one of {', '.join(TRIGGERS)}, not {event!r}")
    if reason is not None and event not in WITH_REASON:
        raise BadUse(f"--reason goes with {', '.join(WITH_REASON)}, not {event}")
    base = url.rstrip("/")
    project = _answer(
        client.get(f"{base}/__admin/projects/{project_id}?show_keys=true"), f"project {project_id}"
    )
    mock = Mock(client, base, project_id, api_key or str(project["api_key"]), project)
    if forward_to is None and not mock.options.get("webhook_url"):
        raise TriggerError(
            f"project {project_id} has no webhook_url: give --forward-to URL, or set one "
            f'(PATCH /__admin/projects/{project_id} {{"options": {{"webhook_url": ...}}}})'
        )
    steps = plan(event, mock, reason)
    route_doc: dict[str, Any] = {"webhook_trigger": event, "match": steps.match}
    if forward_to is not None:
        route_doc["url"] = forward_to
    route = mock.admin("POST", "/webhook-routes", route_doc)
    try:
        steps.act()
        delivery = wait_for(mock, route["route_id"], timeout)
    finally:
        mock.admin("DELETE", f"/webhook-routes/{route['route_id']}")
    return delivery, mock.decrypted(delivery.get("payload"))


def received(delivery: dict[str, Any]) -> int | None:
    """The receiver's status on the last attempt (None: no answer, a connection error)."""
    attempts = delivery.get("attempts") or []
    last = attempts[-1] if attempts else {}
    status = last.get("status_code")
    return int(status) if isinstance(status, int) else None


def main(
    event: str,
    url: str,
    project_id: str,
    *,
    api_key: str | None,
    admin_token: str | None,
    forward_to: str | None,
    reason: str | None,
) -> int:
    """``idv-mock trigger``: 0 the receiver answered 2xx, 1 otherwise, 2 bad use."""
    import httpx

    headers = {"x-idv-mock-admin-token": admin_token} if admin_token else {}
    try:
        with httpx.Client(headers=headers, timeout=10.0) as client:
            delivery, payload = run(
                client, url, project_id, event,
                api_key=api_key, forward_to=forward_to, reason=reason,
            )  # fmt: skip
    except BadUse as exc:
        print(f"idv-mock trigger: {exc}", file=sys.stderr)
        return 2
    except formwalk.BadChoice as exc:
        print(f"idv-mock trigger: {exc}", file=sys.stderr)
        return 2
    except (TriggerError, httpx.HTTPError) as exc:
        print(f"idv-mock trigger: {exc}", file=sys.stderr)
        return 1
    status = received(delivery)
    attempts = delivery.get("attempts") or []
    error = attempts[-1].get("error") if attempts else None
    answer = str(status) if status is not None else (error or delivery.get("state"))
    print(f"{event}: delivery {delivery['id']} to {delivery['url']}: {delivery['state']}")
    print(f"receiver answered: {answer} (attempts: {len(attempts)})")
    print(orjson.dumps(payload, option=orjson.OPT_INDENT_2).decode())
    return 0 if status is not None and 200 <= status < 300 else 1
