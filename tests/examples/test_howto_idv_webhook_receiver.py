"""idv_webhook_receiver: a local HTTP receiver wired as the project's webhook URL."""


def test_an_edit_sends_the_updated_webhook(idv_service, idv_client, idv_webhook_receiver):
    sid = idv_service.create_submission("default")["submission_id"]
    body = {"submissionId": sid, "admin": "admin@example.com", "data": {"memo": "checked"}}
    assert idv_client.patch("/submission", json=body).status_code == 200
    payload = idv_webhook_receiver.wait_for("updated", timeout=5)
    assert payload["data"]["update"] == ["memo"]  # the names of the changed properties
