"""The path of a run, from the route to the HTTP call, as docs/architecture.md writes it.

A run of ``book_flight`` is started over the REST API on the default (durable, SQLite)
launcher; the outbound transport records the call stack when the first tool call reaches it,
and a spy on the launcher records the stack of the route's side. The project's own frames, in
order, are the hops; the documented list must be exactly that, and shorter than the 17 hops a
run took before the run plan and the tool invoker.
"""

from __future__ import annotations

import asyncio
import re
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from dynamic_tools.api.app import create_app
from dynamic_tools.execution.durable_launcher import DurableLauncher
from dynamic_tools.execution.durable_steps import DurableSteps
from dynamic_tools.settings import Settings
from tests.conftest import EXAMPLES
from tests.support.app_client import app_client

SRC = Path(__file__).resolve().parents[3] / "src" / "dynamic_tools"
DOC = Path(__file__).resolve().parents[4] / "docs" / "architecture.md"
FLIGHT = {"origin": "AMS", "destination": "BCN", "date": "2026-12-01", "passenger": "Ada"}


def own_frames(stack: list[traceback.FrameSummary]) -> list[str]:
    """``package/module.py:function`` of the project's frames, outermost first."""
    hops = []
    for frame in stack:
        path = Path(frame.filename)
        if SRC in path.parents:
            hops.append(f"{path.relative_to(SRC).as_posix()}:{frame.name}")
    return hops


class Recorder(httpx.AsyncBaseTransport):
    def __init__(self) -> None:
        self.stack: list[str] | None = None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self.stack is None:
            self.stack = own_frames(traceback.extract_stack())
        return httpx.Response(200, json=[{"id": "FL1", "price": 120.0}])


def documented_path() -> list[str]:
    text = DOC.read_text()
    section = text.split("<!-- run-path -->")[1].split("<!-- /run-path -->")[0]
    return re.findall(r"^\d+\. `([a-z_/]+\.py:[A-Za-z_]+)`", section, flags=re.M)


async def test_a_run_takes_the_documented_hops(
    tmp_path: Path, make_settings: Callable[..., Settings], monkeypatch: Any
) -> None:
    settings = make_settings(
        registry_config_path=tmp_path / "registry" / "config.yaml",
        seed_examples_from=EXAMPLES,
        durable_runs=True,
    )
    route_side: list[str] = []
    original = DurableLauncher.start

    async def spy(self: DurableLauncher, **kwargs: Any) -> None:
        route_side.extend(own_frames(traceback.extract_stack()))
        await original(self, **kwargs)

    monkeypatch.setattr(DurableLauncher, "start", spy)
    workflow_side: list[str] = []
    original_step = DurableSteps.step

    async def step_spy(self: DurableSteps, name: str, fn: Any) -> Any:
        if name.startswith("call:") and not workflow_side:
            workflow_side.extend(own_frames(traceback.extract_stack()))
        return await original_step(self, name, fn)

    monkeypatch.setattr(DurableSteps, "step", step_spy)
    transport = Recorder()
    async with app_client(create_app(settings, http_transport=transport)) as client:
        answer = await client.post("/workflows/book_flight/runs", json={"params": FLIGHT})
        assert answer.status_code == 202, answer.text
        deadline = time.monotonic() + 15
        while transport.stack is None:
            assert time.monotonic() < deadline, "no tool call reached the transport"
            await asyncio.sleep(0.02)
    # Three tasks: the request's (to the launcher, which hands the run to DBOS), the run
    # workflow's (to the durable step) and the step's (to the HTTP call).
    own = [hop for hop in route_side if not hop.endswith(":spy")]
    route = own[next(i for i, hop in enumerate(own) if hop.startswith("api/routes/")) :]
    workflow = [hop for hop in workflow_side if not hop.endswith(":step_spy")]
    path = [
        *route,
        "execution/durable_launcher.py:start",
        *workflow,
        "execution/durable_steps.py:step",
        *transport.stack,
    ]
    print("\n".join(path))
    assert path == documented_path()
    assert len(path) - 1 < 17, f"{len(path) - 1} hops"  # 16 today
