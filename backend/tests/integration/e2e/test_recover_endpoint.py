"""``POST /runs/recover`` answers structured errors where there is nothing to recover.

(The takeover itself is proven with two real replicas in ``test_two_replicas_on_postgres.py``.)
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from dynamic_tools.api.app import create_app
from dynamic_tools.settings import Settings
from tests.support.app_client import app_client


async def test_recover_needs_durable_runs_and_an_executor(
    tmp_path: Path, make_settings: Callable[..., Settings]
) -> None:
    settings = make_settings(registry_config_path=tmp_path / "reg" / "config.yaml")
    async with app_client(create_app(settings)) as client:
        local = await client.post("/runs/recover", params={"executor": "replica-a"})
        assert local.status_code == 409, local.text
        body = local.json()
        assert body["error_code"] == "conflict"
        assert "not durable" in body["message"]
        assert body["context"] == {"executor_id": "replica-a"}

        missing = await client.post("/runs/recover")
        assert missing.status_code == 422, missing.text
        blank = await client.post("/runs/recover", params={"executor": "   "})
        assert blank.status_code == 422, blank.text
        assert blank.json()["violations"][0]["path"] == "query.executor"
