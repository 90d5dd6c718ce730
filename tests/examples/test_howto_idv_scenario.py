"""@pytest.mark.idv_scenario: start a test from a scenario's `given` state (a file or a name)."""

import pytest


@pytest.mark.idv_scenario("monitoring-batch")
def test_the_scenario_state_is_loaded(idv_service):
    acme = idv_service.project("acme")
    assert set(acme.monitoring.worklists) == {"wl-main", "wl-old"}
    assert acme.store.get("sub-lena")["data"]["full_name"] == "Lena Berg"
