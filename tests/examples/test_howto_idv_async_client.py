"""idv_async_client: the same for async code (here with anyio's pytest plugin)."""

import pytest


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.mark.anyio
async def test_async_read(idv_async_client):
    r = await idv_async_client.get("/submission", params={"count": "1"})
    assert len(r.json()["Items"]) == 1
