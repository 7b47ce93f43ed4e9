"""MCP Tasks over stdio, spoken as raw JSON-RPC lines (the SDK client cannot create tasks):
status notifications come on stdout, and the stdio user's tasks are still theirs after the
server process is started again."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from tests.integration.mcp.test_mcp_stdio import BOOK, stdio_params


class StdioMcp:
    """One ``dynamic-tools mcp`` process and a line-delimited JSON-RPC conversation with it."""

    def __init__(self, travel_root: Path, tmp_path: Path) -> None:
        self.params = stdio_params(travel_root, tmp_path)
        self.received: list[dict[str, Any]] = []
        self._next_id = 0

    async def __aenter__(self) -> StdioMcp:
        self.process = await asyncio.create_subprocess_exec(
            self.params.command,
            *self.params.args,
            env=self.params.env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        capabilities: dict[str, Any] = {}
        await self.request(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": capabilities,
                "clientInfo": {"name": "raw-stdio", "version": "1"},
            },
        )
        await self._write({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            await asyncio.wait_for(self.process.wait(), 20)
        except TimeoutError:
            self.process.kill()
            await self.process.wait()

    async def _write(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write((json.dumps(message) + "\n").encode())
        await self.process.stdin.drain()

    async def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self._next_id += 1
        await self._write(
            {"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params or {}}
        )
        assert self.process.stdout is not None
        for _ in range(10_000):
            line = await asyncio.wait_for(self.process.stdout.readline(), 60)
            assert line, "the server closed stdout"
            message: dict[str, Any] = json.loads(line)
            if message.get("id") == self._next_id and "method" not in message:
                return message
            self.received.append(message)
        raise AssertionError(f"no answer to {method}")


async def test_stdio_tasks_push_status_and_stay_the_local_users(
    travel_root: Path, tmp_path: Path
) -> None:
    async with StdioMcp(travel_root, tmp_path) as mcp:
        created = await mcp.request(
            "tools/call",
            {"name": "w_book_flight", "arguments": BOOK, "task": {"ttl": 90000}},
        )
        task_id = created["result"]["task"]["taskId"]
        for _ in range(400):
            got = (await mcp.request("tasks/get", {"taskId": task_id}))["result"]
            if got["status"] == "completed":
                break
            await asyncio.sleep(0.05)
        for _ in range(100):  # the notification may trail the poll that saw the end
            pushed = [
                m["params"]["status"]
                for m in mcp.received
                if m.get("method") == "notifications/tasks/status"
            ]
            if "completed" in pushed:
                break
            await mcp.request("ping")
            await asyncio.sleep(0.05)
    assert got["status"] == "completed" and pushed[-1] == "completed"
    async with StdioMcp(travel_root, tmp_path) as again:  # a new process on the same data
        listed = (await again.request("tasks/list"))["result"]["tasks"]
        result = (await again.request("tasks/result", {"taskId": task_id}))["result"]
    assert {t["taskId"]: t["ttl"] for t in listed}[task_id] == 90000
    assert result["structuredContent"]["result"]["status"] == "reserved"
