"""A client the mock covers but cannot patch: its calls to mocked URLs are refused, never sent.

An interception library must not let a call it claims to answer reach the network
silently (moto and respx fail loudly too). When requests is installed but its layer
cannot be built (a urllib3 or requests whose names moved), ``HTTPAdapter.send`` still gets
a layer: a call under a mocked base URL raises :class:`InterceptionUnavailable`, naming
the versions and the cause; every other URL goes on as it always does.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import metadata
from typing import Any

from idv_mock.intercept._layers import Layer
from idv_mock.intercept._routing import Target, decide, split_text


class InterceptionUnavailable(RuntimeError):
    """A call the mock should answer, through a client it could not patch; not sent.

    Not a requests error, for the same reason as ``UnmockedRequestError``: the code under
    test must not take it for a network failure and retry.
    """


def requests_refusal(target: Target, cause: BaseException) -> list[Layer]:
    """The refusing layer on requests' ``HTTPAdapter.send``, made from ``cause`` (why the
    real layer could not be built)."""
    from requests.adapters import HTTPAdapter

    why = (
        f"idv-mock cannot intercept requests {_version('requests')} with urllib3 "
        f"{_version('urllib3')} ({type(cause).__name__}: {cause})"
    )
    return [Layer(HTTPAdapter, "send", lambda real: _refuse(target, why, real))]


def _refuse(target: Target, why: str, real: Callable[..., Any]) -> Callable[..., Any]:
    def send(adapter: Any, request: Any, *args: Any, **kwargs: Any) -> Any:
        url = request.url or ""
        if decide(target, split_text(url), url) is None:
            return real(adapter, request, *args, **kwargs)
        raise InterceptionUnavailable(f"{why}: {request.method} {url} was refused, not sent")

    return send


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "(not installed)"
