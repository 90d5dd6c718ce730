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
