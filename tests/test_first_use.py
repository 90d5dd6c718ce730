"""What a service started from a shipped start builds only on first use (issue 37) reads
and draws exactly as when it was built at start: the submission factory, ..."""

from __future__ import annotations

from typing import Any

import pytest

from idv_mock import Service, ServiceConfig
from idv_mock.backend import prebuilt


@pytest.fixture(autouse=True)
def _shipped_start() -> None:
    if not prebuilt.available(ServiceConfig()):  # another Faker (the compat cells' lowest)
        pytest.skip("no shipped start for this Faker: the service seeds, with its factory")


def _created_after(resets: list[bool], built_first: bool) -> tuple[str, dict[str, Any]]:
    """The id drawn and the submission created after ``resets`` (each: new ids or not), on
    a service whose factory was built right at start (``built_first``) or at that call."""
    service = Service()
    try:
        if built_first:
            assert service.factory.rng is not None  # any attribute builds it
        for new_ids in resets:
            service.reset(new_ids=new_ids)
        drawn = service.factory.uuid()
        return drawn, service.create_submission("default", {})
    finally:
        service.close()


@pytest.mark.parametrize(
    "resets",
    [[], [False], [True], [True, False, True], [False, True, True, False]],
    ids=["none", "same-ids", "new-ids", "mixed", "mixed-ending-same"],
)
def test_a_factory_built_on_first_use_draws_as_one_built_at_start(resets: list[bool]) -> None:
    assert _created_after(resets, built_first=False) == _created_after(resets, built_first=True)


def test_a_started_service_has_not_built_its_factory_until_asked() -> None:
    service = Service()
    try:
        assert type(service.factory).__name__ == "FactoryOnFirstUse"
        service.factory.uuid()
        assert type(service.factory).__name__ == "SubmissionFactory"  # put in its place
    finally:
        service.close()


def test_a_dispatcher_built_on_first_use_delivers_and_counts_for_coverage() -> None:
    """Reset and closed as one that never sent (nothing built); once a webhook is sent,
    the built one has the service's hooks: the attempt is counted for contract coverage."""
    from idv_mock.delivery.receiver import WebhookReceiver

    service = Service()
    receiver = WebhookReceiver()
    receiver.start()
    try:
        service.reset()
        assert type(service.webhooks).__name__ == "DispatcherOnFirstUse"
        service.update_project("default", {"options": {"webhook_url": receiver.url}})
        service.create_submission("default", {}, fire_webhooks=True)
        receiver.wait_for(1)
        assert type(service.webhooks).__name__ == "WebhookDispatcher"
        assert service.webhooks.wait_idle(10)
        assert service.webhooks.observe == service._observe_webhook
    finally:
        receiver.stop()
        service.close()


def test_worklists_tokens_and_aml_built_on_first_use_are_each_resets_own() -> None:
    """A project's worklists, token pool and AML state, restored from the start's document
    on first use: what a test changes in them is gone after a reset, and the next test
    reads the start's again (the document shared by the start and its copies is never
    changed)."""
    service = Service()
    try:
        project = service.project("default")
        assert project._monitoring is None and project._tokens is None and project._aml is None
        before = project.monitoring.export(), project.tokens.export(), project.aml.export()
        worklist = project.monitoring.worklists["default-worklist"]
        worklist.records["r1"] = {"id": "r1"}
        worklist.name = "changed"
        project.tokens.entries["t1"] = "2026-01-01T09:00:00.000Z"
        project.aml.reports["x"] = {"resourceId": "x"}
        service.reset()
        again = service.project("default")
        assert again is not project and again._monitoring is None
        assert (again.monitoring.export(), again.tokens.export(), again.aml.export()) == before
    finally:
        service.close()
