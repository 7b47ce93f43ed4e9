"""Durable runs on DBOS, for real: SQLite (WAL) and PostgreSQL, yields, cancel, kill -9.

The databases and launches come from ``conftest.py`` (SQLite, and PostgreSQL unless
``DT_NO_POSTGRES=1``). The kill -9 tests run
``durable_worker.py`` as a real subprocess against a recording HTTP tool server.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from dbos import DBOS
from dbos._dbos import _get_dbos_instance

from dynamic_tools.engine.loaders import load_document
from dynamic_tools.engine.local import EventList, MockTools, Responses
from dynamic_tools.engine.models import WorkflowDocument
from dynamic_tools.engine.ports import ToolResult
from dynamic_tools.execution.durable_client import DurableRunClient
from dynamic_tools.execution.durable_config import APP_VERSION, DurableConfig, sqlite_url
from dynamic_tools.execution.durable_steps import DurableSteps, LiveRuns
from tests.conftest import EXAMPLES, FIXTURES
from tests.integration.execution.conftest import Launch, pg_engine
from tests.support.plans import prepared
from tests.unit.engine.test_saga_in_children import DOCUMENT as SAGA_IN_CHILDREN
from tests.unit.engine.test_saga_in_children import HangingTools

TRAVEL = EXAMPLES / "workflows" / "travel.yaml"
EDGES = FIXTURES / "workflows" / "engine" / "saga_and_edges.yaml"
IN_BRANCH = FIXTURES / "workflows" / "durable" / "approval_in_branch.yaml"
WORKER = Path(__file__).with_name("durable_worker.py")
BACKEND = Path(__file__).resolve().parents[3]
BOOK = {"origin": "AMS", "destination": "BCN", "date": "2026-12-01", "passenger": "Ada"}
TRIP = {
    "origin": "AMS",
    "destination": "BCN",
    "checkin": "2026-12-01",
    "checkout": "2026-12-03",
    "passenger": "Ada",
}
FLIGHTS = [
    {"id": "FL-1", "airline": "KLM", "departure_time": "07:10", "price": 180.0},
    {"id": "FL-2", "airline": "KLM", "departure_time": "12:40", "price": 95.5},
]


def doc(path: Path) -> WorkflowDocument:
    return load_document(path.read_text(), name=path.name).document


def travel_mocks(**overrides: Any) -> dict[str, Any]:
    mocks: dict[str, Any] = {
        "search_flights": FLIGHTS,
        "check_availability": {"seats_available": 4},
        "create_booking": lambda a: ToolResult(201, {"id": "BK-1", **a, "status": "reserved"}),
        "process_payment": {"id": "PAY-1", "status": "captured"},
        "search_hotels": [{"id": "HT-1"}],
        "book_hotel": {"id": "HB-1", "status": "reserved"},
        "confirm_trip": {"id": "TRIP-1", "status": "confirmed"},
        "cancel_booking": lambda a: {"id": a["booking_id"], "status": "cancelled"},
    }
    mocks.update(overrides)
    return mocks


async def until(check: Callable[[], bool], *, timeout: float = 20.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or check}")
        await asyncio.sleep(0.02)


def serializations(config: DurableConfig) -> set[str]:
    """How DBOS stored every workflow input/output and step result (rule 8)."""
    if config.is_sqlite:
        engine, prefix = sa.create_engine(config.database_url), ""
    else:
        engine, prefix = pg_engine(config.database_url), f'"{config.schema}".'
    try:
        with engine.connect() as connection:
            found = set()
            for table in ("workflow_status", "operation_outputs"):
                rows = connection.execute(
                    sa.text(f"SELECT DISTINCT serialization FROM {prefix}{table}")
                )
                found |= {row[0] for row in rows}
            return found
    finally:
        engine.dispose()


async def final_status(workflow_id: str, timeout: float = 30.0) -> Any:
    """A workflow's DBOS status once it has ended (a child's is written just after its
    parent sees the outcome)."""
    deadline = time.monotonic() + timeout
    while True:
        status = await DBOS.get_workflow_status_async(workflow_id)
        if status is not None and status.status != "PENDING":
            return status
        if time.monotonic() > deadline:
            raise AssertionError(f"{workflow_id} did not end: {status}")
        await asyncio.sleep(0.05)


async def step_names(run_id: str) -> list[str]:
    return [s["function_name"] for s in await DBOS.list_workflow_steps_async(run_id)]


# --- in process ----------------------------------------------------------------------------------
async def test_book_flight_succeeds(config: DurableConfig, launch: Launch) -> None:
    tools, events = MockTools(travel_mocks()), EventList()
    launcher = await launch(config, tools, events)
    await launcher.start(run_id="run-1", **prepared(doc(TRAVEL), "book_flight", BOOK))
    outcome = await launcher.wait("run-1")

    assert outcome.status == "succeeded", outcome.error
    assert outcome.result["id"] == "BK-1"
    assert outcome.nodes["waitlist"].status == "skipped"
    assert [c[2] for c in tools.calls] == ["run-1:search", "run-1:check", "run-1:reserve"]
    assert await step_names("run-1") == ["call:search:1", "call:check:1", "call:reserve:1"]
    status = await DBOS.get_workflow_status_async("run-1")
    assert status is not None
    assert (status.app_version, status.executor_id) == (APP_VERSION, "test-a")
    assert [e["seq"] for e in events.events] == list(range(1, len(events.events) + 1))
    assert events.events[-1]["type"] == "run_succeeded"
    assert serializations(config) == {"portable_json"}
    if config.is_sqlite:
        engine = sa.create_engine(config.database_url)
        with engine.connect() as connection:
            assert connection.execute(sa.text("PRAGMA journal_mode")).scalar() == "wal"
        engine.dispose()


async def test_a_retry_delay_is_a_recorded_step(config: DurableConfig, launch: Launch) -> None:
    booked = ToolResult(201, {"id": "BK-1", "status": "reserved"})
    tools = MockTools(travel_mocks(create_booking=Responses([ToolResult(503, {}), booked])))
    launcher = await launch(config, tools)
    await launcher.start(run_id="retry", **prepared(doc(TRAVEL), "book_flight", BOOK))
    outcome = await launcher.wait("retry")

    assert outcome.status == "succeeded", outcome.error
    assert (await step_names("retry"))[2:] == [
        "call:reserve:1",
        "sleep:reserve:1",
        "call:reserve:2",
    ]
    assert [c[2] for c in tools.calls if c[0] == "create_booking"] == ["retry:reserve"] * 2


async def test_a_cancel_ends_a_long_retry_delay(config: DurableConfig, launch: Launch) -> None:
    busy = ToolResult(503, {}, headers={"Retry-After": "3600"})
    tools, events = MockTools(travel_mocks(create_booking=busy)), EventList()
    launcher = await launch(config, tools, events)
    await launcher.start(run_id="busy", **prepared(doc(TRAVEL), "book_flight", BOOK))
    await until(lambda: bool(events.of("retry_scheduled")), what="the retry")
    assert events.of("retry_scheduled")[0]["delay_s"] == 3600

    await asyncio.wait_for(launcher.cancel("busy"), 20)
    outcome = await launcher.wait("busy")

    assert outcome.status == "cancelled"
    assert (await step_names("busy"))[2:] == ["call:reserve:1", "sleep:reserve:1", "call:reserve:2"]
    assert [c[0] for c in tools.calls].count("create_booking") == 1  # attempt 2 never called


async def test_parallel_and_foreach_run_as_child_workflows(
    config: DurableConfig, launch: Launch
) -> None:
    def search(args: Mapping[str, Any]) -> list[dict[str, Any]]:
        day = int(args["date"][-2:])
        return [
            {"id": f"FL-{day}-{i}", "date": args["date"], "price": 100 + day - i} for i in (1, 2)
        ]

    tools = MockTools(travel_mocks(search_flights=search))
    launcher = await launch(config, tools)
    await launcher.start(run_id="trip", **prepared(doc(TRAVEL), "book_trip", TRIP))
    params = {"origin": "AMS", "destination": "BCN", "start_date": "2026-12-01", "num_days": 5}
    await launcher.start(
        run_id="scan",
        **prepared(doc(TRAVEL), "find_cheapest_across_dates", params),
    )
    trip, scan = await launcher.wait("trip"), await launcher.wait("scan")

    assert trip.status == "succeeded", trip.error
    assert trip.result == {
        "trip_id": "TRIP-1",
        "flight_booking_id": "BK-1",
        "hotel_booking_id": "HB-1",
    }
    children = await DBOS.list_workflows_async(parent_workflow_id="trip", load_input=False)
    assert sorted(c.workflow_id for c in children) == [
        "trip/flight_and_hotel/flight",
        "trip/flight_and_hotel/hotel",
    ]
    assert await step_names("trip/flight_and_hotel/hotel") == [
        "call:flight_and_hotel/hotel/search:1",
        "call:flight_and_hotel/hotel/reserve:1",
    ]
    assert scan.status == "succeeded", scan.error
    assert [row["id"] for row in scan.result][:2] == ["FL-1-2", "FL-1-1"]
    keys = sorted(c[2] for c in tools.calls if c[2].startswith("scan:"))
    assert keys == [f"scan:search_loop/{i}" for i in range(5)]


async def test_a_yield_waits_until_resumed(config: DurableConfig, launch: Launch) -> None:
    tools, events = MockTools(travel_mocks()), EventList()
    launcher = await launch(config, tools, events)
    await launcher.start(run_id="ask", **prepared(doc(TRAVEL), "book_with_approval", BOOK))
    await until(lambda: bool(events.of("waiting_input")), what="the yield")
    await asyncio.sleep(0.3)
    status = await DBOS.get_workflow_status_async("ask")
    assert status is not None and status.status == "PENDING"
    assert [c[0] for c in tools.calls] == ["search_flights"]

    await launcher.resume("ask", "present_options", {"selected_flight_id": "FL-2"})
    outcome = await launcher.wait("ask")

    assert outcome.status == "succeeded", outcome.error
    assert outcome.result == {"id": "PAY-1", "status": "captured"}
    assert tools.calls[1][:2] == ("create_booking", {"flight_id": "FL-2", "passenger": "Ada"})
    assert "DBOS.recv" in await step_names("ask")


async def test_a_yield_inside_a_branch_gets_its_answer(
    config: DurableConfig, launch: Launch
) -> None:
    events = EventList()
    launcher = await launch(config, MockTools(travel_mocks()), events)
    await launcher.start(run_id="fan", **prepared(doc(IN_BRANCH), "search_with_approval", {}))
    await until(lambda: bool(events.of("waiting_input")), what="the yield")
    assert events.of("waiting_input")[0]["node_id"] == "fan/approval/ask"

    await launcher.resume("fan", "fan/approval/ask", {"ok": True})
    outcome = await launcher.wait("fan")

    assert outcome.status == "succeeded", outcome.error
    assert outcome.result == {"approved": True, "first_flight": "FL-1"}


async def test_cancelling_a_run_cancels_the_branch_waiting_for_input(
    config: DurableConfig, launch: Launch
) -> None:
    events = EventList()
    launcher = await launch(config, MockTools(travel_mocks()), events)
    await launcher.start(run_id="fan", **prepared(doc(IN_BRANCH), "search_with_approval", {}))
    await until(lambda: bool(events.of("waiting_input")), what="the yield")

    await launcher.cancel("fan")
    outcome = await launcher.wait("fan")

    assert outcome.status == "cancelled"
    # The branch's own status is written just after the parent sees its outcome: wait for it.
    child = await DBOS.get_workflow_status_async("fan/fan/approval")
    for _ in range(200):
        if child is not None and child.status == "SUCCESS":
            break
        await asyncio.sleep(0.05)
        child = await DBOS.get_workflow_status_async("fan/fan/approval")
    assert child is not None and child.status == "SUCCESS"
    output = child.output
    assert {k: output[k] for k in ("ok", "cancelled", "error")} == {
        "ok": False,
        "cancelled": True,
        "error": "cancelled: the run was cancelled",
    }
    # The branch hands back what it registered (nothing to compensate here) and its nodes.
    assert output["value"]["compensations"] == []
    assert output["value"]["nodes"]["fan/approval/ask"]["status"] == "cancelled"
    assert outcome.nodes["fan/approval/ask"].status == "cancelled"


async def test_a_failed_branch_cancels_the_branch_still_running(
    config: DurableConfig, launch: Launch
) -> None:
    events = EventList()
    tools = MockTools(travel_mocks(search_flights=ToolResult(503, {"error": "down"})))
    launcher = await launch(config, tools, events)
    await launcher.start(run_id="fan", **prepared(doc(IN_BRANCH), "search_with_approval", {}))
    outcome = await launcher.wait("fan")  # no answer needed: the other branch failed

    assert outcome.status == "failed"
    assert outcome.error["message"] == (
        "parallel 'fan': approval failed: cancelled: another child failed; "
        "search failed: search_flights answered HTTP 503 Service Unavailable: down"
    )
    # The waiting branch was stopped as a cancelled run is: it ended by itself (a recorded
    # outcome, with what it had registered), not killed by DBOS.
    approval = await final_status("fan/fan/approval")
    assert approval.status == "SUCCESS"
    assert approval.output["cancelled"] is True
    assert not launcher.live.is_live("fan")


async def test_shutdown_leaves_a_paused_run_for_the_next_launch(
    config: DurableConfig, launch: Launch
) -> None:
    tools, events = MockTools(travel_mocks()), EventList()
    first = await launch(config, tools, events)
    await first.start(run_id="hold", **prepared(doc(EDGES), "hold_then_confirm", {}))
    await until(lambda: bool(events.of("waiting_input")), what="the yield")
    await first.shutdown()  # as the lifespan does on SIGTERM: nothing is compensated

    again = EventList()
    second = await launch(config, tools, again)  # DBOS recovers the run at launch
    await until(lambda: bool(again.of("waiting_input")), what="the yield after the restart")
    await second.resume("hold", "confirm", {"ok": True})
    outcome = await second.wait("hold")

    assert outcome.status == "succeeded", outcome.error
    assert [c[0] for c in tools.calls] == ["create_booking"]  # replayed, not called again
    assert "run_cancelled" not in [e["type"] for e in events.events]
    assert [e["seq"] for e in again.events][:2] == [1, 2]  # the replay re-emits from 1


async def test_cancel_during_a_yield_runs_the_compensation(
    config: DurableConfig, launch: Launch
) -> None:
    tools, events = MockTools(travel_mocks()), EventList()
    launcher = await launch(config, tools, events)
    await launcher.start(run_id="hold", **prepared(doc(EDGES), "hold_then_confirm", {}))
    await until(lambda: bool(events.of("waiting_input")), what="the yield")

    await launcher.cancel("hold")
    outcome = await launcher.wait("hold")

    assert outcome.status == "cancelled"
    assert outcome.error == {"message": "the run was cancelled"}
    assert [c[:2] for c in tools.calls] == [
        ("create_booking", {"flight_id": "F1", "passenger": "A"}),
        ("cancel_booking", {"booking_id": "BK-1"}),
    ]
    assert tools.calls[1][2] == "hold:saga:hold"
    assert events.events[-1]["type"] == "run_cancelled"
    assert await step_names("hold") == [
        "call:hold:1",
        "DBOS.recv",
        "DBOS.sleep",  # the recv's timeout
        "compensate:saga:hold",
    ]


class BlockingTools(MockTools):
    """Mock tools where calls of ``block`` (with ``args`` among theirs) hang until cancelled."""

    def __init__(
        self, block: str = "create_booking", args: Mapping[str, Any] | None = None, **mocks: Any
    ) -> None:
        super().__init__(travel_mocks(**mocks))
        self.block = block
        self.block_args = dict(args or {})
        self.hanging = asyncio.Event()
        self.interrupted = False

    async def call(
        self, tool: str, args: Mapping[str, Any], *, idempotency_key: str, timeout_s: float | None
    ) -> ToolResult:
        if tool == self.block and self.block_args.items() <= dict(args).items():
            self.calls.append((tool, dict(args), idempotency_key))
            self.hanging.set()
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                self.interrupted = True
                raise
        return await super().call(tool, args, idempotency_key=idempotency_key, timeout_s=timeout_s)


async def test_a_cancel_from_another_process_stops_the_running_step(
    config: DurableConfig, launch: Launch
) -> None:
    tools, events = BlockingTools(args={"flight_id": "F2"}), EventList()
    launcher = await launch(config, tools, events)
    await launcher.start(run_id="saga", **prepared(doc(EDGES), "saga", {}))
    await asyncio.wait_for(tools.hanging.wait(), 20)

    client = DurableRunClient(config)  # as the CLI would: a DBOSClient, no second launch()
    try:
        await client.cancel("saga")
        outcome = await asyncio.wait_for(launcher.wait("saga"), 20)
        assert await client.status("saga") == "SUCCESS"
    finally:
        client.close()

    assert outcome.status == "cancelled"
    assert tools.interrupted
    assert [c[:2] for c in tools.calls][-1] == ("cancel_booking", {"booking_id": "BK-1"})
    assert await step_names("saga") == ["call:first:1", "call:second:1", "compensate:saga:first"]
    assert [e["type"] for e in events.events][-2:] == ["compensated", "run_cancelled"]


# --- overhead ------------------------------------------------------------------------------------
@DBOS.workflow(name="tests.noop_steps", max_recovery_attempts=None)
async def noop_steps(count: int) -> int:
    live = LiveRuns()
    workflow_id = str(DBOS.workflow_id)

    async def no_child(spec: dict[str, Any], seq_base: int) -> Any:
        raise AssertionError("no children here")

    async def nothing() -> dict[str, Any]:
        return {"ok": True}

    with live.execution(workflow_id, workflow_id) as execution:
        steps = DurableSteps(execution, live, no_child)
        for index in range(count):
            await steps.step(f"noop:{index}", nothing)
    return count


async def test_overhead_per_step(
    config: DurableConfig, launch: Launch, request: pytest.FixtureRequest
) -> None:
    await launch(config, MockTools({}))
    count = 200
    started = time.perf_counter()
    assert await noop_steps(count) == count
    elapsed_ms = (time.perf_counter() - started) * 1000
    backend = "SQLite (WAL)" if config.is_sqlite else "PostgreSQL"
    # printed past the capture; not capsys, which would leave DBOS's log handler on a stream
    # that is closed before the next launch
    line = f"[durable overhead] {backend}: {elapsed_ms / count:.2f} ms/step ({count} steps)"
    capture = request.config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled():
        print(f"\n{line}")


# --- real processes, kill -9 ------------------------------------------------------------------
class ToolServer:
    """Answers the travel tools over HTTP and records (tool, idempotency key) per call.

    The first call of ``block`` hangs (until the test ends), so the worker can be killed
    with that call in flight.
    """

    ANSWERS: dict[str, Any] = {
        "search_flights": FLIGHTS,
        "check_availability": {"seats_available": 4},
        "search_hotels": [{"id": "HT-1"}],
        "book_hotel": {"id": "HB-1", "status": "reserved"},
        "confirm_trip": {"id": "TRIP-1", "status": "confirmed"},
        "process_payment": {"id": "PAY-1", "status": "captured"},
        "cancel_booking": {"status": "cancelled"},
    }

    def __init__(self, block: str | None = None) -> None:
        self.block = block
        self.calls: list[tuple[str, str, dict[str, Any]]] = []
        self.lock = threading.Lock()
        self.blocked = threading.Event()
        self.release = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                tool = self.path.strip("/")
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])) or b"{}")
                with server.lock:
                    server.calls.append((tool, self.headers["Idempotency-Key"], body))
                    first = sum(1 for c in server.calls if c[0] == tool) == 1
                if tool == server.block and first:
                    server.blocked.set()
                    server.release.wait(60)
                    return
                answer = server.ANSWERS.get(tool)
                if tool == "create_booking":
                    answer = {"id": "BK-1", **body, "status": "reserved"}
                data = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def keys(self) -> Counter[str]:
        with self.lock:
            return Counter(c[1] for c in self.calls)

    def tools(self) -> list[str]:
        with self.lock:
            return [c[0] for c in self.calls]


@pytest.fixture
def tool_server() -> Iterator[Callable[..., ToolServer]]:
    servers: list[ToolServer] = []

    def factory(block: str | None = None) -> ToolServer:
        server = ToolServer(block)
        server.thread.start()
        servers.append(server)
        return server

    try:
        yield factory
    finally:
        for server in servers:
            server.release.set()
            server.httpd.shutdown()
            server.httpd.server_close()


class Workers:
    """Starts durable_worker.py processes and kills whatever is left at the end."""

    def __init__(self, tmp_path: Path, database_url: str, tools_url: str) -> None:
        self.tmp_path = tmp_path
        self.database_url = database_url
        self.tools_url = tools_url
        self.events = tmp_path / "events.jsonl"
        self.outcome = tmp_path / "outcome.json"
        self.processes: list[subprocess.Popen[bytes]] = []

    def start(
        self, run_id: str, *, executor_id: str = "worker-1", **run: str
    ) -> subprocess.Popen[bytes]:
        command = [
            sys.executable,
            str(WORKER),
            "--database-url",
            self.database_url,
            "--executor-id",
            executor_id,
            "--tools-url",
            self.tools_url,
            "--run-id",
            run_id,
            "--events",
            str(self.events),
            "--outcome",
            str(self.outcome),
        ]
        for name, value in run.items():
            command += [f"--{name}", value]
        log = (self.tmp_path / f"worker-{len(self.processes)}.log").open("wb")
        process = subprocess.Popen(
            command, cwd=BACKEND, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        self.processes.append(process)
        return process

    def kill(self, process: subprocess.Popen[bytes]) -> None:
        os.kill(process.pid, signal.SIGKILL)
        process.wait(10)

    def event_types(self) -> list[str]:
        if not self.events.exists():
            return []
        return [json.loads(line)["type"] for line in self.events.read_text().splitlines() if line]

    async def finished(
        self, process: subprocess.Popen[bytes], timeout: float = 60
    ) -> dict[str, Any]:
        code = await asyncio.to_thread(process.wait, timeout)
        logs = "\n".join(p.read_text() for p in self.tmp_path.glob("worker-*.log"))
        assert code == 0, logs
        return dict(json.loads(self.outcome.read_text()))

    def close(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(10)


@pytest.fixture
def workers(tmp_path: Path) -> Iterator[Callable[[str], Workers]]:
    made: list[Workers] = []

    def factory(tools_url: str) -> Workers:
        made.append(Workers(tmp_path, sqlite_url(tmp_path / "runs.sqlite"), tools_url))
        return made[-1]

    try:
        yield factory
    finally:
        for each in made:
            each.close()


def client_for(workers: Workers) -> DurableRunClient:
    return DurableRunClient(DurableConfig(database_url=workers.database_url, executor_id="cli"))


@pytest.mark.timeout(180)
async def test_kill_9_mid_run_resumes_without_repeating_completed_calls(
    tool_server: Callable[..., ToolServer], workers: Callable[[str], Workers]
) -> None:
    server = tool_server(block="create_booking")
    run = workers(server.url)
    first = run.start("trip-9", document=str(TRAVEL), workflow="book_trip", params=json.dumps(TRIP))
    assert await asyncio.to_thread(server.blocked.wait, 60), "the booking call never came"
    client = client_for(run)
    try:
        hotel = "trip-9/flight_and_hotel/hotel"
        deadline = time.monotonic() + 30
        while await client.status(hotel) != "SUCCESS":
            assert time.monotonic() < deadline, "the hotel branch did not finish"
            await asyncio.sleep(0.05)
        run.kill(first)  # create_booking is in flight
        assert await client.status("trip-9") == "PENDING"

        outcome = await run.finished(run.start("trip-9"))
    finally:
        client.close()

    assert outcome["status"] == "succeeded", outcome["error"]
    assert outcome["result"] == {
        "trip_id": "TRIP-1",
        "flight_booking_id": "BK-1",
        "hotel_booking_id": "HB-1",
    }
    keys = server.keys()
    interrupted = "trip-9:flight_and_hotel/flight/reserve"
    assert keys.pop(interrupted) == 2  # re-run once, with the same idempotency key
    assert keys == {
        "trip-9:flight_and_hotel/flight/search": 1,
        "trip-9:flight_and_hotel/flight/check": 1,
        "trip-9:flight_and_hotel/hotel/search": 1,
        "trip-9:flight_and_hotel/hotel/reserve": 1,
        "trip-9:confirm": 1,
    }


@pytest.mark.timeout(180)
async def test_a_paused_run_survives_kill_9_and_gets_an_answer_sent_while_down(
    tool_server: Callable[..., ToolServer], workers: Callable[[str], Workers]
) -> None:
    server = tool_server()
    run = workers(server.url)
    first = run.start(
        "pause-9", document=str(TRAVEL), workflow="book_with_approval", params=json.dumps(BOOK)
    )
    await until(lambda: "waiting_input" in run.event_types(), timeout=60, what="the yield")
    run.kill(first)

    client = client_for(run)  # nobody runs the workflow now
    try:
        await client.resume("pause-9", "present_options", {"selected_flight_id": "FL-2"})
        assert await client.status("pause-9") == "PENDING"
    finally:
        client.close()
    outcome = await run.finished(run.start("pause-9"))

    assert outcome["status"] == "succeeded", outcome["error"]
    assert outcome["result"] == {"id": "PAY-1", "status": "captured"}
    assert server.tools() == ["search_flights", "create_booking", "process_payment"]
    assert server.calls[1][2] == {"flight_id": "FL-2", "passenger": "Ada"}
    assert run.event_types().count("run_started") == 2  # the replay re-emits (sink dedupes)


@pytest.mark.timeout(180)
async def test_a_process_on_the_journal_adopts_the_runs_of_a_dead_executor_id(
    tool_server: Callable[..., ToolServer], workers: Callable[[str], Workers], launch: Launch
) -> None:
    from tests.integration.execution.durable_worker import HttpTools

    server = tool_server()
    run = workers(server.url)
    dead = run.start(
        "take-9",
        executor_id="replica-a",
        document=str(TRAVEL),
        workflow="book_with_approval",
        params=json.dumps(BOOK),
    )
    await until(lambda: "waiting_input" in run.event_types(), timeout=60, what="the yield")
    run.kill(dead)

    tools = HttpTools(server.url)
    try:
        config = DurableConfig(
            database_url=run.database_url, executor_id="replica-b", notification_poll_s=0.05
        )
        # SQLite: one process per journal, so whatever it holds unfinished is its own to
        # finish, whatever executor id recorded it (an older host-port id, a changed id).
        replica = await launch(config, tools)
        assert await replica.take_over("replica-a") == []  # adopted at launch already
        await replica.resume("take-9", "present_options", {"selected_flight_id": "FL-1"})
        outcome = await asyncio.wait_for(replica.wait("take-9"), 60)
    finally:
        await tools.client.aclose()

    assert outcome.status == "succeeded", outcome.error
    assert server.tools() == ["search_flights", "create_booking", "process_payment"]


@pytest.mark.timeout(180)
async def test_a_cancel_sent_while_the_process_is_down_compensates_after_the_restart(
    tool_server: Callable[..., ToolServer], workers: Callable[[str], Workers]
) -> None:
    server = tool_server()
    run = workers(server.url)
    first = run.start("hold-9", document=str(EDGES), workflow="hold_then_confirm")
    await until(lambda: "waiting_input" in run.event_types(), timeout=60, what="the yield")
    run.kill(first)

    client = client_for(run)
    try:
        await client.cancel("hold-9")
    finally:
        client.close()
    outcome = await run.finished(run.start("hold-9"))

    assert outcome["status"] == "cancelled"
    assert server.tools() == ["create_booking", "cancel_booking"]
    assert server.calls[1][1:] == ("hold-9:saga:hold", {"booking_id": "BK-1"})
    assert run.event_types()[-1] == "run_cancelled"


# --- saga across child workflows ---------------------------------------------------------------
def saga_document(deadline_s: float = 4.0) -> WorkflowDocument:
    text = SAGA_IN_CHILDREN.replace("timeout: 0.5", f"timeout: {deadline_s}")
    return load_document(text, name="saga_children.yaml").document


async def test_cancel_during_a_foreach_undoes_what_every_item_booked(
    config: DurableConfig, launch: Launch
) -> None:
    tools, events = HangingTools(), EventList()
    launcher = await launch(config, tools, events)
    await launcher.start(run_id="loop", **prepared(saga_document(), "loop", {}))
    await tools.until_hanging(3)

    await launcher.cancel("loop")
    outcome = await launcher.wait("loop")

    assert outcome.status == "cancelled"
    assert tools.undone() == ["BK-F3", "BK-F2", "BK-F1"]
    names = await step_names("loop")
    assert [n for n in names if n.startswith("compensate:")] == [
        f"compensate:saga:each/{i}/book" for i in (2, 1, 0)
    ]
    item = await final_status("loop/each/1")
    assert item.output["cancelled"] is True
    assert item.output["value"]["compensations"][0]["args"] == {"booking_id": "BK-F2"}


async def test_a_failed_branch_stops_its_sibling_and_both_bookings_are_undone(
    config: DurableConfig, launch: Launch
) -> None:
    tools = HangingTools(hang_before_failing=1)
    launcher = await launch(config, tools)
    await launcher.start(run_id="fail", **prepared(saga_document(), "one_branch_fails", {}))
    outcome = await asyncio.wait_for(launcher.wait("fail"), 60)

    assert outcome.status == "failed"
    assert "a failed: cancelled: another child failed" in outcome.error["message"]
    assert tools.undone() == ["BK-FB", "BK-FA"]


async def test_a_workflow_timeout_during_a_parallel_undoes_the_branches(
    config: DurableConfig, launch: Launch
) -> None:
    tools = HangingTools()
    launcher = await launch(config, tools)
    await launcher.start(run_id="late", **prepared(saga_document(), "fan_out_with_deadline", {}))
    await tools.until_hanging(2)
    outcome = await asyncio.wait_for(launcher.wait("late"), 60)

    assert outcome.status == "failed"
    assert outcome.error["message"] == "the workflow timed out after 4.0 s"
    assert tools.undone() == ["BK-FB", "BK-FA"]
    names = await step_names("late")
    assert names[0] == "workflow:started_at"
    assert [n for n in names if n.startswith("compensate:")] == [
        "compensate:saga:both/b/book",
        "compensate:saga:both/a/book",
    ]


# --- liveness of replicas (PostgreSQL) ----------------------------------------------------------
async def test_a_live_replica_cannot_be_taken_over_nor_share_its_executor_id(
    pg_config: DurableConfig, launch: Launch
) -> None:
    from dynamic_tools.errors import ConflictError
    from dynamic_tools.execution.presence import ExecutorPresence

    launcher = await launch(pg_config, MockTools(travel_mocks()))
    same_id = ExecutorPresence(pg_config)  # what a second process with this id would do
    other = ExecutorPresence(pg_config, "replica-x")  # a live replica-x
    try:
        assert not same_id.try_acquire()
        with pytest.raises(ConflictError, match="another process is running"):
            await asyncio.to_thread(same_id.acquire, 0.3, 0.1)
        assert other.try_acquire()
        with pytest.raises(ConflictError, match="'replica-x' is alive"):
            await launcher.take_over("replica-x")
        other.release()  # replica-x's process is gone
        assert await launcher.take_over("replica-x") == []
        with pytest.raises(ConflictError, match="its own runs"):
            await launcher.take_over("test-a")
    finally:
        same_id.release()
        other.release()
    await launcher.shutdown()  # the lock goes with it: the id can launch again
    again = ExecutorPresence(pg_config)
    try:
        assert again.try_acquire()
    finally:
        again.release()


async def test_an_answer_given_in_this_process_wakes_the_yield_at_once(
    tmp_path: Path, launch: Launch
) -> None:
    # DBOS on SQLite learns of a message only at its next poll: two minutes here. The answer
    # is given in the process where the yield waits, which wakes it at once.
    config = DurableConfig(
        database_url=sqlite_url(tmp_path / "slow-poll.sqlite"),
        notification_poll_s=120,
        cancel_poll_s=0.1,
        executor_id="test-wake",
    )
    tools, events = MockTools(travel_mocks()), EventList()
    launcher = await launch(config, tools, events)
    await launcher.start(run_id="wake", **prepared(doc(TRAVEL), "book_with_approval", BOOK))
    await until(lambda: bool(events.of("waiting_input")), what="the yield")
    system_db = _get_dbos_instance()._sys_db
    await until(lambda: bool(system_db.notifications_map.snapshot()), what="the recv's waiter")

    await launcher.resume("wake", "present_options", {"selected_flight_id": "FL-2"})
    outcome = await asyncio.wait_for(launcher.wait("wake"), 30)  # far below the poll

    assert outcome.status == "succeeded", outcome.error
    assert tools.calls[1][:2] == ("create_booking", {"flight_id": "FL-2", "passenger": "Ada"})


async def test_a_run_waiting_for_input_gives_its_slot_back(
    pg_config: DurableConfig, launch: Launch
) -> None:
    """RUN_CONCURRENCY=1: a run paused at a yield must not stop the next runs from starting,
    and once answered it finishes outside the limit."""
    config = replace(pg_config, run_concurrency=1, queue_poll_s=0.05)
    events = EventList()
    launcher = await launch(config, MockTools(travel_mocks()), events)
    await launcher.start(run_id="waits", **prepared(doc(TRAVEL), "book_with_approval", BOOK))
    await until(lambda: bool(events.of("waiting_input")), what="the yield")
    for index in range(3):  # each needs the one slot in turn
        await launcher.start(run_id=f"next-{index}", **prepared(doc(TRAVEL), "book_flight", BOOK))
    outcomes = [await asyncio.wait_for(launcher.wait(f"next-{i}"), 30) for i in range(3)]
    assert [o.status for o in outcomes] == ["succeeded"] * 3

    await launcher.resume("waits", "present_options", {"selected_flight_id": "FL-2"})
    answered = await asyncio.wait_for(launcher.wait("waits"), 30)
    assert answered.status == "succeeded", answered.error
