"""State and rules of the mocked service, in plain Python: no HTTP, no status codes."""

from __future__ import annotations

from idv_mock.backend.exceptions import (
    AdminNotRegistered,
    BackendError,
    Conflict,
    InvalidInput,
    InvalidProperty,
    NotFound,
)
from idv_mock.backend.projects import Project
from idv_mock.backend.service import Service, ServiceConfig

__all__ = [
    "AdminNotRegistered",
    "BackendError",
    "Conflict",
    "InvalidInput",
    "InvalidProperty",
    "NotFound",
    "Project",
    "Service",
    "ServiceConfig",
]
