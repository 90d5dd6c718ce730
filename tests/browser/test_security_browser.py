"""Issue 39 in Chromium: markup typed into the hosted form runs no script, and a script of
the form's origin reads no key and resets nothing through the control API."""

from __future__ import annotations

from typing import Any

from pytest_idv_mock import liveform

HOSTILE = "<img src=x onerror=alert(1)>"


def test_markup_sent_at_the_document_step_runs_no_script(page: Any, idv_server: Any) -> None:
    alerts: list[str] = []
    page.on("dialog", lambda dialog: (alerts.append(dialog.message), dialog.dismiss()))
    page.goto(idv_server.liveform_url(userid="u-xss"))
    while (step := liveform.current_step(page)) != "document":
        if step == "consent":
            page.get_by_test_id("consent-agree").check()
        elif step == "country":
            page.get_by_test_id("country-select").select_option("KOR")
        elif step == "id_type":
            page.get_by_test_id("id-type-passport").check()
        page.get_by_test_id("next").click()
    page.get_by_test_id("ocr-full_name").fill(HOSTILE)
    page.get_by_test_id("ocr-date_of_birth").fill("bad")
    page.get_by_test_id("next").click()
    page.wait_for_load_state()
    assert liveform.current_step(page) == "document"
    assert page.get_by_test_id("ocr-full_name").input_value() == HOSTILE
    page.wait_for_timeout(300)  # an onerror handler would have run by now
    assert alerts == []
    # even a script that ran in this origin reads no key and resets nothing
    answer = page.evaluate(
        """async () => {
            const keys = await fetch('/__admin/projects?show_keys=true');
            const reset = await fetch('/__admin/reset', {method: 'POST',
                headers: {'content-type': 'application/json'}, body: '{}'});
            return [keys.status, await keys.text(), reset.status];
        }"""
    )
    assert answer[0] == 403 and idv_server.api_key not in answer[1]
    assert answer[2] == 403
