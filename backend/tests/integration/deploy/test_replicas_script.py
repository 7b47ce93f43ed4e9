"""``scripts/replicas.py`` (``make replicas``) for real: two replicas on a PostgreSQL database
it creates, the shared demo API and, when ``nginx`` is on PATH, the proxy with
``deploy/nginx.conf``.

- A run started on replica A is read (to its end) through replica B, and the other way round.
- Through the proxy: a run paused at a yield streams its events (``/runs/{id}/events``) while it
  waits, is answered, and the stream ends with the terminal event; an MCP 2025-11-25 session
  opened through the proxy answers from every client address, including addresses that nginx
  first sends to the replica without the session (seen in its access log as ``404, 200``).
- kill -9 of replica A is reported and the rest keeps serving (through the proxy too);
  Ctrl-C (SIGINT) then stops every process the script started.

PostgreSQL is ``TEST_DATABASE_URL`` (default ``postgresql://postgres@127.0.0.1:5432/test``);
when it does not answer the test fails, unless ``DT_NO_POSTGRES=1``. Loopback only.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa

from tests.conftest import REPO

SCRIPT = REPO / "scripts" / "replicas.py"
BOOK = {"origin": "AMS", "destination": "BCN", "date": "2026-12-01", "passenger": "Ada"}
ENDED = ("succeeded", "failed", "cancelled")
MCP_HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": "2025-11-25",
}


def _admin_engine(url: str) -> sa.Engine:
    return sa.create_engine(
        sa.make_url(url).set(drivername="postgresql+psycopg", database="postgres"),
        isolation_level="AUTOCOMMIT",
    )


@pytest.fixture
def new_database_url() -> Iterator[str]:
    """The URL of a PostgreSQL database that does not exist yet (dropped afterwards)."""
    url = os.environ.get("TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test")
    engine = _admin_engine(url)
    try:
        with engine.connect() as connection:
            connection.execute(sa.text("SELECT 1"))
    except Exception as exc:
        engine.dispose()
        if os.environ.get("DT_NO_POSTGRES") == "1":
            pytest.skip("DT_NO_POSTGRES=1")
        pytest.fail(f"PostgreSQL at {url} does not answer ({exc}); set DT_NO_POSTGRES=1 to skip")
    name = f"dt_script_{uuid.uuid4().hex[:12]}"
    try:
        yield sa.make_url(url).set(database=name).render_as_string(hide_password=False)
    finally:
        with engine.connect() as connection:
            connection.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        engine.dispose()


def until(check: Any, *, timeout: float, what: str) -> Any:
    """Poll ``check`` (bounded) until it returns something truthy."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"{what}: not in {timeout} s")


def ended(url: str, run_id: str) -> dict[str, Any] | None:
    run: dict[str, Any] = httpx.get(f"{url}/runs/{run_id}", timeout=10).json()
    return run if run["status"] in ENDED else None


def start_run(url: str, workflow: str) -> str:
    started = httpx.post(f"{url}/workflows/{workflow}/runs", json={"params": BOOK}, timeout=30)
    assert started.status_code == 202, started.text
    run_id: str = started.json()["run_id"]
    return run_id


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture
def replicas(tmp_path: Path, new_database_url: str) -> Iterator[dict[str, Any]]:
    """The script running; yields its ``replicas.json`` (+ ``process``, ``stdout``)."""
    runtime = tmp_path / "runtime"
    stdout = tmp_path / "script.out"
    command = [sys.executable, str(SCRIPT), "--database-url", new_database_url, "--port", "0"]
    command += ["--dir", str(runtime)]
    if shutil.which("nginx") is None:
        command.append("--no-proxy")
    with stdout.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd=REPO)
    ready = runtime / "replicas.json"
    try:

        def started() -> bool:
            if process.poll() is not None:
                raise AssertionError(f"the script exited: {stdout.read_text()}")
            return ready.is_file() and bool(ready.read_text())

        until(started, timeout=120, what="the replicas to start")
        info: dict[str, Any] = json.loads(ready.read_text())
        yield {**info, "process": process, "stdout": stdout}
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)


def mcp_post(
    proxy: str, message: dict[str, Any], session: str | None, source: str
) -> httpx.Response:
    """One MCP POST through the proxy, sent from the loopback address ``source``."""
    headers = {**MCP_HEADERS, **({"Mcp-Session-Id": session} if session else {})}
    transport = httpx.HTTPTransport(local_address=source)
    with httpx.Client(transport=transport, timeout=30) as client:
        response = client.post(f"{proxy}/mcp", json=message, headers=headers)
        response.read()
        return response


def sse_result(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC message of a response sent as JSON or as one server-sent event."""
    if response.headers.get("content-type", "").startswith("application/json"):
        body: dict[str, Any] = response.json()
        return body
    for line in response.text.splitlines():
        if line.startswith("data:") and line[5:].strip():  # not the empty priming event
            data: dict[str, Any] = json.loads(line[5:])
            return data
    raise AssertionError(f"no message in {response.text!r}")


def check_runs_cross_replica(a: str, b: str) -> None:
    on_a = start_run(a, "book_flight")
    done = until(lambda: ended(b, on_a), timeout=60, what="a run of A read through B")
    assert done["status"] == "succeeded", done
    assert done["result"]["status"] == "reserved"
    on_b = start_run(b, "book_flight")
    done = until(lambda: ended(a, on_b), timeout=60, what="a run of B read through A")
    assert done["status"] == "succeeded", done


def check_events_stream_through_proxy(proxy: str, a: str, b: str, demo: str) -> None:
    run_id = start_run(proxy, "book_with_approval")
    seen: list[str] = []
    with httpx.stream("GET", f"{proxy}/runs/{run_id}/events", timeout=60) as stream:
        assert stream.status_code == 200
        assert stream.headers["content-type"].startswith("text/event-stream")
        lines = stream.iter_lines()
        for line in lines:  # bounded: the stream ends after the terminal event (or times out)
            if not line.startswith("event:"):
                continue
            seen.append(line.split(":", 1)[1].strip())
            if seen[-1] == "waiting_input":
                break
        # The run waits; its events came through nginx before the stream ended.
        assert httpx.get(f"{b}/runs/{run_id}", timeout=10).json()["status"] == "waiting_input"
        flights = httpx.get(
            f"{demo}/demo/travel/flights",
            params={"origin": "AMS", "destination": "BCN", "date": "2026-12-01"},
            timeout=10,
        ).json()
        answer = httpx.post(
            f"{a}/runs/{run_id}/resume",
            json={"values": {"selected_flight_id": flights[0]["id"]}},
            timeout=30,
        )
        assert answer.status_code in (200, 202), answer.text
        for line in lines:
            if line.startswith("event:"):
                seen.append(line.split(":", 1)[1].strip())
    assert "run_started" in seen and "waiting_input" in seen
    assert seen[-1] == "run_succeeded", seen
    assert "resumed" in seen


def check_mcp_session_through_proxy(proxy: str, access_log: Path) -> None:
    opened = mcp_post(
        proxy,
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "replicas-test", "version": "1"},
            },
        },
        None,
        "127.0.0.1",
    )
    assert opened.status_code == 200, opened.text
    session = opened.headers["mcp-session-id"]
    assert sse_result(opened)["result"]["protocolVersion"] == "2025-11-25"
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert mcp_post(proxy, initialized, session, "127.0.0.1").status_code == 202
    # Client addresses hash to one replica or the other; go on (bounded) until nginx was seen
    # sending one to the replica without the session first, and passing it on after the 404.
    retried = False
    for i in range(1, 65):
        listed = mcp_post(
            proxy,
            {"jsonrpc": "2.0", "id": 1 + i, "method": "tools/list"},
            session,
            f"127.0.0.{i}",
        )
        assert listed.status_code == 200, (i, listed.text)
        names = {tool["name"] for tool in sse_result(listed)["result"]["tools"]}
        assert "search_flights" in names
        if "upstream_status=404, 200" in access_log.read_text():
            retried = True
            break
    assert retried, access_log.read_text()[-3000:]


@pytest.mark.timeout(300)
def test_replicas_script_serves_runs_from_either_replica_and_stops_on_ctrl_c(
    replicas: dict[str, Any],
) -> None:
    a, b = replicas["replicas"]["replica-a"], replicas["replicas"]["replica-b"]
    assert "created database" in replicas["stdout"].read_text()
    check_runs_cross_replica(a, b)
    proxy = replicas["proxy"]
    if shutil.which("nginx") is not None:
        assert proxy is not None
        check_events_stream_through_proxy(proxy, a, b, replicas["demo"])
        check_mcp_session_through_proxy(proxy, Path(replicas["logs"]) / "nginx-access.log")
    else:
        assert proxy is None

    # kill -9 of replica A: the script reports it and keeps the others running; the proxy
    # sends new requests (a POST included: it was never sent to A) to B.
    pids = replicas["pids"]
    os.kill(pids["replica-a"], signal.SIGKILL)
    until(
        lambda: "replica-a exited (-9)" in replicas["stdout"].read_text(),
        timeout=20,
        what="the script to report replica-a's end",
    )
    assert httpx.get(f"{b}/readyz", timeout=10).status_code == 200
    if proxy is not None:
        for _ in range(3):
            run_id = start_run(proxy, "book_flight")
            done = until(
                lambda run_id=run_id: ended(proxy, run_id), timeout=60, what="a run after A died"
            )
            assert done["status"] == "succeeded", done

    process: subprocess.Popen[bytes] = replicas["process"]
    assert process.poll() is None
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=60) == 0
    assert "stopped" in replicas["stdout"].read_text()
    until(
        lambda: not any(alive(pid) for pid in pids.values()),
        timeout=20,
        what=f"every process the script started to end ({pids})",
    )
