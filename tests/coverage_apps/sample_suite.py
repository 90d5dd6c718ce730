"""A small integrator suite, as one would write it with the plugin, for the contract
coverage report (tests/test_coverage_report.py runs it with ``--idv-coverage``): it reads
the list, meets one refusal, receives one ``approved`` webhook, and uses a project of its
own once. Everything else of the catalogue it never meets."""

from __future__ import annotations

from typing import Any

import httpx
import pytest


def test_reads_the_list(idv_client: httpx.Client) -> None:
    assert idv_client.get("/submission").status_code == 200


def test_an_unknown_parameter_is_refused(idv_client: httpx.Client) -> None:
    r = idv_client.get("/submission", params={"foo": "1"})
    assert r.json() == {"errorCode": "invalid_parameter", "message": "invalid parameter: foo"}


def test_the_approved_webhook_arrives(idv_service: Any, idv_webhook_receiver: Any) -> None:
    idv_webhook_receiver.statuses = [500]  # the app's first answer fails: the mock retries
    idv_service.create_submission("default", {"kyc": {"result": "approved"}}, fire_webhooks=True)
    assert idv_webhook_receiver.wait_for("approved")["webhook_trigger"] == "approved"
    assert idv_service.webhooks.wait_idle()


@pytest.mark.idv_mock(seed_count=2)
def test_a_missing_projection_on_a_service_of_its_own(idv_client: httpx.Client) -> None:
    assert idv_client.get("/projection/nope").status_code == 404
