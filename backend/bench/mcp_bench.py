"""MCP: ``tools/list`` at 1,000 tools and the cost of a call, ours versus FastMCP 4.1.2.

Run: ``cd backend && .venv/bin/python -m bench.mcp_bench`` (``make bench`` installs FastMCP).

Setup (all on 127.0.0.1, each server its own uvicorn process, see ``bench.mcp_bench_servers``):
the fake target API; our app on a temporary registry of 1,000 tool configs cloned from the
travel example plus a one-step workflow (``bench.mcp_bench_registry``), once with
``DURABLE_RUNS=false`` and once durable (DBOS on SQLite, the default); a FastMCP server over
streamable HTTP exposing the tools our ``tools/list`` returned (same names, descriptions,
input and output schemas, annotations).

What a call does: ``eu_aurora_search_flights`` with three arguments. Ours validates them
against the input schema, builds the request from the tool config, sends it through the SSRF
guard with the shared HTTP client, validates the answer against the output schema and answers
structured content plus text. FastMCP's tool validates the arguments (pre-compiled schema),
builds the same GET and sends it with a shared ``httpx.AsyncClient``, and answers the same
structured content plus text. ``w_find_flights`` is a workflow whose one step makes that call;
the run's result is the flights.

Load comes from this process with the official ``mcp`` SDK client (``Client`` over
``streamable_http_client``, response cache off), one session per server, sequential requests,
for 2025-11-25 (``legacy``: initialize and a session) and 2026-07-28. Checks first (same tool
list; each call answers the three flights and makes exactly one request to the API), then a
warm-up, then ``rounds`` rounds in which every operation runs its share of the iterations, the
order reversed every other round. Figures are client-side medians and p95 (the client's parsing
of 1,000 tools is part of ``tools/list``, on both sides). Goal: ours at most 1.0x FastMCP.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack, ExitStack
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.table import Table

from bench.mcp_bench_registry import CALL_ARGUMENTS, CALLED_TOOL, FLIGHTS, WORKFLOW_ID
from bench.mcp_bench_registry import write_registry as write_bench_registry
from bench.mcp_bench_servers import Proc
from bench.overhead import BenchmarkError, _run_async, cpu_seconds, free_port

MODES = ("legacy", "2026-07-28")
MODE_LABELS = {"legacy": "2025-11-25", "2026-07-28": "2026-07-28"}
GOAL = 1.0  # ours / FastMCP, at most
WORKFLOW_TOOL = f"w_{WORKFLOW_ID}"


def sdk_client(base_url: str, mode: str) -> Any:
    """The official SDK client for ``{base_url}/mcp`` in ``mode``, response cache off."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(timeout=httpx2.Timeout(60.0, read=120.0))
    # No SSE event size limit: 1,000 tools exceed the client's default 1 MiB on one event.
    transport = streamable_http_client(f"{base_url}/mcp", http_client=http, max_sse_event_size=None)
    return Client(transport, mode=mode, cache=None)


def tool_dump(tools: list[Any]) -> list[dict[str, Any]]:
    """A tools/list answer as plain JSON (wire names)."""
    return [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools]


def list_differences(ours: list[dict[str, Any]], peer: list[dict[str, Any]]) -> list[str]:
    """Where two tool lists differ in names, descriptions, input or output schemas."""
    fields = ("description", "inputSchema", "outputSchema")
    mine, theirs = {t["name"]: t for t in ours}, {t["name"]: t for t in peer}
    problems = [f"only ours: {n}" for n in sorted(set(mine) - set(theirs))]
    problems += [f"only the peer: {n}" for n in sorted(set(theirs) - set(mine))]
    for name in sorted(set(mine) & set(theirs)):
        problems += [
            f"{name}: {f} differs" for f in fields if mine[name].get(f) != theirs[name].get(f)
        ]
    return problems


def summarize(samples_ms: list[float]) -> dict[str, float]:
    """Median, p95 and count of latency samples (ms)."""
    p95 = statistics.quantiles(samples_ms, n=20, method="inclusive")[-1]
    return {
        "median_ms": round(statistics.median(samples_ms), 3),
        "p95_ms": round(p95, 3),
        "n": len(samples_ms),
    }


def ratio(ours: dict[str, float], peer: dict[str, float]) -> float:
    """Median over median."""
    return round(ours["median_ms"] / peer["median_ms"], 3)


# --- load ---------------------------------------------------------------------------------------

Op = Callable[[], Awaitable[Any]]


async def api_calls(client: httpx.AsyncClient, api_url: str) -> int:
    """Requests the fake API has answered so far."""
    return int((await client.get(f"{api_url}/stats")).json()["calls"])


async def check_call(
    label: str, op: Op, stats: Callable[[], Awaitable[int]], workflow: bool
) -> None:
    """The call answers the three flights and makes exactly one request to the API."""
    before = await stats()
    result = await op()
    made = await stats() - before
    data = result.structured_content or {}
    flights = data.get("result")
    if workflow:
        flights = (flights or {}).get("flights") if isinstance(flights, dict) else flights
        if data.get("status") != "succeeded":
            raise BenchmarkError(f"{label}: run did not succeed: {data}")
    if result.is_error or flights != FLIGHTS or made != 1:
        raise BenchmarkError(
            f"{label}: is_error={result.is_error}, {made} API requests (expected 1), "
            f"answer {json.dumps(data)[:600]}"
        )


async def measure_mode(
    mode: str,
    urls: dict[str, str],
    api_url: str,
    *,
    list_iterations: int,
    call_iterations: int,
    warmup: int,
    rounds: int,
    console: Console,
) -> dict[str, Any]:
    """Every operation on one protocol revision: checks, warm-up, rounds."""
    async with AsyncExitStack() as stack:
        clients = {k: await stack.enter_async_context(sdk_client(u, mode)) for k, u in urls.items()}
        plain = await stack.enter_async_context(httpx.AsyncClient(trust_env=False))

        def lister(key: str) -> Op:
            return lambda: list_all(clients[key])

        def caller(key: str, name: str) -> Op:
            return lambda: clients[key].call_tool(name, dict(CALL_ARGUMENTS))

        ops: dict[str, tuple[Op, int]] = {
            "list ours": (lister("ours"), list_iterations),
            "list fastmcp": (lister("fastmcp"), list_iterations),
            "call ours": (caller("ours", CALLED_TOOL), call_iterations),
            "call fastmcp": (caller("fastmcp", CALLED_TOOL), call_iterations),
            "w_ ours": (caller("ours", WORKFLOW_TOOL), call_iterations),
            "call ours durable": (caller("durable", CALLED_TOOL), call_iterations),
            "w_ ours durable": (caller("durable", WORKFLOW_TOOL), call_iterations),
        }
        listed = {k: tool_dump(await lister(k)()) for k in ("ours", "fastmcp")}
        problems = list_differences(listed["ours"], listed["fastmcp"])
        if problems:
            raise BenchmarkError("the tool lists differ: " + "; ".join(problems[:10]))
        sizes = {k: len(json.dumps(v, separators=(",", ":"))) for k, v in listed.items()}
        for key, (op, _) in ops.items():
            if not key.startswith("list"):
                await check_call(key, op, lambda: api_calls(plain, api_url), key.startswith("w_"))
        console.print(
            f"[green]{MODE_LABELS[mode]} checks passed[/]: {len(listed['ours'])} tools on both "
            f"sides ({sizes['ours']:,} / {sizes['fastmcp']:,} bytes of JSON), every call "
            "answers the three flights with one API request"
        )
        for op, count in ops.values():
            for _ in range(max(2, warmup * count // call_iterations)):
                await op()
        samples: dict[str, list[float]] = {k: [] for k in ops}
        for number in range(rounds):
            order = list(ops) if number % 2 == 0 else list(ops)[::-1]
            for key in order:
                op, count = ops[key]
                for _ in range(count // rounds):
                    started = time.perf_counter()
                    await op()
                    samples[key].append((time.perf_counter() - started) * 1000)
        return {
            "tools": len(listed["ours"]),
            "list_bytes": sizes,
            "ops": {k: summarize(v) for k, v in samples.items()},
        }


async def list_all(client: Any) -> list[Any]:
    """Every tool, following ``nextCursor`` (our server pages lists over 400 tools)."""
    tools: list[Any] = []
    cursor = None
    while True:
        page = await client.list_tools(cursor=cursor)
        tools += page.tools
        cursor = page.next_cursor
        if not cursor:
            return tools


async def dump_our_tools(url: str) -> list[dict[str, Any]]:
    """Our ``tools/list``, as JSON, for the FastMCP peer to expose."""
    async with sdk_client(url, "legacy") as client:
        return tool_dump(await list_all(client))


# --- report -------------------------------------------------------------------------------------


def derived(ops: dict[str, dict[str, float]]) -> dict[str, float]:
    """The ratios the benchmark is about."""
    return {
        "list ours / fastmcp": ratio(ops["list ours"], ops["list fastmcp"]),
        "call ours / fastmcp": ratio(ops["call ours"], ops["call fastmcp"]),
        "w_ / direct call (in-process runs)": ratio(ops["w_ ours"], ops["call ours"]),
        "w_ / direct call (durable runs)": ratio(ops["w_ ours durable"], ops["call ours durable"]),
        "w_ ours / fastmcp call (in-process)": ratio(ops["w_ ours"], ops["call fastmcp"]),
        "w_ ours / fastmcp call (durable)": ratio(ops["w_ ours durable"], ops["call fastmcp"]),
    }


def report(result: dict[str, Any], console: Console) -> None:
    """Print the figures."""
    modes = list(result["modes"])
    if modes:
        _report_modes(result, modes, console)
    _report_sdk(result, console)


def _report_modes(result: dict[str, Any], modes: list[str], console: Console) -> None:
    """The latency tables against FastMCP and the peak RSS of each server."""
    table = Table(
        title=f"MCP over streamable HTTP, {result['modes'][modes[0]]['tools']} tools: "
        "ours vs FastMCP 4.1.2 (client-side, mcp SDK client)",
        caption="median / p95 ms; 'durable' = our server with DURABLE_RUNS=true (DBOS, SQLite)",
    )
    table.add_column("operation")
    for mode in modes:
        table.add_column(MODE_LABELS[mode], justify="right")
    for key in result["modes"][modes[0]]["ops"]:
        cells = []
        for mode in modes:
            figures = result["modes"][mode]["ops"][key]
            cells.append(f"{figures['median_ms']:.2f} / {figures['p95_ms']:.2f}")
        table.add_row(key, *cells)
    console.print(table)
    ratios = Table(title=f"Ratios (medians); goal: ours / FastMCP <= {GOAL}x")
    ratios.add_column("ratio")
    for mode in modes:
        ratios.add_column(MODE_LABELS[mode], justify="right")
    for key in result["modes"][modes[0]]["ratios"]:
        cells = []
        for mode in modes:
            value = result["modes"][mode]["ratios"][key]
            colour = (
                ""
                if "fastmcp" not in key or "w_" in key
                else ("[green]" if value <= GOAL else "[red]")
            )
            cells.append(f"{colour}{value:.2f}x")
        ratios.add_row(key, *cells)
    console.print(ratios)
    rss = ", ".join(f"{k} {v} MiB" for k, v in result["peak_rss_mib"].items())
    console.print(f"peak RSS (VmHWM) of each server: {rss}", highlight=False)


def _report_sdk(result: dict[str, Any], console: Console) -> None:
    """Ours against the bare SDK server: idle memory and server CPU per listing."""
    sdk = result.get("sdk")
    if sdk:
        table = Table(
            title=f"Ours vs a bare mcp SDK server, same {result['settings']['tools']} tools"
        )
        table.add_column("figure")
        table.add_column("ours", justify="right")
        table.add_column("bare SDK", justify="right")
        table.add_column("ratio", justify="right")
        table.add_column("goal", justify="right")
        table.add_row(
            "idle RSS after listing, MiB",
            f"{sdk['ours']['idle_rss_mib']:.0f}",
            f"{sdk['sdk']['idle_rss_mib']:.0f}",
            f"{sdk['rss_ratio']:.2f}x",
            "<= 1.3x",
        )
        cpu = sdk["list_cpu_ratio"]
        table.add_row(
            "server CPU per full tools/list, ms",
            f"{sdk['ours']['list_cpu_ms']:.1f}",
            f"{sdk['sdk']['list_cpu_ms']:.1f}",
            "-" if cpu is None else f"{cpu:.2f}x",
            "<= 1.1x",
        )
        console.print(table)


# --- entry point --------------------------------------------------------------------------------


def main(
    *,
    tools: int = 1000,
    list_iterations: int = 40,
    call_iterations: int = 200,
    warmup: int = 20,
    rounds: int = 2,
    modes: tuple[str, ...] = MODES,
    sdk_only: bool = False,
    console: Console | None = None,
) -> dict[str, Any]:
    """Run the benchmark; returns the figures (also printed). With ``sdk_only``, only the
    comparison with the bare SDK server (idle memory, server CPU per listing): no FastMCP, no
    durable server, no latency rounds."""
    console = console or Console()
    with tempfile.TemporaryDirectory(prefix="bench-mcp-") as tmp, ExitStack() as stack:
        work = Path(tmp)
        api = Proc("api", "api", {"port": free_port()}, work)
        stack.callback(api.stop)
        api.start()
        api.wait_ready()
        registry = write_bench_registry(work / "registry", api.url, tools)
        keys = ("ours",) if sdk_only else ("ours", "durable")
        ours = {key: _ours_server(key, registry, work, durable=key == "durable") for key in keys}
        for server in ours.values():
            stack.callback(server.stop)
            server.start()
        for server in ours.values():
            server.wait_ready()
        tools_json = work / "tools.json"
        tools_json.write_text(
            json.dumps(_run_async(lambda: _wrap(dump_our_tools(ours["ours"].url)))["v"])
        )
        result: dict[str, Any] = {"modes": {}}
        if not sdk_only:
            result.update(
                _against_fastmcp(
                    ours,
                    registry,
                    tools_json,
                    work,
                    stack,
                    api,
                    modes=modes,
                    console=console,
                    list_iterations=list_iterations,
                    call_iterations=call_iterations,
                    warmup=warmup,
                    rounds=rounds,
                )
            )
        # A fresh server of ours beside the fresh SDK server: both are measured after the same
        # work (three listings), not ours after the whole benchmark above.
        fresh = _ours_server("ours-fresh", registry, work, durable=False)
        sdk = _peer_server("sdk", registry, tools_json, work)
        for server in (fresh, sdk):
            stack.callback(server.stop)
            server.start()
            server.wait_ready()
        result["sdk"] = _run_async(lambda: sdk_comparison({"ours": fresh, "sdk": sdk}))
    result["settings"] = {
        "tools": tools,
        "list_iterations": list_iterations,
        "call_iterations": call_iterations,
        "warmup": warmup,
        "rounds": rounds,
        "cpus": os.cpu_count(),
    }
    report(result, console)
    return result


def _against_fastmcp(
    ours: dict[str, Proc],
    registry: Path,
    tools_json: Path,
    work: Path,
    stack: ExitStack,
    api: Proc,
    *,
    modes: tuple[str, ...],
    console: Console,
    **iterations: int,
) -> dict[str, Any]:
    """The FastMCP peer started, every mode measured; ``modes`` and ``peak_rss_mib``."""
    peer = _peer_server("fastmcp", registry, tools_json, work)
    stack.callback(peer.stop)
    peer.start()
    peer.wait_ready(path=None)
    urls = {"ours": ours["ours"].url, "durable": ours["durable"].url, "fastmcp": peer.url}
    console.print(
        f"servers up: API {api.url}, ours {urls['ours']}, durable "
        f"{urls['durable']}, FastMCP {urls['fastmcp']}"
    )
    measured: dict[str, Any] = {}
    for mode in modes:
        figures = _run_async(
            lambda mode=mode: measure_mode(  # type: ignore[misc]
                mode, urls, api.url, console=console, **iterations
            )
        )
        figures["ratios"] = derived(figures["ops"])
        measured[mode] = figures
    peak = {
        "ours": ours["ours"].peak_rss_mib(),
        "ours durable": ours["durable"].peak_rss_mib(),
        "fastmcp": peer.peak_rss_mib(),
    }
    return {"modes": measured, "peak_rss_mib": peak}


def _ours_server(key: str, registry: Path, work: Path, *, durable: bool) -> Proc:
    """Our server on the generated registry, with a data directory of its own."""
    config = {
        "port": free_port(),
        "registry_config_path": str(registry),
        "data_dir": str(work / f"data-{key}"),
        "durable_runs": durable,
    }
    return Proc(key, "ours", config, work)


def _peer_server(kind: str, registry: Path, tools_json: Path, work: Path) -> Proc:
    """A peer server (``fastmcp`` or ``sdk``) exposing the tools we list."""
    config = {
        "port": free_port(),
        "tools_dir": str(registry.parent / "tools"),
        "tools_json": str(tools_json),
    }
    return Proc(kind, kind, config, work)


SDK_LISTS = 30
"""Full ``tools/list`` listings per server for the server-CPU figure against the bare SDK."""


async def sdk_comparison(procs: dict[str, Proc]) -> dict[str, Any]:
    """Ours against a bare ``mcp`` SDK server with the same 1,000 tools: memory once both are
    warm and idle (VmRSS), and server CPU per full ``tools/list`` (from ``/proc``)."""
    figures: dict[str, Any] = {}
    for key, proc in procs.items():
        pid = proc.process.pid if proc.process else None
        async with AsyncExitStack() as stack:
            client = await stack.enter_async_context(sdk_client(proc.url, "legacy"))
            for _ in range(3):  # warm: the listing is built and cached as it would be
                await list_all(client)
            before = cpu_seconds(pid)
            for _ in range(SDK_LISTS):
                await list_all(client)
            after = cpu_seconds(pid)
        await asyncio.sleep(1.0)  # idle
        figures[key] = {
            "idle_rss_mib": proc.rss_mib(),
            "list_cpu_ms": None
            if before is None or after is None
            else (after - before) * 1000 / SDK_LISTS,
        }
    ours, sdk = figures["ours"], figures["sdk"]
    figures["rss_ratio"] = ours["idle_rss_mib"] / sdk["idle_rss_mib"]
    figures["list_cpu_ratio"] = (
        ours["list_cpu_ms"] / sdk["list_cpu_ms"]
        if ours["list_cpu_ms"] and sdk["list_cpu_ms"]
        else None
    )
    return figures


async def _wrap(awaitable: Awaitable[Any]) -> dict[str, Any]:
    return {"v": await awaitable}


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.mcp_bench", description=__doc__)
    parser.add_argument("--tools", type=int, default=1000)
    parser.add_argument("--list-iterations", type=int, default=40)
    parser.add_argument("--call-iterations", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--mode", choices=MODES, action="append", help="default: both")
    parser.add_argument(
        "--sdk-only",
        action="store_true",
        help="only ours against the bare SDK server (idle RSS, server CPU per tools/list); "
        "no FastMCP needed",
    )
    parser.add_argument("--json", action="store_true", help="also print the figures as JSON")
    return parser.parse_args(argv)


if __name__ == "__main__":
    args = _parse_args(None)
    try:
        figures = main(
            tools=args.tools,
            list_iterations=args.list_iterations,
            call_iterations=args.call_iterations,
            warmup=args.warmup,
            rounds=args.rounds,
            modes=tuple(args.mode or MODES),
            sdk_only=args.sdk_only,
        )
    except BenchmarkError as exc:
        Console(stderr=True).print(f"[red]benchmark aborted:[/] {exc}", highlight=False)
        raise SystemExit(1) from None
    if args.json:
        print(json.dumps(figures, indent=2))
