"""Start-up to ready and idle memory of the server ``make run`` starts (the travel example).

Run: ``cd backend && .venv/bin/python -m bench.startup``.

The package's bytecode is compiled first, as ``make run`` does. Each of ``REPEATS`` times,
``dynamic-tools serve`` starts on a free loopback port with a fresh ``DATA_DIR``, the bundled
travel example and the defaults of ``make run`` (SQLite, durable runs); the time from spawning
the process to the first ``/readyz`` answering 200 is taken, then its resident memory (VmRSS)
after ``IDLE_S`` of idleness, and again once an MCP client has listed the tools (``/mcp`` is
loaded on its first request). Medians are printed against the goals (ready under 2 s, at most
120 MiB idle).
"""

from __future__ import annotations

import asyncio
import compileall
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from rich.console import Console

REPEATS = 3
IDLE_S = 3.0
CLI = str(Path(sys.executable).with_name("dynamic-tools"))
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "travel"
console = Console()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def _list_tools(base_url: str) -> int:
    from bench.mcp_bench import list_all, sdk_client

    async with sdk_client(base_url, "legacy") as client:
        return len(await list_all(client))


def spawn(tmp: str) -> tuple[subprocess.Popen[bytes], int]:
    """``dynamic-tools serve`` as ``make run`` starts it, in ``tmp``, on a free loopback port."""
    port = _free_port()
    env = {
        **os.environ,
        "DATA_DIR": str(Path(tmp) / "data"),
        "REGISTRY_CONFIG_PATH": str(Path(tmp) / "registry" / "c.yaml"),
        "SEED_EXAMPLES_FROM": str(EXAMPLE),
        "OPENAI_API_KEY": "",
        "LOG_LEVEL": "WARNING",
    }
    process = subprocess.Popen(
        [CLI, "serve", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return process, port


def once() -> tuple[float, float, float]:
    """Seconds to ready, idle MiB, and idle MiB after an MCP listing, of one start."""
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        process, port = spawn(tmp)
        try:
            deadline = started + 60
            while True:
                try:
                    if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.perf_counter() > deadline:
                    raise RuntimeError("the server did not get ready in 60 s")
                time.sleep(0.02)
            ready = time.perf_counter() - started
            time.sleep(IDLE_S)
            idle = _rss_mib(process.pid)
            if not asyncio.run(_list_tools(f"http://127.0.0.1:{port}")):
                raise RuntimeError("the MCP listing was empty")
            time.sleep(IDLE_S)
            return ready, idle, _rss_mib(process.pid)
        finally:
            process.terminate()
            process.wait(timeout=30)


def main() -> dict[str, float]:
    """Run and print the figures."""
    compileall.compile_dir(Path(__file__).resolve().parents[1] / "src", quiet=1)
    runs = [once() for _ in range(REPEATS)]
    figures = {
        "ready_s": statistics.median(r[0] for r in runs),
        "idle_mib": statistics.median(r[1] for r in runs),
        "idle_after_mcp_mib": statistics.median(r[2] for r in runs),
    }
    console.print(
        f"make run's server (travel example, SQLite, durable runs), median of {REPEATS}: "
        f"ready in {figures['ready_s']:.2f} s (goal < 2 s), idle "
        f"{figures['idle_mib']:.0f} MiB (goal <= 120 MiB), "
        f"{figures['idle_after_mcp_mib']:.0f} MiB once an MCP client listed the tools",
        highlight=False,
    )
    return figures


if __name__ == "__main__":
    main()
