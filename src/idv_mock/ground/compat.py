"""The one door to our dependencies' internals: each use is checked here, and fails loudly.

Three private names of other packages are worth their risk (``bench/internals.py`` measures
each against the public way; docs/layout.md "Tested versions" has the figures):

- httpx ``Client._merge_url``, kept per client by the in-process clients and the
  interception: httpx parses a relative URL and the merged one again on every call;
- httpx ``Client._cookies``, a jar that skips responses without ``Set-Cookie``: httpx's
  jar copies every header for ``http.cookiejar`` even then;
- uvicorn's ``HttpToolsProtocol``, subclassed by ``api/timeouts.py`` for the deadline of
  ``--request-timeout`` (a feature, not a speed-up: uvicorn has no header timeout).

Faker's ``faker.factory.list_module`` is cached while the seeding's Faker is built (most
of a second saved), and the it_IT provider's ``cities`` are sorted on that instance (the
seed's cities stay the same in every process): ``faker_listing_cached`` and
``faker_cities_sorted``, the only places the seeding touches Faker's internals.

Starlette's ``State._state`` is no longer read: ``state_over`` hands ``State`` the dict
itself (its public constructor), which costs the same. urllib3 is used only through names
that 1.26 and 2.x share (``intercept/_requests.py``).

Each dependency's version is compared with the range ``make test-compat`` runs
(``TESTED``) when its part is first used. Outside it, an :class:`UntestedVersionWarning`
names both; a private name that is gone then gives a :class:`CompatWarning` and the public
way (same behaviour, slower; for the deadline: no deadline), never an AttributeError in a
user's call. Only the standard library is imported here at import time, and nothing of
``idv_mock``: the dependencies are imported by the functions that need them.
"""

from __future__ import annotations

import contextlib
import functools
import re
import warnings
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx
    from starlette.datastructures import State

# The versions `make test-compat` runs, lowest-direct to newest, as pyproject.toml bounds
# them (from, inclusive; below, exclusive): tests/test_compat.py checks the two agree.
TESTED: dict[str, tuple[str, str]] = {
    "faker": ("40.12", "41"),
    "httpx": ("0.28", "0.29"),
    "uvicorn": ("0.29", "0.55"),
}


class CompatWarning(UserWarning):
    """A dependency lacks a private name the mock uses: the public way is taken instead."""


class UntestedVersionWarning(CompatWarning):
    """A dependency whose internals the mock reads is outside the tested range."""


def version_numbers(version: str) -> tuple[int, ...]:
    """Major, minor and micro, pre-release and local parts left out: ``7.0.0rc1`` is
    (7, 0, 0), ``7.0.1.dev3+g1`` (7, 0, 1). Compared as tuples, so ``(8,)`` >= ``(7, 0)``."""
    return tuple(int(part) for part in re.findall(r"\d+", version)[:3])


def in_range(dist: str, version: str) -> bool:
    low, below = TESTED[dist]
    return version_numbers(low) <= version_numbers(version) < version_numbers(below)


def tested(dist: str) -> str:
    """The tested range of ``dist`` in words, for warnings."""
    if dist not in TESTED:
        return f"tested with {dist}'s versions that pyproject.toml allows"
    low, below = TESTED[dist]
    return f"tested with {dist} >={low},<{below}"


@functools.cache
def check_version(dist: str, version: str) -> bool:
    """Whether ``version`` of ``dist`` is one ``make test-compat`` ran; warns once if not."""
    if in_range(dist, version):
        return True
    warnings.warn(
        f"idv-mock is {tested(dist)}, not {dist} {version}: the private names it uses are "
        f"checked one by one and replaced by public ones when missing",
        UntestedVersionWarning,
        stacklevel=3,
    )
    return False


def _fallback(what: str, dist: str, version: str, instead: str) -> None:
    warnings.warn(
        f"idv-mock: {dist} {version} has no {what} ({tested(dist)}); {instead}",
        CompatWarning,
        stacklevel=3,
    )


# --- Faker --------------------------------------------------------------------------------


@contextlib.contextmanager
def faker_listing_cached() -> Iterator[None]:
    """While a Faker is built, each provider package's locale folders listed once.

    Faker lists them once per provider and locale (209 directory scans for the mock's 11
    locales, most of a second) through ``faker.factory.list_module``, a module function
    it calls by name: cached for the block, put back after it. Without that name (warned
    once) Faker lists as it always does: slower, the same Faker."""
    import faker
    import faker.factory

    check_version("faker", faker.VERSION)
    original = getattr(faker.factory, "list_module", None)
    if not callable(original):
        _warn_no_listing(faker.VERSION)
        yield
        return
    faker.factory.list_module = functools.cache(original)  # type: ignore[attr-defined]
    try:
        yield
    finally:
        faker.factory.list_module = original  # type: ignore[attr-defined]


@functools.cache
def _warn_no_listing(version: str) -> None:
    _fallback("faker.factory.list_module", "faker", version, "locales are listed as Faker does")


def faker_cities_sorted(provider: Any) -> None:
    """Give ``provider`` (one Faker instance's) its class's ``cities`` sorted, when the
    class lists them: Faker's it_IT address provider builds that list from a set, so its
    order, and the city a seed draws, changed with each process's string hashing. A
    provider without such a list is left as it is (nothing to order)."""
    cities = type(provider).__dict__.get("cities")
    if isinstance(cities, list):
        provider.cities = sorted(cities)


# --- httpx --------------------------------------------------------------------------------


@functools.cache
def httpx_merge_url_owner() -> type | None:
    """The class defining ``_merge_url(url)`` for both httpx clients, or None (warned)."""
    import httpx

    check_version("httpx", httpx.__version__)
    owner = next((c for c in httpx.Client.__mro__ if "_merge_url" in c.__dict__), None)
    if owner is None or owner not in httpx.AsyncClient.__mro__ or not _takes_url(owner):
        _fallback("Client._merge_url(url)", "httpx", httpx.__version__, "URLs merge as httpx does")
        return None
    return owner


def _takes_url(owner: type) -> bool:
    import inspect  # once, for this check alone

    parameters = inspect.signature(owner.__dict__["_merge_url"]).parameters
    return list(parameters) == ["self", "url"]


def skip_empty_cookie_passes(client: httpx.Client | httpx.AsyncClient, jar: type) -> None:
    """Give ``client`` a cookie jar of class ``jar`` (an ``httpx.Cookies`` that skips
    responses without cookies) holding the cookies it has, where httpx keeps it in
    ``_cookies``; else leave httpx's jar (warned once)."""
    import httpx

    check_version("httpx", httpx.__version__)
    if isinstance(client.__dict__.get("_cookies"), httpx.Cookies):
        client._cookies = jar(client._cookies)
    else:
        _warn_no_cookies(httpx.__version__)


@functools.cache
def _warn_no_cookies(version: str) -> None:
    _fallback("Client._cookies", "httpx", version, "every response takes httpx's cookie pass")


# --- uvicorn ------------------------------------------------------------------------------


@functools.cache
def httptools_protocol() -> type | None:
    """uvicorn's ``HttpToolsProtocol`` to subclass, or None (warned) when it cannot be."""
    import uvicorn

    check_version("uvicorn", uvicorn.__version__)
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError as exc:  # moved, or httptools not installed
        _fallback(
            f"httptools protocol ({exc})",
            "uvicorn",
            uvicorn.__version__,
            "--request-timeout is off and uvicorn's own HTTP protocol serves",
        )
        return None
    missing = [
        n for n in ("connection_made", "connection_lost") if not hasattr(HttpToolsProtocol, n)
    ]
    if missing:
        _fallback(
            f"HttpToolsProtocol.{missing[0]}",
            "uvicorn",
            uvicorn.__version__,
            "--request-timeout is off and uvicorn's own HTTP protocol serves",
        )
        return None
    return HttpToolsProtocol


# --- pytest -------------------------------------------------------------------------------


def skip_assert_rewriting(rewrite_hook: Any, package: str = __name__.partition(".")[0]) -> bool:
    """Take ``package`` off the modules pytest rewrites the asserts of; False (warned)
    when pytest keeps its marks elsewhere.

    pytest rewrites every module of a distribution that ships a plugin (``pytest11``), so
    in a wheel install each ``idv_mock`` module went through pytest's loader and its own
    bytecode cache: a fifth of a first fixture's cost (``bench/plugin_cost.py``), for
    modules whose asserts are internal checks, never a user's. The plugin's own package
    (``pytest_idv_mock``) stays rewritten. Private: ``_must_rewrite`` (a set of names) and
    ``_marked_for_rewrite_cache`` of pytest's ``AssertionRewritingHook``."""
    if not hasattr(rewrite_hook, "find_spec"):  # --assert=plain: pytest's dummy hook
        return True
    marks = getattr(rewrite_hook, "_must_rewrite", None)
    cache = getattr(rewrite_hook, "_marked_for_rewrite_cache", None)
    if not isinstance(marks, set) or not isinstance(cache, dict):
        import pytest

        _fallback(
            "AssertionRewritingHook._must_rewrite",
            "pytest",
            pytest.__version__,
            f"{package}'s modules are assert-rewritten as pytest does for plugins",
        )
        return False
    marks.discard(package)
    for name in [n for n in cache if n == package or n.startswith(package + ".")]:
        del cache[name]
    return True


# --- Starlette ----------------------------------------------------------------------------

_PROBE = "_idv_mock_probe"


def state_over(shared: dict[str, Any]) -> State:
    """A Starlette ``State`` whose attributes live in ``shared``, so a hot path reads the
    dict (no ``__getattr__`` per read) through public means only."""
    from starlette.datastructures import State

    state = State(shared)
    setattr(state, _PROBE, True)
    if shared.pop(_PROBE, None) is True:
        return state
    import starlette

    _fallback(
        "State(dict) that keeps the dict",
        "starlette",
        starlette.__version__,
        "the app's state is kept in a State subclass over the dict",
    )
    return _over(State, shared)


def _over(base: type[State], shared: dict[str, Any]) -> State:
    """A ``State`` (subclass) whose attribute reads and writes go to ``shared``."""

    class DictState(base):  # type: ignore[valid-type,misc]
        def __init__(self) -> None:
            object.__setattr__(self, "_idv_mock_shared", shared)

        def __getattr__(self, key: str) -> Any:
            try:
                return shared[key]
            except KeyError:
                raise AttributeError(f"'State' object has no attribute '{key}'") from None

        def __setattr__(self, key: str, value: Any) -> None:
            shared[key] = value

        def __delattr__(self, key: str) -> None:
            del shared[key]

    state: State = DictState()
    return state
