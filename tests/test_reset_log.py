"""Issue 14, defect 9: a ``connection_reset`` fault is one warning line in the server's log,
not the 33-line traceback of a crash."""

from __future__ import annotations

import httpx
import pytest

from conftest import ServeProcess


@pytest.mark.live
def test_a_connection_reset_fault_logs_one_line() -> None:
    rule = {"match": {"path": "/v3/submission"}, "fault": "connection_reset", "times": 2}
    with ServeProcess("--seed-count", "1") as server:
        added = httpx.post(server.base + "/__admin/projects/default/faults", json=rule)
        assert added.status_code == 201
        for _ in range(2):
            with pytest.raises(httpx.TransportError):
                httpx.get(server.base + "/v3/submission", headers={"x-api-key": "mock-api-key"})
        output = server.stop()
    assert "Traceback" not in output
    dropped = [line for line in output.splitlines() if "connection_reset" in line]
    assert len(dropped) == 2, output
    assert all("WARNING" in line or "idv-mock:" in line for line in dropped)
