"""An imported Arazzo workflow is a durable run like any other: killed with -9 while its poll
loop waits on the API, it is finished by a server restarted on another port, the loop going on
from the round it was in and no completed call made again."""

from __future__ import annotations

import shutil
import signal
from pathlib import Path
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.routing import Route

from tests.conftest import FIXTURES
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
