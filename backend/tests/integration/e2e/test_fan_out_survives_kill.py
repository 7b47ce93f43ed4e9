"""kill -9 of a real server in the middle of a durable foreach: no finished item runs again.

The foreach's items are calls, so they run in place inside the run's workflow, each finished
item journaled in ``run_items``. The server is killed while items are in flight, restarted on
another port with the same data, and the run completes: every item journaled before the kill
was called exactly once, the items in flight were called again with the same idempotency key,
and the result lists every item in order.

The tool is a recording HTTP server in this process (each call takes ``ITEM_S``).
"""

from __future__ import annotations

import json
import signal
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from tests.support.processes import server, until
from tests.support.servers import free_port

ITEMS = 40
ITEM_S = 0.3
TOOL = """
name: slow_item
description: Handle one item slowly.
api:
  method: POST
  base_url: "${PUBLIC_BASE_URL}"
  path: /item
parameters:
  n:
    in: body
    required: true
    type: integer
    description: The item.
"""
WORKFLOW = f"""
domain: fan_out_kill
workflows:
  handle_all:
    description: Handle every item, four at a time.
    params: {{ items: {{ type: list, required: true }} }}
    graph:
      each:
        type: foreach
        items: $items
        as: n
        max_iterations: {ITEMS}
        concurrency: 4
        step: {{ call: slow_item, args: {{ n: $n }} }}
        output: handled
    outputs: {{ handled: $handled }}
"""
HTTP = httpx.Client(timeout=30)


class ItemServer:
    """Answers ``POST /item`` after ``ITEM_S`` with ``{"n": n}``; counts idempotency keys."""

    def __init__(self) -> None:
        self.keys: Counter[str] = Counter()
        self.lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with owner.lock:
                    owner.keys[self.headers.get("Idempotency-Key", "")] += 1
                time.sleep(ITEM_S)
                data = json.dumps({"n": body["n"]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                return

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


@pytest.fixture
def items() -> Iterator[ItemServer]:
    made = ItemServer()
    try:
        yield made
    finally:
        made.httpd.shutdown()
        made.httpd.server_close()


@pytest.mark.timeout(240)
def test_kill_9_mid_foreach_then_restart_repeats_no_finished_item(
    tmp_path: Path, items: ItemServer
) -> None:
    seed = tmp_path / "seed"
    (seed / "tools").mkdir(parents=True)
    (seed / "workflows").mkdir()
    (seed / "tools" / "slow_item.yaml").write_text(TOOL)
    (seed / "workflows" / "fan.yaml").write_text(WORKFLOW)
    port, port_after = free_port(), free_port()
    env = {
        "DATA_DIR": str(tmp_path / "data"),
        "REGISTRY_CONFIG_PATH": str(tmp_path / "registry" / "c.yaml"),
        "SEED_EXAMPLES_FROM": str(seed),
        "PUBLIC_BASE_URL": items.url,
        "ALLOWED_TARGET_HOSTS": items.url.removeprefix("http://"),
        "ENABLE_DEMO_API": "false",
        "DURABLE_RUNS": "true",
    }
    log = tmp_path / "servers.log"
    runs, after = f"http://127.0.0.1:{port}", f"http://127.0.0.1:{port_after}"
    store = tmp_path / "data" / "dynamic_tools.sqlite"

    def journaled(run_id: str) -> list[int]:
        with sqlite3.connect(store) as conn:
            rows = conn.execute("SELECT item FROM run_items WHERE run_id = ?", (run_id,))
            return sorted(int(row[0]) for row in rows)

    with server(port, env, log) as first:
        started = HTTP.post(
            f"{runs}/workflows/handle_all/runs", json={"params": {"items": list(range(ITEMS))}}
        )
        assert started.status_code == 202, started.text
        run_id = started.json()["run_id"]
        until(lambda: len(journaled(run_id)) >= 10, timeout=60)
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
    done_before = journaled(run_id)
    called_before = set(items.keys)
    assert 10 <= len(done_before) < ITEMS

    with server(port_after, env, log):  # the same data, another port
        run = until(
            lambda: (
                (r := HTTP.get(f"{after}/runs/{run_id}").json())["status"]
                in ("succeeded", "failed", "cancelled")
                and r
            ),
            timeout=120,
        )
    assert run["status"] == "succeeded", run
    assert run["result"] == {"handled": [{"n": i} for i in range(ITEMS)]}
    keys = items.keys
    assert set(keys) == {f"{run_id}:each/{i}" for i in range(ITEMS)}
    for index in done_before:  # journaled before the kill: never called again
        assert keys[f"{run_id}:each/{index}"] == 1
    again = sorted(int(k.rsplit("/", 1)[1]) for k, count in keys.items() if count > 1)
    # Only items that were in flight at the kill were called twice (same idempotency key).
    assert all(f"{run_id}:each/{i}" in called_before for i in again)
    assert not set(again) & set(done_before)
    assert len(again) <= 4  # at most one per slot of the concurrency
    assert journaled(run_id) == []  # the fan-out's outcome is journaled: its items dropped
