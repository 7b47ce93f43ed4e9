"""The peer of the idle figure: bare DBOS with the same number of workflows waiting.

Run by ``bench.durable_floor`` in a process of its own (DBOS is one per process):
``python -m bench.dbos_idle DATABASE_URL SCHEMA QUEUE_POLL_S PAUSED IDLE_S``. DBOS is launched on
the database (a PostgreSQL schema of its own, or a SQLite file), with a queue polled every
``QUEUE_POLL_S`` seconds as the product registers on PostgreSQL (0: no queue, as on SQLite);
``PAUSED`` workflows, enqueued on that queue as the product's runs are (started directly when
there is none), each wait in ``DBOS.recv``; then the process's CPU share over ``IDLE_S``
seconds is printed as JSON. The queue has no concurrency limit: bare DBOS cannot give a waiting
workflow's slot back, as the product does, so a limit would keep most of them from starting.
Nothing of the product is imported.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
import uuid

from dbos import DBOS, SetWorkflowID


@DBOS.workflow()
async def wait_for_answer() -> object:
    """One paused workflow: waits for a message that never comes while measured."""
    return await DBOS.recv_async("answer", timeout_seconds=3600)


async def measure(url: str, schema: str, queue_poll_s: float, paused: int, idle_s: float) -> float:
    """The CPU share (0..1) of this process while ``paused`` workflows wait."""
    config: dict[str, object] = {"name": "bench-dbos-idle", "system_database_url": url}
    if url.startswith("postgresql"):
        config["dbos_system_schema"] = schema
    DBOS(config=config)  # type: ignore[arg-type]
    DBOS.launch()
    queue = None
    if queue_poll_s > 0:
        queue = await DBOS.register_queue_async("runs", polling_interval_sec=queue_poll_s)
    handles = []
    for _ in range(paused):
        with SetWorkflowID(f"idle-{uuid.uuid4().hex}"):
            if queue is None:
                handles.append(await DBOS.start_workflow_async(wait_for_answer))
            else:
                handles.append(await queue.enqueue_async(wait_for_answer))
    for handle in handles:  # every workflow reached its recv
        while (await handle.get_status()).status != "PENDING":
            await asyncio.sleep(0.1)
    await asyncio.sleep(5.0)  # start-up work done
    cpu, wall = time.process_time(), time.perf_counter()
    await asyncio.sleep(idle_s)
    share = (time.process_time() - cpu) / (time.perf_counter() - wall)
    for handle in handles:
        await DBOS.cancel_workflow_async(handle.workflow_id)
    DBOS.destroy(destroy_registry=False)
    return share


if __name__ == "__main__":
    url, schema, poll, count, idle = sys.argv[1:6]
    figure = asyncio.run(measure(url, schema, float(poll), int(count), float(idle)))
    print(json.dumps({"idle_cpu_pct": figure * 100}))
