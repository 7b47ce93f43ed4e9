"""A process that runs one durable run, for the kill -9 tests in test_durable_runs.py.

It launches DBOS (as the app's lifespan would), starts the run unless it exists already (a
restarted worker finds it and DBOS resumes it), waits for its outcome, writes it as JSON to
``--outcome`` and exits. Tool calls go over HTTP to the test's recording server
(``POST {tools_url}/{tool}`` with an ``Idempotency-Key`` header); events are appended as JSON
lines to ``--events``.

    python durable_worker.py --database-url sqlite:///runs.sqlite --executor-id w1 \
        --tools-url http://127.0.0.1:PORT --document travel.yaml --workflow book_trip \
        --params '{...}' --run-id run-1 --events events.jsonl --outcome outcome.json
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx

from dynamic_tools.engine.events import Event
from dynamic_tools.engine.journal import to_json
from dynamic_tools.engine.loaders import load_document
from dynamic_tools.engine.plan import compile_plan
from dynamic_tools.engine.ports import ToolCallFailed, ToolResult
from dynamic_tools.errors import ConflictError
from dynamic_tools.execution.durable_config import DurableConfig
from dynamic_tools.execution.durable_launcher import DurableLauncher


class HttpTools:
    """Calls the test's tool server."""

    def __init__(self, base_url: str) -> None:
        self.client = httpx.AsyncClient(base_url=base_url, timeout=60.0)

    def knows(self, tool: str) -> bool:
        return True

    async def call(
        self, tool: str, args: Mapping[str, Any], *, idempotency_key: str, timeout_s: float | None
    ) -> ToolResult:
        try:
            response = await self.client.post(
                f"/{tool}", json=dict(args), headers={"Idempotency-Key": idempotency_key}
            )
        except httpx.HTTPError as exc:
            raise ToolCallFailed(str(exc)) from exc
        return ToolResult(response.status_code, response.json())


class EventFile:
    """Appends each event as one JSON line."""

    def __init__(self, path: Path) -> None:
        self.path = path

    async def emit(self, event: Event) -> None:
        with self.path.open("a") as file:
            file.write(json.dumps(event.to_dict()) + "\n")


async def main(args: argparse.Namespace) -> None:
    tools = HttpTools(args.tools_url)
    config = DurableConfig(
        database_url=args.database_url,
        executor_id=args.executor_id,
        notification_poll_s=0.1,
        cancel_poll_s=0.2,
    )
    launcher = DurableLauncher(config, tools=tools, events=EventFile(Path(args.events)))
    await launcher.launch()
    try:
        if args.document:
            document = load_document(Path(args.document).read_text(), name="w.yaml").document
            with contextlib.suppress(ConflictError):  # restarted: DBOS resumed the run
                plan = compile_plan(document, args.workflow)
                params = plan.check_params(json.loads(args.params))
                await launcher.start(run_id=args.run_id, plan=plan, params=params)
        outcome = await launcher.wait(args.run_id)
        Path(args.outcome).write_text(json.dumps(to_json(outcome)))
    finally:
        await launcher.shutdown()
        await tools.client.aclose()


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--executor-id", required=True)
    parser.add_argument("--tools-url", required=True)
    parser.add_argument("--run-id", required=True)
    parser.add_argument("--document", help="start the run from this document unless it exists")
    parser.add_argument("--workflow", default="")
    parser.add_argument("--params", default="{}")
    parser.add_argument("--events", required=True)
    parser.add_argument("--outcome", required=True)
    return parser.parse_args(argv)


if __name__ == "__main__":
    asyncio.run(main(parse()))
