"""An imported Arazzo workflow is a durable run like any other: killed with -9 while its poll
loop waits on the API, it is finished by a server restarted on another port, the loop going on
from the round it was in and no completed call made again. Started over MCP (as a task of its
``w_*`` tool), it is finished after a restart too and its task completes."""

from __future__ import annotations

import asyncio
import shutil
import signal
from pathlib import Path
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.routing import Route

from tests.conftest import FIXTURES
from tests.support.mcp_raw import RawMcp
from tests.support.processes import server, until
from tests.support.servers import free_port, serve
from tests.support.shop_api import Shop

PARAMS = {"user": "ada", "password": "pw", "itemId": "I1", "quantity": 2}


def test_an_imported_workflow_killed_in_its_loop_finishes_after_a_restart(
    tmp_path: Path,
) -> None:
    shop = Shop(hold_poll=2)  # the second poll (the loop's second round) hangs
    app = Starlette(routes=[Route("/{path:path}", shop.handle, methods=["GET", "POST"])])
    with serve(app) as shop_url:
        registry = tmp_path / "registry"
        shutil.copytree(FIXTURES / "arazzo" / "semantics", registry / "semantics")
        env = {
            "DATA_DIR": str(tmp_path / "data"),
            "REGISTRY_CONFIG_PATH": str(registry / "config.yaml"),
            "DURABLE_RUNS": "true",
            "EXECUTOR_ID": "arazzo-replica",
            "ALLOWED_TARGET_HOSTS": shop_url.split("://")[1],
        }
        log = tmp_path / "server.log"
        first_port = free_port()
        with server(first_port, env, log) as first:
            base = f"http://127.0.0.1:{first_port}"
            imported = httpx.post(
                f"{base}/catalogs",
                json={
                    "source": "semantics/shop.arazzo.yaml",
                    "name": "shop",
                    "base_url": f"{shop_url}/api",
                },
                timeout=30,
            )
            assert imported.status_code == 201, imported.text
            started = httpx.post(f"{base}/workflows/buy/runs", json={"params": PARAMS})
            assert started.status_code == 202, started.text
            run_id = started.json()["run_id"]
            until(shop.holding.is_set)
            first.send_signal(signal.SIGKILL)
            first.wait(timeout=10)
        shop.release.set()

        second_port = free_port()  # another port: nothing of the run depends on the first

        def ended() -> Any:
            run = httpx.get(f"http://127.0.0.1:{second_port}/runs/{run_id}", timeout=5).json()
            return run if run["status"] in ("succeeded", "failed") else None

        with server(second_port, env, log):
            run = until(ended, timeout=60)
    assert run["status"] == "succeeded", run
    assert run["result"]["status"] == "done" and run["result"]["orderId"] == "O-1"
    calls = [r["path"] for r in shop.requests]
    # completed calls are not made again; the held poll is, then the loop ends
    for once in ("/sessions", "/items/I1", "/orders", "/orders/O-1/receipt"):
        assert calls.count(once) == 1, calls
    assert calls.count("/orders/O-1") == 3, calls  # round 1, the held round 2, its retry


async def test_an_imported_workflow_started_over_mcp_outlives_kill_9(tmp_path: Path) -> None:
    shop = Shop(hold_poll=2)
    app = Starlette(routes=[Route("/{path:path}", shop.handle, methods=["GET", "POST"])])
    with serve(app) as shop_url:
        registry = tmp_path / "registry"
        shutil.copytree(FIXTURES / "arazzo" / "semantics", registry / "semantics")
        port = free_port()  # the same port: the task's new session comes back to it
        url = f"http://127.0.0.1:{port}"
        env = {
            "DATA_DIR": str(tmp_path / "data"),
            "REGISTRY_CONFIG_PATH": str(registry / "config.yaml"),
            "DURABLE_RUNS": "true",
            "EXECUTOR_ID": "arazzo-mcp-replica",
            "ALLOWED_TARGET_HOSTS": shop_url.split("://")[1],
            "API_TOKEN": "tok-arazzo-5d21",
        }
        auth = {"Authorization": "Bearer tok-arazzo-5d21"}
        log = tmp_path / "server.log"
        with server(port, env, log) as first:
            async with RawMcp(url, headers=auth) as mcp:
                imported = await mcp.request(
                    "tools/call",
                    {
                        "name": "catalog.import_openapi",
                        "arguments": {
                            "source": "semantics/shop.arazzo.yaml",
                            "catalog": "shop",
                            "base_url": f"{shop_url}/api",
                        },
                    },
                )
                assert not imported["result"].get("isError"), imported
                created = await mcp.request(
                    "tools/call",
                    {"name": "w_buy", "arguments": PARAMS, "task": {"ttl": 600000}},
                )
                task_id = created["result"]["task"]["taskId"]
            await asyncio.to_thread(until, shop.holding.is_set)
            first.send_signal(signal.SIGKILL)
            first.wait(timeout=10)
        shop.release.set()
        with server(port, env, log):
            async with RawMcp(url, headers=auth) as mcp:
                for _ in range(600):
                    task = (await mcp.request("tasks/get", {"taskId": task_id}))["result"]
                    if task["status"] in ("completed", "failed"):
                        break
                    await asyncio.sleep(0.05)
                result = await mcp.request("tasks/result", {"taskId": task_id})
    assert task["status"] == "completed", task
    assert result["result"]["structuredContent"]["status"] == "succeeded", result
    assert [r["path"] for r in shop.requests].count("/sessions") == 1
