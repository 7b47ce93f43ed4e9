"""Starting a workflow run over HTTP and waiting, bounded, until it ends."""

from __future__ import annotations

import time
from typing import Any

import httpx

ENDED = {"succeeded", "failed", "cancelled"}


def run_to_end(
    url: str, workflow: str, params: dict[str, Any] | None = None, *, timeout: float = 60
) -> dict[str, Any]:
    """Start ``workflow`` with ``params`` at the server ``url``; its run once it has ended."""
    started = httpx.post(f"{url}/workflows/{workflow}/runs", json={"params": params or {}})
    assert started.status_code == 202, started.text
    run_id = started.json()["run_id"]
    deadline = time.monotonic() + timeout  # bounded wait; a run needs a few seconds
    while time.monotonic() < deadline:
        run: dict[str, Any] = httpx.get(f"{url}/runs/{run_id}").json()
        if run["status"] in ENDED:
            return run
        time.sleep(0.05)
    raise AssertionError(f"run {run_id} never ended")
