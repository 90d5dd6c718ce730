"""What the backend can refuse. The web layer maps each to the calling endpoint's own error."""

from __future__ import annotations


class BackendError(Exception):
    """Base of every rule the backend enforces."""


class NotFound(BackendError):
    """The project, submission (or other object) does not exist for this project."""


class AdminNotRegistered(BackendError):
    """The e-mail is not an administrator of the project."""


class InvalidProperty(BackendError):
    """A PATCH property has a value its rule refuses; ``name`` is the property."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


class Conflict(BackendError):
    """An id (project, API key, submission) is already taken."""


class InvalidInput(BackendError):
    """A control-API input breaks its schema; ``problems`` says where."""

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        super().__init__(message)
        self.problems = problems or []


class InvalidCountry(BackendError):
    """The submission's nationality is not ISO 3166-1 alpha-3 (AML screening)."""

    def __init__(self, nationality: str) -> None:
        super().__init__(nationality)
        self.nationality = nationality


class NoThreshold(BackendError):
    """No AML threshold in the request and none set for the project."""


class Inactive(BackendError):
    """The worklist exists but does not accept new records."""


class NotReviewable(BackendError):
    """POST /submission/review refused: ``reason`` is ``agent`` (the project's reviewer is
    not the client) or ``not_pending``. Here, not in ``parts/records.py``, so the API layer
    names it without loading that part."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
