"""The control API under ``/__admin``: reset, projects, seeding, whole-state export/import.

No API key; meant for tests and demos on the same server. Every operation is a thin call to
the same :class:`~idv_mock.backend.Service` method a Python test would use in-process; the
backend's refusals become 400/404/409 in one place, ``refusal`` (used by ``app.admin_endpoint``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from idv_mock.backend import BackendError, Conflict, InvalidInput, NotFound, Service
from idv_mock.ground import schemas
from idv_mock.ground.errors import ApiError
from idv_mock.ground.jsondepth import MAX_DEPTH, STATE_DEPTH, STATE_MESSAGE
from idv_mock.ground.jsondepth import MESSAGE as DEPTH_MESSAGE
from idv_mock.serving.control import control_body, mask_key
from idv_mock.serving.fault_rules import unknown_errors
from idv_mock.serving.http import JSON, json_response, parse_json, says_body, service_of

Handler = Callable[[Request], Awaitable[Response]]


async def _json_body(request: Request, depth: int = MAX_DEPTH) -> Any:
    return _parsed(await request.body(), depth)


def _parsed(raw: bytes, depth: int) -> Any:
    try:
        return parse_json(raw, depth)
    except ValueError as exc:
        deep = str(exc) in (DEPTH_MESSAGE, STATE_MESSAGE)
        message = str(exc) if deep else "the body must be JSON"
        raise _bad(message) from None


async def _object_body(request: Request, depth: int = MAX_DEPTH) -> dict[str, Any]:
    body = await _json_body(request, depth)
    if not isinstance(body, dict):
        raise _bad("the body must be a JSON object")
    return body


JSON_WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def json_body_ok(request: Request) -> bool:
    """Whether a control call's body is said to be JSON: a write with a body, or with any
    ``Content-Type``, must say ``application/json`` (or ``+json``). A form or ``text/plain``
    is what a foreign page can send without asking (a CORS "simple request")."""
    if request.method not in JSON_WRITES:
        return True
    given = request.headers.get("content-type")
    if given is None:
        return not says_body(request.scope)
    media = given.split(";", 1)[0].strip().lower()
    return media == JSON or media.endswith("+json")


def _bad(message: str, errors: list[str] | None = None) -> ApiError:
    # raised inside admin_endpoint, which puts it in the control API's shape
    return ApiError(400, {"message": message, "errors": errors or []})


def refusal(exc: BackendError) -> ApiError:
    """A backend refusal as the control API answers it: 404 not found, 409 conflict, else 400."""
    status = 404 if isinstance(exc, NotFound) else 409 if isinstance(exc, Conflict) else 400
    problems = exc.problems[:50] if isinstance(exc, InvalidInput) else []
    return ApiError(status, control_body({"message": str(exc), "errors": problems}))


def _summary(service: Service, message: str) -> dict[str, Any]:
    summary = {"message": message, "projects": service.submission_counts()}
    saver = service.save_health.describe()  # only with a state file
    return summary if saver is None else {**summary, "saver": saver}


async def reset(request: Request) -> Response:
    service = service_of(request)
    service.reset()
    start = (
        "the state file's start state" if service.started_from_file else "the seeded start state"
    )
    return json_response(_summary(service, f"reset to {start}"))


async def list_projects(request: Request) -> Response:
    projects = [_keys_shown(request, p) for p in service_of(request).describe_projects()]
    return json_response({"projects": projects})


def _keys_shown(request: Request, project: dict[str, Any]) -> dict[str, Any]:
    """A project's description with its API key masked, unless ``?show_keys=true`` (the
    caller already passed the exposure rule): listings and screenshots leak no key."""
    if not _flag(request, "show_keys"):
        project["api_key"] = mask_key(str(project["api_key"]))
    return project


async def create_project(request: Request) -> Response:
    spec = await _object_body(request)
    return json_response(service_of(request).create_project(spec).describe(), 201)


async def get_project(request: Request) -> Response:
    return json_response(
        _keys_shown(request, service_of(request).project(_pid(request)).describe())
    )


async def update_project(request: Request) -> Response:
    changes = await _object_body(request)
    return json_response(service_of(request).update_project(_pid(request), changes).describe())


async def create_submission(request: Request) -> Response:
    overrides = await _object_body(request)
    fire = _flag(request, "fire_webhooks")
    sub = service_of(request).create_submission(_pid(request), overrides, fire_webhooks=fire)
    return json_response(sub, 201)


PLAIN_PROJECTION = ("projectionId", "projectionName")


async def hosted_submission(request: Request) -> Response:
    """A submission arriving through the hosted form: ``{token, outcome, overrides}``."""
    body = await _object_body(request)
    plain = [k for k in PLAIN_PROJECTION if k in body or k in request.query_params]
    overrides = body.get("overrides", {})
    if plain or (isinstance(overrides, dict) and "projection" in overrides):
        message = "projectionId and projectionName must come inside the encrypted token"
        raise _bad(message)
    unknown = set(body) - {"token", "outcome", "overrides"}
    if unknown or not isinstance(body.get("token"), str) or not isinstance(overrides, dict):
        message = "the body is {token: <encrypted JSON>, outcome, overrides: {...}}"
        raise _bad(message)
    outcome = body.get("outcome", "approved")
    from idv_mock.backend.liveform_links import Refused  # the form's (loaded by the call)

    try:
        sub = service_of(request).liveform.hosted_submission(
            _pid(request), body["token"], outcome, overrides
        )
    except Refused as exc:  # the form's own rules: its message and code (errors.LIVEFORM)
        raise ApiError(400, control_body({"message": str(exc), "errorCode": exc.code})) from None
    return json_response(sub, 201)


async def issue_liveform_secret(request: Request) -> Response:
    """A new secret key for the project's form links, shown this once (the vendor's console
    shows it once too); the previous one stops working."""
    secret = service_of(request).liveform.issue_secret(_pid(request))
    return json_response({"project_id": _pid(request), "secret_key": secret}, 201)


async def list_webhooks(request: Request) -> Response:
    """The project's deliveries; ``?state=held`` (or another state): only those."""
    state = request.query_params.get("state") or None
    found = service_of(request).delivery.in_state(_pid(request), state)
    return json_response({"deliveries": found})


def _release(request: Request, body: dict[str, Any]) -> Any:
    return {"released": service_of(request).delivery.release(_pid(request), body)}


def _resend(request: Request, body: dict[str, Any]) -> Any:
    return service_of(request).delivery.resend(_pid(request), request.path_params["delivery_id"])


def _set_levers(request: Request, body: dict[str, Any]) -> Any:
    return service_of(request).delivery.set_levers(_pid(request), body)


async def get_submission(request: Request) -> Response:
    sid = request.path_params["submission_id"]
    return json_response(service_of(request).stored_submission(_pid(request), sid))


async def export_state(request: Request) -> Response:
    """The whole state; ``?summary=true``: the counts and the state file's save health."""
    if _flag(request, "summary"):
        return json_response(_summary(service_of(request), "state summary"))
    return Response(service_of(request).export_state_json(), media_type=JSON)


async def import_state(request: Request) -> Response:
    """Parsed, checked and built in a worker thread, outside the service's lock, then
    swapped in at once: a large state (150 MB) leaves other calls answered meanwhile."""
    from starlette.concurrency import run_in_threadpool

    raw = await request.body()
    service = service_of(request)
    await run_in_threadpool(_import_state, service, raw)
    return json_response(_summary(service, "state imported"))


def _import_state(service: Any, raw: bytes) -> None:
    state = _parsed(raw, STATE_DEPTH)  # what any call stored comes back
    if not isinstance(state, dict):
        raise _bad("the body must be a JSON object")
    service.import_state(state, give=True)  # parsed here for it alone: no copy


async def add_fault(request: Request) -> Response:
    spec = await _object_body(request)
    service_of(request).project(_pid(request))  # an unknown project is a 404 first
    problems = unknown_errors(spec, request.app.state.api_families)
    if problems:
        raise _bad("invalid fault rule", problems)
    return json_response(service_of(request).calls.add_fault(_pid(request), spec), 201)


async def list_faults(request: Request) -> Response:
    return json_response({"faults": service_of(request).calls.faults(_pid(request))})


async def remove_faults(request: Request) -> Response:
    fault_id = request.path_params.get("fault_id")
    return json_response(
        {"removed": service_of(request).calls.remove_faults(_pid(request), fault_id)}
    )


def _call(
    operation: Callable[[Request, dict[str, Any]], Any], status: int = 200, threaded: bool = False
) -> Handler:
    """A handler that runs ``operation(request, body)`` and renders its result; ``threaded``:
    in a worker thread, for an operation that may run long (a clock advance's catch-up takes
    the lock in slices), so the event loop keeps answering meanwhile."""

    async def handler(request: Request) -> Response:
        raw = await request.body()
        body = await _object_body(request) if raw.strip() else {}
        if threaded:
            from starlette.concurrency import run_in_threadpool

            return json_response(await run_in_threadpool(operation, request, body), status)
        return json_response(operation(request, body), status)

    return handler


def _flag(request: Request, name: str) -> bool:
    """A switch in the query (``true``, ``1`` or ``yes``; absent: off)."""
    return request.query_params.get(name, "false").lower() in ("true", "1", "yes")


def _pid(request: Request) -> str:
    return str(request.path_params["project_id"])


def _watchlist_submission(request: Request, body: dict[str, Any]) -> Any:
    if set(body) - {"entry_id", "overrides"} or not isinstance(body.get("entry_id"), str):
        raise _bad("the body is {entry_id, overrides: {...}}")
    overrides = body.get("overrides", {})
    if not isinstance(overrides, dict):
        raise _bad("overrides must be an object")
    return service_of(request).screening.watchlist_submission(
        _pid(request), body["entry_id"], overrides
    )


def _register_record(request: Request, body: dict[str, Any]) -> Any:
    problems = schemas.errors("record_registration.json", body)
    if problems:
        raise _bad("the body is {submission_id, admin (optional)}", problems)
    wid = request.path_params["worklist_id"]
    return service_of(request).screening.register_record(
        _pid(request), wid, body["submission_id"], body.get("admin")
    )


def _set_active(active: bool) -> Callable[[Request, dict[str, Any]], Any]:
    def operation(request: Request, body: dict[str, Any]) -> Any:
        wid = request.path_params["worklist_id"]
        return service_of(request).screening.set_worklist_active(_pid(request), wid, active)

    return operation


def _journal(request: Request, body: dict[str, Any]) -> Any:
    method = request.query_params.get("method") or None  # an empty value filters nothing
    path = request.query_params.get("path") or None
    return {"requests": service_of(request).calls.journal(_pid(request), method, path)}


def _clear_journal(request: Request, body: dict[str, Any]) -> Any:
    return {"removed": service_of(request).calls.clear_journal(_pid(request))}


def _coverage_project(request: Request) -> str | None:
    return request.query_params.get("project") or None  # empty: every project


def _coverage(request: Request, body: dict[str, Any]) -> Any:
    return service_of(request).coverage.report(_coverage_project(request))


def _clear_coverage(request: Request, body: dict[str, Any]) -> Any:
    return {"cleared": service_of(request).coverage.clear(_coverage_project(request))}


ROUTES: dict[str, dict[str, Handler]] = {
    "/__admin/coverage": {"GET": _call(_coverage), "DELETE": _call(_clear_coverage)},
    "/__admin/reset": {"POST": reset},
    "/__admin/settings": {
        "GET": _call(lambda r, b: service_of(r).server_settings()),
        "PUT": _call(lambda r, b: service_of(r).update_settings(b)),
    },
    "/__admin/projects": {"GET": list_projects, "POST": create_project},
    "/__admin/projects/{project_id}": {"GET": get_project, "PATCH": update_project},
    "/__admin/projects/{project_id}/submissions": {"POST": create_submission},
    "/__admin/projects/{project_id}/reset": {
        "POST": _call(lambda r, b: service_of(r).reset_project(_pid(r)).describe()),
    },
    "/__admin/projects/{project_id}/requests": {
        "GET": _call(_journal),
        "DELETE": _call(_clear_journal),
    },
    "/__admin/projects/{project_id}/hosted-submissions": {"POST": hosted_submission},
    "/__admin/projects/{project_id}/liveform-secret": {"POST": issue_liveform_secret},
    "/__admin/projects/{project_id}/webhooks": {"GET": list_webhooks},
    "/__admin/projects/{project_id}/webhooks/release": {"POST": _call(_release)},
    "/__admin/projects/{project_id}/webhooks/{delivery_id}/resend": {"POST": _call(_resend, 201)},
    "/__admin/projects/{project_id}/webhook-routes": {
        "POST": _call(lambda r, b: service_of(r).delivery.add_route(_pid(r), b), 201),
    },
    "/__admin/projects/{project_id}/webhook-routes/{route_id}": {
        "GET": _call(lambda r, b: service_of(r).delivery.route(_pid(r), r.path_params["route_id"])),
        "DELETE": _call(
            lambda r, b: service_of(r).delivery.remove_route(_pid(r), r.path_params["route_id"])
        ),
    },
    "/__admin/projects/{project_id}/webhook-delivery": {
        "GET": _call(lambda r, b: service_of(r).delivery.levers(_pid(r))),
        "PUT": _call(_set_levers),
    },
    "/__admin/projects/{project_id}/watchlist": {
        "GET": _call(lambda r, b: {"entries": service_of(r).screening.watchlist(_pid(r))}),
        "POST": _call(lambda r, b: service_of(r).screening.add_watchlist_entry(_pid(r), b), 201),
    },
    "/__admin/projects/{project_id}/watchlist-submissions": {
        "POST": _call(_watchlist_submission, 201),
    },
    "/__admin/projects/{project_id}/worklists": {
        "GET": _call(lambda r, b: {"worklists": service_of(r).screening.worklists(_pid(r))}),
        "POST": _call(lambda r, b: service_of(r).screening.create_worklist(_pid(r), b), 201),
    },
    "/__admin/projects/{project_id}/worklists/{worklist_id}/records": {
        "POST": _call(_register_record, 201),
    },
    "/__admin/projects/{project_id}/worklists/{worklist_id}/activate": {
        "POST": _call(_set_active(True)),
    },
    "/__admin/projects/{project_id}/worklists/{worklist_id}/deactivate": {
        "POST": _call(_set_active(False)),
    },
    "/__admin/projects/{project_id}/submissions/{submission_id}": {"GET": get_submission},
    "/__admin/projects/{project_id}/clock": {
        "GET": _call(lambda r, b: service_of(r).clocks.describe(_pid(r))),
    },
    "/__admin/projects/{project_id}/clock/advance": {
        "POST": _call(lambda r, b: service_of(r).clocks.advance(_pid(r), b), threaded=True),
    },
    "/__admin/projects/{project_id}/faults": {
        "GET": list_faults,
        "POST": add_fault,
        "DELETE": remove_faults,
    },
    "/__admin/projects/{project_id}/faults/{fault_id}": {"DELETE": remove_faults},
    "/__admin/state": {"GET": export_state, "PUT": import_state},
}
