"""``POST /workflow`` overhead versus a minimal endpoint doing the same calls.

Run: ``cd backend && .venv/bin/python -m bench.overhead``.

Side A is the real app (``create_app(Settings(...))``) with a registry of one tool,
``get_quote`` (GET, one query parameter). Side B is a bare FastAPI endpoint that makes the
same LLM call with the same ``openai.AsyncOpenAI`` client (same messages, same tools,
``tool_choice="required"``), ``json.loads`` the arguments and makes the same GET with one
shared ``httpx.AsyncClient``. Both talk to the same zero-latency fakes (an OpenAI-compatible
chat completions endpoint and the target API), so the difference is what A adds: request
validation, registry lookup, tool context, jsonschema validation, request building, the SSRF
guard, response models, middleware and metrics.

Each server runs in its own uvicorn process (one worker, log level WARNING). The load comes
from this process with ``httpx.AsyncClient``:

1. a check that A answers ``status: success`` with ``raw_response.status_code == 200`` and made
   exactly one LLM call and one target call (the benchmark is meaningless otherwise);
2. warm-up, 50 requests per side;
3. latency: sequential requests, alternating A and B in blocks (median and p95);
4. throughput: a fixed number of requests at a fixed concurrency, one side then the other
   (requests/s).

Steps 3 and 4 are repeated (two rounds by default; A goes first in odd rounds, B in even
ones). The CPU time each process used during the throughput phase is read from ``/proc`` and
shown per request: it is the steadiest figure on a noisy machine. The machine may have only
2 cores, so A and B are never loaded at the same time, and each side's figure is the better
of the rounds (lowest median latency with its p95, highest requests/s). Goals: median A /
median B within 1.3x, requests/s A / B at least 0.95x, server CPU per request A / B at most
1.1x.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Coroutine
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import yaml
from rich.console import Console
from rich.table import Table

BACKEND_DIR = Path(__file__).resolve().parent.parent
FIXTURE_TOOLS = Path(__file__).resolve().parent / "fixtures" / "overhead" / "tools"
HOST = "127.0.0.1"
TOOL_ID = "get_quote"
INSTRUCTIONS = "What is the latest stock price of ACME? Give me the quote."
REQUEST_BODY = {"user_instructions": INSTRUCTIONS, "tool_ids": [TOOL_ID], "format_response": False}
SUCCESS_MARK = b'"status":"success"'
CPU_GOAL = 1.1  # server CPU per request, A / B, at most
OVERHEAD_GOAL = 1.3  # median latency A / B, at most
THROUGHPUT_GOAL = 0.95  # requests per second A / B, at least
START_TIMEOUT_S = 60.0


class BenchmarkError(RuntimeError):
    """The benchmark cannot give meaningful figures."""


# --- servers -----------------------------------------------------------------------------------


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


@dataclass
class Server:
    """One uvicorn subprocess of :mod:`bench.overhead_servers`."""

    name: str
    kind: str
    config: dict[str, Any]
    workdir: Path
    process: subprocess.Popen[bytes] | None = None
    log_path: Path = field(init=False)

    def __post_init__(self) -> None:
        self.log_path = self.workdir / f"{self.kind}.log"

    @property
    def url(self) -> str:
        """Base URL of the server."""
        return f"http://{HOST}:{self.config['port']}"

    def start(self) -> None:
        """Start the process (returns at once; see :meth:`wait_ready`)."""
        config_path = self.workdir / f"{self.kind}.json"
        config_path.write_text(json.dumps(self.config), encoding="utf-8")
        env = {**os.environ, "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}
        env["PYTHONUNBUFFERED"] = "1"
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "bench.overhead_servers", self.kind, str(config_path)],
                cwd=BACKEND_DIR,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )

    def wait_ready(self, timeout_s: float = START_TIMEOUT_S) -> None:
        """Wait until ``GET /healthz`` answers 200; raise with the log if the process died."""
        deadline = time.monotonic() + timeout_s
        with httpx.Client(timeout=2.0, trust_env=False) as client:
            while time.monotonic() < deadline:
                assert self.process is not None
                if self.process.poll() is not None:
                    code = self.process.returncode
                    raise BenchmarkError(f"{self.name} exited with code {code}:\n{self.log_tail()}")
                try:
                    if client.get(f"{self.url}/healthz").status_code == 200:
                        return
                except httpx.TransportError:
                    pass
                time.sleep(0.1)
        raise BenchmarkError(
            f"{self.name} did not start within {timeout_s:.0f}s:\n{self.log_tail()}"
        )

    def stop(self) -> None:
        """Terminate the process (kill it if it does not stop within 10 s)."""
        process = self.process
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)

    def log_tail(self, lines: int = 30) -> str:
        """The last lines of the server's output."""
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "(no output)"
        return "\n".join(text.splitlines()[-lines:]) or "(no output)"


def write_registry(root: Path, target_base_url: str) -> Path:
    """A registry root with the fixture tools, their ``${TARGET_BASE_URL}`` filled in."""
    tools_dir = root / "tools"
    tools_dir.mkdir(parents=True)
    for source in sorted(FIXTURE_TOOLS.glob("*.yaml")):
        text = source.read_text(encoding="utf-8").replace("${TARGET_BASE_URL}", target_base_url)
        (tools_dir / source.name).write_text(text, encoding="utf-8")
    return root / "config.yaml"


def peer_payload(registry_config: Path) -> dict[str, Any]:
    """The system prompt and tools list side A sends, for side B to send verbatim."""
    from dynamic_tools.selection.function_schema import function_for_tool, none_suitable_function
    from dynamic_tools.selection.prompts import selection_messages
    from dynamic_tools.tools.context import format_tools_as_context
    from dynamic_tools.tools.models import ToolConfig

    tool_file = registry_config.parent / "tools" / f"{TOOL_ID}.yaml"
    tool = ToolConfig.model_validate(yaml.safe_load(tool_file.read_text(encoding="utf-8")))
    messages = selection_messages(INSTRUCTIONS, format_tools_as_context([tool]))
    functions = [function_for_tool(tool), none_suitable_function()]
    return {"system_prompt": messages[0]["content"], "tools": [f.to_openai() for f in functions]}


# --- load --------------------------------------------------------------------------------------


@dataclass
class Side:
    """A server under test."""

    key: str
    label: str
    url: str
    pid: int | None = None

    @property
    def endpoint(self) -> str:
        """The ``POST /workflow`` URL."""
        return f"{self.url}/workflow"


@dataclass
class Latency:
    """Latency figures of one side in one round."""

    samples_ms: list[float]
    stage_timings: list[dict[str, float]] = field(default_factory=list)

    def stage_medians(self) -> dict[str, float]:
        """Median of each of A's own ``timings_ms`` entries (pipeline stages and total), ms."""
        keys = dict.fromkeys(k for t in self.stage_timings for k in t)
        return {
            k: round(statistics.median(t[k] for t in self.stage_timings if k in t), 3) for k in keys
        }

    @property
    def median_ms(self) -> float:
        """Median, ms."""
        return statistics.median(self.samples_ms)

    @property
    def p95_ms(self) -> float:
        """95th percentile, ms."""
        return statistics.quantiles(self.samples_ms, n=20, method="inclusive")[-1]


async def post(client: httpx.AsyncClient, side: Side) -> httpx.Response:
    """One ``POST /workflow``; raise :class:`BenchmarkError` unless it succeeded."""
    response = await client.post(side.endpoint, json=REQUEST_BODY)
    if response.status_code != 200 or SUCCESS_MARK not in response.content:
        raise BenchmarkError(f"{side.label} answered {response.status_code}: {response.text[:500]}")
    return response


async def check_answers(client: httpx.AsyncClient, sides: list[Side], fakes_url: str) -> None:
    """Each side succeeds, with one LLM call and one target call per request."""
    for side in sides:
        before = (await client.get(f"{fakes_url}/stats")).json()
        response = await client.post(side.endpoint, json=REQUEST_BODY)
        after = (await client.get(f"{fakes_url}/stats")).json()
        try:
            data = response.json()
        except ValueError:
            data = {}
        raw = data.get("raw_response") or {}
        if (
            response.status_code != 200
            or data.get("status") != "success"
            or raw.get("status_code") != 200
        ):
            raise BenchmarkError(
                f"{side.label} did not succeed: HTTP {response.status_code}, status "
                f"{data.get('status')!r}, error_stage {data.get('error_stage')!r}, "
                f"raw_response.status_code {raw.get('status_code')!r} (expected 200, 'success', "
                f"None, 200); the benchmark would be meaningless. Answer: {response.text[:1000]}"
            )
        calls = {k: after[k] - before[k] for k in ("llm", "target")}
        if calls != {"llm": 1, "target": 1}:
            raise BenchmarkError(f"{side.label} made {calls} calls, expected one of each")


async def warm_up(client: httpx.AsyncClient, side: Side, requests: int, concurrency: int) -> None:
    """Sequential requests, then a concurrent burst that opens the connection pools."""
    for _ in range(requests // 2):
        await post(client, side)
    await throughput(client, side, requests - requests // 2, concurrency)


async def latency(
    client: httpx.AsyncClient, sides: list[Side], per_side: int, block: int
) -> dict[str, Latency]:
    """``per_side`` sequential requests per side, alternating sides every ``block`` requests."""
    results = {side.key: Latency([]) for side in sides}
    done = 0
    while done < per_side:
        size = min(block, per_side - done)
        for side in sides:
            for _ in range(size):
                started = time.perf_counter()
                response = await post(client, side)
                results[side.key].samples_ms.append((time.perf_counter() - started) * 1000)
                if side.key == "a":
                    results["a"].stage_timings.append(response.json().get("timings_ms", {}))
        done += size
    return results


def cpu_seconds(pid: int | None = None) -> float | None:
    """User + system CPU seconds used so far by process ``pid`` (this one when None)."""
    if pid is None:
        times = os.times()
        return times.user + times.system
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii")
    except OSError:
        return None  # not Linux, or the process is gone
    fields = stat.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def throughput_with_cpu(
    client: httpx.AsyncClient, side: Side, requests: int, concurrency: int, fakes_pid: int | None
) -> tuple[float, dict[str, float | None]]:
    """Requests/s, and CPU ms per request of the server, the fakes and this load process."""
    pids = {"server": side.pid, "fakes": fakes_pid, "loader": None}
    before = {k: cpu_seconds(pid) for k, pid in pids.items()}
    rps = await throughput(client, side, requests, concurrency)
    after = {k: cpu_seconds(pid) for k, pid in pids.items()}
    per_request: dict[str, float | None] = {}
    for k in pids:
        start, end = before[k], after[k]
        per_request[k] = (
            None if start is None or end is None else round((end - start) * 1000 / requests, 3)
        )
    return rps, per_request


async def throughput(
    client: httpx.AsyncClient, side: Side, requests: int, concurrency: int
) -> float:
    """Requests per second for ``requests`` requests with ``concurrency`` in flight."""
    pending = iter(range(requests))

    async def worker() -> None:
        for _ in pending:
            await post(client, side)

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return requests / (time.perf_counter() - started)


async def measure(
    sides: list[Side],
    fakes_url: str,
    *,
    fakes_pid: int | None,
    warmup: int,
    latency_requests: int,
    block: int,
    throughput_requests: int,
    concurrency: int,
    rounds: int,
    console: Console,
) -> dict[str, Any]:
    """Every measurement, round by round."""
    limits = httpx.Limits(
        max_connections=concurrency * 2, max_keepalive_connections=concurrency * 2
    )
    async with httpx.AsyncClient(timeout=60.0, trust_env=False, limits=limits) as client:
        await check_answers(client, sides, fakes_url)
        console.print("[green]check passed[/]: A answers status success, raw_response 200")
        for side in sides:
            await warm_up(client, side, warmup, concurrency)
        per_round: list[dict[str, Any]] = []
        for number in range(1, rounds + 1):
            order = sides if number % 2 else sides[::-1]  # A first in odd rounds, B in even ones
            lat = await latency(client, order, latency_requests, block)
            figures: dict[str, Any] = {}
            for side in order:  # one side after the other, never both at once
                rps, cpu = await throughput_with_cpu(
                    client, side, throughput_requests, concurrency, fakes_pid
                )
                figures[side.key] = {
                    "median_ms": round(lat[side.key].median_ms, 3),
                    "p95_ms": round(lat[side.key].p95_ms, 3),
                    "rps": round(rps, 1),
                    "cpu_ms_per_request": cpu,
                }
            figures["a"]["pipeline_stage_medians_ms"] = lat["a"].stage_medians()
            console.print(
                f"round {number} ({order[0].key.upper()} first): "
                f"A {figures['a']['median_ms']:.2f} ms, "
                f"{figures['a']['rps']:.0f} req/s; B {figures['b']['median_ms']:.2f} ms, "
                f"{figures['b']['rps']:.0f} req/s"
            )
            per_round.append(figures)
        stats = (await client.get(f"{fakes_url}/stats")).json()
    return {"rounds": per_round, "fake_calls": stats}


def best_of(rounds: list[dict[str, Any]], key: str) -> dict[str, float]:
    """The better figures of one side: lowest median (with its p95), highest req/s."""
    fastest = min(rounds, key=lambda r: r[key]["median_ms"])[key]
    best: dict[str, float | None] = {
        "median_ms": fastest["median_ms"],
        "p95_ms": fastest["p95_ms"],
        "rps": max(r[key]["rps"] for r in rounds),
    }
    cpu = [r[key]["cpu_ms_per_request"]["server"] for r in rounds]
    best["server_cpu_ms_per_request"] = None if None in cpu else min(c for c in cpu if c)
    return best


# --- report ------------------------------------------------------------------------------------


def report(result: dict[str, Any], console: Console) -> None:
    """Print the figures and the goals."""
    a, b = result["a"], result["b"]
    rounds = result["rounds"]
    table = Table(
        title="POST /workflow (A) versus a minimal endpoint (B), zero-latency fakes",
        caption=f"better of {len(rounds)} rounds per side (CPU: lowest; measured in the "
        "throughput phase); "
        f"latency {result['settings']['latency_requests']} sequential requests per side, "
        f"throughput {result['settings']['throughput_requests']} requests at concurrency "
        f"{result['settings']['concurrency']}",
    )
    table.add_column("figure")
    table.add_column("A: /workflow", justify="right")
    table.add_column("B: peer", justify="right")
    for number in range(1, len(rounds) + 1):
        table.add_column(f"round {number} A / B", justify="right", style="dim")
    rows = [("median ms", "median_ms", "{:.2f}"), ("p95 ms", "p95_ms", "{:.2f}")]
    rows.append(("req/s", "rps", "{:.0f}"))
    for title, key, fmt in rows:
        cells = [f"{fmt.format(r['a'][key])} / {fmt.format(r['b'][key])}" for r in rounds]
        table.add_row(title, fmt.format(a[key]), fmt.format(b[key]), *cells)
    for who in ("server", "fakes", "loader"):
        cells = [
            f"{_num(r['a']['cpu_ms_per_request'][who])} / {_num(r['b']['cpu_ms_per_request'][who])}"
            for r in rounds
        ]
        best = (
            (_num(a["server_cpu_ms_per_request"]), _num(b["server_cpu_ms_per_request"]))
            if who == "server"
            else ("", "")
        )
        table.add_row(f"{who} CPU ms/req", *best, *cells)
    console.print(table)

    goals = Table(title="Goals")
    goals.add_column("ratio")
    goals.add_column("value", justify="right")
    goals.add_column("goal", justify="right")
    goals.add_column("met")
    for title, value, goal, met in (
        (
            "overhead: median A / median B",
            result["overhead_ratio"],
            f"<= {OVERHEAD_GOAL}x",
            result["goals"]["overhead_met"],
        ),
        (
            "throughput: req/s A / req/s B",
            result["throughput_ratio"],
            f">= {THROUGHPUT_GOAL}x",
            result["goals"]["throughput_met"],
        ),
        (
            "server CPU per request: A / B",
            result["cpu_ratio"],
            f"<= {CPU_GOAL}x",
            result["goals"]["cpu_met"],
        ),
    ):
        shown = "-" if value is None else f"{value:.2f}x"
        goals.add_row(title, shown, goal, "[green]yes[/]" if met else "[red]no[/]")
    console.print(goals)
    for number, r in enumerate(rounds, start=1):
        timings = r["a"].get("pipeline_stage_medians_ms") or {}
        shown = ", ".join(f"{k} {v:.2f}" for k, v in timings.items())
        console.print(
            f"round {number}, A's own timings_ms (medians of the latency requests): {shown}",
            highlight=False,
        )


# --- entry point -------------------------------------------------------------------------------


def main(
    *,
    warmup: int = 50,
    latency_requests: int = 300,
    block: int = 50,
    throughput_requests: int = 1000,
    concurrency: int = 16,
    rounds: int = 2,
    console: Console | None = None,
) -> dict[str, Any]:
    """Run the benchmark; returns the figures (also printed)."""
    console = console or Console()
    with tempfile.TemporaryDirectory(prefix="bench-overhead-") as tmp, ExitStack() as stack:
        work = Path(tmp)
        fakes = Server("the fakes", "fakes", {"port": free_port()}, work)
        stack.callback(fakes.stop)
        fakes.start()
        fakes.wait_ready()

        registry_config = write_registry(work / "registry", fakes.url)
        payload_path = work / "peer_payload.json"
        payload_path.write_text(json.dumps(peer_payload(registry_config)), encoding="utf-8")
        app = Server(
            "A (the app)",
            "app",
            {
                "port": free_port(),
                "registry_config_path": str(registry_config),
                "data_dir": str(work / "data"),
                "llm_base_url": f"{fakes.url}/v1",
            },
            work,
        )
        peer = Server(
            "B (the peer)",
            "peer",
            {
                "port": free_port(),
                "llm_base_url": f"{fakes.url}/v1",
                "target_url": f"{fakes.url}/quote",
                "payload_path": str(payload_path),
            },
            work,
        )
        for server in (app, peer):
            stack.callback(server.stop)
            server.start()
        for server in (app, peer):
            server.wait_ready()
        console.print(f"servers up: fakes {fakes.url}, A {app.url}, B {peer.url}")

        sides = [
            Side("a", "A (POST /workflow)", app.url, _pid(app)),
            Side("b", "B (peer)", peer.url, _pid(peer)),
        ]
        measured = _run_async(
            lambda: measure(
                sides,
                fakes.url,
                fakes_pid=_pid(fakes),
                warmup=warmup,
                latency_requests=latency_requests,
                block=block,
                throughput_requests=throughput_requests,
                concurrency=concurrency,
                rounds=rounds,
                console=console,
            )
        )

    a, b = best_of(measured["rounds"], "a"), best_of(measured["rounds"], "b")
    overhead_ratio = round(a["median_ms"] / b["median_ms"], 3)
    throughput_ratio = round(a["rps"] / b["rps"], 3)
    cpu_a, cpu_b = a.get("server_cpu_ms_per_request"), b.get("server_cpu_ms_per_request")
    cpu_ratio = round(cpu_a / cpu_b, 3) if cpu_a and cpu_b else None
    result: dict[str, Any] = {
        "a": a,
        "b": b,
        "overhead_ratio": overhead_ratio,
        "throughput_ratio": throughput_ratio,
        "cpu_ratio": cpu_ratio,
        "goals": {
            "overhead_max": OVERHEAD_GOAL,
            "throughput_min": THROUGHPUT_GOAL,
            "cpu_max": CPU_GOAL,
            "overhead_met": overhead_ratio <= OVERHEAD_GOAL,
            "throughput_met": throughput_ratio >= THROUGHPUT_GOAL,
            "cpu_met": cpu_ratio is not None and cpu_ratio <= CPU_GOAL,
        },
        "rounds": measured["rounds"],
        "fake_calls": measured["fake_calls"],
        "settings": {
            "warmup": warmup,
            "latency_requests": latency_requests,
            "block": block,
            "throughput_requests": throughput_requests,
            "concurrency": concurrency,
            "rounds": rounds,
            "cpus": os.cpu_count(),
            "best_of": "each side: the round with the lowest median (its p95), the highest req/s",
        },
    }
    report(result, console)
    return result


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def _pid(server: Server) -> int | None:
    return server.process.pid if server.process is not None else None


def _run_async(factory: Callable[[], Coroutine[Any, Any, dict[str, Any]]]) -> dict[str, Any]:
    """Run the load on uvloop when it is installed (less client CPU), asyncio otherwise."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover
        return asyncio.run(factory())
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(factory())


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.overhead", description=__doc__)
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--latency-requests", type=int, default=300)
    parser.add_argument("--block", type=int, default=50)
    parser.add_argument("--throughput-requests", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--json", action="store_true", help="also print the figures as JSON")
    return parser.parse_args(argv)


if __name__ == "__main__":
    args = _parse_args(None)
    try:
        figures = main(
            warmup=args.warmup,
            latency_requests=args.latency_requests,
            block=args.block,
            throughput_requests=args.throughput_requests,
            concurrency=args.concurrency,
            rounds=args.rounds,
        )
    except BenchmarkError as exc:
        Console(stderr=True).print(f"[red]benchmark aborted:[/] {exc}", highlight=False)
        raise SystemExit(1) from None
    if args.json:
        print(json.dumps(figures, indent=2))
