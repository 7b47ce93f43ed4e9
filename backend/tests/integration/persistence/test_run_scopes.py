"""A session run's tool scope in the database: its headers sealed, readable only with the key
they were sealed under; on SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine, text

from dynamic_tools.errors import ConfigurationError
from dynamic_tools.persistence.run_scopes import RunScopeStore, session_key
from dynamic_tools.persistence.run_store import RunStore
from dynamic_tools.tools.models import ToolConfig
from dynamic_tools.tools.scope import ToolScope

SECRET = "Bearer scope-secret-19af"
TOOL = ToolConfig.model_validate(
    {
        "name": "get_item",
        "description": "One item",
        "api": {"method": "GET", "base_url": "https://team.example", "path": "/items/{id}"},
        "parameters": {"id": {"type": "string", "in": "path", "required": True}},
    }
)


async def test_a_scope_round_trips_with_its_headers_sealed(engine: Engine, tmp_path: Path) -> None:
    runs = RunStore(engine)
    run = await runs.create_run(workflow_id="w", params={}, document_version="v", node_ids=["a"])
    key = session_key(None, tmp_path)
    store = RunScopeStore(engine, lambda: key)
    scope = ToolScope(
        prefix="team",
        tools={"get_item": TOOL},
        headers={"Authorization": SECRET},
        allow_unsafe=("/items*",),
    )
    await store.save(run.run_id, scope)
    with engine.connect() as conn:
        stored = " ".join(str(r) for r in conn.execute(text("SELECT * FROM run_scopes")))
    again = await RunScopeStore(engine, lambda: key).get(run.run_id)
    other = RunScopeStore(engine, lambda: session_key("another key", tmp_path))
    assert SECRET not in stored and "get_item" in stored
    assert again == scope and again.headers == {"Authorization": SECRET}
    assert await store.get("no-such-run") is None
    with pytest.raises(ConfigurationError) as refused:
        await other.get(run.run_id)
    assert "another session key" in refused.value.message and SECRET not in refused.value.message
    assert session_key(None, tmp_path) == key  # the key file is made once and kept
    assert (tmp_path / "session.key").stat().st_mode & 0o077 == 0
