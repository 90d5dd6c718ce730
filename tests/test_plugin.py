"""The pytest plugin, as a downstream test suite uses it (pytester: throwaway projects)."""

from __future__ import annotations

import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from idv_mock.ground.compat import version_numbers

# pytest-asyncio (installed for the strict-mode test) warns in every run without this; before
# 0.24 (the newest for pytest 7.0 to 8.1, where these tests run too) it is an unknown option
KNOWN = version_numbers(version("pytest-asyncio")) >= (0, 24)
LOOP_SCOPE = "asyncio_default_fixture_loop_scope = function\n" if KNOWN else ""
INI = "[pytest]\n" + LOOP_SCOPE


@pytest.fixture(autouse=True)
def quiet_asyncio(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI)


USES_EVERY_FIXTURE = """
import httpx, pytest

def test_service(idv_service):
    assert len(idv_service.project("default").store) == 7

def test_server(idv_server):
    r = httpx.get(idv_server.base_url + "/submission", headers={"x-api-key": idv_server.api_key})
    assert len(r.json()["Items"]) == 7
    assert idv_server.base_url.endswith("/v3") and idv_server.admin == "admin@example.com"

def test_root_url_is_where_the_form_lives(idv_server):
    assert idv_server.base_url == idv_server.root_url + "/v3"
    assert idv_server.admin_url == idv_server.root_url + "/__admin"
    r = httpx.get(idv_server.root_url + "/", params={"pid": idv_server.project_id})
    assert r.status_code == 303 and r.headers["location"].startswith("/liveform/s/")
    assert idv_server.liveform_url(userid="u").startswith(idv_server.root_url + "/liveform/?")

def test_client(idv_client):
    assert idv_client.get("/submission").status_code == 200

@pytest.fixture
def anyio_backend():
    return "asyncio"

@pytest.mark.anyio
async def test_async_client(idv_async_client):
    assert (await idv_async_client.get("/submission")).status_code == 200

def test_client_is_httpx_on_the_same_service(idv_service, idv_client):
    assert isinstance(idv_client, httpx.Client)
    assert str(idv_client.base_url) == "http://idv-mock/v3/"
    sid = idv_service.create_submission("default")["submission_id"]
    items = idv_client.get("/submission", params={"submission_id": sid}).json()["Items"]
    assert [item["submission_id"] for item in items] == [sid]

@pytest.mark.anyio
async def test_both_clients_in_an_async_test(idv_service, idv_client, idv_async_client):
    assert isinstance(idv_async_client, httpx.AsyncClient)
    sid = idv_service.create_submission("default")["submission_id"]
    params = {"submission_id": sid, "admin_name": "a@b.co"}
    assert (await idv_async_client.request("DELETE", "/submission", params=params)).is_success
    idv_service.calls.add_fault(
        "default", {"match": {"path": "/v3/submission"}, "delay_ms": 5, "times": 1}
    )
    item = idv_client.get("/submission", params={"submission_id": sid}).json()["Items"][0]
    assert item["status"] == "Deleted Submission"

def test_receiver(idv_service, idv_client, idv_webhook_receiver):
    sid = idv_service.create_submission("default")["submission_id"]
    params = {"submission_id": sid, "admin_name": "a@b.co"}
    idv_client.request("DELETE", "/submission", params=params)
    assert idv_webhook_receiver.wait_for("delete", 5)["submission_id"] == sid
"""


def test_every_fixture_works_in_a_fresh_project(pytester: pytest.Pytester) -> None:
    pytester.makeini(f"{INI}idv_mock_seed_count = 7\n")
    pytester.makepyfile(test_fixtures=USES_EVERY_FIXTURE)
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=8)


def test_every_fixture_works_with_fakers_own_plugin_off(pytester: pytest.Pytester) -> None:
    """docs/pytest.md: a suite that does not use Faker's ``faker`` fixture may turn Faker's
    pytest plugin off with ``addopts = -p no:faker``; the mock makes its data without it."""
    pytester.makeini(f"{INI}addopts = -p no:faker\nidv_mock_seed_count = 7\n")
    pytester.makepyfile(test_fixtures=USES_EVERY_FIXTURE)
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=8)
    plugins = next(line for line in result.outlines if line.startswith("plugins:"))
    assert "idv-mock" in plugins and "faker" not in plugins.lower()


def test_each_test_starts_from_the_seeded_state(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.parametrize("n", range(4))
        def test_add(idv_service, n):
            store = idv_service.project("default").store
            assert len(store) == 3
            idv_service.create_submission("default", {"submission_id": "fixed-id"})
            assert len(store) == 4
        """
    )
    result = pytester.runpytest("--idv-mock-seed-count", "3")
    result.assert_outcomes(passed=4)


def test_xdist_workers_are_isolated(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import httpx, pytest

        @pytest.mark.parametrize("n", range(8))
        def test_add_over_http(idv_server, n):
            url = idv_server.admin_url + "/projects/default/submissions"
            assert httpx.post(url, json={"submission_id": "same-id"}).status_code == 201
            r = httpx.get(idv_server.base_url + "/submission", params={"count": "2000"},
                          headers={"x-api-key": idv_server.api_key})
            assert len(r.json()["Items"]) == 6
        """
    )
    result = pytester.runpytest_subprocess("-n", "2", "--idv-mock-seed-count", "5")
    result.assert_outcomes(passed=8)


def test_options_from_the_environment(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IDV_MOCK_SEED_COUNT", "2")
    pytester.makepyfile(
        "def test_count(idv_service):\n    assert len(idv_service.project('default').store) == 2\n"
    )
    pytester.runpytest_subprocess().assert_outcomes(passed=1)


def test_the_same_random_seed_gives_the_same_data(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        "def test_first(idv_service):\n"
        "    sub = next(iter(idv_service.project('default').store))\n"
        "    print('FIRST', sub['submission_id'])\n"
    )
    runs = [pytester.runpytest_subprocess("-s", "--idv-mock-random-seed", "9") for _ in range(2)]
    lines = [[ln.split("FIRST")[1] for ln in r.outlines if "FIRST" in ln] for r in runs]
    assert lines[0] == lines[1] != []


def test_marker_is_registered(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--markers")
    result.stdout.fnmatch_lines(["*idv_scenario(name_or_path)*"])


CONFIGURED = """
import httpx, pytest

@pytest.fixture(scope="session")
def idv_service_config():
    from idv_mock import ServiceConfig
    return ServiceConfig(seed_count=3, random_seed=5)

def test_config_fixture(idv_service):
    assert len(idv_service.project("default").store) == 3

@pytest.mark.idv_mock(seed_count=4, options={"secure_transfer": True})
def test_marker_gives_its_own_service_and_server(idv_service, idv_server):
    assert len(idv_service.project("default").store) == 4
    assert idv_service.project("default").options["secure_transfer"] is True
    r = httpx.get(idv_server.base_url + "/submission", headers={"x-api-key": idv_server.api_key})
    assert r.json() == {"errorCode": "missing_data", "message": "Required input data is missing"}

@pytest.mark.idv_mock(options={"aml_threshold": 55})
def test_marker_options_only(idv_service):
    assert len(idv_service.project("default").store) == 3
    assert idv_service.project("default").options["aml_threshold"] == 55

def test_unmarked_again(idv_service, idv_server):
    assert idv_service.project("default").options["aml_threshold"] != 55
    r = httpx.get(idv_server.base_url + "/submission", headers={"x-api-key": idv_server.api_key})
    assert len(r.json()["Items"]) == 3

@pytest.mark.idv_scenario("monitoring-batch")
def test_scenario_by_builtin_name(idv_service):
    assert "acme" in {p["project_id"] for p in idv_service.describe_projects()}
"""


def test_configured_like_the_anchors(pytester: pytest.Pytester) -> None:
    """``idv_service_config`` overridden in a conftest-like place, the ``idv_mock`` marker
    for one test (a service and server of its own with a seed count), then back."""
    pytester.makepyfile(test_configured=CONFIGURED)
    pytester.runpytest_subprocess("-p", "no:randomly").assert_outcomes(passed=5)


ASYNC_UNDER = {
    "pytest_asyncio": """
import sys

import pytest

@pytest.mark.asyncio
async def test_read(idv_async_client):
    r = await idv_async_client.get("/submission", params={"count": "1"})
    assert r.status_code == 200
""",
    "anyio": """
import sys

import pytest

@pytest.fixture
def anyio_backend():
    return "asyncio"

@pytest.mark.anyio
async def test_read(idv_async_client):
    r = await idv_async_client.get("/submission", params={"count": "1"})
    assert r.status_code == 200
""",
}


@pytest.mark.parametrize("runner", sorted(ASYNC_UNDER))
def test_async_client_under_each_async_plugin(pytester: pytest.Pytester, runner: str) -> None:
    """Strict mode of pytest-asyncio takes the fixture without a warning (``-W error``)."""
    pytester.makeini("[pytest]\nasyncio_mode = strict\n" + LOOP_SCOPE)
    pytester.makepyfile(test_async=ASYNC_UNDER[runner])
    result = pytester.runpytest_subprocess("-W", "error")
    result.assert_outcomes(passed=1)


def test_importing_the_plugin_loads_nothing_heavy(pytester: pytest.Pytester) -> None:
    """What every downstream pytest run pays, idv fixtures used or not."""
    code = (
        "import sys, pytest_idv_mock\n"
        "heavy = {'idv_mock', 'httpx', 'uvicorn', 'faker', 'starlette', 'fpdf', 'pytest'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
    )
    result = pytester.run(sys.executable, "-c", code)
    assert result.outlines == ["[]"]


def test_a_first_idv_server_use_loads_only_what_it_needs(pytester: pytest.Pytester) -> None:
    """A first test on ``idv_server`` (one call) leaves the parts it does not touch and
    their libraries unloaded (issue 37): screening (rapidfuzz), the PDF report (fpdf2), the
    pages (Jinja2), the hosted form, review and images, the dashboard, scenarios (YAML),
    Faker (the start ships prebuilt), the Python jsonschema, the API handlers of the paths
    it does not call, the near-miss hints and CORS (the fast lane answers that call
    without them), the backend's edits, webhook payload builders and one-shot routes,
    seeding, rate limiter, and the hosted form's links and flow (it edits nothing, sends
    no webhook, seeds nothing, limits no rate, opens no form), the submission factory and
    the stored images (it creates none), the state file's save health (it writes
    nothing), the webhook dispatcher (it sends none), a project's AML state, worklists and
    token pool (it reads none), Starlette and what the app builds behind the fast lane
    (its routes, the control API, the write guard, the pages' mount, the fault
    responses: the lane answers), the event codes, the delivery and token parts and the
    crypto (no webhook, no secure project), and uvicorn and httptools altogether (the
    fixtures' server is ``idv_mock.serving.thread_server``), with what uvicorn's config
    imported: ``logging.config`` (its handlers, ``configparser``)."""
    from idv_mock import ServiceConfig
    from idv_mock.backend import prebuilt

    if not prebuilt.available(ServiceConfig()):  # another Faker (the compat cells' lowest)
        built = prebuilt.BUILT_WITH.read_text().strip()
        pytest.skip(f"the shipped start is made with Faker {built}: this one seeds, with Faker")
    pytester.makepyfile(
        """
        import sys, httpx

        LATER = ("rapidfuzz", "fpdf", "jinja2", "jsonschema", "faker", "yaml",
                 "cryptography", "idv_mock.scenarios", "idv_mock.web.pages",
                 "idv_mock.backend.parts.screening", "idv_mock.backend.parts.liveform",
                 "idv_mock.backend.parts.records", "idv_mock.backend.parts.dashboard",
                 "uvicorn", "httptools", "uvloop", "watchfiles", "logging.config",
                 "configparser",
                 "idv_mock.api.patch_submission", "idv_mock.api.delete_submission",
                 "idv_mock.api.applicant", "idv_mock.api.aml", "idv_mock.api.monitoring",
                 "idv_mock.api.projection", "idv_mock.api.tokens", "idv_mock.api.review",
                 "idv_mock.api.images", "idv_mock.api.migration", "idv_mock.api.hints",
                 "idv_mock.api.cors", "idv_mock.backend.edits", "idv_mock.backend.events",
                 "idv_mock.backend.seed", "idv_mock.backend.ratelimit",
                 "idv_mock.backend.liveform_links", "idv_mock.backend.routes",
                 "idv_mock.backend.liveform_flow", "idv_mock.fake", "idv_mock.backend.images",
                 "idv_mock.backend.save_health", "idv_mock.delivery.webhooks",
                 "idv_mock.backend.aml", "idv_mock.backend.monitoring",
                 "idv_mock.backend.token_pool", "logging.handlers",
                 "starlette", "idv_mock.api.admin", "idv_mock.api.lazy_route",
                 "idv_mock.serving.guard", "idv_mock.web", "idv_mock.api.faults",
                 "idv_mock.backend.event_codes", "idv_mock.backend.parts.delivery",
                 "idv_mock.backend.parts.tokens", "idv_mock.ground.crypto")

        def test_first(idv_server):
            r = httpx.get(idv_server.base_url + "/submission", params={"count": 1},
                          headers={"x-api-key": idv_server.api_key})
            assert r.status_code == 200
            loaded = sorted(m for m in sys.modules if m.split(".")[0] in LATER
                            or any(m == n or m.startswith(n + ".") for n in LATER))
            print("LOADED", loaded)
        """
    )
    result = pytester.runpytest_subprocess(
        "-s", "-p", "no:faker", "-p", "no:cacheprovider", "-p", "no:randomly"
    )
    result.assert_outcomes(passed=1)
    assert [line.split("LOADED ")[1] for line in result.outlines if "LOADED" in line] == ["[]"]


def test_assert_called_shows_the_hints_and_wait_for_takes_event_names(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        """
        import httpx, pytest

        def test_hint_in_the_message(idv_server):
            key = {"x-api-key": idv_server.api_key}
            httpx.get(idv_server.base_url + "/submissions", headers=key)
            with pytest.raises(AssertionError) as failure:
                idv_server.assert_called("GET", "/v3/submission")
            assert "404 GET /v3/submissions" in str(failure.value)
            assert "hint: " in str(failure.value)

        def test_event_names(idv_service, idv_client, idv_webhook_receiver):
            sid = next(iter(idv_service.project("default").store))["submission_id"]
            body = {"submissionId": sid, "admin": "admin@example.com", "data": {"memo": "x"}}
            assert idv_client.patch("/submission", json=body).status_code == 200
            assert idv_webhook_receiver.wait_for("submission.updated")["submission_id"] == sid
            with pytest.raises(TimeoutError, match="arrived: submission.updated"):
                idv_webhook_receiver.wait_for("approved", timeout=0.3)
        """
    )
    pytester.runpytest_subprocess().assert_outcomes(passed=2)


def test_the_receiver_decrypts_with_the_projects_key_derivation(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.idv_mock(options={"secure_transfer": True, "key_derivation": "md5hex"})
        def test_md5hex(idv_service, idv_client, idv_webhook_receiver):
            idv_service.create_submission(
                "default", {"kyc": {"result": "approved"}}, fire_webhooks=True
            )
            assert idv_webhook_receiver.wait_for("approved")["webhook_trigger"] == "approved"
        """
    )
    pytester.runpytest_subprocess().assert_outcomes(passed=1)


CLOCKED = """
from datetime import timedelta

import pytest

def test_option_sets_every_projects_clock(idv_service, idv_project):
    assert idv_service.clocks.handle("default").mode == "{mode}"
    assert idv_project.clock.mode == "{mode}"

@pytest.mark.idv_mock(clock="tick")
def test_marker_wins_over_the_option(idv_server, idv_project):
    assert idv_server.clock.mode == "tick"
    assert idv_project.clock.mode == "tick"

def test_advance_moves_only_that_project(idv_server, idv_project):
    # exact when frozen; a wall clock also goes on by itself between the readings
    slack = timedelta(seconds=1) if "{mode}" == "wall" else timedelta(0)
    step = timedelta(days=1, hours=2, minutes=3, seconds=4)
    start, other = idv_project.clock.now, idv_server.clock.now
    done = idv_project.clock.advance(days=1, hours=2, minutes=3, seconds=4)
    assert step <= idv_project.clock.now - start <= step + slack
    assert done["fired"] == []
    assert timedelta(0) <= idv_server.clock.now - other <= slack
"""


@pytest.mark.parametrize("mode", ["frozen", "wall"])
def test_the_clock_option_and_marker(pytester: pytest.Pytester, mode: str) -> None:
    pytester.makepyfile(CLOCKED.replace("{mode}", mode))
    outcome = pytester.runpytest_subprocess("--idv-mock-clock", mode)
    outcome.assert_outcomes(passed=3)


def test_a_bad_clock_option_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_x(idv_service):\n    pass\n")
    result = pytester.runpytest_subprocess("--idv-mock-clock", "sundial")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*'sundial' is not tick, wall or frozen*"])


DOCS = Path(__file__).resolve().parents[1] / "docs" / "pytest.md"
REFUSED = (
    "ERROR: idv-mock's pytest plugin needs pytest 7.0 or later, not {}: pip install "
    "'idv-mock[pytest]' upgrades it; -p no:idv_mock runs without the plugin"
)


@pytest.mark.parametrize(
    ("version", "refused"),
    [
        ("6.2.5", True),
        ("6.99.0", True),
        ("5", True),
        ("7.0.0rc1", False),
        ("7.0.0", False),
        ("8.0.2", False),
        ("9.1.0.dev3+g1a2b", False),
        ("10.0", False),
    ],
)
def test_the_pytest_floor(version: str, refused: bool) -> None:
    from pytest_idv_mock import check_pytest_version

    if not refused:
        check_pytest_version(version)
        return
    with pytest.raises(pytest.UsageError) as caught:
        check_pytest_version(version)
    assert f"ERROR: {caught.value}" == REFUSED.format(version)


def test_an_older_pytest_stops_the_run_before_any_test(pytester: pytest.Pytester) -> None:
    """What a project on pytest 6.2 sees (its version patched in, before the plugin's
    configure hook reads it): the floor and the two ways out, exit code 4, no test run;
    and without the plugin (``-p no:idv_mock``) its other tests run."""
    pytester.makeconftest("import pytest\n\npytest.__version__ = '6.2.5'\n")
    pytester.makepyfile(test_plain="def test_plain():\n    assert True\n")
    result = pytester.runpytest_subprocess("-p", "no:randomly")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert REFUSED.format("6.2.5") in result.errlines
    assert REFUSED.format("6.2.5") in DOCS.read_text(encoding="utf-8")  # shown as it is
    assert "test_plain" not in result.stdout.str()
    pytester.runpytest_subprocess("-p", "no:randomly", "-p", "no:idv_mock").assert_outcomes(
        passed=1
    )
