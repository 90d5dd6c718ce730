"""idv-mock: a contract-faithful, stateful mock of an identity verification service's API v3.

Every public name is imported on first use (PEP 562), so ``import idv_mock`` (and the
pytest plugin, which imports it) costs a downstream project nothing it does not use:
Faker, Starlette, jsonschema and the rest load when ``Service``, ``create_app``, ``mock``
or ``make_submission`` is first touched.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from idv_mock.backend import Service, ServiceConfig
    from idv_mock.backend.samples import make_submission
    from idv_mock.fake.factory import SubmissionFactory
    from idv_mock.intercept import mock

__all__ = ["Service", "ServiceConfig", "SubmissionFactory", "create_app", "make_submission", "mock"]
__version__ = "0.4.0"

# public name -> the module that defines it
_HOMES = {
    "Service": "idv_mock.backend",
    "ServiceConfig": "idv_mock.backend",
    "SubmissionFactory": "idv_mock.fake.factory",
    "make_submission": "idv_mock.backend.samples",
    "mock": "idv_mock.intercept",
}


def create_app(service: Service | None = None, **options: Any) -> Any:
    """The ASGI app serving ``service`` (a fresh default one if not given): the fast lane
    in front of a Starlette app built on the first call the lane does not take;
    ``options`` are those of :func:`idv_mock.api.app.create_app` (``hints``,
    ``cors_origins``, ``exposed``, ``admin_token``, ``admin_open``)."""
    from idv_mock.api.app import create_app as _create

    return _create(service, **options)


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'idv_mock' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # looked up once
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
