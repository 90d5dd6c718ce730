"""``idv-mock scenario run --reset`` puts back only the projects the scenario uses;
``--reset-all`` is the whole server, named as such."""

from __future__ import annotations

import pytest

from conftest import LiveServer
from idv_mock import Service, cli, scenarios

pytestmark = pytest.mark.live

BYSTANDER = {"project_id": "bystander", "api_key": "bystander-key", "admins": ["a@b.io"]}


def with_bystander(service: Service) -> str:
    """Another team's project on the same server, with one submission of its own."""
    service.create_project(BYSTANDER)
    return str(service.create_submission("bystander", {"userid": "keep-me"})["submission_id"])


def run(live: LiveServer, *flags: str) -> int:
    argv = ["scenario", "run", "projection-filtering", "--base-url", live.base_url, *flags]
    return cli.main(argv)


def test_reset_puts_back_only_the_scenarios_projects(service: Service) -> None:
    scenario = scenarios.builtin("projection-filtering")
    assert "bystander" not in scenario.projects
    with LiveServer(service) as live:
        assert run(live) == 0
        sid = with_bystander(service)
        extra = service.create_submission("acme", {"userid": "left-over"})["submission_id"]
        assert run(live, "--reset") == 0  # given applies again: the scenario's projects reset
        assert service.stored_submission("bystander", sid)["userid"] == "keep-me"
        assert str(extra) not in {s["submission_id"] for s in service.project("acme").store}


def test_reset_all_resets_every_project(service: Service) -> None:
    with LiveServer(service) as live:
        with_bystander(service)
        assert run(live, "--reset-all") == 0
        assert "bystander" not in service.projects


def test_without_a_reset_the_second_run_fails_and_names_the_flag(
    service: Service, capsys: pytest.CaptureFixture[str]
) -> None:
    with LiveServer(service) as live:
        assert run(live) == 0
        assert run(live) == 1
    assert "--reset" in capsys.readouterr().out


def test_reset_and_reset_all_together_is_bad_use(service: Service) -> None:
    with LiveServer(service) as live, pytest.raises(SystemExit) as exc:
        run(live, "--reset", "--reset-all")
    assert exc.value.code == 2
