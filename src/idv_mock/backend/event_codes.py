"""The webhook triggers' names and the hosted form's codes that events carry, without the
payload builders (``events.py``): the parts a first use builds (coverage counts, the
hosted form's state, delivery) read these lists when they load, and a first test sends
no webhook, so the builders load when the first event is made (issue 37)."""

from __future__ import annotations

from idv_mock.ground import operations, schemas

# webhook_trigger -> the X-Idv-Event header (the mock's own; the vendor sends none)
EVENT_NAMES = {trigger: entry["event"] for trigger, entry in operations.webhooks().items()}
RETRY_CODES: tuple[str, ...] = tuple(
    schemas.load("webhooks/common.json")["$defs"]["retry_code"]["enum"]
)
FAIL_CODES: tuple[str, ...] = tuple(
    schemas.load("webhooks/common.json")["$defs"]["injection_fail_action"]["properties"][
        "failCode"
    ]["enum"]
)
