"""@pytest.mark.idv_scenario: start a test from a scenario's `given` state (a file or a name)."""

import pytest

from idv_mock import scenarios


@pytest.mark.idv_scenario("monitoring-batch")
def test_the_scenario_state_is_loaded(idv_service):
    assert {w["id"] for w in idv_service.screening.worklists("acme")} == {"wl-main", "wl-old"}
    lena = idv_service.stored_submission("acme", "sub-lena")
    assert lena["data"]["full_name"] == "Lena Berg"


@pytest.mark.idv_scenario("monitoring-batch")
def test_call_the_scenario_project_with_its_key(idv_client):
    acme = {"x-api-key": "acme-key"}  # the scenario's project, not the default one
    r = idv_client.get("/submission", params={"userid": "u-lena"}, headers=acme)
    assert [item["submission_id"] for item in r.json()["Items"]] == ["sub-lena"]


def test_play_a_scenario_on_the_service(idv_service):
    results = scenarios.run(scenarios.builtin("monitoring-batch"), service=idv_service)
    assert all(step.passed for step in results), "\n".join(map(str, results))
