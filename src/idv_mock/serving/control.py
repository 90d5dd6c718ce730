"""The control API's edges that the API and the pages share: its prefix, its one error
shape, the admin token's cookie (set by the dashboard's login, read by ``api/exposure.py``)
and how a project's key is shown masked."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from idv_mock.ground.errors import ApiError

CONTROL_PREFIX = "/__admin"
TOKEN_COOKIE = "idv_mock_admin_token"


def is_control(path: str) -> bool:
    """Whether ``path`` is one of the control API's (every error there has its shape)."""
    return path == CONTROL_PREFIX or path.startswith(CONTROL_PREFIX + "/")


def control_body(body: Mapping[str, Any]) -> dict[str, Any]:
    """The control API's one error shape: ``{"message", "errors": [...]}`` (an empty list
    when there is nothing more to say), and the hosted form's ``errorCode`` where it has one.
    Every error under ``/__admin`` is rendered through here; ``/v3`` bodies never are."""
    rest = {k: v for k, v in body.items() if k not in ("message", "errors")}
    return {"message": body.get("message", ""), "errors": list(body.get("errors", ())), **rest}


def control_error(error: ApiError) -> ApiError:
    """``error`` with its body in the control API's shape (status and headers kept)."""
    return ApiError(error.status, control_body(error.body), error.headers)


def shaped_for(path: str, error: ApiError) -> ApiError:
    """``error`` as a call to ``path`` answers it: the control API's shape under
    ``/__admin``, untouched anywhere else (``/v3`` keeps the contract's bodies)."""
    return control_error(error) if is_control(path) else error


def mask_key(key: str) -> str:
    """Enough of a key to tell two apart, not enough to use one."""
    return key[:4] + "****" if len(key) > 8 else "****"
