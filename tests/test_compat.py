"""idv_mock.ground.compat (issue 28): every private name of a dependency is checked, and each one
missing falls back loudly (a warning naming the versions) to the public way, which still
gives the same answers; an untested version warns; and interception never lets a call it
should answer reach the network when it cannot patch the client.

Each fallback is simulated with monkeypatch: the private name moved or changed shape.
"""

from __future__ import annotations

import importlib.util
import re
import socket
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest
import requests
from starlette.datastructures import State

import idv_mock
import idv_mock.intercept
from idv_mock import Service, ServiceConfig, create_app
from idv_mock.api import timeouts
from idv_mock.ground import compat
from idv_mock.intercept import DEFAULT_BASE_URL, InterceptionUnavailable

ROOT = Path(__file__).resolve().parents[1]
KEY = "mock-api-key"
HEADERS = {"x-api-key": KEY}


@pytest.fixture(autouse=True)
def fresh_checks() -> Iterator[None]:
    """Each test sees compat decide anew, and leaves no decision of its own behind."""
    caches = (compat.check_version, compat.httpx_merge_url_owner, compat.httptools_protocol)
    caches += (compat._warn_no_cookies,)
    for cache in caches:
        cache.cache_clear()
    yield
    for cache in caches:
        cache.cache_clear()


def load_copy(module: str) -> ModuleType:
    """A fresh copy of an idv_mock module, made under the test's monkeypatches (the
    imported one keeps what it decided at import)."""
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None
    copy_spec = importlib.util.spec_from_file_location(f"{module}_copy", spec.origin)
    assert copy_spec is not None and copy_spec.loader is not None
    copy = importlib.util.module_from_spec(copy_spec)
    copy_spec.loader.exec_module(copy)
    return copy


def first_submission(client: httpx.Client) -> httpx.Response:
    page = client.get("/submission", headers=HEADERS)
    sid = page.json()["Items"][0]["submission_id"]
    return client.get(f"/submission?submission_id={sid}", headers=HEADERS)


# --- the versions installed now: in range, nothing to warn about ---------------------------


def test_the_installed_versions_are_tested_ones_and_use_every_private_name() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert compat.httpx_merge_url_owner() is not None
        assert compat.httptools_protocol() is not None
        client = httpx.Client()
        compat.skip_empty_cookie_passes(client, type(client.cookies))
        assert compat.in_range("httpx", httpx.__version__)
        import uvicorn

        assert compat.in_range("uvicorn", uvicorn.__version__)


def test_the_tested_ranges_are_the_bounds_of_pyproject() -> None:
    """compat's TESTED and pyproject.toml's dependencies name the same ranges (every upper
    bound is where internals are read; Faker's also keeps --random-seed's output)."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    bounded = re.findall(r'"([a-z0-9-]+)(?:\[[a-z,]+\])?>=([\d.]+),<([\d.]+)"', text)
    bounds = {name: (low, below) for name, low, below in bounded}
    assert bounds == compat.TESTED


def test_an_untested_version_warns_naming_both() -> None:
    with pytest.warns(compat.UntestedVersionWarning) as caught:
        assert compat.check_version("uvicorn", "0.60.1") is False
    assert str(caught[0].message).startswith(
        "idv-mock is tested with uvicorn >=0.29,<0.55, not uvicorn 0.60.1"
    )
    assert compat.check_version("uvicorn", "0.54.2") is True
    assert compat.in_range("httpx", "0.28.1") and not compat.in_range("httpx", "0.27.2")


# --- httpx Client._merge_url ---------------------------------------------------------------


def test_httpx_merge_url_changed_shape_falls_back_to_httpx_merging(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    owner = compat.httpx_merge_url_owner()
    assert owner is not None
    real = owner.__dict__["_merge_url"]

    def _merge_url(self: Any, url: Any, params: Any = None) -> httpx.URL:  # a new shape
        result: httpx.URL = real(self, url)
        return result

    monkeypatch.setattr(owner, "_merge_url", _merge_url)
    compat.httpx_merge_url_owner.cache_clear()
    with pytest.warns(compat.CompatWarning, match=r"httpx \S+ has no Client._merge_url\(url\)"):
        transport = load_copy("idv_mock.transport")
    assert transport.MERGE_URL is False
    assert "_merge_url" not in vars(transport.InProcessClient)
    app = create_app(Service(ServiceConfig(seed_count=2)))
    with warnings.catch_warnings():  # warned once, at import: not again per client
        warnings.simplefilter("error")
        client = transport.InProcessClient(
            transport=transport.ASGITransport(app), base_url="http://idv-mock/v3"
        )
    with client:
        assert first_submission(client).status_code == 200
    from idv_mock.intercept import _httpx

    assert _httpx._merge_layers() == []  # the interception leaves httpx's merging alone


# --- httpx Client._cookies -----------------------------------------------------------------


def test_httpx_cookies_elsewhere_falls_back_to_httpx_jar(monkeypatch: pytest.MonkeyPatch) -> None:
    """httpx keeps its jar under another name: the client keeps httpx's jar (warned once),
    and a cookie a response sets is still kept."""

    def get(client: Any) -> httpx.Cookies:
        jar: httpx.Cookies = client.__dict__["_jar"]
        return jar

    def put(client: Any, jar: httpx.Cookies) -> None:
        client.__dict__["_jar"] = jar

    monkeypatch.setattr(httpx.Client, "_cookies", property(get, put), raising=False)
    from idv_mock.transport import ASGITransport, InProcessClient

    def app_setting_a_cookie(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"set-cookie": "session=abc; Path=/"})

    with pytest.warns(compat.CompatWarning, match=r"httpx \S+ has no Client._cookies"):
        client = InProcessClient(transport=httpx.MockTransport(app_setting_a_cookie))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        InProcessClient(transport=httpx.MockTransport(app_setting_a_cookie)).close()  # once
    assert type(client.cookies) is httpx.Cookies
    client.get("http://idv-mock/v3/submission")
    assert client.cookies["session"] == "abc"
    client.close()
    app = create_app(Service(ServiceConfig(seed_count=2)))
    with InProcessClient(transport=ASGITransport(app), base_url="http://idv-mock/v3") as plain:
        assert first_submission(plain).status_code == 200


# --- uvicorn's HttpToolsProtocol -----------------------------------------------------------


def test_uvicorn_protocol_moved_turns_the_deadline_off_with_a_warning(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "uvicorn.protocols.http.httptools_impl", None)
    with pytest.warns(compat.CompatWarning, match=r"uvicorn \S+ has no httptools protocol"):
        assert timeouts.timed(5.0) == "auto"  # uvicorn's own protocol: serve still starts


def test_uvicorn_protocol_present_gives_the_timed_class() -> None:
    protocol = timeouts.timed(5.0)
    assert isinstance(protocol, type)
    assert issubclass(protocol, timeouts.TimedHttpToolsProtocol)
    assert protocol.request_timeout == 5.0


# --- Starlette State -----------------------------------------------------------------------


def test_app_state_lives_in_the_dict_the_fast_lane_reads() -> None:
    app = create_app(Service(ServiceConfig(seed_count=0)))
    app.state.fast_lane = False
    assert app.shared["fast_lane"] is False
    assert isinstance(app.state, State)


def test_a_state_that_copies_its_dict_falls_back_to_a_state_over_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real_init = State.__init__

    def copying_init(self: State, state: dict[str, Any] | None = None) -> None:
        real_init(self, dict(state or {}))

    monkeypatch.setattr(State, "__init__", copying_init)
    app = create_app(Service(ServiceConfig(seed_count=2)))  # its State made when first asked
    with pytest.warns(compat.CompatWarning, match=r"starlette \S+ has no State\(dict\)"):
        assert isinstance(app.state, State)
    app.state.fast_lane = False  # reaches the dict the lane reads
    assert app.shared["fast_lane"] is False
    assert app.state.service is app.shared["service"]
    with pytest.raises(AttributeError):
        app.state.nothing  # noqa: B018
    from idv_mock.transport import ASGITransport, InProcessClient

    with InProcessClient(transport=ASGITransport(app), base_url="http://idv-mock/v3") as client:
        assert first_submission(client).status_code == 200
    assert [e["path"] for e in app.state.service.calls.journal("default")][:1] == ["/v3/submission"]


# --- interception never leaks to the network -----------------------------------------------


@pytest.fixture
def network_guard(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    """Every name lookup and outgoing connection is refused and recorded."""
    attempts: list[tuple[str, Any]] = []

    def guard(name: str) -> Any:
        def refuse(*args: Any, **kwargs: Any) -> Any:
            attempts.append((name, args[1:] if name.startswith("socket.") else args))
            raise OSError(f"the test refused {name}")

        return refuse

    monkeypatch.setattr(socket.socket, "connect", guard("socket.connect"))
    monkeypatch.setattr(socket.socket, "connect_ex", guard("socket.connect_ex"))
    monkeypatch.setattr(socket, "getaddrinfo", guard("getaddrinfo"))
    monkeypatch.setattr(socket, "create_connection", guard("create_connection"))
    return attempts


@pytest.fixture
def requests_layer_broken(monkeypatch: pytest.MonkeyPatch) -> None:
    """urllib3 without a name the requests layer imports, as a future urllib3 might be."""
    import urllib3.response

    monkeypatch.delitem(sys.modules, "idv_mock.intercept._requests", raising=False)
    monkeypatch.delattr(idv_mock.intercept, "_requests", raising=False)
    monkeypatch.delattr(urllib3.response, "HTTPResponse")


def test_a_client_it_cannot_patch_is_refused_not_sent(
    requests_layer_broken: None, network_guard: list[tuple[str, Any]]
) -> None:
    with idv_mock.mock() as service:
        with pytest.raises(InterceptionUnavailable) as refused:
            requests.get(f"{DEFAULT_BASE_URL}/submission", headers=HEADERS, timeout=5)
        # the clients it can patch still answer in the same block
        answered = httpx.get(f"{DEFAULT_BASE_URL}/submission", headers=HEADERS)
    assert network_guard == []  # no name lookup, no connection
    message = str(refused.value)
    assert message.startswith(
        f"idv-mock cannot intercept requests {requests.__version__} with urllib3 "
    )
    assert "ImportError: cannot import name 'HTTPResponse'" in message
    assert message.endswith(f": GET {DEFAULT_BASE_URL}/submission was refused, not sent")
    assert not isinstance(refused.value, requests.RequestException)
    assert answered.status_code == 200
    assert [e["path"] for e in service.calls.journal("default")] == ["/v3/submission"]


def test_other_urls_still_pass_on_when_the_client_cannot_be_patched(
    requests_layer_broken: None, network_guard: list[tuple[str, Any]]
) -> None:
    """Only mocked URLs are refused: another URL goes to the network as before (here, the
    guard), so the refusal is the mock's, not a dead requests."""
    with idv_mock.mock(), pytest.raises(requests.ConnectionError):
        requests.get("http://elsewhere.invalid/", timeout=5)
    assert [name for name, _ in network_guard][:1] == ["getaddrinfo"]


def test_the_refusing_layer_is_undone_with_the_mock(requests_layer_broken: None) -> None:
    from requests.adapters import HTTPAdapter

    before = HTTPAdapter.send
    with idv_mock.mock():
        assert HTTPAdapter.send is not before
    assert HTTPAdapter.send is before


# --- pytest's assert rewriting (AssertionRewritingHook._must_rewrite) ----------------------


def rewrite_hook(pytestconfig: pytest.Config, *marked: str) -> Any:
    """A real ``AssertionRewritingHook`` of this pytest with ``marked`` names, as pytest
    marks the packages of a wheel that ships a plugin."""
    from _pytest.assertion.rewrite import AssertionRewritingHook

    hook = AssertionRewritingHook(pytestconfig)
    hook._must_rewrite.update(marked)  # mark_rewrite warns of modules already imported
    return hook


def test_idv_mock_is_taken_off_pytests_assert_rewriting(pytestconfig: pytest.Config) -> None:
    hook = rewrite_hook(pytestconfig, "idv_mock", "pytest_idv_mock", "their_app")
    hook._marked_for_rewrite_cache.update({"idv_mock.backend": True, "their_app.x": True})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert compat.skip_assert_rewriting(hook) is True
    assert hook._must_rewrite == {"pytest_idv_mock", "their_app"}  # the plugin keeps its own
    assert hook._marked_for_rewrite_cache == {"their_app.x": True}


def test_without_assert_rewriting_there_is_nothing_to_take_off() -> None:
    class Dummy:  # pytest's hook under --assert=plain: no finder at all
        def mark_rewrite(self, *names: str) -> None: ...

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert compat.skip_assert_rewriting(Dummy()) is True


def test_a_rewrite_hook_keeping_its_marks_elsewhere_warns_and_rewrites_as_before(
    pytestconfig: pytest.Config,
) -> None:
    hook = rewrite_hook(pytestconfig, "idv_mock")
    marks = hook.__dict__.pop("_must_rewrite")  # a pytest that renamed it
    with pytest.warns(compat.CompatWarning, match=r"pytest \S+ has no AssertionRewritingHook"):
        assert compat.skip_assert_rewriting(hook) is False
    assert marks == {"idv_mock"}


def test_a_pytest_run_loads_idv_mock_without_rewriting_it(pytester: pytest.Pytester) -> None:
    """pytest marks a wheel's packages before it loads the plugins (here a plugin given
    with ``-p``, loaded before the installed ones, marks ``idv_mock`` as pytest would); the
    plugin takes the mark off, so no module of idv_mock a test imports is rewritten."""
    pytester.makepyfile(
        marks_idv_mock="def pytest_addoption(parser, pluginmanager):\n"
        "    pluginmanager.rewrite_hook.mark_rewrite('idv_mock')\n",
        test_loaders="import sys\n"
        "def test_loaders(idv_client):\n"
        "    loaders = {m: type(mod.__spec__.loader).__name__ for m, mod in sys.modules.items()\n"
        "               if m.startswith('idv_mock.backend')}\n"
        "    assert 'idv_mock.backend.service' in loaders\n"
        "    assert set(loaders.values()) == {'SourceFileLoader'}\n",
    )
    pytester.syspathinsert()
    args = ("-p", "marks_idv_mock", "-p", "no:randomly", "-p", "no:cacheprovider")
    result = pytester.runpytest_subprocess(*args, "test_loaders.py")
    result.assert_outcomes(passed=1)


def test_fakers_listing_is_cached_only_inside_the_block_and_falls_back_without_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The one Faker internal the seeding patches: cached inside the block, Faker's own
    after it; a Faker without it is warned about once and built as Faker builds it."""
    import faker.factory

    original = faker.factory.list_module
    with compat.faker_listing_cached():
        assert faker.factory.list_module is not original
        assert faker.factory.list_module(faker.providers) == original(faker.providers)
    assert faker.factory.list_module is original
    monkeypatch.delattr(faker.factory, "list_module")
    compat._warn_no_listing.cache_clear()
    warned = pytest.warns(compat.CompatWarning, match=r"has no faker.factory.list_module")
    with warned, compat.faker_listing_cached():
        pass
