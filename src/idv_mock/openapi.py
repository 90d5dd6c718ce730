"""The OpenAPI document of the /v3 API, generated from ``schemas/`` (no second copy).

Every operation, parameter, request body and response comes from ``schemas/api.json`` and
the schema files it names; the schema files become ``components/schemas`` (``$defs``
entries are hoisted as ``<file>.<def>``). OpenAPI 3.1 takes JSON Schema as it is; the 3.0
rendering rewrites the few keywords 3.0 lacks (``const``, type lists, ``null``), for tools
such as Prism whose 3.1 support is partial.
"""

from __future__ import annotations

import copy
import functools
import posixpath
import re
from typing import Any

from idv_mock import errors, schemas
from idv_mock.backend.monitoring import DEFAULT_WORKLIST

TITLE = "Identity Verification Service API v3 (idv-mock)"
SECURITY = {"apiKey": {"type": "apiKey", "in": "header", "name": "x-api-key"}}
SKIP_KEYS = ("$schema", "$id", "$defs", "title")
PATH_PARAM = re.compile(r"\{([^}]+)\}")
ERROR_EXAMPLES = {
    "/submission": {"GET": errors.GET_SUBMISSION, "PATCH": errors.PATCH_SUBMISSION,
                    "DELETE": errors.DELETE_SUBMISSION},
    "/submission/partial": {"DELETE": errors.PARTIAL_DELETE},
    "/submission/aml": {"POST": errors.AML_SCREENING},
    "/report/aml": {"GET": errors.AML_REPORT},
    "/submission/tokens": {"POST": errors.TOKENS, "GET": errors.TOKENS, "DELETE": errors.TOKENS},
    "/submission/review": {"POST": errors.REVIEW},
    "/image": {"GET": errors.GET_IMAGE},
    "/submission/image": {"PUT": errors.PUT_IMAGE},
    "/submission/migration": {"POST": errors.MIGRATION},
}  # fmt: skip


def _component(name: str) -> str:
    """A schema file's component name: its stem, or, for a file in a folder (the webhook
    payloads, ``webhooks/approved.json``), its title (``ApprovedWebhook``): a name generated
    clients use as it is for the payload's class."""
    if "/" in name:
        return str(schemas.load(name)["title"])
    return name.removesuffix(".json")


def _rewrite_ref(ref: str, current: str) -> str:
    """A file-relative ``$ref`` as a reference into ``components/schemas``."""
    target, _, pointer = ref.partition("#")
    if target:  # relative to the folder of the file that holds it
        target = posixpath.normpath(posixpath.join(posixpath.dirname(current), target))
    stem = _component(target or current)
    if pointer.startswith("/$defs/"):
        name, _, rest = pointer.removeprefix("/$defs/").partition("/")
        return f"#/components/schemas/{stem}.{name}" + (f"/{rest}" if rest else "")
    return f"#/components/schemas/{stem}" + pointer


def _rewrite(node: Any, current: str) -> Any:
    if isinstance(node, dict):
        out = {k: _rewrite(v, current) for k, v in node.items() if k not in SKIP_KEYS}
        if "$ref" in node:
            out["$ref"] = _rewrite_ref(node["$ref"], current)
        return out
    if isinstance(node, list):
        return [_rewrite(v, current) for v in node]
    return node


def _components() -> dict[str, Any]:
    found: dict[str, Any] = {}
    for name, schema in schemas.all_schemas().items():
        if name == "api.json":
            continue
        stem = _component(name)
        found[stem] = _rewrite(schema, name)
        for def_name, definition in schema.get("$defs", {}).items():
            found[f"{stem}.{def_name}"] = _rewrite(definition, name)
    for stem, schema in found.items():
        found[stem] = _typed(_flatten(schema, found))
    return {stem: _inline_deep_refs(schema, found) for stem, schema in found.items()}


def _inline_deep_refs(node: Any, found: dict[str, Any]) -> Any:
    """A ``$ref`` into a component's inside (``token_request/properties/tokenId/items``) as
    a copy of its target: code generators resolve references to whole components only."""
    if isinstance(node, list):
        return [_inline_deep_refs(v, found) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _inline_deep_refs(v, found) for k, v in node.items()}
    stem, _, pointer = out.get("$ref", "").removeprefix("#/components/schemas/").partition("/")
    if not pointer:
        return out
    target: Any = found[stem]
    for part in pointer.split("/"):
        target = target[part.replace("~1", "/").replace("~0", "~")]
    siblings = {k: v for k, v in out.items() if k != "$ref"}
    return _inline_deep_refs(copy.deepcopy(target), found) | siblings


def _flatten(schema: dict[str, Any], found: dict[str, Any]) -> dict[str, Any]:
    """``allOf: [{$ref: X}]`` plus refinements, as one schema: X merged with them.

    Code generators make a model of each ``allOf`` part and a second one of the inline
    refinements (a duplicate ``SubmissionFieldsData``); one merged schema is one model.
    """
    parts = schema.get("allOf")
    if not (isinstance(parts, list) and len(parts) == 1 and set(parts[0]) == {"$ref"}):
        return schema
    base = found[parts[0]["$ref"].removeprefix("#/components/schemas/")]
    rest = {k: v for k, v in schema.items() if k != "allOf"}
    return _merge(copy.deepcopy(base), rest)


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    for key, value in extra.items():
        if key == "required":
            base[key] = list(dict.fromkeys([*base.get(key, []), *value]))
        elif isinstance(value, dict) and isinstance(base.get(key), dict):
            base[key] = _merge(base[key], value)
        else:
            base[key] = value
    return base


JSON_TYPES = (
    (bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"), (type(None), "null"),
)  # fmt: skip


def _typed(node: Any) -> Any:
    """Each ``enum``/``const`` with the ``type`` of its values (generators need it, 3.0 too)."""
    if isinstance(node, list):
        return [_typed(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _typed(v) for k, v in node.items()}
    values = out.get("enum", [out["const"]] if "const" in out else None)
    if values and "type" not in out:
        kinds = {next((t for cls, t in JSON_TYPES if isinstance(v, cls)), None) for v in values}
        if None not in kinds and len(kinds - {"null"}) == 1:  # one type, or it or null
            kind = (kinds - {"null"}).pop()
            out["type"] = [kind, "null"] if "null" in kinds else kind
    return out


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/components/schemas/{_component(name)}"}


def _one_of(names: list[str]) -> dict[str, Any]:
    return _ref(names[0]) if len(names) == 1 else {"anyOf": [_ref(n) for n in names]}


def _parameters(op: dict[str, Any], path: str) -> list[dict[str, Any]]:
    params = [
        {"name": p, "in": "path", "required": True, "schema": {"type": "string", "minLength": 1}}
        | ({"example": PATH_EXAMPLES[p]} if p in PATH_EXAMPLES else {})
        for p in PATH_PARAM.findall(path)
    ]
    query = op.get("query")
    if query:
        schema = schemas.load(query)
        required = set(schema.get("required", []))
        for prop, spec in schema["properties"].items():
            param = {"name": prop, "in": "query", "required": prop in required}
            params.append({**param, "schema": _typed(_rewrite(spec, query))})
    return params


# ids that exist in a fresh mock: the default project's seeded worklist
PATH_EXAMPLES = {"worklistId": DEFAULT_WORKLIST}


# request examples: what a reader copies, and what Schemathesis' example phase sends. None
# for the monitoring POST: with no real submission id it is the spec's 500
# all_submissions_failed, which Schemathesis' not_a_server_error check cannot tell apart.
REQUEST_EXAMPLES: dict[tuple[str, str], Any] = {
    ("PATCH", "/submission"): {
        "submissionId": "1b0c9f7e-6a52-4e3d-8f21-3c4d5e6f7a8b",
        "admin": "admin@example.com",
        "data": {"memo": "checked"},
    },
    ("POST", "/submission/aml"): {
        "submissionId": "1b0c9f7e-6a52-4e3d-8f21-3c4d5e6f7a8b",
        "amlThreshold": 80,
    },
    ("DELETE", "/submission/aml/monitor/{worklistId}"): {
        "recordIds": ["5f0c8a2e-2b1d-4c1e-9a44-0d9b8c7e6f51"],
        "admin": "admin@example.com",
    },
    ("POST", "/projection"): {
        "name": "no_birth",
        "mode": "exclude",
        "fields": ["date_of_birth", "age_group"],
    },
}


def _request_body(op: dict[str, Any], control: bool) -> dict[str, Any] | None:
    names = op.get("body")
    if not names:
        return None
    # PATCH also takes the encrypted body as the form field ``data``: the /v3 document
    # names JSON only (two body types in one call break code generators) and says so in
    # words; the whole server's document, for validating proxies (Prism), lists the form.
    media = op.get("body_media", "application/json")  # PUT /submission/image: multipart
    body: dict[str, Any] = {"schema": _one_of(names)}
    example = REQUEST_EXAMPLES.get((op["method"], op["path"].removeprefix("/v3")))
    if example is not None:
        body["example"] = example
    content = {media: body}
    if control and "encrypted_request.json" in names and op["method"] == "PATCH":
        content["application/x-www-form-urlencoded"] = {"schema": _ref("encrypted_request.json")}
    if control:
        for other in ALSO_ACCEPTED.get((op["method"], op["path"]), ()):
            content[other] = {"schema": {"type": "string"}} if other == _TEXT else body
    return {"required": True, "content": content}


_TEXT = "text/plain"
# Bodies the server takes beyond the one type the /v3 document names (code generators want
# one per call): the whole server's document lists them for validating proxies (Prism).
# The token calls take the JSON text as text/plain (the vendor's samples send it so); PUT
# image takes a form or JSON as well as the vendor's multipart.
ALSO_ACCEPTED: dict[tuple[str, str], tuple[str, ...]] = {
    ("POST", "/v3/submission/tokens"): (_TEXT,),
    ("DELETE", "/v3/submission/tokens"): (_TEXT,),
    ("PUT", "/v3/submission/image"): ("application/x-www-form-urlencoded", "application/json"),
}


def _responses(op: dict[str, Any], path: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for status, names in op["responses"].items():
        description = "Success" if status.startswith("2") else "Error (api-v3.md section 7)"
        if op.get("media") and status == "200":
            binary = {"schema": {"type": "string", "format": "binary"}}
            # the mock answers op["media"]; the generic binary type is listed as well for
            # code generators that read any binary body but not a PDF by name
            media = {op["media"]: binary, "application/octet-stream": binary}
            text = op.get("media_description", REPORT_DESCRIPTION)
            out[status] = {"description": text, "content": media}
            continue
        body: dict[str, Any] = {"schema": _one_of(names)}
        example = _example(path, op["method"], int(status))
        if example is not None:
            body["example"] = example
        out[status] = {"description": description, "content": {"application/json": body}}
    return out


REPORT_DESCRIPTION = "The AML report (report.pdf), answered as application/pdf"


def _example(path: str, method: str, status: int) -> Any:
    family = ERROR_EXAMPLES.get(path, {}).get(method)
    if family is None and path.startswith("/submission/aml/monitor"):
        family = errors.MONITORING
    if family is None and path.startswith("/projection"):
        family = errors.PROJECTION
    if family is not None and status >= 400:
        entry = next((e for e in family.entries if e.status == status), None)
        if entry is not None:
            return family.render(entry, entry.message.replace("{}", "example")).body
    if status >= 300:
        return None
    if (method, path) == ("GET", "/submission"):
        return _submission_list_example()
    return _SUCCESS_EXAMPLES.get((method, path))


@functools.cache
def _submission_list_example() -> dict[str, Any]:
    from idv_mock.backend.samples import make_submission

    item = make_submission(seed=1)
    key = {"id": item["submission_id"], "created_at": item["created_at"]}
    return {"Items": [item], "nextpageKey": key}


_RECORD = {
    "id": "5f0c8a2e-2b1d-4c1e-9a44-0d9b8c7e6f51",
    "name": "Ann Lee",
    "submissionId": "1b0c9f7e-6a52-4e3d-8f21-3c4d5e6f7a8b",
    "nationality": "KOR",
    "status": "screenedNoMatches",
    "dob": "1990-01-02",
    "email": "ann.lee@example.com",
    "memo": "",
    "tags": [],
    "admin": "admin@example.com",
    "updateTime": "2026-01-01T09:00:05.000Z",
    "openCount": 0,
    "falsePositiveCount": 0,
    "truePositiveCount": 0,
    "discardedCount": 0,
}
_POLICY = {
    "projection_id": "856e9c87-51f4-4de1-a973-dacb8410a66a",
    "name": "no_birth",
    "mode": "exclude",
    "fields": ["date_of_birth", "age_group"],
    "created_at": "2026-01-01T09:00:03.000Z",
}


_SUCCESS_EXAMPLES: dict[tuple[str, str], Any] = {
    ("PATCH", "/submission"): {"message": "success to edit.", "statusCode": 200},
    ("DELETE", "/submission"): {
        "message": "success",
        "content": "Submission 1b0c-example deleted successfully.",
        "statusCode": 200,
    },
    ("POST", "/projection"): {"message": "Create projection success", "projection_id": "p-1"},
    ("DELETE", "/projection/{projectionId}"): {"message": "Delete projection success"},
    ("DELETE", "/submission/aml/monitor/{worklistId}"): {"message": "records deleted successfully"},
    ("DELETE", "/submission/partial"): {
        "message": "success",
        "content": "Submission 1b0c-example fields deleted: email,id_image",
        "statusCode": 200,
    },
    ("POST", "/submission/aml"): {
        "message": "complete to search AML.",
        "result": "No Match",
        "raw_data": {
            "threshold": 80,
            "searchedName": "Ann Lee",
            "birthDate": "1990-01-02",
            "nationality": "KOR",
            "screenedAt": "2026-01-01T09:00:04.000Z",
            "matchCount": 0,
            "lists": [],
        },
    },
    ("POST", "/submission/aml/monitor/{worklistId}"): {
        "success": True,
        "successCount": 1,
        "failedCount": 1,
        "successResults": [
            {
                "submissionId": _RECORD["submissionId"],
                "recordIds": [_RECORD["id"]],
                "status": "success",
            }
        ],
        "failedResults": [
            {
                "submissionId": "2c1e-example",
                "recordIds": [],
                "status": "failed",
                "error": "This submission is not approved: 2c1e-example",
            }
        ],
    },
    ("GET", "/submission/aml/monitor/{worklistId}/{recordId}"): _RECORD,
    ("GET", "/projection"): {"items": [_POLICY], "message": "Get projection list success"},
    ("GET", "/projection/{projectionId}"): {"item": _POLICY, "message": "Get projection success"},
}
_TOKEN = {"tokenId": "user001a", "updateTime": "2024-01-15T10:30:45.123Z", "expired": False,
          "status": "registered"}  # fmt: skip
# the calls of endpoints.md (issue 30)
_SUCCESS_EXAMPLES.update({
    ("POST", "/submission/tokens"): {
        "success": True, "message": "All tokens are now in the pool",
        "summary": {"totalSubmitted": 4, "currentCount": 3504, "processed": 4, "failed": 0},
    },
    ("GET", "/submission/tokens"): {"success": True, "tokenId": "user001a", "data": _TOKEN},
    ("DELETE", "/submission/tokens"): {
        "success": True, "message": "Successfully deleted 3 tokens",
        "summary": {"totalSubmitted": 3, "deleted": 3, "notFound": 0, "failed": 0},
    },
    ("POST", "/submission/review"): {
        "submissionId": "1b0c9f7e-6a52-4e3d-8f21-3c4d5e6f7a8b",
        "message": "Success to review submission.", "finalStatus": "approved",
    },
    ("PUT", "/submission/image"): {"message": "complete to update image."},
    ("POST", "/submission/migration"): {
        "message": "success", "submissionId": "1b0c9f7e-6a52-4e3d-8f21-3c4d5e6f7a8b",
    },
})  # fmt: skip


# one tag per call family: generated clients group their modules by it (most specific first)
TAGS = (
    ("/submission/aml/monitor", "monitoring"),
    ("/submission/aml", "aml"),
    ("/report/aml", "aml"),
    ("/submission/tokens", "tokens"),
    ("/submission/review", "review"),
    ("/submission/image", "images"),
    ("/image", "images"),
    ("/submission/migration", "migration"),
    ("/submission", "submission"),
    ("/projection", "projection"),
    ("/", "control"),
)

DESCRIPTIONS = {
    ("PATCH", "/submission"): 'With Secure Data Transfer the body is {"data": ciphertext} '
    "as JSON, or the form field data (application/x-www-form-urlencoded), which the mock "
    "accepts too.",
}

# OpenAPI links: where a response's id feeds the next call (Schemathesis' stateful tests)
LINKS: dict[tuple[str, str], dict[str, Any]] = {
    ("POST", "/projection"): {
        "GetProjection": {
            "operationId": "getProjectionProjectionId",
            "parameters": {"projectionId": "$response.body#/projection_id"},
        },
        "DeleteProjection": {
            "operationId": "deleteProjectionProjectionId",
            "parameters": {"projectionId": "$response.body#/projection_id"},
        },
    },
    # a listed submission into the seeded worklist (a record when it is approved)
    ("GET", "/submission"): {
        "MonitorSubmission": {
            "operationId": "postSubmissionAmlMonitorWorklistId",
            "parameters": {"worklistId": DEFAULT_WORKLIST},
            "requestBody": {
                "submissionIds": ["$response.body#/Items/0/submission_id"],
                "admin": "admin@example.com",
            },
        },
    },
    ("POST", "/submission/aml/monitor/{worklistId}"): {
        "GetRecord": {
            "operationId": "getSubmissionAmlMonitorWorklistIdRecordId",
            "parameters": {
                "worklistId": "$request.path.worklistId",
                "recordId": "$response.body#/successResults/0/recordIds/0",
            },
        },
    },
}


def _operation(op: dict[str, Any], path: str, control: bool = False) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "operationId": _operation_id(op["method"], path),
        "tags": [next(tag for prefix, tag in TAGS if path.startswith(prefix))],
        "parameters": _parameters(op, path),
        "responses": _responses(op, path),
    }
    body = _request_body(op, control)
    if body is not None:
        entry["requestBody"] = body
    if (op["method"], path) in DESCRIPTIONS:
        entry["description"] = DESCRIPTIONS[op["method"], path]
    links = LINKS.get((op["method"], path))
    if links and "200" in entry["responses"]:
        entry["responses"]["200"]["links"] = links
    return entry


def _operation_id(method: str, path: str) -> str:
    words = [w for w in re.split(r"[/{}]", path) if w]
    return method.lower() + "".join(w[0].upper() + w[1:] for w in words)


@functools.cache
def _document_31(control: bool = False) -> dict[str, Any]:
    """With ``control``, the control API too, and full paths from the server's root."""
    index = schemas.load("api.json")
    ops = index["operations"] + (index["admin_operations"] if control else [])
    paths: dict[str, Any] = {}
    for op in ops:
        if op["method"] == "*":
            continue
        path = op["path"] if control else op["path"].removeprefix("/v3")
        operation = _operation(op, op["path"].removeprefix("/v3"), control)
        if op["path"].startswith("/__admin") or op["path"] == "/openapi.json":
            operation["security"] = []  # the control API takes no key
        paths.setdefault(path, {})[op["method"].lower()] = operation
    return {
        "openapi": "3.1.0",
        "info": {"title": TITLE, "version": "3", "description": _DESCRIPTION},
        "servers": [{"url": "/" if control else "/v3"}],
        "security": [{"apiKey": []}],
        "paths": paths,
        "webhooks": _webhooks(index["webhooks"]),
        "components": {"schemas": _components(), "securitySchemes": SECURITY},
    }


def _webhooks(index: dict[str, dict[str, str]]) -> dict[str, Any]:
    """OpenAPI 3.1 ``webhooks``: one POST per trigger, its body the trigger's schema."""
    found: dict[str, Any] = {}
    for trigger, entry in index.items():
        schema = schemas.load(entry["schema"])
        header = {"name": "X-Idv-Event", "in": "header", "required": True,
                  "description": "the mock's own header (the vendor sends none)",
                  "schema": {"type": "string", "enum": [entry["event"]]}}  # fmt: skip
        found[trigger] = {
            "post": {
                "operationId": f"webhook_{trigger}",
                "summary": schema["description"].split(":", 1)[1].split(".")[0].strip(),
                "description": schema["description"] + _ENCRYPTED_NOTE,
                "parameters": [header],
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": _ref(entry["schema"])}},
                },
                "responses": {"200": {"description": "any 2xx ends the delivery"}},
            }
        }
    return found


_ENCRYPTED_NOTE = (
    " With the project option secure_transfer the body is this payload encrypted as "
    '{"data": <ciphertext>, "isEncrypted": true} (encrypted_response).'
)


_DESCRIPTION = (
    "Generated from the JSON Schemas of idv-mock. Errors answer with HTTP 400 (and the "
    "statuses of section 7); a missing or wrong x-api-key is answered with each call's own "
    "error, not 401/403 (403 only for projection calls)."
)


def document(version: str = "3.1", *, control: bool = False) -> dict[str, Any]:
    """The OpenAPI document, as 3.1 (default) or a 3.0 rendering of the same schemas.

    ``control`` adds the control API (``/__admin``), for a validating proxy in front of
    the whole server.
    """
    doc = copy.deepcopy(_document_31(control))
    if version.startswith("3.0"):
        doc["openapi"] = "3.0.3"
        doc["components"]["schemas"] = {
            k: to_30(v) for k, v in doc["components"]["schemas"].items()
        }
        doc["paths"] = to_30(doc["paths"])
        doc.pop("webhooks")  # OpenAPI 3.0 has no webhooks
    return doc


def to_30(node: Any) -> Any:
    """Rewrite JSON Schema 2020-12 keywords that OpenAPI 3.0's schema object lacks."""
    if isinstance(node, list):
        return [to_30(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: to_30(v) for k, v in node.items() if k not in ("propertyNames", "examples")}
    if "const" in out:
        out["enum"] = [out.pop("const")]
    if isinstance(out.get("type"), list):
        listed = out.pop("type")
        kinds = [t for t in listed if t != "null"]
        if "null" in listed:
            out["nullable"] = True
        if len(kinds) == 1:
            out["type"] = kinds[0]
        else:
            out["anyOf"] = [{"type": t} for t in kinds]
    if out.get("type") == "null":
        return {"nullable": True, "enum": [None]}
    for key in ("anyOf", "oneOf"):
        options = out.get(key)
        if isinstance(options, list) and {"nullable": True, "enum": [None]} in options:
            out[key] = [o for o in options if o != {"nullable": True, "enum": [None]}]
            out["nullable"] = True
    if isinstance(out.get("exclusiveMinimum"), (int, float)) and "type" in out:
        out["minimum"], out["exclusiveMinimum"] = out["exclusiveMinimum"], True
    return out
