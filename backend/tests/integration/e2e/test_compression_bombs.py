"""Fifty gzip bombs (and brotli, zstd and NUL ones) leave memory and the runs' size bounded.

Each answer is 1 GB of zeros once decoded (gzip, brotli or zstd), or 5 MB of NUL bytes. Before,
brotli and zstd were passed through undecoded, each gzip chunk was decoded whole before any
size check, and 5 MB of NULs was stored as 30 MB of ``\\u0000`` escapes, copied into every view
of the run (a 60 MB ``GET /runs/{id}``; the server grew from 166 MB to ~860 MB). The whole
server runs in a subprocess whose address space is capped, so a regression fails this test
instead of eating the machine.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.hostile import fenced

CODE = r"""
import json, os, sys, time
import httpx
from dynamic_tools.api.app import create_app
from dynamic_tools.settings import Settings
from tests.support.bombs import bomb, bomb_app
from tests.support.servers import free_port, serve

FIXTURES = "tests/fixtures/bombs"
tmp = sys.argv[1]


def resident_mb():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


for coding in ("gzip", "br", "zstd"):
    bomb(coding)  # made before the first measure
with serve(bomb_app()) as bombs:
    root = os.path.join(tmp, "registry")
    os.makedirs(os.path.join(root, "tools"))
    os.makedirs(os.path.join(root, "workflows"))
    tools = open(os.path.join(FIXTURES, "tools.yaml")).read().replace("BOMB_URL", bombs)
    open(os.path.join(root, "tools", "bombs.yaml"), "w").write(tools)
    flows = open(os.path.join(FIXTURES, "bomb_flows.yaml")).read()
    open(os.path.join(root, "workflows", "bomb_flows.yaml"), "w").write(flows)
    port = free_port()
    settings = Settings(
        _env_file=None, host="127.0.0.1", port=port, data_dir=os.path.join(tmp, "data"),
        registry_config_path=os.path.join(root, "config.yaml"), enable_demo_api=False,
        allowed_target_hosts=[bombs.removeprefix("http://")], durable_runs=False,
        log_level="WARNING",
    )
    kinds = ["br", "zstd", "nul"] * 5 + ["gzip"] * 50  # the last one read: a gzip bomb
    sizes, statuses, rss = [], [], []
    with serve(create_app(settings), port=port) as url, httpx.Client(timeout=60) as client:
        for i, kind in enumerate(kinds):
            if i == 10:
                rss.append(resident_mb())  # after a warm-up: caches, pools, first allocations
            body = {"params": {"kind": kind}}
            started = client.post(f"{url}/workflows/bomb/runs", json=body)
            run_id = started.json()["run_id"]
            for _ in range(600):
                view = client.get(f"{url}/runs/{run_id}")
                if view.json()["status"] in ("succeeded", "failed"):
                    break
                time.sleep(0.05)
            statuses.append(view.json()["status"])
            sizes.append(len(view.content))
        rss.append(resident_mb())
        sample = client.get(f"{url}/runs/{run_id}").json()
print(json.dumps({"sizes": sizes, "statuses": statuses, "rss": rss, "sample": sample["result"]}))
"""


def test_fifty_gzip_bombs_and_others_leave_memory_and_run_size_bounded(tmp_path: Path) -> None:
    out = fenced(CODE, str(tmp_path), memory_mb=3072, timeout=300)
    assert set(out["statuses"]) == {"succeeded"}
    assert max(out["sizes"]) < 20_000  # a run view holds a summary, not megabytes of escapes
    before, after = out["rss"]
    assert after - before < 100, out["rss"]  # back near where it was after the warm-up
    summary = out["sample"]["body"] if "body" in out["sample"] else out["sample"]
    assert summary["summarized"] is True and summary["size_is_lower_bound"] is True
