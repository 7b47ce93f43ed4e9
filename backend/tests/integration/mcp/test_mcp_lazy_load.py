"""``/mcp`` is loaded on its first request: a server that serves only REST and the UI never
imports the MCP SDK; the first MCP clients, even arriving together, are all served; shutting
down stops the session manager that the first request started."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

from dynamic_tools.api.app import create_app
from dynamic_tools.settings import Settings
from tests.support.mcp_client import mcp_client
from tests.support.servers import serve

PROBE = textwrap.dedent(
    """
    import json, sys
    from fastapi.testclient import TestClient
    from dynamic_tools.api.app import create_app
    from dynamic_tools.settings import Settings

    app = create_app(Settings(data_dir=sys.argv[1], registry_config_path=sys.argv[2]))
    with TestClient(app) as client:
        ready = client.get("/readyz").status_code
        tools = client.get("/tools").status_code
        before = "mcp" in sys.modules
        loaded_before = app.state.mcp.loaded
    print(json.dumps({"ready": ready, "tools": tools, "mcp_imported": before,
                      "loaded": loaded_before}))
    """
)


def test_serving_rest_does_not_import_the_mcp_sdk(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path / "data"), str(tmp_path / "r" / "c.yaml")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert figures == {"ready": 200, "tools": 200, "mcp_imported": False, "loaded": False}


async def test_the_first_clients_arriving_together_are_all_served(
    make_settings: Callable[..., Settings], travel_root: Path
) -> None:
    settings = make_settings()
    app = create_app(settings)
    mount = app.state.mcp
    with serve(app, port=settings.port) as url:
        assert not mount.loaded and not mount.serving

        async def list_tools() -> set[str]:
            async with mcp_client(url) as client:
                return {tool.name for tool in (await client.list_tools()).tools}

        listings = await asyncio.wait_for(
            asyncio.gather(*(list_tools() for _ in range(4))), timeout=60
        )
        assert mount.loaded and mount.serving
        assert all(names == listings[0] for names in listings)
        assert {"w_book_flight", "workflow.resume"} <= listings[0]
    assert not mount.serving, "the session manager outlived the app"
