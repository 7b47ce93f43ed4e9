"""GET /readyz answers its Readiness model: 200 when ready, 503 naming the failed check."""

from __future__ import annotations

import httpx
import pytest

from dynamic_tools.api.routes import health


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
