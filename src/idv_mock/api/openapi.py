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

from idv_mock.backend.monitoring import DEFAULT_WORKLIST
from idv_mock.ground import errors, operations, schemas

TITLE = "Identity Verification Service API v3 (idv-mock)"
SECURITY = {"apiKey": {"type": "apiKey", "in": "header", "name": "x-api-key"}}
SKIP_KEYS = ("$schema", "$id", "$defs", "title")
PATH_PARAM = re.compile(r"\{([^}]+)\}")


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
            params.append({**param, "schema": _typed(_rewrite(_own_enum(spec), query))})
    return params


def _own_enum(spec: dict[str, Any]) -> dict[str, Any]:
    """A parameter's shared enumeration (``defs.json``) written in place: generators name
    its class after the parameter (``GetImageType``), as when the list was the file's own."""
    ref = str(spec.get("$ref", ""))
    if not ref.startswith("defs.json#/$defs/"):
        return spec
    shared = schemas.definition(ref.rpartition("/")[2])
    if "enum" not in shared:
        return spec
    return {"enum": shared["enum"], **{k: v for k, v in spec.items() if k != "$ref"}}


# ids that exist in a fresh mock: the default project's seeded worklist
PATH_EXAMPLES = {"worklistId": DEFAULT_WORKLIST}


# request examples (api.json's x-idv-request-example): what a reader copies, and what
# Schemathesis' example phase sends
REQUEST_EXAMPLES: dict[tuple[str, str], Any] = {
    (op.method, op.short_path): op.entry["x-idv-request-example"]
    for op in operations.operations()
    if "x-idv-request-example" in op.entry
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
    example = op.get("x-idv-request-example")
    if example is not None:
        body["example"] = example
    content = {media: body}
    if control and "encrypted_request.json" in names and op["method"] == "PATCH":
        content["application/x-www-form-urlencoded"] = {"schema": _ref("encrypted_request.json")}
    # x-idv-also-accepts: bodies the server takes beyond the one type the /v3 document names
    # (code generators want one per call), listed for validating proxies (Prism): the token
    # calls' JSON as text/plain (the vendor's samples send it so), PUT image's form or JSON
    if control:
        for other in op.get("x-idv-also-accepts", ()):
            content[other] = {"schema": {"type": "string"}} if other == _TEXT else body
    return {"required": True, "content": content}


_TEXT = "text/plain"


def _responses(op: dict[str, Any]) -> dict[str, Any]:
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
        example = _example(op, int(status))
        if example is not None:
            body["example"] = example
        out[status] = {"description": description, "content": {"application/json": body}}
    return out


REPORT_DESCRIPTION = "The AML report (report.pdf), answered as application/pdf"


def _example(op: dict[str, Any], status: int) -> Any:
    """An error's example: the first entry of the call's family (``x-idv-errors``) with that
    status; a success's: ``x-idv-example``, or the one ``x-idv-example-from`` names."""
    family = _families().get((op["method"], op["path"]))
    if family is not None and status >= 400:
        entry = next((e for e in family.entries if e.status == status), None)
        if entry is not None:
            return family.render(entry, entry.message.replace("{}", "example")).body
    if status >= 300:
        return None
    if "x-idv-example-from" in op:
        return GENERATED_EXAMPLES[op["x-idv-example-from"]]()
    return op.get("x-idv-example")


@functools.cache
def _families() -> dict[tuple[str, str], errors.Family]:
    return {
        (op.method, op.path): op.family for op in operations.operations() if op.family is not None
    }


@functools.cache
def _submission_list_example() -> dict[str, Any]:
    from idv_mock.backend.samples import make_submission

    item = make_submission(seed=1)
    key = {"id": item["submission_id"], "created_at": item["created_at"]}
    return {"Items": [item], "nextpageKey": key}


GENERATED_EXAMPLES = {"seeded submission": _submission_list_example}

DEFAULT_TAG = "control"  # the control API and /openapi.json (the /v3 rows name theirs)

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
        "operationId": operations.operation_id(op["method"], path),
        "tags": [op.get("x-idv-tag", DEFAULT_TAG)],
        "parameters": _parameters(op, path),
        "responses": _responses(op),
    }
    body = _request_body(op, control)
    if body is not None:
        entry["requestBody"] = body
    if "x-idv-description" in op:
        entry["description"] = op["x-idv-description"]
    links = LINKS.get((op["method"], path))
    if links and "200" in entry["responses"]:
        entry["responses"]["200"]["links"] = links
    return entry


@functools.cache
def _document_31(control: bool = False) -> dict[str, Any]:
    """With ``control``, the control API too, and full paths from the server's root."""
    index = schemas.load("api.json")
    ops = index["operations"] + (index["admin_operations"] if control else [])
    paths: dict[str, Any] = {}
    for op in ops:
        if op["method"] == "*":
            continue
        path = op["path"] if control else op["path"].removeprefix(operations.API_PREFIX)
        operation = _operation(op, op["path"].removeprefix(operations.API_PREFIX), control)
        if op["path"].startswith("/__admin") or op["path"] == "/openapi.json":
            operation["security"] = []  # the control API takes no key
        paths.setdefault(path, {})[op["method"].lower()] = operation
    return {
        "openapi": "3.1.0",
        "info": {"title": TITLE, "version": "3", "description": _DESCRIPTION},
        "servers": [{"url": "/" if control else operations.API_PREFIX}],
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
        # optional: the vendor sends no such header, so a validator generated from this
        # document must accept the vendor's own webhooks
        header = {"name": "X-Idv-Event", "in": "header", "required": False,
                  "description": "the mock's own header (the vendor sends none: optional)",
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
