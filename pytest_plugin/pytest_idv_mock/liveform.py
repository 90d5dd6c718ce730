"""Drive the hosted form in an integrator's browser test (Playwright, sync API).

Your app sends the applicant to the form (a link from ``idv_server.liveform_url(...)`` or
your own); the test then calls ``walk_liveform(page, "approved")`` and the form is walked to
its outcome through the pages' ``data-testid``s (the same in every language), the way an
applicant would click. Steps the link leaves out (a fixed country, an id type) are skipped.

    from pytest_idv_mock.liveform import walk_liveform

    def test_signup_is_verified(page, idv_server, my_app):
        page.goto(my_app.start_verification_url())   # redirects to the mock's form
        done = walk_liveform(page, "rejected", reason="expired_id")
        assert done.kyc_status == "rejected"

Only the standard library is imported: ``page`` is any Playwright ``Page`` (sync API).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

OUTCOMES = ("approved", "rejected", "pending")
BEFORE_TESTER = ("consent", "country", "id_type", "document", "selfie")


@dataclass(frozen=True)
class LiveformResult:
    """What the form's last page shows; ``retried`` when recognition failed once first."""

    submission_id: str
    kyc_status: str
    retried: bool = False


def current_step(page: Any) -> str:
    """The step the page shows (``consent`` … ``tester``, ``done``, ``error``)."""
    testid = page.locator("body").get_attribute("data-testid") or ""
    return str(testid).removeprefix("page-")


def walk_to_tester(
    page: Any,
    *,
    country: str = "KOR",
    id_type: str = "passport",
    full_name: str | None = "Ann Example",
    on_step: Callable[[str], Any] | None = None,
) -> None:
    """From wherever the form is to its tester panel (where the outcome is chosen).

    ``on_step(step)`` is called on each step once it is filled in, before it is sent (a
    screenshot, say)."""
    while (step := current_step(page)) in BEFORE_TESTER:
        if step == "consent":
            page.get_by_test_id("consent-agree").check()
        elif step == "country":
            page.get_by_test_id("country-select").select_option(country)
        elif step == "id_type":
            page.get_by_test_id(f"id-type-{id_type}").check()
        elif step == "document" and full_name is not None:
            page.get_by_test_id("ocr-full_name").fill(full_name)
        if on_step is not None:
            on_step(step)
        page.get_by_test_id("capture" if step == "selfie" else "next").click()
    if current_step(page) != "tester":
        raise AssertionError(f"the form stopped at {current_step(page)!r}: {_shown(page)}")


def walk_liveform(
    page: Any,
    outcome: str = "approved",
    *,
    reason: str | None = None,
    retry: bool = False,
    country: str = "KOR",
    id_type: str = "passport",
    full_name: str | None = "Ann Example",
) -> LiveformResult:
    """Walk the form to ``outcome`` (``approved``, ``rejected`` with ``reason``, ``pending``).

    ``retry``: recognition fails once first (the applicant is sent back to the document
    step, the ``retry`` webhook fires), then the walk goes on to the outcome. Leaves the
    page on the last page, whose "OK" (``data-testid="ok"``) goes back to the return URL.
    """
    if outcome not in OUTCOMES:
        raise ValueError(f"outcome must be one of {OUTCOMES}, not {outcome!r}")
    if reason is not None and outcome != "rejected":
        raise ValueError("a reason goes with the rejected outcome only")
    walk_to_tester(page, country=country, id_type=id_type, full_name=full_name)
    if retry:
        page.get_by_test_id("fail-once").check()
        page.get_by_test_id("finish").click()
        walk_to_tester(page, country=country, id_type=id_type, full_name=full_name)
    page.get_by_test_id(f"outcome-{outcome}").check()
    if reason is not None:
        page.get_by_test_id("reject-reason").select_option(reason)
    page.get_by_test_id("finish").click()
    if current_step(page) != "done":
        raise AssertionError(f"the form did not finish: {_shown(page)}")
    return LiveformResult(
        submission_id=page.get_by_test_id("submission-id").inner_text(),
        kyc_status=page.get_by_test_id("kyc-status").inner_text(),
        retried=retry,
    )


def _shown(page: Any) -> str:
    """The page's error, if it shows one, for a failure message."""
    for testid in ("error-code", "error-message", "form-error"):
        found = page.get_by_test_id(testid)
        if found.count():
            return f"{testid}: {found.first.inner_text()}"
    return f"page {page.url}"
