"""Durable runs per second with one and with two replicas on one PostgreSQL database.

Each run calls a tool three times in a row; the tool (a separate loopback server) answers
after 200 ms. Runs are started through replica A only; the shared run queue lets every
replica with room (``RUN_CONCURRENCY`` each) execute them. The figure is runs finished per
second of wall time, measured from the first start to the last end, and the ratio of two
replicas to one in the same run of the bench.

Usage: ``python -m bench.replicas [--runs N] [--concurrency C]``. Needs the local PostgreSQL
(``BENCH_DATABASE_URL``, default ``postgresql://postgres@127.0.0.1:5432/test``); each
measurement gets a database of its own, dropped at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import sqlalchemy as sa
import uvicorn
from fastapi import FastAPI

CALL_S = 0.2
CLI = str(Path(sys.executable).with_name("dynamic-tools"))

TOOL = """\
name: slow_echo
description: Answers after a fixed delay with what it was sent.
api: {method: GET, base_url: "%s", path: /slow}
parameters:
  n: {type: integer, in: query, required: true}
  step: {type: integer, in: query, required: true}
"""

WORKFLOW = """\
domain: bench
version: "1.0"
workflows:
  three_calls:
    description: Three calls of a slow tool in a row, each naming its step.
    params:
      n: {type: int, required: true}
    graph:
      first: {call: slow_echo, args: {n: $n, step: 1}, output: one}
      second: {call: slow_echo, depends_on: [first], args: {n: $n, step: 2}, output: two}
      third: {call: slow_echo, depends_on: [second], args: {n: $n, step: 3}, output: three}
"""


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def slow_tool_server(
    delay_s: float = CALL_S, calls: Counter[tuple[int, int]] | None = None
) -> Iterator[str]:
    """A loopback server whose ``/slow`` answers after ``delay_s``.

    With ``calls``, each call is counted there by its ``(n, step)`` as it arrives.
    """
    app = FastAPI()

    @app.get("/slow")
    async def slow(n: int, step: int) -> dict[str, int]:
        if calls is not None:
            calls[(n, step)] += 1
        await asyncio.sleep(delay_s)
        return {"n": n, "step": step}

    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None, access_log=False)
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@contextlib.contextmanager
def fresh_database(url: str) -> Iterator[str]:
    """A new PostgreSQL database on the server of ``url``, dropped afterwards."""
    admin = sa.create_engine(
        sa.make_url(url).set(drivername="postgresql+psycopg"), isolation_level="AUTOCOMMIT"
    )
    name = f"dt_bench_{uuid.uuid4().hex[:10]}"
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    try:
        yield sa.make_url(url).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@contextlib.contextmanager
def replica(
    root: Path,
    name: str,
    database_url: str,
    tool_url: str,
    concurrency: int,
    extra_env: dict[str, str] | None = None,
) -> Iterator[str]:
    """One ``dynamic-tools serve`` replica on a free port; yields its URL."""
    port = free_port()
    registry = root / f"registry-{name}"
    (registry / "tools").mkdir(parents=True, exist_ok=True)
    (registry / "workflows").mkdir(parents=True, exist_ok=True)
    (registry / "tools" / "slow_echo.yaml").write_text(TOOL % tool_url)
    (registry / "workflows" / "bench.yaml").write_text(WORKFLOW)
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "DATA_DIR": str(root / f"data-{name}"),
        "REGISTRY_CONFIG_PATH": str(registry / "config.yaml"),
        "EXECUTOR_ID": f"bench-{name}",
        "RUN_CONCURRENCY": str(concurrency),
        "ALLOWED_TARGET_HOSTS": tool_url.removeprefix("http://"),
        "ENABLE_DEMO_API": "false",
        "LOG_LEVEL": "WARNING",
        "OPENAI_API_KEY": "",
        **(extra_env or {}),
    }
    log = (root / f"{name}.log").open("ab")
    process = subprocess.Popen(
        [CLI, "serve", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        stdout=log,
        stderr=log,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                    break
            if process.poll() is not None:
                raise RuntimeError(f"replica {name} exited; see {root / name}.log")
            time.sleep(0.2)
        else:
            raise RuntimeError(f"replica {name} did not start")
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


def measure(replicas: int, runs: int, concurrency: int, database_url: str) -> float:
    """Runs per second with ``replicas`` replicas (runs started through the first)."""
    with (
        tempfile.TemporaryDirectory(prefix="dt-bench-replicas-") as tmp,
        slow_tool_server() as tool_url,
        fresh_database(database_url) as database,
        contextlib.ExitStack() as stack,
    ):
        root = Path(tmp)
        urls = [
            stack.enter_context(replica(root, name, database, tool_url, concurrency))
            for name in "ab"[:replicas]
        ]
        client = httpx.Client(base_url=urls[0], timeout=60)
        started = time.monotonic()
        ids = []
        for n in range(runs):
            answer = client.post("/workflows/three_calls/runs", json={"params": {"n": n}})
            answer.raise_for_status()
            ids.append(answer.json()["run_id"])
        pending = set(ids)
        executors: dict[str, int] = {}
        deadline = time.monotonic() + 600
        while pending and time.monotonic() < deadline:
            for run_id in sorted(pending):
                run = client.get(f"/runs/{run_id}").json()
                if run["status"] in ("succeeded", "failed", "cancelled"):
                    if run["status"] != "succeeded":
                        raise RuntimeError(f"run {run_id} ended {run['status']}: {run['error']}")
                    pending.discard(run_id)
                    executor = (run.get("executor") or {}).get("id") or "?"
                    executors[executor] = executors.get(executor, 0) + 1
            time.sleep(0.05)
        elapsed = time.monotonic() - started
        if pending:
            raise RuntimeError(f"{len(pending)} runs did not finish in time")
        client.close()
    print(
        f"[replicas] {replicas} replica(s), RUN_CONCURRENCY={concurrency}: {runs} runs "
        f"(3 x {CALL_S * 1000:.0f} ms calls each) in {elapsed:.2f} s = {runs / elapsed:.2f} "
        f"runs/s; executed by {dict(sorted(executors.items()))}"
    )
    return runs / elapsed


def main(runs: int = 80, concurrency: int = 8) -> dict[str, float]:
    """Measure one and two replicas in the same run; print the figures and the ratio."""
    url = os.environ.get("BENCH_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test")
    one = measure(1, runs, concurrency, url)
    two = measure(2, runs, concurrency, url)
    ideal = concurrency / (3 * CALL_S)
    print(
        f"[replicas] runs/s: one replica {one:.2f}, two replicas {two:.2f}: ratio "
        f"{two / one:.2f}x (ideal per replica at RUN_CONCURRENCY={concurrency}: {ideal:.1f} runs/s)"
    )
    return {"one": one, "two": two, "ratio": two / one}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=80)
    parser.add_argument("--concurrency", type=int, default=8)
    arguments = parser.parse_args()
    main(arguments.runs, arguments.concurrency)
