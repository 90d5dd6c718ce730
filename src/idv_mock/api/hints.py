"""Near-miss hints: for a call that does not match the contract, one line saying what was
probably meant, without changing a byte of the status or body the service would send.

The answer stays exactly the service's (a ``404 {"message":"Not Found"}`` for
``/v3/submission/{id}``, ``400 invalid_project`` for ``Authorization: Bearer``), so an
integrator's code meets the real behaviour; the hint goes beside it, where a person
looks: the response header ``x-idv-mock-hint``, the ``hint`` field of the call's journal
entry and a warning of the logger ``idv_mock.hints``. WireMock's "near misses" are the
model.

Rules are small functions in one table, tried in order; the first with something to say
wins. Parameter names come from the operation index (``schemas/api.json``), aliases from
the table below. A rule reads only the call and the caller's own project: a hint never
says anything about another project's data (a submission id of another project answers
as unknown, with no hint).
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import Response

from idv_mock.api.get_submission import ENCRYPTABLE
from idv_mock.backend import Project
from idv_mock.ground import operations as table
from idv_mock.ground import schemas
from idv_mock.serving import secure
from idv_mock.serving.http import body_of, parse_json, path_of, project_of, service_of

HEADER = "x-idv-mock-hint"
LOG = logging.getLogger("idv_mock.hints")
MAX_LENGTH = 300  # one readable line; user values inside are cut at SHOWN
SHOWN = 60
KEY_HEADER = "x-api-key"
# names under which a key is often sent by mistake (normalised: lower case, letters/digits)
KEY_NAMES = frozenset({"xapikey", "apikey", "apikeyid", "xapitoken", "apitoken"})
# a wrong name (normalised) -> what it usually means, tried against the call's own names
ALIASES: dict[str, tuple[str, ...]] = {
    "id": ("submission_id", "submissionId", "resourceId"),
    "sid": ("submission_id", "submissionId"),
    "limit": ("count",),
    "size": ("count",),
    "pagesize": ("count",),
    "perpage": ("count",),
    "mail": ("email",),
    "nextpagekey": ("nextpage_id",),
    "nextpage": ("nextpage_id",),
    "from": ("start_date",),
    "to": ("end_date",),
    "admin": ("admin_name", "admin"),
    "adminname": ("admin", "admin_name"),
    "adminemail": ("admin", "admin_name"),
    "threshold": ("amlThreshold",),
    "ids": ("submissionIds", "recordIds"),
    "dateofbirth": ("birthDate",),
    "status": ("kycStatus",),
    "kycresult": ("kycStatus",),
}
CRYPTO = "AES-256-ECB, key SHA-256 of the API key, PKCS#7, base64"
SECURE_ON = "Secure Data Transfer is on for this project"
# how a Secure Data Transfer project takes an encrypted body: PATCH as the spec's form
# field, every other call as JSON; which calls do is the operation index's (api.json)
_PATCH_CIPHERTEXT = "the form field data=<URI-encoded ciphertext>"
_JSON_CIPHERTEXT = 'JSON {"data": "<ciphertext>"}'


@dataclass(
    slots=True
)  # not frozen: a frozen dataclass's __init__ is slow, and one is made per call
class Call:
    """What the rules read of one call (its answer included)."""

    method: str
    path: str
    query: list[tuple[str, str]]
    headers: Headers
    body: bytes
    status: int
    project: Project | None  # the project of its x-api-key


@dataclass(frozen=True, slots=True)
class Found:
    """A hint (or None) and the project whose key the call carried, wherever it was sent:
    the journal it belongs in."""

    text: str | None
    owner: Project | None


NOTHING = Found(None, None)
Rule = Callable[[Call], "str | None"]  # a hint, or None: the next rule is asked


async def apply(request: Request, response: Response) -> Found:
    """The call's hint, set on ``response`` and logged; nothing when hints are off."""
    if not getattr(request.app.state, "hints", False):
        return NOTHING
    call = Call(
        request.method,
        path_of(request),
        _query(request),
        request.headers,
        await body_of(request),
        response.status_code,
        project_of(request),
    )
    text = hint_for(call)
    if text is not None:
        response.headers[HEADER] = text
        LOG.warning("%s %s -> %d: %s", call.method, _shown(call.path), call.status, text)
    return Found(text, call.project or _misplaced_project(request, call))


def _query(request: Request) -> list[tuple[str, str]]:
    """The query's pairs as ``query_pairs`` reads them, from the request's own parse (the
    handler's, usually) rather than a second one; none for an empty query string."""
    if not request.scope["query_string"]:
        return []
    return request.query_params.multi_items()


def hint_for(call: Call) -> str | None:
    for rule in RULES:
        found = rule(call)
        if found is not None:
            return _one_line(found)
    return None


# --- the contract's paths (schemas/api.json) ---


@functools.cache
def encrypted_bodies() -> dict[tuple[str, str], str]:
    """(method, path template) -> how its body goes encrypted on a secure project, for the
    calls whose index entry lists ``encrypted_request.json``; every other body stays plain."""
    return {
        (method, template): _PATCH_CIPHERTEXT if method == "PATCH" else _JSON_CIPHERTEXT
        for template, methods in operations().items()
        for method, op in methods.items()
        if "encrypted_request.json" in op.get("body", ())
    }


@functools.cache
def operations() -> dict[str, dict[str, dict[str, Any]]]:
    """Path template -> method -> its operation's entry, from the operation table (a path
    with no method of its own maps to none)."""
    return {
        path: {m: op.entry for m, op in ops.items() if m != table.ANY}
        for path, ops in table.by_path().items()
    }


@functools.cache
def _patterns() -> tuple[tuple[re.Pattern[str], str], ...]:
    return tuple(
        (re.compile(re.sub(r"\{[^/]+\}", "[^/]+", template)), template) for template in operations()
    )


@functools.lru_cache(maxsize=4096)  # several rules ask, per call; paths repeat
def route_of(path: str) -> str | None:
    """The contract's path template ``path`` is an instance of, if any."""
    if path in operations():  # most calls: no path parameter, one dict look-up
        return path
    for pattern, template in _patterns():
        if pattern.fullmatch(path):
            return template
    return None


METHOD_ORDER = table.METHOD_ORDER


def methods_of(path: str) -> tuple[str, ...]:
    """The methods the contract serves at ``path``, in the order of the ``Allow`` header."""
    template = route_of(path)
    served = operations()[template] if template else {}
    return tuple(m for m in METHOD_ORDER if m in served)


@functools.cache
def names_of(template: str, method: str) -> tuple[frozenset[str], frozenset[str]]:
    """The query and top-level body names an operation takes."""
    op = operations().get(template, {}).get(method, {})
    query = op.get("query")
    query_names = set(schemas.load(query).get("properties", {})) if query else set()
    body_names: set[str] = set()
    for body in op.get("body", ()):
        body_names |= set(schemas.load(body).get("properties", {}))
    return frozenset(query_names - {"data"}), frozenset(body_names - {"data"})


PATCH_BODY = "patch_submission_request.json"


@functools.cache
def patch_data_names() -> frozenset[str]:
    data = schemas.load(PATCH_BODY)["properties"]["data"]
    return frozenset(data.get("properties", {}))


def _edits_data(template: str, method: str) -> bool:
    """The call edits a submission's ``data`` (its body is PATCH's)."""
    return PATCH_BODY in operations().get(template, {}).get(method, {}).get("body", ())


@functools.cache
def array_names(template: str, method: str) -> frozenset[str]:
    """The top-level body names an operation takes as an array."""
    op = operations().get(template, {}).get(method, {})
    return frozenset(
        name
        for body in op.get("body", ())
        for name, spec in _properties(schemas.load(body))
        if spec.get("type") == "array"
    )


def _properties(schema: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """A body schema's top-level properties, its ``oneOf``/``anyOf`` branches' too."""
    found = list(schema.get("properties", {}).items())
    for key in ("oneOf", "anyOf"):
        for branch in schema.get(key, ()):
            found += branch.get("properties", {}).items()
    return found


# --- rules ---


def unknown_path(call: Call) -> str | None:
    """A path the contract does not have, close to one it has."""
    if call.status != 404 or route_of(call.path) is not None:
        return None
    shown = f"{call.method} {_shown(call.path)} is not a path of the API"
    item = _item_path(call.method, call.path)
    if item is not None:
        return f"{shown}; {item}"
    for candidate, why in _path_candidates(call.path):
        if route_of(candidate) is not None:
            return f"{shown}; did you mean {candidate}? ({why})"
    import difflib  # rare: not worth its import at every start

    close = difflib.get_close_matches(call.path, list(operations()), n=1, cutoff=0.8)
    return f"{shown}; did you mean {close[0]}?" if close else None


ITEM = re.compile(r"(?:/v3)?/submissions?/([^/]+)/?")
ITEM_ADVICE = {
    "GET": "to read one submission: GET /v3/submission?submission_id={id}",
    "DELETE": "to delete one: DELETE /v3/submission?submission_id={id}",
    "PATCH": 'to edit one: PATCH /v3/submission with {{"submissionId": "{id}", ...}} in the body',
}


def _item_path(method: str, path: str) -> str | None:
    """``/v3/submission/{id}``: the API takes the id as a parameter, not a path segment."""
    match = ITEM.fullmatch(path)
    if match is None or match.group(1) in _sub_resources():
        return None
    advice = ITEM_ADVICE.get(method, ITEM_ADVICE["GET"])
    return "the id is a parameter, not a path segment: " + advice.format(id=_shown(match[1]))


@functools.cache
def _sub_resources() -> frozenset[str]:
    """The segments after ``/v3/submission/`` that are paths of their own (``tokens``,
    ``partial``, ...), not a submission id put in the path."""
    parent = table.path("getSubmission") + "/"
    return frozenset(
        p.removeprefix(parent).split("/")[0] for p in operations() if p.startswith(parent)
    )


def _path_candidates(path: str) -> list[tuple[str, str]]:
    bare = path.rstrip("/") or "/"
    base = table.API_PREFIX + "/"
    with_v3 = bare if bare.startswith(base) else base + re.sub(r"^/(v\d+/)?", "", bare)
    singular = "/".join(_singular(part) for part in with_v3.lower().split("/"))
    return [
        (bare, "no trailing slash"),
        (with_v3, "the base URL ends in /v3"),
        (with_v3.lower(), "paths are lower case"),
        (singular, "the resource names are singular"),
    ]


def _singular(segment: str) -> str:
    return segment[:-1] if segment.endswith("s") and len(segment) > 3 else segment


def lost_body(call: Call) -> str | None:
    """uvicorn (httptools) stops reading at an ``Upgrade: h2c`` header it does not serve,
    so the body that follows never arrives; Java's HttpClient asks for it by default."""
    if call.body or "upgrade" not in call.headers:  # the rare header first: one scan a call
        return None
    said = call.headers.get("content-length", "0")
    if said in ("", "0"):
        return None
    upgrade = _shown(call.headers["upgrade"])
    return (
        f"the body ({_shown(said)} bytes) was not read: the request asked to upgrade to "
        f"{upgrade}, which the mock does not serve; send HTTP/1.1 without Upgrade "
        "(Java: HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1))"
    )


def cors_preflight(call: Call) -> str | None:
    if call.method != "OPTIONS" or "access-control-request-method" not in call.headers:
        return None
    return (
        "a browser's CORS preflight: CORS is off, as on the real API; "
        "start the mock with --cors-origin ORIGIN to serve browser clients"
    )


def wrong_method(call: Call) -> str | None:
    template = route_of(call.path)
    allowed = methods_of(call.path)
    if template is None or call.method in allowed:
        return None
    if not allowed:
        return f"{template} takes no method; ongoing monitoring is {template}/{{worklistId}}"
    return f"{call.method} is not a method of {template}: it takes {', '.join(allowed)}"


def misplaced_key(call: Call) -> str | None:
    """The API key in a query parameter, in ``Authorization`` or in a header of another
    name: this API reads it only from ``x-api-key``."""
    for name, _ in call.query:
        if _norm(name) in KEY_NAMES:
            return f"the API key goes in the {KEY_HEADER} header, not in the query ({_shown(name)})"
    if call.project is not None or not call.path.startswith(table.API_PREFIX):
        return None
    authorization = call.headers.get("authorization")
    if authorization is not None and KEY_HEADER not in call.headers:
        scheme = _shown(authorization.split(" ", 1)[0])
        return f"the API key goes in the {KEY_HEADER} header, not in Authorization: {scheme}"
    for name in call.headers:
        if name != KEY_HEADER and _norm(name) in KEY_NAMES:
            return f"the API key goes in the {KEY_HEADER} header, not in {_shown(name)}"
    if KEY_HEADER not in call.headers:
        return f"no {KEY_HEADER} header: every call carries the project's API key in it"
    return None


def secure_mismatch(call: Call) -> str | None:
    """A plain request to a Secure Data Transfer project, or the other way round."""
    if call.project is None or call.status < 400:
        return None
    names = {name for name, _ in call.query}
    if not secure.is_secure(call.project):
        if call.method == "GET" and "data" in names:
            return "Secure Data Transfer is off for this project: send the parameters plain"
        return None
    if call.method == "GET" and names & set(ENCRYPTABLE):
        only = ", ".join(ENCRYPTABLE)
        return f"{SECURE_ON}: {only} go only inside the encrypted query parameter data ({CRYPTO})"
    where = encrypted_bodies().get((call.method, route_of(call.path) or ""))
    if where is not None and not _carries_ciphertext(call.body):
        return f"{SECURE_ON}: encrypt the whole body ({CRYPTO}) and send it as {where}"
    if where is None and call.method in ("PATCH", "POST") and _ciphertext_only(call.body):
        *most, last = (f"{m} {p}" for m, p in encrypted_bodies())
        calls = f"{', '.join(most)} and {last}" if most else last
        return f"{SECURE_ON}, but this call takes its body plain: only {calls} are encrypted"
    return None


def form_for_json(call: Call) -> str | None:
    """A form-encoded body where the call takes JSON."""
    template = route_of(call.path)
    if call.status < 400 or not call.body or template is None:
        return None
    body_names = names_of(template, call.method)[1]
    op = operations()[template].get(call.method, {})
    if not body_names or _json(call.body) is not None or "body_media" in op:
        return None
    fields = _form(call.body)
    if not fields:
        return None
    sent = "&".join(f"{_shown(name)}=..." for name in fields)
    wanted = ", ".join(f'"{name}": ...' for name in sorted(body_names))
    return (
        f"the body is form-encoded ({sent}); {call.method} {template} takes a JSON object "
        f"({{{wanted}}}) with content-type: application/json"
    )


def body_on_get(call: Call) -> str | None:
    if call.method != "GET" or not call.body:
        return None
    doc = _json(call.body)
    names = list(doc) if isinstance(doc, dict) else []
    example = "&".join(f"{_shown(n)}=..." for n in names[:3]) or "submission_id=..."
    return f"a GET's body is ignored: send the parameters in the query string (?{example})"


def wrong_names(call: Call) -> str | None:
    """A parameter or body field whose name is close to one the call takes."""
    template = route_of(call.path)
    if template is None or call.method not in methods_of(call.path):
        return None
    query_names, body_names = names_of(template, call.method)
    for name, _ in call.query:
        if name not in query_names:
            found = _name_hint(name, query_names, body_names, "query parameter", "body")
            if found is not None:
                return f"{call.method} {template}: {found}"
    doc = _json(call.body) if call.status >= 400 and call.body else None
    if not isinstance(doc, dict):
        return None
    for name in doc:
        if name not in body_names and name != "data":
            found = _name_hint(name, body_names, query_names, "body field", "query string")
            if found is not None:
                return f"{call.method} {template}: {found}"
    data = doc.get("data")
    if isinstance(data, dict) and _edits_data(template, call.method):
        for name in data:
            if name not in patch_data_names():
                better = _closest(name, patch_data_names())
                if better is not None:
                    wrong = f'"data.{_shown(name)}" is not a property to edit'
                    return f'{call.method} {template}: {wrong}; did you mean "data.{better}"?'
    return None


def _name_hint(
    name: str, here: frozenset[str], there: frozenset[str], kind: str, other: str
) -> str | None:
    better = _closest(name, here)
    if better is not None:
        return f'"{_shown(name)}" is not a {kind}; did you mean "{better}"?'
    elsewhere = name if name in there else _closest(name, there)
    if elsewhere is not None:
        return f'"{_shown(name)}" goes in the {other} here, as "{elsewhere}"'
    return None


@functools.lru_cache(maxsize=1024)  # a pure function, asked on every call with a parameter
def _closest(name: str, names: frozenset[str]) -> str | None:
    """The name ``name`` most likely meant: the same letters in another case or spelling
    (``submissionId``/``submission_id``), a singular or plural, or a known alias."""
    wanted = _norm(name)
    by_norm = {_norm(n): n for n in names}
    for form in (wanted, wanted + "s", wanted.removesuffix("s")):
        if form in by_norm and by_norm[form] != name:
            return by_norm[form]
    for alias in ALIASES.get(wanted, ()):
        if alias in names and alias != name:
            return alias
    return None


def multipart_boundary(call: Call) -> str | None:
    """PUT /submission/image with a hand-set multipart content-type that lost its boundary."""
    kind = call.headers.get("content-type", "")
    if call.status != 400 or not kind.lower().startswith("multipart/"):
        return None
    op = operations().get(route_of(call.path) or "", {}).get(call.method, {})
    if op.get("body_media") != "multipart/form-data":
        return None
    if "boundary=" in kind.lower():
        return None
    return (
        "content-type multipart/form-data without a boundary: let the client set the header "
        "(curl --form, requests files=, httpx files=), as the vendor's guide says"
    )


def token_ids_not_array(call: Call) -> str | None:
    """``tokenId`` sent as one string where the token calls take an array."""
    template = route_of(call.path)
    if call.status != 400 or template is None:
        return None
    if "tokenId" not in array_names(template, call.method):
        return None
    doc = _json(call.body)
    if isinstance(doc, dict) and isinstance(doc.get("tokenId"), str):
        return f'tokenId is an array of strings: {{"tokenId": ["{_shown(doc["tokenId"])}"]}}'
    return None


RULES: tuple[Rule, ...] = (
    unknown_path,
    lost_body,
    cors_preflight,
    wrong_method,
    misplaced_key,
    secure_mismatch,
    form_for_json,
    body_on_get,
    multipart_boundary,
    token_ids_not_array,
    wrong_names,
)


# --- helpers ---


def _misplaced_project(request: Request, call: Call) -> Project | None:
    """The project of a key sent where the API does not read it (query, Authorization),
    so the call lands in the journal of the project that made it."""
    candidates = [value for name, value in call.query if _norm(name) in KEY_NAMES]
    authorization = call.headers.get("authorization", "")
    candidates.append(authorization.split(" ", 1)[-1].strip())
    candidates += [v for n, v in call.headers.items() if _norm(n) in KEY_NAMES]
    service = service_of(request)
    for key in candidates:
        project = service.project_for_key(key) if key else None
        if project is not None:
            return project
    return None


def _ciphertext_only(raw: bytes) -> bool:
    """A body that is nothing but an encrypted ``data`` (JSON ``{"data": ...}`` or a form)."""
    doc = _json(raw)
    if isinstance(doc, dict):
        return set(doc) == {"data"} and isinstance(doc["data"], str)
    return doc is None and _carries_ciphertext(raw)


def _carries_ciphertext(raw: bytes) -> bool:
    try:
        secure.ciphertext_from_body(raw)
    except secure.BadCiphertext:
        return False
    return True


def _json(raw: bytes) -> Any:
    try:
        return parse_json(raw)
    except ValueError:
        return None


def _form(raw: bytes) -> list[str]:
    """The field names of a form-encoded body (empty if it is not one)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return []
    if "=" not in text or text.lstrip().startswith(("{", "[")):
        return []
    return [pair.split("=", 1)[0] for pair in text.split("&") if "=" in pair][:5]


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _shown(value: str) -> str:
    """A value of the caller's inside a hint: printable ASCII, cut short."""
    return _clip(value, SHOWN)


def _one_line(text: str) -> str:
    return _clip(text, MAX_LENGTH)


def _clip(text: str, limit: int) -> str:
    clean = "".join(c if " " <= c <= "~" else "?" for c in text)
    return clean if len(clean) <= limit else clean[: limit - 3] + "..."
