"""Hypothesis strategies for what a client sends idv-mock: valid requests, and wrong ones.

Valid strategies draw bodies and queries the mock accepts; their allowed values (countries,
id types, the date pattern, projection fields, limits) are read from ``schemas/`` through
:mod:`idv_mock.ground.schemas`, so a strategy cannot drift from the server's own tables.

The ``invalid_*`` strategies draw an :class:`Invalid`: a bad request *together with* the
exact response the mock (and the real service) must give it. Where a request breaks
several rules, the expected error is the one the documented check order (gaps.md,
docs/gaps.md) makes fire first, and drawn requests are often wrong
in several ways on purpose: that is what tests the order. The order is written here, not
imported from the backend, so that a property test catches a server checking in another
order. Error bodies come from the catalogue (:mod:`idv_mock.ground.errors`); the property tests
compare them with the spec's literal texts. Each ``invalid_*`` strategy takes ``kinds`` to
draw only some of its failure kinds (the names are listed in its docstring).

Ids and administrators are plain sequences, checked when a value is drawn rather than when
the strategy is built, as Hypothesis' own strategies do.

Hypothesis is not a dependency of a plain install: ``pip install 'idv-mock[strategies]'``.
"""

from __future__ import annotations

try:
    import hypothesis as _hypothesis  # noqa: F401  (checked first, to say which extra)
except ImportError as _missing:
    raise ModuleNotFoundError(
        "idv_mock.strategies needs Hypothesis, which a plain install of idv-mock leaves out: "
        "install the extra, pip install 'idv-mock[strategies]' (or pip install hypothesis)",
        name="hypothesis",
    ) from _missing

from idv_mock.strategies.aml import invalid_aml_requests
from idv_mock.strategies.common import PATCH_CHECK_ORDER as PATCH_CHECK_ORDER
from idv_mock.strategies.common import Invalid, send
from idv_mock.strategies.edits import invalid_edit_requests
from idv_mock.strategies.get_queries import invalid_get_queries
from idv_mock.strategies.monitoring import invalid_monitor_requests
from idv_mock.strategies.partial_delete import invalid_partial_delete_queries
from idv_mock.strategies.projection import invalid_projection_requests
from idv_mock.strategies.records import (
    invalid_migration_requests,
    invalid_put_image_requests,
    invalid_review_requests,
    migration_requests,
    put_image_requests,
    review_requests,
)
from idv_mock.strategies.tokens import invalid_token_requests, token_ids, token_requests
from idv_mock.strategies.valid import (
    aml_requests,
    edit_requests,
    monitor_requests,
    partial_delete_queries,
    projection_requests,
    submissions,
)
from idv_mock.strategies.webhooks import webhook_payloads

__all__ = [
    "Invalid",
    "aml_requests",
    "edit_requests",
    "invalid_aml_requests",
    "invalid_edit_requests",
    "invalid_get_queries",
    "invalid_migration_requests",
    "invalid_monitor_requests",
    "invalid_partial_delete_queries",
    "invalid_projection_requests",
    "invalid_put_image_requests",
    "invalid_review_requests",
    "invalid_token_requests",
    "migration_requests",
    "monitor_requests",
    "partial_delete_queries",
    "projection_requests",
    "put_image_requests",
    "review_requests",
    "send",
    "submissions",
    "token_ids",
    "token_requests",
    "webhook_payloads",
]
