"""Two deployments on one machine, with the same DATA_DIR but different DATABASE_URLs.

Each journal lives beside its own run store (``x.sqlite`` → ``x.journal.sqlite``), never in a
per-user default that unrelated deployments share. Both servers are killed (-9) in the middle
of a booking call and restarted with their ports swapped: each resumes only its own run, each
booking is made once, and neither store learns of the other's run.
"""

from __future__ import annotations

import signal
import time
from pathlib import Path
from typing import Any

import httpx
from dbos import DBOSClient

from tests.conftest import EXAMPLES
from tests.integration.e2e.test_server_kill_recovery import PARAMS
from tests.support.processes import server, until
from tests.support.servers import free_port

HTTP = httpx.Client(timeout=30)


def test_two_deployments_resume_only_their_own_runs(tmp_path: Path) -> None:
    port_api, port_1, port_2 = free_port(), free_port(), free_port()
    api = f"http://127.0.0.1:{port_api}"
    env_api = {
        "DATA_DIR": str(tmp_path / "api"),
        "REGISTRY_CONFIG_PATH": str(tmp_path / "api-registry/c.yaml"),
        "DURABLE_RUNS": "false",
    }
    shared_data = tmp_path / "shared-data"  # the same DATA_DIR for both, as on one laptop

    def env(name: str) -> dict[str, str]:
        return {
            "DATA_DIR": str(shared_data),
            "DATABASE_URL": f"sqlite:///{tmp_path / name / 'runs.sqlite'}",
            "REGISTRY_CONFIG_PATH": str(tmp_path / name / "registry/c.yaml"),
            "SEED_EXAMPLES_FROM": str(EXAMPLES),
            "PUBLIC_BASE_URL": api,
            "ALLOWED_TARGET_HOSTS": f"127.0.0.1:{port_api}",
            "ENABLE_DEMO_API": "false",
            "DURABLE_RUNS": "true",
        }

    log = tmp_path / "servers.log"

    def stats() -> dict[str, Any]:
        data: dict[str, Any] = HTTP.get(f"{api}/demo/travel/_stats").json()["operations"]
        return data

    def run_of(url: str, run_id: str) -> httpx.Response:
        return HTTP.get(f"{url}/runs/{run_id}")

    with server(port_api, env_api, log):
        HTTP.post(
            f"{api}/demo/travel/_faults", json={"operation": "create_booking", "latency_ms": 2500}
        )
        url_1, url_2 = f"http://127.0.0.1:{port_1}", f"http://127.0.0.1:{port_2}"
        with server(port_1, env("one"), log) as one, server(port_2, env("two"), log) as two:
            run_1 = HTTP.post(f"{url_1}/workflows/book_flight/runs", json={"params": PARAMS})
            run_2 = HTTP.post(
                f"{url_2}/workflows/book_flight/runs",
                json={"params": {**PARAMS, "passenger": "Grace"}},
            )
            assert run_1.status_code == run_2.status_code == 202, (run_1.text, run_2.text)
            id_1, id_2 = run_1.json()["run_id"], run_2.json()["run_id"]
            for url, run_id in ((url_1, id_1), (url_2, id_2)):
                until(
                    lambda u=url, r=run_id: (
                        run_of(u, r).json()["nodes"]["reserve"]["status"] == "running"
                    )
                )
            time.sleep(0.5)
            for process in (one, two):
                process.send_signal(signal.SIGKILL)
                process.wait(timeout=10)
        # Ports swapped: deployment one now answers on port 2 and two on port 1.
        with server(port_2, env("one"), log), server(port_1, env("two"), log):
            done_1 = until(
                lambda: (r := run_of(url_2, id_1).json())["status"] in ("succeeded", "failed") and r
            )
            done_2 = until(
                lambda: (r := run_of(url_1, id_2).json())["status"] in ("succeeded", "failed") and r
            )
            assert done_1["status"] == done_2["status"] == "succeeded", (done_1, done_2)
            assert done_1["nodes"]["reserve"]["output"]["passenger"] == "Ada"
            assert done_2["nodes"]["reserve"]["output"]["passenger"] == "Grace"
            # Neither store knows the other's run.
            assert run_of(url_2, id_2).status_code == 404
            assert run_of(url_1, id_1).status_code == 404
            assert done_1["executor"]["id"].startswith("sqlite-")
            assert done_1["executor"]["id"] != done_2["executor"]["id"]
        counts = stats()

    assert counts["create_booking"]["executed"] == 2  # once per deployment
    # Each journal sits beside its store and holds only its own run; none in DATA_DIR.
    assert (
        not list(shared_data.glob("*journal*")) and not (shared_data / "runs_dbos.sqlite").exists()
    )
    for name, mine, other in (("one", id_1, id_2), ("two", id_2, id_1)):
        journal = tmp_path / name / "runs.journal.sqlite"
        assert journal.exists()
        client = DBOSClient(system_database_url=f"sqlite:///{journal}")
        try:
            ids = {
                w.workflow_id for w in client.list_workflows(load_input=False, load_output=False)
            }
        finally:
            client.destroy()
        assert mine in ids and other not in ids
