"""``idv-mock form walk LINK --outcome ...``: the hosted form over plain HTTP, no browser.

Against a live server: each outcome ends with the submission the form made (read back
from the service), the return URL when the project has one, and exit 0; a refusing form
is exit 1 with the page's own code; a choice the form does not offer is exit 2.
"""

from __future__ import annotations

from typing import Any

import pytest

from conftest import LiveServer
from idv_mock import Service, cli
from idv_mock.ground.errors import LIVEFORM

pytestmark = pytest.mark.live


def link(live: LiveServer, query: str = "pid=default&userid=walker-1") -> str:
    return f"http://127.0.0.1:{live.port}/?{query}"


def printed(out: str) -> dict[str, str]:
    """``name: value`` lines of the command's output."""
    return dict(line.split(": ", 1) for line in out.strip().splitlines())


def stored(service: Service, sid: str) -> dict[str, Any]:
    return service.stored_submission("default", sid)


@pytest.mark.parametrize(
    ("outcome", "status"),
    [
        ("approved", "approved"),
        ("rejected", "rejected"),
        ("pending", "pending"),
        ("retry", "approved"),
    ],
)
def test_each_outcome(
    outcome: str,
    status: str,
    live: LiveServer,
    service: Service,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["form", "walk", link(live), "--outcome", outcome]) == 0
    shown = printed(capsys.readouterr().out)
    sub = stored(service, shown["submission id"])
    assert sub["kyc"]["result"] == status
    assert sub["userid"] == "walker-1"
    assert shown["kyc status"] == status
    assert shown["return URL"] == "(none: the project has no return_url)"


def test_retry_fails_recognition_once_with_the_reason_as_retry_code(
    live: LiveServer, service: Service, capsys: pytest.CaptureFixture[str]
) -> None:
    from idv_mock.delivery.receiver import WebhookReceiver

    with WebhookReceiver() as receiver:
        service.update_project("default", {"options": {"webhook_url": receiver.url}})
        argv = ["form", "walk", link(live), "--outcome", "retry", "--reason", "glare_detected"]
        assert cli.main(argv) == 0
        got = [r.body for r in receiver.wait_for(3)]
    assert [p["webhook_trigger"] for p in got] == ["created", "retry", "approved"]
    assert got[1]["retryCode"] == "glare_detected"
    assert got[1]["attempts"] == 1


def test_rejected_with_a_reason(
    live: LiveServer, service: Service, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["form", "walk", link(live), "--outcome", "rejected", "--reason", "under_ageLimit"]
    assert cli.main(argv) == 0
    sub = stored(service, printed(capsys.readouterr().out)["submission id"])
    assert sub["kyc"]["commentCode"][0] == "under_ageLimit"


def test_the_return_url_is_printed(
    live: LiveServer, service: Service, capsys: pytest.CaptureFixture[str]
) -> None:
    back = "https://app.example/kyc/done?from=form"
    service.update_project("default", {"options": {"return_url": back}})
    assert cli.main(["form", "walk", link(live, "pid=default&userid=u-9&cf1=order-9")]) == 0
    shown = printed(capsys.readouterr().out)
    assert shown["return URL"].startswith(back + "&")
    assert f"submissionId={shown['submission id']}" in shown["return URL"]
    assert "kycStatus=approved" in shown["return URL"]
    assert "cf1=order-9" in shown["return URL"]


def test_a_refusing_form_is_exit_1_with_its_code(
    live: LiveServer, capsys: pytest.CaptureFixture[str]
) -> None:
    code = LIVEFORM.entry("bad-path").code  # an unknown project: the vendor's bad-path page
    assert cli.main(["form", "walk", link(live, "pid=nope")]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"idv-mock form walk: the form refused: {code}: ")


def test_an_injection_link_walks_its_address_step(
    live: LiveServer, service: Service, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["form", "walk", link(live)]) == 0
    sid = printed(capsys.readouterr().out)["submission id"]
    assert cli.main(["form", "walk", link(live, f"pid=default&action=addveri&sid={sid}")]) == 0
    assert printed(capsys.readouterr().out)["submission id"] == sid
    assert stored(service, sid)["data"]["address_city"] == "Seoul"  # the walker typed it


@pytest.mark.parametrize(
    "argv",
    [
        ["--outcome", "rejected", "--reason", "no-such-code"],  # not among the form's reasons
        ["--outcome", "approved", "--reason", "expired_id"],  # a reason goes with rejected
    ],
)
def test_bad_use_is_exit_2(
    argv: list[str], live: LiveServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["form", "walk", link(live), *argv]) == 2
    assert capsys.readouterr().err.startswith("idv-mock form walk: ")


def test_an_unknown_outcome_is_exit_2(live: LiveServer) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(["form", "walk", link(live), "--outcome", "maybe"])
    assert exc.value.code == 2
