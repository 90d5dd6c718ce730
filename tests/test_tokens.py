"""The token pool: POST, GET and DELETE /v3/submission/tokens (endpoints.md 1-4, 10.1).

Every error over HTTP with its literal text, success bodies, the pool after each call,
pages and counts, Secure Data Transfer, per-project isolation, and a token's life
(registered, used, expired, deleted) as the hosted form uses it.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from conftest import API_KEY, assert_refused, snapshot
from idv_mock import Service
from idv_mock.backend.liveform_links import Refused
from idv_mock.ground import crypto

URL = "/v3/submission/tokens"
TEXT = {"content-type": "text/plain"}  # as the vendor's samples send it


def post(http: httpx.Client, ids: Any, headers: dict[str, str] | None = None) -> httpx.Response:
    return http.post(URL, content=json.dumps({"tokenId": ids}), headers={**TEXT, **(headers or {})})


def delete(http: httpx.Client, body: Any) -> httpx.Response:
    return http.request("DELETE", URL, content=json.dumps(body), headers=TEXT)


def err(code: str, message: str) -> dict[str, str]:
    return {"errorCode": code, "errorMessage": message}


def pool(service: Service, project: str = "default") -> list[str]:
    return list(service.project(project).tokens.entries)


def test_register_answers_the_summary_and_fills_the_pool(
    http: httpx.Client, service: Service
) -> None:
    r = post(http, ["tokenA-001", "tokenB.002", "tokenC_003"])
    assert r.status_code == 200
    assert r.json() == {
        "success": True,
        "message": "All tokens are now in the pool",
        "summary": {"totalSubmitted": 3, "currentCount": 3, "processed": 3, "failed": 0},
    }
    assert pool(service) == ["tokenA-001", "tokenB.002", "tokenC_003"]


def test_a_registered_id_is_overwritten_not_duplicated(
    http: httpx.Client, service: Service
) -> None:
    post(http, ["tokenA-001", "tokenB-002", "tokenC-003"])
    r = post(http, ["tokenA-001", "tokenC-003", "tokenD-004"])
    assert r.json()["summary"] == {
        "totalSubmitted": 3,
        "currentCount": 4,
        "processed": 3,
        "failed": 0,
    }
    assert sorted(pool(service)) == ["tokenA-001", "tokenB-002", "tokenC-003", "tokenD-004"]


NOT_ARRAY = err("invalid_token_id", "tokenId must be a non-empty array of strings")
PAYLOAD = err("invalid_payload", "Invalid payload")


def length(token: str) -> dict[str, str]:
    return err("invalid_token_id_length", f"tokenId must be 8 to 64 characters long: {token}")


def form(token: str) -> dict[str, str]:
    return err("invalid_token_id_format", f"Invalid tokenId format: {token}")


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ("not json", PAYLOAD),
        ("[1, 2]", PAYLOAD),
        ('{"tokenId": ["tokenA-001"], "x": 1}', PAYLOAD),
        ("{}", NOT_ARRAY),
        ('{"tokenId": []}', NOT_ARRAY),
        ('{"tokenId": "tokenA-001"}', NOT_ARRAY),
        ('{"tokenId": [12345678]}', NOT_ARRAY),
        ('{"tokenId": ["short"]}', length("short")),
        (json.dumps({"tokenId": ["a" * 65]}), length("a" * 65)),
        ('{"tokenId": ["-startsbad"]}', form("-startsbad")),
        ('{"tokenId": ["endsbad12."]}', form("endsbad12.")),
        ('{"tokenId": ["has space1"]}', form("has space1")),
        ('{"tokenId": ["tab\\there12"]}', form("tab\there12")),
    ],
)
def test_register_refuses_bad_input(
    http: httpx.Client, service: Service, body: str, error: Any
) -> None:
    assert_refused(lambda: http.post(URL, content=body, headers=TEXT), 400, error, service=service)


def test_a_batch_is_processed_id_by_id(http: httpx.Client, service: Service) -> None:
    """The vendor processes IDs one by one: the good ones are registered, each bad one is
    counted in ``failed`` and listed with its error in ``details.failed``, in the order
    given (shape chosen by analogy with DELETE's ``details.notFound``)."""
    post(http, ["tokenA-001"])
    ids = ["tokenA-001", "short", "tokenB-002", "-startsbad", "tokenB-002", "a" * 65]
    r = post(http, ids)
    assert r.status_code == 200
    assert r.json() == {
        "success": True,
        "message": "3 tokens are now in the pool; 3 failed",
        "summary": {"totalSubmitted": 6, "currentCount": 2, "processed": 3, "failed": 3},
        "details": {
            "failed": [
                {"tokenId": "short", **length("short")},
                {"tokenId": "-startsbad", **form("-startsbad")},
                {"tokenId": "a" * 65, **length("a" * 65)},
            ]
        },
    }
    assert pool(service) == ["tokenA-001", "tokenB-002"]
    assert list(r.json()) == ["success", "message", "summary", "details"]


def test_a_batch_refused_as_a_whole(http: httpx.Client, service: Service) -> None:
    """A fault of the request, not of an ID, still refuses every ID; so does a batch with
    no good ID (nothing to process: the first bad one's error)."""
    too_many = ["short"] + [f"token{i:05d}" for i in range(500)]
    error = err("request_token_limit_exceeded", "Too many tokenIds in one request (limit 500)")
    assert_refused(lambda: post(http, too_many), 400, error, service=service)
    assert_refused(lambda: http.post(URL, headers=TEXT), 400, PAYLOAD, service=service)
    assert_refused(lambda: post(http, ["short", "-bad-"]), 400, length("short"), service=service)
    assert_refused(lambda: post(http, ["tokenA-001", 7]), 400, NOT_ARRAY, service=service)
    assert pool(service) == []


def test_a_partial_batch_on_a_secure_project_answers_encrypted(
    http: httpx.Client, service: Service
) -> None:
    service.update_project("default", {"options": {"secure_transfer": True}})
    sealed = crypto.encrypt({"tokenId": ["tokenS-001", "bad"]}, API_KEY)
    r = http.post(URL, content=json.dumps({"data": sealed}), headers=TEXT)
    assert r.status_code == 200
    answer = crypto.decrypt(r.json()["data"], API_KEY)
    assert answer["summary"] == {
        "totalSubmitted": 2,
        "currentCount": 1,
        "processed": 1,
        "failed": 1,
    }
    assert answer["details"] == {"failed": [{"tokenId": "bad", **length("bad")}]}
    assert pool(service) == ["tokenS-001"]


def test_the_limits_are_the_newer_revision_and_configurable(
    http: httpx.Client, service: Service
) -> None:
    ids = [f"token{i:05d}" for i in range(501)]
    error = err("request_token_limit_exceeded", "Too many tokenIds in one request (limit 500)")
    assert_refused(lambda: post(http, ids), 400, error, service=service)
    assert post(http, ids[:500]).status_code == 200
    options = {"token_pool_limit": 502, "token_request_limit": 2}
    service.update_project("default", {"options": options})
    error = err("request_token_limit_exceeded", "Too many tokenIds in one request (limit 2)")
    assert_refused(lambda: post(http, ["token-new-1", "token-new-2", "token-new-3"]), 400, error)
    assert post(http, ["token-new-1", "token-new-2"]).status_code == 200
    full = err("token_limit_exceeded", "The token pool is full (limit 502)")
    assert_refused(lambda: post(http, ["token-new-3"]), 400, full, service=service)
    assert post(http, ["token-new-1"]).status_code == 200  # an overwrite needs no room
    assert len(pool(service)) == 502


def test_every_call_needs_the_project_key(http: httpx.Client, service: Service) -> None:
    error = err("invalid_project", "Invalid project")
    for key in ({"x-api-key": "wrong"}, {"x-api-key": ""}):
        before = snapshot(service)
        assert_refused(post(http, ["tokenA-001"], key), 400, error, service=service, before=before)
        assert_refused(http.get(URL, headers=key), 400, error)
        assert_refused(http.request("DELETE", URL, headers=key), 400, error)


def test_other_methods_are_invalid_path(http: httpx.Client) -> None:
    r = assert_refused(http.put(URL), 400, err("invalid_path", "Invalid request method"))
    assert r.headers["allow"] == "GET, POST, DELETE"


def test_get_one_token_a_page_and_the_count(http: httpx.Client) -> None:
    post(http, ["user001a", "user002b"])
    r = http.get(URL, params={"tokenId": "user001a"})
    assert r.status_code == 200
    body = r.json()
    assert body["success"] is True and body["tokenId"] == "user001a"
    assert body["data"]["tokenId"] == "user001a"
    assert body["data"]["expired"] is False and body["data"]["status"] == "registered"
    assert body["data"]["updateTime"].endswith("Z") and len(body["data"]["updateTime"]) == 24
    assert http.get(URL, params={"type": "count"}).json() == {"success": True, "count": 2}
    listed = http.get(URL).json()
    assert listed["count"] == 2 and [t["tokenId"] for t in listed["data"]] == [
        "user001a",
        "user002b",
    ]
    assert "nextPageKeyId" not in listed


def test_get_refusals(http: httpx.Client) -> None:
    assert_refused(
        http.get(URL, params={"tokenId": "user404x"}),
        400,
        err("token_not_found", "Token not found."),
    )
    bad = err("invalid_query_parameters", "Invalid query parameters: type")
    assert_refused(http.get(URL, params={"type": "all"}), 400, bad)
    bad = err("invalid_query_parameters", "Invalid query parameters: token_id")
    assert_refused(http.get(URL, params={"token_id": "user001a"}), 400, bad)
    bad = err("invalid_query_parameters", "Invalid query parameters: tokenId")
    assert_refused(http.get(URL + "?tokenId=user001a&tokenId=user002b"), 400, bad)


def test_the_list_is_paged_in_registration_order(http: httpx.Client, service: Service) -> None:
    service.update_project("default", {"options": {"token_page_size": 2}})
    post(http, ["token-aaa1", "token-bbb2", "token-ccc3"])
    first = http.get(URL).json()
    assert [t["tokenId"] for t in first["data"]] == ["token-aaa1", "token-bbb2"]
    assert first["nextPageKeyId"] == "token-bbb2" and first["count"] == 3
    assert first["nextPageKeyTime"] == first["data"][1]["updateTime"]
    params = {"nextPageKeyId": first["nextPageKeyId"], "nextPageKeyTime": first["nextPageKeyTime"]}
    second = http.get(URL, params=params).json()
    assert [t["tokenId"] for t in second["data"]] == ["token-ccc3"]
    assert "nextPageKeyId" not in second


def test_delete_by_id_reports_what_was_not_found(http: httpx.Client, service: Service) -> None:
    post(http, ["tokenA-001", "tokenB-002", "tokenC-003"])
    r = delete(http, {"tokenId": ["tokenA-001", "tokenC-003", "tokenD-004"]})
    assert r.status_code == 200
    assert r.json() == {
        "success": True,
        "message": "Successfully deleted 2 tokens",
        "summary": {"totalSubmitted": 3, "deleted": 2, "notFound": 1, "failed": 0},
        "details": {"notFound": ["tokenD-004"]},
    }
    assert pool(service) == ["tokenB-002"]
    r = delete(http, {"tokenId": ["tokenB-002"]})
    assert r.json() == {
        "success": True,
        "message": "Successfully deleted 1 tokens",
        "summary": {"totalSubmitted": 1, "deleted": 1, "notFound": 0, "failed": 0},
    }
    assert_refused(
        http.get(URL, params={"tokenId": "tokenB-002"}),
        400,
        err("token_not_found", "Token not found."),
    )


def test_delete_refusals(http: httpx.Client, service: Service) -> None:
    post(http, ["tokenA-001"])
    none = err("token_id_not_found", "None of the tokenIds is in the pool")
    assert_refused(lambda: delete(http, {"tokenId": ["tokenX-404"]}), 400, none, service=service)
    bad = err("invalid_token_id", "tokenId must be a non-empty array of strings")
    assert_refused(lambda: delete(http, {"tokenId": "tokenA-001"}), 400, bad, service=service)
    bad = err("invalid_token_id_format", "Invalid tokenId format: tokenA-001!")
    assert_refused(lambda: delete(http, {"tokenId": ["tokenA-001!"]}), 400, bad, service=service)
    too_many = err("request_token_limit_exceeded", "Too many tokenIds in one request (limit 500)")
    ids = [f"token{i:05d}" for i in range(501)]
    assert_refused(lambda: delete(http, {"tokenId": ids}), 400, too_many, service=service)
    for body in ({"count": 0}, {"count": "3"}, {"count": 1, "tokenId": ["tokenA-001"]}):
        before = snapshot(service)
        assert_refused(delete(http, body), 400, PAYLOAD, service=service, before=before)
    too_many = err("request_token_limit_exceeded", "Too many tokenIds in one request (limit 5000)")
    assert_refused(lambda: delete(http, {"count": 5001}), 400, too_many, service=service)


def test_time_based_deletion_removes_the_oldest(http: httpx.Client, service: Service) -> None:
    post(http, ["token-old1", "token-old2"])
    post(http, ["token-new3"])
    r = delete(http, {"count": 2})
    assert r.json() == {
        "success": True,
        "message": "Successfully deleted 2 tokens",
        "summary": {"totalSubmitted": 2, "deleted": 2, "notFound": 0, "failed": 0},
        "details": {"deleted": ["token-old1", "token-old2"]},
    }
    assert pool(service) == ["token-new3"]


def test_secure_transfer_encrypts_requests_and_responses(
    http: httpx.Client, service: Service
) -> None:
    service.update_project("default", {"options": {"secure_transfer": True}})
    body = {"data": crypto.encrypt({"tokenId": ["secure-001"]}, API_KEY)}
    r = http.post(URL, json=body)
    assert r.status_code == 200 and r.json()["isEncrypted"] is True
    assert crypto.decrypt(r.json()["data"], API_KEY)["message"] == "All tokens are now in the pool"
    r = http.get(URL, params={"type": "count"})
    assert crypto.decrypt(r.json()["data"], API_KEY) == {"success": True, "count": 1}
    assert_refused(post(http, ["plain-0001"]), 400, err("invalid_payload", "Invalid payload"))
    r = http.request(
        "DELETE", URL, json={"data": crypto.encrypt({"tokenId": ["secure-001"]}, API_KEY)}
    )
    assert crypto.decrypt(r.json()["data"], API_KEY)["summary"]["deleted"] == 1


def test_pools_are_per_project(http: httpx.Client, service: Service) -> None:
    service.create_project({"project_id": "other", "api_key": "other-key", "admins": []})
    post(http, ["tokenA-001"])
    other = {"x-api-key": "other-key"}
    assert http.get(URL, params={"type": "count"}, headers=other).json()["count"] == 0
    assert pool(service, "other") == []


def test_a_token_life_shows_in_get(http: httpx.Client, service: Service) -> None:
    """registered -> used (a link opened) -> expired (a submission carries it; or time)."""
    service.update_project(
        "default", {"options": {"liveform_private_mode": True, "token_preregistration": True}}
    )
    post(http, ["life-token-1", "life-token-2"])
    link = {"encrypted": crypto.encrypt({"token": "life-token-1"}, API_KEY)}
    service.liveform.open("default", list(link.items()))
    data = http.get(URL, params={"tokenId": "life-token-1"}).json()["data"]
    assert (data["status"], data["expired"]) == ("used", False) and "firstUsedAt" in data
    sub = service.liveform.hosted_submission("default", link["encrypted"], "approved")
    data = http.get(URL, params={"tokenId": "life-token-1"}).json()["data"]
    assert (data["status"], data["expired"], data["submissionId"]) == (
        "expired",
        True,
        sub["submission_id"],
    )
    other = {"encrypted": crypto.encrypt({"token": "life-token-2"}, API_KEY)}
    service.liveform.open("default", list(other.items()))
    service.clocks.advance("default", {"seconds": 240})  # past token_expiry_seconds (180)
    data = http.get(URL, params={"tokenId": "life-token-2"}).json()["data"]
    assert (data["status"], data["expired"]) == ("expired", True)
    delete(http, {"tokenId": ["life-token-2"]})
    lives = {t["tokenId"]: t["status"] for t in service.tokens.lives("default")}
    assert lives == {"life-token-1": "expired", "life-token-2": "deleted"}


def test_the_pool_survives_export_and_reset_restores_it(service: Service) -> None:
    project = service.project("default")
    service.tokens.register(project, ["keep-token-1"])
    state = service.export_state()
    service.reset()
    assert pool(service) == []
    service.import_state(state)
    assert pool(service) == ["keep-token-1"]


def test_a_single_token_string_gets_a_hint(http: httpx.Client) -> None:
    r = http.post(URL, json={"tokenId": "tokenA-001"})
    assert r.status_code == 400
    assert (
        r.headers["x-idv-mock-hint"]
        == 'tokenId is an array of strings: {"tokenId": ["tokenA-001"]}'
    )
    r = http.post(URL, json={"tokenIds": ["tokenA-001"]})
    assert r.headers["x-idv-mock-hint"].endswith('did you mean "tokenId"?')


def open_link(service: Service, token: str) -> str:
    """Open a private-mode link carrying ``token``: the refusal's code, or "" when it opens."""
    encrypted = crypto.encrypt({"token": token}, API_KEY)
    try:
        service.liveform.open("default", [("pid", "default"), ("encrypted", encrypted)])
    except Refused as exc:
        return exc.code
    return ""


def test_the_form_honours_the_pool_only_in_private_mode_with_preregistration(
    service: Service,
) -> None:
    assert open_link(service, "free-token-1") == ""  # both off: any token
    service.update_project("default", {"options": {"token_preregistration": True}})
    assert open_link(service, "free-token-2") == ""  # not private: no token rule at all
    service.update_project("default", {"options": {"liveform_private_mode": True}})
    assert open_link(service, "free-token-3") == "TK-10003"
    project = service.project("default")
    service.tokens.register(project, ["pool-token-1"])
    assert open_link(service, "pool-token-1") == ""
    assert open_link(service, "pool-token-1") == ""  # reopened before a submission: allowed
    service.tokens.delete(project, ["pool-token-1"])
    assert open_link(service, "pool-token-1") == "TK-10003"  # deleted
    service.update_project("default", {"options": {"token_preregistration": False}})
    assert open_link(service, "pool-token-1") == ""  # off again: the plain private-mode rules
