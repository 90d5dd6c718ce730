"""The spec's error catalogue: every message of api-v3.md section 7 (and gaps.md), once.

Each endpoint family answers errors in its own body shape (gaps.md, "Error bodies"); an
entry names the message, its status and its ``errorCode`` (or, where the service sends no
code, a short name used only inside the mock and by fault rules). ``<parameter>`` in the
spec is ``{}`` here. One exception type, :class:`ApiError`, carries a rendered error to the
single handler of the web layer.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from idv_mock.ground.by_value import ByValue


class Shape(Enum):
    CODED = "coded"  # {"errorCode", "message"}
    STATUS = "status"  # {"message", "statusCode"}
    MONITOR = "monitor"  # {"errorCode", "errorMessage"}
    MESSAGE = "message"  # {"message"}


class ApiError(Exception):
    """An error response, ready to render: status, JSON body, extra headers."""

    def __init__(
        self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(status, body)
        self.status = status
        self.body = body
        self.headers = headers or {}


# Entry and Family are not frozen dataclasses: the six methods such a class generates are
# compiled when the module is imported (the app's, on every first use), and this catalogue
# makes two hundred entries. Equal, hashed and shown by value (``ByValue``), as before;
# read-only by convention.


class Entry(ByValue):
    """One error; ``name`` tells apart two texts the service sends under one code."""

    __slots__ = ("code", "fault_only", "message", "name", "status")
    FIELDS = ("code", "message", "status", "fault_only", "name")

    def __init__(
        self, code: str, message: str, status: int = 400, fault_only: bool = False, name: str = ""
    ) -> None:
        self.code, self.message, self.status = code, message, status
        self.fault_only, self.name = fault_only, name

    @property
    def key(self) -> str:
        return self.name or self.code


class Family(ByValue):
    __slots__ = ("_by_code", "entries", "name", "shape")
    FIELDS = ("name", "shape", "entries")

    def __init__(self, name: str, shape: Shape, entries: tuple[Entry, ...]) -> None:
        self.name, self.shape, self.entries = name, shape, entries
        self._by_code = {e.key: e for e in entries}

    def entry(self, code: str) -> Entry:
        return self._by_code[code]

    def find(self, code_or_message: str) -> Entry | None:
        """An entry named by its key, code or message text (the template, or a filled one)."""
        if code_or_message in self._by_code:
            return self._by_code[code_or_message]
        for entry in self.entries:
            if entry.code == code_or_message:
                return entry
        for entry in self.entries:
            head, _, tail = entry.message.partition("{}")
            if code_or_message == entry.message or (
                _ and code_or_message.startswith(head) and code_or_message.endswith(tail)
            ):
                return entry
        return None

    def error(self, code: str, *args: str, **extra: Any) -> ApiError:
        entry = self._by_code[code]
        return self.render(entry, entry.message.format(*args) if args else entry.message, **extra)

    def render(self, entry: Entry, message: str, **extra: Any) -> ApiError:
        return ApiError(entry.status, {**_body(self.shape, entry, message), **extra})


def _body(shape: Shape, entry: Entry, message: str) -> dict[str, Any]:
    if shape is Shape.CODED:
        return {"errorCode": entry.code, "message": message}
    if shape is Shape.STATUS:
        return {"message": message, "statusCode": entry.status}
    if shape is Shape.MONITOR:
        return {"errorCode": entry.code, "errorMessage": message}
    return {"message": message}


# Texts the service uses on more than one call.
INVALID_PROJECT = "Invalid project"
INVALID_ADMIN = "Invalid admin"
INVALID_PAYLOAD = "Invalid payload"
CANNOT_FIND_SUBMISSION = "Cannot find submission."
NO_SUBMISSION_DATA = "not Exist Submission Data"
NO_PROJECT_DATA = "not Exist Project Data"
INTERNAL = "Internal server error"
INVALID_WORKLIST_ID = "Invalid worklist ID"

PATCH_SUBMISSION = Family(
    "PATCH /submission",
    Shape.CODED,
    (
        Entry("missing_api_key", "API-Key is required."),
        Entry("invalid_project", "The project is not found."),
        Entry("decryption_failed", "Decryption is Failed. Please check the api-key."),
        Entry("data_processing_error", "Data Processing Error.", fault_only=True),
        Entry("parse_error", "data parsing error. please check input data."),
        Entry("missing_submissionId", "submissionId is required."),
        Entry("missing_project", "projectId or x-api-key is required."),
        Entry("missing_admin", "admin is required."),
        Entry("nothing_to_modify", "At least one property to modify is required."),
        Entry("invalid_idType", "Invalid idType. Please check the idType."),
        Entry("invalid_kycStatus", "Invalid kyc status. Please check the kycStatus."),
        Entry("invalid_gender", "Invalid gender. Please check the gender."),
        Entry(
            "invalid_issuingCountry",
            "Invalid issuingCountry. Please enter a valid ISO 3166-1 alpha-3.",
        ),
        Entry(
            "invalid_nationality", "Invalid nationality. Please enter a valid ISO 3166-1 alpha-3."
        ),
        Entry("invalid_birthDate", "Invalid birthDate. Please enter the date as YYYY-MM-DD"),
        Entry("invalid_issueDate", "Invalid issueDate. Please enter the date as YYYY-MM-DD"),
        Entry("invalid_expireDate", "Invalid expireDate. Please enter the date as YYYY-MM-DD"),
        Entry("invalid_admin", INVALID_ADMIN),
        Entry("invalid_submissionId", CANNOT_FIND_SUBMISSION),
    ),
)

GET_SUBMISSION = Family(
    "GET /submission",
    Shape.CODED,
    (
        Entry("invalid_payload", INVALID_PAYLOAD),
        Entry("missing_data", "Required input data is missing"),
        Entry("invalid_project", INVALID_PROJECT),
        Entry("invalid_admin", INVALID_ADMIN, fault_only=True),
        Entry("invalid_parameter", "invalid parameter: {}"),
        Entry("invalid_format", "invalid format: {}"),
        Entry("processing_error", "Failed to complete migration", 500, fault_only=True),
    ),
)

DELETE_SUBMISSION = Family(
    "DELETE /submission",
    Shape.STATUS,
    (
        Entry("missing_submission_id", "not Exist Submission ID"),
        Entry("submission_not_found", NO_SUBMISSION_DATA),
        Entry("project_not_found", NO_PROJECT_DATA),
        Entry("delete_failed", "delete Process FAIL", fault_only=True),
    ),
)

PARTIAL_DELETE = Family(
    "DELETE /submission/partial",
    Shape.STATUS,
    (
        Entry("missing_submission_id", "submission_id is required"),
        Entry("missing_fields", "fields parameter is required and cannot be empty"),
        Entry("fields_not_string", "fields must be a string"),
        Entry("data_fields_not_string", "data_fields must be a string"),
        Entry("fields_not_string_format", "fields parameter is not in string format"),
        Entry("data_fields_not_string_format", "data_fields parameter is not in string format"),
        Entry("empty_fields", "fields cannot be empty"),
        Entry("invalid_fields", "invalid fields found in fields: {}"),
        Entry("invalid_data_fields", "invalid fields found in data_fields: {}"),
        Entry(
            "data_fields_not_allowed",
            "data_fields parameter is not allowed when fields does not include data",
        ),
        Entry("fields_format", "invalid format for fields: {}"),
        Entry("data_fields_format", "invalid format for data_fields: {}"),
        Entry("invalid_api_key", "invalid API key for this project"),
        Entry("submission_not_found", NO_SUBMISSION_DATA),
        Entry("project_not_found", NO_PROJECT_DATA),
        Entry("internal_error", INTERNAL, fault_only=True),
    ),
)

AML_SCREENING = Family(
    "POST /submission/aml",
    Shape.CODED,
    (
        Entry("invalid_project", INVALID_PROJECT),
        Entry("invalid_payload", INVALID_PAYLOAD),
        Entry("missing_parameter", "submissionId is required"),
        Entry("invalid_submissionId", CANNOT_FIND_SUBMISSION),
        Entry("invalid_country", "The nationality is invalid: {}"),
        Entry("request_failed", "Fail to search AML.", fault_only=True),
        Entry("invalid_aml_threshold", "Invalid AML Threshold."),
    ),
)

AML_REPORT = Family(
    "GET /report/aml",
    Shape.CODED,
    (
        Entry("invalid_project", INVALID_PROJECT),
        Entry("missing_parameter", "resourceId is required"),
        Entry("invalid_resourceId", "Cannot find report."),
    ),
)

MONITORING = Family(
    "/submission/aml/monitor",
    Shape.MONITOR,
    (
        Entry("invalid_path", "Invalid request method"),
        Entry("invalid_project", INVALID_PROJECT),
        Entry("invalid_worklist", "Worklist is inactive"),
        Entry("invalid_worklist", INVALID_WORKLIST_ID, name="unknown_worklist"),
        Entry("invalid_submissionIds", "submissionIds must be an array of 1 to 25 strings"),
        Entry("invalid_admin", INVALID_ADMIN),
        Entry("missing_required_parameters", "Missing required parameters: {}"),
        Entry("all_submissions_failed", "All submissions failed", 500),
        Entry("processing_failed", "Processing failed", 500, fault_only=True),
        Entry("internal_server_error", INTERNAL, 500, fault_only=True),
        Entry("invalid_record", "Record not found"),
        Entry("invalid_record", "Some records do not exist", name="missing_records"),
        Entry("invalide_worklist", INVALID_WORKLIST_ID),
        Entry("invalid_payload", INVALID_PAYLOAD),
    ),
)

# one entry of a monitoring DELETE's ``details``, per record it could not find (api-v3.md
# 4.7: the entries seen are 404 MAPI-001); the vendor's own text
MISSING_RECORD: dict[str, Any] = {
    "statusCode": 404,
    "error": {"code": "MAPI-001", "message": "Resource not found"},
}


def _subset(family: Family, name: str, keys: tuple[str, ...]) -> Family:
    """The errors one call of a family can give (a fault rule names only those)."""
    return Family(name, family.shape, tuple(e for e in family.entries if e.key in keys))


MONITOR_POST = _subset(
    MONITORING,
    "POST /submission/aml/monitor/{worklistId}",
    (
        *("invalid_path", "invalid_project", "invalid_worklist", "unknown_worklist"),
        *("invalid_submissionIds", "invalid_admin", "missing_required_parameters"),
        *("all_submissions_failed", "processing_failed", "internal_server_error"),
    ),
)
MONITOR_GET = _subset(
    MONITORING,
    "GET /submission/aml/monitor/{worklistId}/{recordId}",
    ("invalid_path", "invalid_record", "invalide_worklist", "invalid_project"),
)
MONITOR_DELETE = _subset(
    MONITORING,
    "DELETE /submission/aml/monitor/{worklistId}",
    (
        *("invalid_path", "missing_records", "invalide_worklist", "invalid_project"),
        *("invalid_payload", "invalid_admin"),
    ),
)

PROJECTION = Family(
    "/projection",
    Shape.MESSAGE,
    (
        Entry("forbidden", "Forbidden", 403),
        Entry("invalid_body", "Invalid request body: name, mode, fields"),
        Entry("invalid_name", "Invalid request body: name"),
        Entry("invalid_mode", "Invalid mode: {}"),
        Entry("invalid_fields", "Invalid fields detected: {}"),
        Entry("invalid_encrypted_body", "Invalid encrypted body"),
        Entry("invalid_json", "Invalid JSON body"),
        Entry("not_found", "Projection not found", 404),
        Entry("collection_method", "Method not allowed for /projections path", 405),
        Entry("item_method", "Method not allowed for /projections/projectionId path", 405),
        Entry("name_exists", "Projection name already exists", 409),
        Entry("count_limit", "Projection count limit exceeded", 409),
        Entry("internal_error", INTERNAL, 500, fault_only=True),
    ),
)

GENERIC = Family(
    "any path",
    Shape.MESSAGE,
    (
        Entry("not_found", "Not Found", 404),
        Entry("method_not_allowed", "Method Not Allowed", 405),
        # the vendor's gateway for a missing or wrong key (server setting auth_errors: gateway)
        Entry("gateway_forbidden", "Forbidden", 403),
        Entry("payload_too_large", "Request body too large (limit 1 MiB)", 413),
        Entry("admin_payload_too_large", "Request body too large (limit {})", 413),
        Entry("headers_too_large", "Request header fields too large (limit 16 KiB)", 431),
        Entry(
            "admin_token_required",
            "The control API needs the admin token: send the header x-idv-mock-admin-token "
            "(the server listens beyond loopback; see --admin-token and --admin-open)",
            403,
        ),
        Entry(
            "host_not_allowed",
            "Host {} is not allowed here (DNS rebinding protection): call the server as "
            "localhost or 127.0.0.1, or start it with --allowed-host NAME",
            403,
        ),
        Entry(
            "foreign_origin",
            "Cross-site request refused: a page of origin {} may not change the mock's state "
            "(see --allowed-host and --cors-origin)",
            403,
        ),
        Entry(
            "browser_needs_token",
            "A script in a browser may not use the control API: send the header "
            "x-idv-mock-admin-token (see --admin-token), or use the dashboard",
            403,
        ),
        Entry(
            "json_required",
            "The control API takes JSON bodies: send Content-Type: application/json",
            415,
        ),
        Entry(
            "form_token_invalid",
            "The form's anti-forgery token is missing or does not match: reload the page "
            "and send the form again",
            403,
        ),
        Entry("internal_error", INTERNAL, 500),
    ),
)

RATE_LIMIT = Family(
    "rate limit", Shape.CODED, (Entry("too_many_requests", "Too many requests", 429),)
)

# The hosted form (Liveform). The vendor's codes where it publishes them; the others are the
# mock's own in its CATEGORY-5DIGITS format, listed in docs/hosted-form.md (a test compares
# the two). Each entry's name is the slug of its error page (``/error-page/<slug>``).
LIVEFORM = Family(
    "hosted form",
    Shape.CODED,
    (
        # the vendor's codes and routes (liveform-and-values.md 1): the general pages'
        # code is their developer code (the vendor's "Legacy" category)
        Entry(
            "PV-40018",
            "The verification link has expired. Please try again with a new link.",
            name="expired-start-valid-until",
        ),
        Entry("TK-10001", "The verification token has expired.", name="token-expired"),
        Entry("page-not-found", "The page could not be found", 404, name="page-not-found"),
        Entry("bad-path", "Invalid URL path", 404, name="bad-path"),
        Entry(
            "project-closed",
            "This project is closed and access is restricted",
            403,
            name="project-closed",
        ),
        Entry("service-blocked", "Submissions are temporarily paused", 503, name="service-blocked"),
        # the same capture error three times (the vendor's 2026-05 loop pages)
        Entry("LO-30001", "OCR ID recognition failure", name="loop-ocr"),
        Entry("LO-30005", "ID image quality too low", name="loop-image-quality"),
        Entry("SE-50022", "Face comparison failed 3 times.", name="engine-face-compare"),
        # the mock's own, in the vendor's CATEGORY-5DIGITS format (docs/hosted-form.md)
        Entry("TK-10002", "A token is required for this project.", name="token-required"),
        Entry(
            "TK-10003",
            "The verification token is not registered for this project.",
            403,
            name="token-unregistered",
        ),
        Entry("PV-40001", "The encrypted parameter could not be decrypted.", name="decryption"),
        Entry("PV-40002", "{} is only accepted inside the encrypted parameter.", name="plain"),
        Entry("PV-40003", "projectionId and projectionName cannot be used together.", name="both"),
        Entry("PV-40004", "The projection could not be found.", name="unknown-projection"),
        Entry("PV-40006", "Invalid value for {}.", name="invalid-parameter"),
        Entry("PV-40007", "No liveform secret key has been issued.", name="no-secret"),
        # data injection (action=addveri): the vendor's error names, as codes of the mock
        Entry(
            "PV-40009",
            "Invalid submissionId: the submission does not exist.",
            404,
            name="invalid-submission",
        ),
        Entry("PV-40010", "Required field is missing: sid.", name="injection-missing"),
        Entry(
            "SE-50011",
            "An error occurred while processing the address information. Please try again.",
            name="injection-failed",
        ),
    ),
)

# --- the vendor's calls beyond api-v3.md (endpoints.md; issue 30) ---

# POST, GET and DELETE /submission/tokens: the vendor publishes the codes, not the texts
# (endpoints.md 1-3), except ``Token not found.``; the other texts are the mock's own
# (docs/gaps.md).
TOKENS = Family(
    "/submission/tokens",
    Shape.MONITOR,
    (
        Entry("invalid_project", INVALID_PROJECT),
        Entry("invalid_path", "Invalid request method"),
        Entry("invalid_payload", INVALID_PAYLOAD),
        Entry("invalid_query_parameters", "Invalid query parameters: {}"),
        Entry("invalid_token_id", "tokenId must be a non-empty array of strings"),
        Entry("invalid_token_id_format", "Invalid tokenId format: {}"),
        Entry("invalid_token_id_length", "tokenId must be 8 to 64 characters long: {}"),
        Entry("request_token_limit_exceeded", "Too many tokenIds in one request (limit {})"),
        Entry("token_limit_exceeded", "The token pool is full (limit {})"),
        Entry("token_not_found", "Token not found."),
        Entry("token_id_not_found", "None of the tokenIds is in the pool"),
        Entry("internal_server_error", INTERNAL, 500, fault_only=True),
    ),
)

# POST /submission/review (endpoints.md 5): the texts are the vendor's; the body's keys are
# not published (the mock answers {"message"}, docs/gaps.md).
REVIEW = Family(
    "POST /submission/review",
    Shape.MESSAGE,
    (
        Entry("project_not_found", "Project not found."),
        Entry("admin_required", "admin is required."),
        Entry("admin_denied", "Access denied. The admin is not registered in the project."),
        Entry("submission_id_required", "Submission Id is required."),
        Entry("invalid_submission_id", "Invalid Submission Id."),
        Entry("not_pending", "Only submissions in pending status can be reviewed"),
        Entry("not_client_review", "This submission cannot be reviewed by client"),
        Entry("invalid_status", "Invalid status"),
        Entry("invalid_data_format", "Invalid data format."),
        Entry("reject_comment_required", "Reject comment is required"),
    ),
)

# PUT /submission/image (endpoints.md 7): the vendor's table, verbatim.
_CANNOT_FIND_PROJECT = "Cannot find project info."
_REQUIRED_MISSING = "Required input data is missing."
_INVALID_SUBMISSION = "Invalid submission."
PUT_IMAGE = Family(
    "PUT /submission/image",
    Shape.CODED,
    (
        Entry("invalid_payload", "Fail to parse the input data."),
        Entry("missing_data", _REQUIRED_MISSING),
        Entry("invalid_project", _CANNOT_FIND_PROJECT),
        Entry("invalid_project", "Invalid project.", fault_only=True, name="project_status"),
        Entry("invalid_admin", "Invalid admin."),
        Entry("invalid_submission", _INVALID_SUBMISSION),
        Entry("invalid_data", "At least one image parameter is required."),
        Entry(
            "missing_data",
            "The idType is required when submit idImage or idBackImage.",
            name="missing_idType",
        ),
        Entry("invalid_idType", "Invalid IdType."),
        Entry("processing_error", "Failed to put image.", fault_only=True),
    ),
)

# GET /image (endpoints.md 6): no error is published; the mock answers in PUT's shape with
# PUT's texts, plus two of its own (docs/gaps.md).
GET_IMAGE = Family(
    "GET /image",
    Shape.CODED,
    (
        Entry("invalid_project", _CANNOT_FIND_PROJECT),
        Entry("missing_data", _REQUIRED_MISSING),
        Entry("invalid_type", "Invalid image type: {}"),
        Entry("invalid_submission", _INVALID_SUBMISSION),
        Entry("image_not_found", "Image not found.", 404),
    ),
)

# POST /submission/migration (endpoints.md 8, 10.3): api-v3.md 7.2's table is the vendor's
# migration table; the same entries, every one of which this call can give.
MIGRATION = Family(
    "POST /submission/migration",
    Shape.CODED,
    tuple(
        Entry(e.code, e.message, 400, fault_only=e.code == "processing_error")
        for e in GET_SUBMISSION.entries
    ),
)


# The control API's clock calls (docs/time.md)
CLOCK_ADVANCE_BODY = 'the body is {"seconds": <number of seconds, 0 or more>} or {"to": <ISO 8601>}'
CLOCK_BAD_TO = "to must be an ISO 8601 instant, such as 2026-01-02T09:00:00Z"
CLOCK_BACKWARDS = "the clock only moves forward: {} is before the project's now, {}"
CLOCK_TOO_FAR = "the clock goes no further than 9000-01-01T00:00:00Z"
