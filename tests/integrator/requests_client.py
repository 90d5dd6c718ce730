"""An integrator's client of the identity-verification API v3, on ``requests``.

Written as application code is: the production base URL hard-coded, its own session, no
hook for tests. The tests drive it unchanged inside ``idv_mock.mock()``.
"""

from __future__ import annotations

from typing import Any

import requests

BASE_URL = "https://rest-api.argosidentity.com/v3"


class IdvClient:
    def __init__(self, api_key: str) -> None:
        self.session = requests.Session()
        self.session.headers["x-api-key"] = api_key

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        response = self.session.request(method, f"{BASE_URL}{path}", timeout=10, **kwargs)
        response.raise_for_status()
        return response.json()

    def list_submissions(self, count: int = 10, **filters: str) -> Any:
        return self._call("GET", "/submission", params={"count": str(count), **filters})

    def get_submission(self, submission_id: str) -> Any:
        return self._call("GET", "/submission", params={"submission_id": submission_id})

    def edit_submission(self, submission_id: str, admin: str, data: dict[str, Any]) -> Any:
        body = {"submissionId": submission_id, "admin": admin, "data": data}
        return self._call("PATCH", "/submission", json=body)

    def delete_submission(self, submission_id: str) -> Any:
        return self._call("DELETE", "/submission", params={"submission_id": submission_id})

    def delete_fields(self, submission_id: str, fields: list[str]) -> Any:
        params = {"submission_id": submission_id, "fields": ",".join(fields)}
        return self._call("DELETE", "/submission/partial", params=params)

    def screen_aml(self, submission_id: str, threshold: int) -> Any:
        body = {"submissionId": submission_id, "amlThreshold": threshold}
        return self._call("POST", "/submission/aml", json=body)

    def download_aml_report(self, resource_id: str, path: str) -> int:
        """Streams the PDF to ``path``; answers the number of bytes written."""
        url = f"{BASE_URL}/report/aml"
        params = {"resourceId": resource_id}
        with self.session.get(url, params=params, stream=True, timeout=10) as response:
            response.raise_for_status()
            written = 0
            with open(path, "wb") as out:
                for chunk in response.iter_content(chunk_size=4096):
                    written += out.write(chunk)
        return written

    def monitor(self, worklist_id: str, submission_ids: list[str], admin: str) -> Any:
        body = {"submissionIds": submission_ids, "admin": admin}
        return self._call("POST", f"/submission/aml/monitor/{worklist_id}", json=body)

    def monitoring_record(self, worklist_id: str, record_id: str) -> Any:
        return self._call("GET", f"/submission/aml/monitor/{worklist_id}/{record_id}")

    def stop_monitoring(self, worklist_id: str, record_ids: list[str], admin: str) -> Any:
        body = {"admin": admin, "recordIds": record_ids}
        return self._call("DELETE", f"/submission/aml/monitor/{worklist_id}", json=body)

    def create_projection(self, name: str, fields: list[str]) -> Any:
        body = {"name": name, "mode": "exclude", "fields": fields}
        return self._call("POST", "/projection", json=body)

    def projections(self) -> Any:
        return self._call("GET", "/projection")

    def projection(self, projection_id: str) -> Any:
        return self._call("GET", f"/projection/{projection_id}")

    def delete_projection(self, projection_id: str) -> Any:
        return self._call("DELETE", f"/projection/{projection_id}")
