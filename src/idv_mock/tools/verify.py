"""``idv-mock verify``: a read-only conformance probe for any deployment of API v3.

A user points it at the mock, a staging copy or the real service to learn whether that
deployment still answers what ``schemas/`` (and so the mock) promise. It therefore only
sends GET requests, to endpoints that change nothing: GET /submission (list, by id, by
userid, by e-mail, ``request_type=kyc``), GET /projection (list and one policy), GET
/submission/tokens (count, first page), GET /image (a listed selfie) and error probes
(missing or wrong key, bad parameters, unknown ids). Each answer is checked three ways: its status
is one ``schemas/api.json`` lists for the operation, its body validates against the schemas
listed for that status, and, where api-v3.md or gaps.md fix it, the body is exactly the
expected one (error bodies read from the catalogue, :mod:`idv_mock.ground.errors`). A Secure
Data Transfer project is detected from its answers, its requests are encrypted and its
responses decrypted with the API key before validation.

Exit status: 0 all checks pass, 1 some check failed, 2 the server cannot be reached.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any, Literal

import httpx
import orjson

from idv_mock.ground import crypto, errors, operations, schemas

Auth = Literal["key", "none", "wrong"]
Semantic = Callable[[Any], list[str]]

WRONG_KEY = "idv-mock-verify-wrong-key"
UNKNOWN_ID = "00000000-0000-4000-8000-00000000dead"
UNKNOWN_PARAM = "verify_unknown_param"
ENVELOPE = "encrypted_response.json"
# api-v3.md 4.2: on a secure project these go only inside the encrypted ``data`` parameter
ENCRYPTABLE = frozenset({"email", "start_date", "end_date", "submission_id"})
NOT_JSON = object()


def probed(op_id: str) -> str:
    """The path (under the base URL) of an operation the probes read: one the table marks
    ``"x-idv-verify": true`` (``schemas/api.json``; the test checks both ways)."""
    op = operations.find(op_id)
    if op.entry.get("x-idv-verify") is not True:
        raise operations.TableError(f"api.json does not mark {op_id} as probed by verify")
    return op.short_path


SUBMISSION = probed("getSubmission")
POLICIES = probed("getProjection")
POLICY = probed("getProjectionProjectionId")
TOKEN_POOL = probed("getSubmissionTokens")
IMAGE = probed("getImage")


def error_body(family: errors.Family, code: str, *args: str) -> dict[str, Any]:
    """The exact body the error catalogue gives ``code`` (``args`` fill its ``{}``)."""
    body: dict[str, Any] = family.error(code, *args).body
    return body


INVALID_PROJECT = error_body(errors.GET_SUBMISSION, "invalid_project")
MISSING_DATA = error_body(errors.GET_SUBMISSION, "missing_data")
FORBIDDEN = error_body(errors.PROJECTION, "forbidden")
PROJECTION_NOT_FOUND = error_body(errors.PROJECTION, "not_found")


def invalid_format(name: str) -> dict[str, Any]:
    return error_body(errors.GET_SUBMISSION, "invalid_format", name)


def invalid_parameter(name: str) -> dict[str, Any]:
    return error_body(errors.GET_SUBMISSION, "invalid_parameter", name)


class Unreachable(Exception):
    """The server did not answer at all; the probe cannot tell anything about it."""


@dataclass(frozen=True)
class Probe:
    """One GET and what a conforming deployment must answer to it."""

    path: str
    query: dict[str, str] = field(default_factory=dict)
    encrypted: bool = False
    auth: Auth = "key"
    status: int = 200
    body: Any = None
    semantic: Semantic | None = None
    note: str = ""
    media: str = ""  # a file, not JSON, is expected (GET /image): its content-type's start

    def label(self) -> str:
        """How the request is shown: encrypted parameters in clear, inside ``enc(...)``."""
        plain = {k: v for k, v in self.query.items() if not (self.encrypted and k in ENCRYPTABLE)}
        parts = [f"{k}={v}" for k, v in plain.items()]
        if self.encrypted:
            inner = {k: v for k, v in self.query.items() if k in ENCRYPTABLE}
            parts.append(f"data=enc({orjson.dumps(inner).decode()})")
        query = "?" + "&".join(parts) if parts else ""
        extra = {"key": "", "none": " (no x-api-key)", "wrong": " (wrong x-api-key)"}[self.auth]
        note = f" ({self.note})" if self.note else ""
        return f"GET {self.path}{query}{extra}{note}"


@dataclass(frozen=True)
class Reply:
    """What came back, before any judgement."""

    status: int
    content_type: str
    body: Any


@dataclass
class Check:
    """The verdict on one call; ``body`` is the decrypted body, for the probes that follow."""

    label: str
    status: int | None = None
    problems: list[str] = field(default_factory=list)
    body: Any = None
    encrypted: bool = False
    skipped: str = ""

    @property
    def ok(self) -> bool:
        return not self.problems

    def lines(self) -> list[str]:
        if self.skipped:
            return [f"skip {self.label}: {self.skipped}"]
        if self.ok:
            return [f"ok   {self.label} {self.status}"]
        head = f"FAIL {self.label} {self.status}: {self.problems[0]}"
        return [head, *(f"     {p}" for p in self.problems[1:])]

    def as_json(self) -> dict[str, Any]:
        verdict = "skip" if self.skipped else "ok" if self.ok else "fail"
        out: dict[str, Any] = {"request": self.label, "result": verdict, "status": self.status}
        out["problems"] = [self.skipped] if self.skipped else self.problems
        return out


# --- what api.json promises -------------------------------------------------------------


@cache
def _operations() -> list[tuple[str, str, dict[str, list[str]]]]:
    return [(op.method, op.path, op.entry["responses"]) for op in operations.operations()]


def _path_matches(template: str, path: str) -> bool:
    """``/v3/projection/{projectionId}`` matches ``/v3/projection/abc`` (one segment each)."""
    want, got = template.split("/"), path.split("/")
    return len(want) == len(got) and all(
        w == g or (w.startswith("{") and w.endswith("}") and g != "")
        for w, g in zip(want, got, strict=True)
    )


def listed_schemas(method: str, path: str, status: int) -> list[str] | None:
    """The schemas api.json lists for this answer (its fallback statuses apply to every
    operation, as in the test suite), or None when the status is not listed at all."""
    for op_method, template, responses in _operations():
        matches = op_method in (method, "*") and _path_matches(template, path)
        if matches and str(status) in responses:
            return list(responses[str(status)])
    fallback: dict[str, list[str]] = schemas.load("api.json")["fallback"]
    return list(fallback[str(status)]) if str(status) in fallback else None


def schema_problems(names: list[str], body: Any) -> list[str]:
    """Empty when the body matches one of ``names``; else the violations of the closest one
    (the fewest), each as ``json/path: message``."""
    if not names:
        return []
    found = [schemas.errors(name, body) for name in names]
    if any(not errs for errs in found):
        return []
    return min(found, key=len)


# --- talking to the deployment ------------------------------------------------------------


@dataclass(frozen=True)
class Secret:
    """The project's key and derivation: Secure Data Transfer in both directions."""

    api_key: str
    derivation: str = "sha256"

    def encrypt(self, value: object) -> str:
        return crypto.encrypt(value, self.api_key, self.derivation)

    def decrypt(self, text: object) -> Any:
        if not isinstance(text, str):
            raise crypto.CryptoError("data is not a string")
        return crypto.decrypt(text, self.api_key, self.derivation)


def _refuse_writes(request: httpx.Request) -> None:
    """The probe is promised read-only; a non-GET would be a bug of this module."""
    if request.method != "GET":
        raise RuntimeError(f"idv-mock verify must only send GET, not {request.method}")


class Prober:
    """Sends probes over one HTTP client and judges the answers."""

    def __init__(self, client: httpx.Client, secret: Secret, base_path: str) -> None:
        self.client = client
        self.secret = secret
        self.base_path = base_path

    def wire_query(self, probe: Probe) -> dict[str, str]:
        """Encrypted probes carry the encryptable parameters inside ``data`` (4.2)."""
        if not probe.encrypted:
            return dict(probe.query)
        plain = {k: v for k, v in probe.query.items() if k not in ENCRYPTABLE}
        inner = {k: v for k, v in probe.query.items() if k in ENCRYPTABLE}
        return {**plain, "data": self.secret.encrypt(inner)}

    def headers(self, auth: Auth) -> dict[str, str]:
        if auth == "none":
            return {}
        return {"x-api-key": self.secret.api_key if auth == "key" else WRONG_KEY}

    def fetch(self, probe: Probe) -> Reply:
        """One GET; a transport failure means the deployment cannot be reached."""
        try:
            response = self.client.get(
                probe.path.lstrip("/"),
                params=self.wire_query(probe),
                headers=self.headers(probe.auth),
            )
        except httpx.TransportError as exc:
            raise Unreachable(f"{type(exc).__name__}: {exc}") from exc
        try:
            body = orjson.loads(response.content)
        except orjson.JSONDecodeError:
            body = NOT_JSON
        return Reply(response.status_code, response.headers.get("content-type", ""), body)

    def run(self, probe: Probe) -> Check:
        return self.judge(probe, self.fetch(probe))

    def judge(self, probe: Probe, reply: Reply) -> Check:
        """Status listed and expected, body valid (decrypted first), exact body, semantics."""
        check = Check(probe.label(), reply.status)
        names = listed_schemas("GET", self.base_path + probe.path, reply.status)
        check.problems += _status_problems(probe, reply, listed=names is not None)
        if probe.media and reply.status == probe.status:
            if not reply.content_type.startswith(probe.media):
                check.problems.append(f"content-type is {reply.content_type!r}, not {probe.media}")
            return check
        if reply.body is NOT_JSON:
            check.problems.append(f"body is not JSON (content-type {reply.content_type!r})")
            return check
        if not reply.content_type.startswith("application/json"):
            check.problems.append(f"content-type is {reply.content_type!r}, not application/json")
        check.body = self.unwrap(reply.body, names or [], check)
        if names is not None:
            plain = [n for n in names if n != ENVELOPE] or ([] if check.encrypted else names)
            check.problems += schema_problems(plain, check.body)
        if probe.body is not None and check.body != probe.body:
            check.problems.append(f"body is {_show(check.body)}, expected {_show(probe.body)}")
        if probe.semantic is not None and reply.status == probe.status:
            check.problems += probe.semantic(check.body)
        return check

    def unwrap(self, body: Any, names: list[str], check: Check) -> Any:
        """An ``{"data", "isEncrypted"}`` answer: check the envelope, return the plaintext."""
        if not (isinstance(body, dict) and "isEncrypted" in body):
            return body
        check.encrypted = True
        if ENVELOPE not in names:
            check.problems.append("an encrypted body is not listed for this status in api.json")
        else:
            check.problems += schema_problems([ENVELOPE], body)
        try:
            return self.secret.decrypt(body.get("data"))
        except crypto.CryptoError as exc:
            check.problems.append(f"data: does not decrypt with the API key ({exc})")
            return body


def _status_problems(probe: Probe, reply: Reply, listed: bool) -> list[str]:
    """An unlisted status breaks api.json; an unexpected one breaks the probe's premise (a
    rejected key most often, which is worth saying in words)."""
    found = (
        [] if listed else [f"status {reply.status} is not listed for this operation in api.json"]
    )
    if reply.status != probe.status:
        found.append(f"expected status {probe.status} (body: {_show(reply.body)})")
        if probe.auth == "key" and reply.body in (INVALID_PROJECT, FORBIDDEN):
            found.append("the server does not accept this --api-key")
    return found


def _show(body: Any) -> str:
    text = "non-JSON body" if body is NOT_JSON else orjson.dumps(body).decode()
    return text if len(text) <= 300 else text[:297] + "..."


# --- what each probe expects beyond the schemas -------------------------------------------


def _items(body: Any) -> list[dict[str, Any]]:
    items = body.get("Items") if isinstance(body, dict) else None
    return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []


def only_submission(sid: str) -> Semantic:
    """By submission_id: exactly that submission comes back."""

    def check(body: Any) -> list[str]:
        ids = [i.get("submission_id") for i in _items(body)]
        return [] if ids == [sid] else [f"Items: expected only submission {sid}, got {ids}"]

    return check


def every_item(name: str, value: str) -> Semantic:
    """By userid or e-mail: a non-empty list, every item of that user (e-mail in any case)."""

    def check(body: Any) -> list[str]:
        items = _items(body)
        if not items:
            return [f"Items: expected the submissions with {name} {value}, got none"]
        return [
            f"Items/{n}/{name}: {item.get(name)!r} is not {value!r}"
            for n, item in enumerate(items)
            if str(item.get(name, "")).casefold() != value.casefold()
        ]

    return check


def kyc_only(body: Any) -> list[str]:
    """request_type=kyc returns KYC data plus submission_id only (api-v3.md 4.2); a deleted
    submission also says so in ``status`` (gaps.md)."""
    allowed = {"submission_id", "kyc", "status"}
    return [
        f"Items/{n}: unexpected fields {sorted(set(item) - allowed)} for request_type=kyc"
        for n, item in enumerate(_items(body))
        if set(item) - allowed
    ]


def listed_projections(body: Any) -> list[str]:
    items = body.get("items") if isinstance(body, dict) else None
    if not isinstance(items, list):
        return []
    return [
        i["projection_id"]
        for i in items
        if isinstance(i, dict) and isinstance(i.get("projection_id"), str)
    ]


def first_with(items: list[dict[str, Any]], name: str) -> str | None:
    """The first listed item's value of ``name`` (a deleted item may lack it: skip those)."""
    for item in items:
        value = item.get(name)
        if isinstance(value, str) and value:
            return value
    return None


# --- the probe plan --------------------------------------------------------------------------


def list_probe(secure: bool) -> Probe:
    return Probe(SUBMISSION, {"count": "2"}, encrypted=secure)


def discover(prober: Prober) -> tuple[bool, list[Check]]:
    """The first list tells whether the project is secure: it answers encrypted, or (the
    mock, gaps.md) ``missing_data`` to a plain request and encrypted to one carrying data."""
    plain = list_probe(secure=False)
    reply = prober.fetch(plain)
    if reply.status == 400 and reply.body == MISSING_DATA:
        retry = prober.run(list_probe(secure=True))
        if retry.encrypted:
            secure_first = replace(plain, status=400, body=MISSING_DATA, note="secure project")
            return True, [prober.judge(secure_first, reply), retry]
    first = prober.judge(plain, reply)
    return first.encrypted, [first]


def submission_probes(items: list[dict[str, Any]], secure: bool) -> Iterator[Probe | Check]:
    """Reads by what the list showed; a skipped read is a ``Check`` carrying the reason."""
    sid, userid, email = (first_with(items, n) for n in ("submission_id", "userid", "email"))
    if sid is None:
        yield Check(f"GET {SUBMISSION}?submission_id=...", skipped="no submission listed")
    else:
        yield Probe(SUBMISSION, {"submission_id": sid}, secure, semantic=only_submission(sid))
    if userid is None:
        yield Check(f"GET {SUBMISSION}?userid=...", skipped="no listed submission has a userid")
    else:
        yield Probe(SUBMISSION, {"userid": userid}, secure, semantic=every_item("userid", userid))
    if email is None:
        yield Check(f"GET {SUBMISSION}?email=...", skipped="no listed submission has an email")
    else:
        yield Probe(SUBMISSION, {"email": email}, secure, semantic=every_item("email", email))
    yield Probe(SUBMISSION, {"request_type": "kyc", "count": "2"}, secure, semantic=kyc_only)
    yield Probe(SUBMISSION, {"submission_id": UNKNOWN_ID}, secure, body={"Items": []})


def submission_error_probes(secure: bool) -> Iterator[Probe]:
    """gaps.md fixes each of these answers exactly (GET /submission, Authentication)."""
    yield Probe(SUBMISSION, {"count": "2"}, secure, auth="none", status=400, body=INVALID_PROJECT)
    yield Probe(SUBMISSION, {"count": "2"}, secure, auth="wrong", status=400, body=INVALID_PROJECT)
    yield Probe(SUBMISSION, {"count": "0"}, secure, status=400, body=invalid_format("count"))
    yield Probe(
        SUBMISSION,
        {UNKNOWN_PARAM: "1"},
        secure,
        status=400,
        body=invalid_parameter(UNKNOWN_PARAM),
    )
    yield Probe(
        SUBMISSION,
        {"start_date": "2026-13-45"},
        secure,
        status=400,
        body=invalid_format("start_date"),
    )
    yield Probe(SUBMISSION, {"nextpage_id": UNKNOWN_ID}, secure, status=400, body=MISSING_DATA)


def projection_error_probes() -> Iterator[Probe]:
    """Projection answers are plain even on a secure project (gaps.md, Encryption)."""
    yield Probe(
        operations.fill(POLICY, projectionId=UNKNOWN_ID), status=404, body=PROJECTION_NOT_FOUND
    )
    yield Probe(POLICIES, auth="none", status=403, body=FORBIDDEN)
    yield Probe(POLICIES, auth="wrong", status=403, body=FORBIDDEN)


TOKEN_NOT_FOUND = error_body(errors.TOKENS, "token_not_found")
TOKENS_INVALID_PROJECT = error_body(errors.TOKENS, "invalid_project")
UNKNOWN_TOKEN = "idv-mock-verify-unknown-token"


def token_probes() -> Iterator[Probe]:
    """The token pool, read only (endpoints.md 2): its count and first page, and errors."""
    yield Probe(TOKEN_POOL, {"type": "count"})
    yield Probe(TOKEN_POOL)
    yield Probe(TOKEN_POOL, {"tokenId": UNKNOWN_TOKEN}, status=400, body=TOKEN_NOT_FOUND)
    yield Probe(TOKEN_POOL, auth="wrong", status=400, body=TOKENS_INVALID_PROJECT)


def image_probes(items: list[dict[str, Any]]) -> Iterator[Probe | Check]:
    """GET /image (endpoints.md 6): a listed submission's selfie, and the mock's errors."""
    with_selfie = [i for i in items if (i.get("image") or {}).get("selfieImage")]
    sid = first_with(with_selfie, "submission_id")
    if sid is None:
        yield Check(f"GET {IMAGE}?submissionId=...&type=selfieImage", skipped="no listed selfie")
    else:
        yield Probe(IMAGE, {"submissionId": sid, "type": "selfieImage"}, media="image/")
    unknown = error_body(errors.GET_IMAGE, "invalid_submission")
    yield Probe(IMAGE, {"submissionId": UNKNOWN_ID, "type": "idImage"}, status=400, body=unknown)
    missing = error_body(errors.GET_IMAGE, "missing_data")
    yield Probe(IMAGE, {"submissionId": UNKNOWN_ID}, status=400, body=missing)


def run_all(prober: Prober, checks: list[Check]) -> None:
    """Every probe in order, appending to ``checks`` so a lost connection keeps what ran."""
    secure, found = discover(prober)
    checks += found
    items = _items(found[-1].body)
    for probe in [*submission_probes(items, secure), *submission_error_probes(secure)]:
        checks.append(probe if isinstance(probe, Check) else prober.run(probe))
    listing = prober.run(Probe(POLICIES))
    checks.append(listing)
    ids = listed_projections(listing.body)
    if ids:
        checks.append(prober.run(Probe(operations.fill(POLICY, projectionId=ids[0]))))
    else:
        checks.append(Check(f"GET {POLICY}", skipped="no projection listed"))
    checks += [prober.run(p) for p in projection_error_probes()]
    for probe in [*token_probes(), *image_probes(items)]:
        checks.append(probe if isinstance(probe, Check) else prober.run(probe))


# --- command line ---------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="idv-mock verify",
        description="Read-only conformance probe: GET requests only, each answer checked "
        "against schemas/api.json and the spec's fixed error bodies.",
    )
    parser.add_argument("--base-url", required=True, help="API base URL, ending in /v3")
    parser.add_argument("--api-key", required=True, help="the project's API key")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per request (10)")
    parser.add_argument("--json", action="store_true", help="print a JSON report")
    parser.add_argument(
        "--key-derivation",
        choices=crypto.KEY_DERIVATIONS,
        default="sha256",
        help="Secure Data Transfer key derivation (sha256)",
    )
    return parser


def _base_url(parser: argparse.ArgumentParser, text: str) -> httpx.URL:
    url = text.rstrip("/")
    if not url.startswith(("http://", "https://")) or not url.endswith(operations.API_PREFIX):
        parser.error(f"--base-url must be an http(s) URL ending in /v3, got {text!r}")
    return httpx.URL(url + "/")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    base = _base_url(parser, args.base_url)
    checks: list[Check] = []
    client = httpx.Client(
        base_url=base,
        timeout=args.timeout,
        follow_redirects=False,
        event_hooks={"request": [_refuse_writes]},
    )
    with client:
        prober = Prober(client, Secret(args.api_key, args.key_derivation), base.path.rstrip("/"))
        try:
            run_all(prober, checks)
        except Unreachable as exc:
            return _unreachable(str(base).rstrip("/"), str(exc), checks, args.json)
    return _report(str(base).rstrip("/"), checks, args.json)


def _unreachable(base: str, reason: str, checks: list[Check], as_json: bool) -> int:
    message = (
        f"idv-mock verify: cannot reach {base}: {reason} (is the server up and the URL right?)"
    )
    if as_json:
        out = {"base_url": base, "error": message, "checks": [c.as_json() for c in checks]}
        print(orjson.dumps(out, option=orjson.OPT_INDENT_2).decode())
    else:
        for check in checks:
            print("\n".join(check.lines()))
    print(message, file=sys.stderr)
    return 2


def _report(base: str, checks: list[Check], as_json: bool) -> int:
    done = [c for c in checks if not c.skipped]
    failed = sum(not c.ok for c in done)
    summary = f"{len(done)} checks, {failed} failed"
    if as_json:
        out = {
            "base_url": base,
            "secure": any(c.encrypted for c in done),
            "checks": [c.as_json() for c in checks],
            "total": len(done),
            "failed": failed,
            "summary": summary,
        }
        print(orjson.dumps(out, option=orjson.OPT_INDENT_2).decode())
    else:
        for check in checks:
            print("\n".join(check.lines()))
        print(summary)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
