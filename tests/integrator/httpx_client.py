"""The same integrator client on ``httpx``, sync and async, built inside the functions.

Each call makes its own client from the production base URL, as code that never expects
to be tested does; nothing can be injected.
"""

from __future__ import annotations

from typing import Any

import httpx

BASE_URL = "https://rest-api.argosidentity.com/v3"


def _client(api_key: str) -> httpx.Client:
    return httpx.Client(base_url=BASE_URL, headers={"x-api-key": api_key}, timeout=10)


def _call(api_key: str, method: str, path: str, **kwargs: Any) -> Any:
    with _client(api_key) as client:
        response = client.request(method, path, **kwargs)
        response.raise_for_status()
        return response.json()


def list_submissions(api_key: str, count: int = 10) -> Any:
    return _call(api_key, "GET", "/submission", params={"count": count})


def get_submission(api_key: str, submission_id: str) -> Any:
    return _call(api_key, "GET", "/submission", params={"submission_id": submission_id})


def edit_submission(api_key: str, submission_id: str, admin: str, data: dict[str, Any]) -> Any:
    body = {"submissionId": submission_id, "admin": admin, "data": data}
    return _call(api_key, "PATCH", "/submission", json=body)


def delete_submission(api_key: str, submission_id: str) -> Any:
    return _call(api_key, "DELETE", "/submission", params={"submission_id": submission_id})


def delete_fields(api_key: str, submission_id: str, fields: list[str]) -> Any:
    params = {"submission_id": submission_id, "fields": ",".join(fields)}
    return _call(api_key, "DELETE", "/submission/partial", params=params)


def screen_aml(api_key: str, submission_id: str, threshold: int) -> Any:
    body = {"submissionId": submission_id, "amlThreshold": threshold}
    return _call(api_key, "POST", "/submission/aml", json=body)


def download_aml_report(api_key: str, resource_id: str) -> tuple[str, bytes]:
    """The report's content type and bytes, streamed."""
    with (
        _client(api_key) as client,
        client.stream("GET", "/report/aml", params={"resourceId": resource_id}) as response,
    ):
        response.raise_for_status()
        return response.headers["content-type"], b"".join(response.iter_bytes())


def monitor(api_key: str, worklist_id: str, submission_ids: list[str], admin: str) -> Any:
    body = {"submissionIds": submission_ids, "admin": admin}
    return _call(api_key, "POST", f"/submission/aml/monitor/{worklist_id}", json=body)


def monitoring_record(api_key: str, worklist_id: str, record_id: str) -> Any:
    return _call(api_key, "GET", f"/submission/aml/monitor/{worklist_id}/{record_id}")


def stop_monitoring(api_key: str, worklist_id: str, record_ids: list[str], admin: str) -> Any:
    body = {"admin": admin, "recordIds": record_ids}
    return _call(api_key, "DELETE", f"/submission/aml/monitor/{worklist_id}", json=body)


def create_projection(api_key: str, name: str, fields: list[str]) -> Any:
    body = {"name": name, "mode": "exclude", "fields": fields}
    return _call(api_key, "POST", "/projection", json=body)


def projections(api_key: str) -> Any:
    return _call(api_key, "GET", "/projection")


def projection(api_key: str, projection_id: str) -> Any:
    return _call(api_key, "GET", f"/projection/{projection_id}")


def delete_projection(api_key: str, projection_id: str) -> Any:
    return _call(api_key, "DELETE", f"/projection/{projection_id}")


async def list_submissions_async(api_key: str, count: int = 10) -> Any:
    headers = {"x-api-key": api_key}
    async with httpx.AsyncClient(base_url=BASE_URL, headers=headers, timeout=10) as client:
        response = await client.get("/submission", params={"count": count})
        response.raise_for_status()
        return response.json()
