"""GET /readyz answers its Readiness model: 200 when ready, 503 naming the failed check; a
request whose database refuses connections answers 503 ``database_unavailable``, never 500."""

from __future__ import annotations

import httpx
import pytest

from dynamic_tools.api.app import create_app
from dynamic_tools.api.routes import health
from dynamic_tools.engine.local import MockTools
from dynamic_tools.persistence.db import make_engine
from dynamic_tools.settings import Settings
from tests.support.app_client import app_client
from tests.support.servers import free_port


async def test_ready_answers_200_with_each_check(client: httpx.AsyncClient) -> None:
    response = await client.get("/readyz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ready"
    assert body["checks"]["database"]["ok"] is True
    assert set(body["checks"]) == {"registry", "database", "llm"}


async def test_a_database_that_does_not_answer_is_503_naming_the_check(
    client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(_database: object) -> None:
        raise ConnectionError("down")

    monkeypatch.setattr(health, "ping", refuse)
    response = await client.get("/readyz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "not_ready"
    assert body["checks"]["database"] == {"ok": False, "error": "ConnectionError"}


async def test_a_database_that_refuses_connections_answers_503_retryable_not_500(
    settings: Settings, tools: MockTools
) -> None:
    """The run store's database stops taking connections (here: nothing listens on its port,
    as when PostgreSQL has too many clients or restarts): the request is answered 503
    ``database_unavailable``, retryable, with ``Retry-After``, and says nothing of the database's
    address."""
    app = create_app(settings, tool_runner=tools)
    async with app_client(app) as client:
        store = app.state.services.run_store
        working = store.engine
        port = free_port()
        store.engine = make_engine(f"postgresql://postgres@127.0.0.1:{port}/test")
        try:
            response = await client.get("/runs")
        finally:
            store.engine.dispose()
            store.engine = working
        assert response.status_code == 503, response.text
        assert response.headers["retry-after"] == "1"
        body = response.json()
        assert body["error_code"] == "database_unavailable"
        assert body["retryable"] is True
        assert str(port) not in response.text and "127.0.0.1" not in response.text
        assert (await client.get("/runs")).status_code == 200  # back once it answers again
