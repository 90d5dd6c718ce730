"""Turning a fired fault rule into the response the matched call would give."""

from __future__ import annotations

import logging
from typing import Any

from starlette.responses import Response

from idv_mock.backend.parts.calls import FiredRule
from idv_mock.ground.errors import MISSING_RECORD, ApiError, Family
from idv_mock.serving.http import json_response

FAULT_HEADER = "x-idv-mock-fault"


def rule_response(rule: FiredRule, family: Family) -> Response | None:
    """The rule's response; ``None`` when it only delays (the call then goes on)."""
    spec = rule.spec
    if "respond" in spec:
        respond = spec["respond"]
        headers = {**respond.get("headers", {}), FAULT_HEADER: rule.id}
        return json_response(respond.get("body"), respond["status"], headers)
    if "error" in spec:
        error = catalogue_error(family, spec["error"])
        error.headers[FAULT_HEADER] = rule.id
        raise error
    if "fault" in spec:
        return BrokenResponse(str(spec["fault"]), rule.id)
    return None


class ConnectionAborted(BaseException):
    """Raised past Starlette's handlers so the server drops the connection mid-response."""


class OneLineResets(logging.Filter):
    """uvicorn logs an exception that leaves the app as a crash, with its traceback (33
    lines per ``connection_reset``); the mock dropped that connection on purpose, so the
    record becomes one warning line."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, ConnectionAborted):
            record.msg, record.args, record.exc_info = "idv-mock: %s (as asked)", (exc,), None
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


def quiet_connection_resets(logger_name: str = "uvicorn.error") -> None:
    """Install :class:`OneLineResets` on the server's error logger (once)."""
    logger = logging.getLogger(logger_name)
    if not any(isinstance(f, OneLineResets) for f in logger.filters):
        logger.addFilter(OneLineResets())


class BrokenResponse(Response):
    """A response that breaks the way networks and overloaded services do."""

    TRUNCATED = b'{"Items": [{"submission_id": "'

    def __init__(self, kind: str, rule_id: str) -> None:
        body = self.TRUNCATED if kind == "malformed_json" else b""
        super().__init__(body, 200, {FAULT_HEADER: rule_id}, "application/json")
        self.kind = kind

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if self.kind != "connection_reset":
            await super().__call__(scope, receive, send)
            return
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", b"1024"),
            (FAULT_HEADER.encode(), self.headers[FAULT_HEADER].encode()),
        ]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b'{"Items": [', "more_body": True})
        raise ConnectionAborted("fault rule: connection_reset")


def catalogue_error(family: Family, name: str) -> ApiError:
    """The family's error named by code or message; a ``{}`` left unfilled reads ``fault``."""
    entry = family.find(name)
    if entry is None:
        raise ApiError(500, {"message": f"fault rule names no error of {family.name}: {name}"})
    message = name if name != entry.code and "{}" in entry.message else entry.message
    return family.render(entry, message.replace("{}", "fault"), **FAULT_EXTRAS.get(entry.key, {}))


# errors whose body carries more than code and message (gaps.md "Ongoing monitoring")
FAULT_EXTRAS: dict[str, dict[str, Any]] = {
    "all_submissions_failed": {
        "success": False,
        "successCount": 0,
        "failedCount": 0,
        "successResults": [],
        "failedResults": [],
    },
    "missing_records": {"details": [MISSING_RECORD]},
}
