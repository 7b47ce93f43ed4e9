"""OpenAPI import: our converter versus FastMCP's ``FastMCP.from_openapi``, same document.

Run: ``cd backend && .venv/bin/python -m bench.openapi_import`` (``make bench`` installs
``fastmcp==4.1.2`` first).

The document is GitHub's REST description (npm ``@octokit/openapi`` 23.0.2, 12.4 MiB, 1,223
operations), installed by npm into ``test-artifacts/npm-openapi`` on first use. Each
measurement runs in a fresh Python process, after the libraries are imported, from the
document's bytes to a finished set of tools:

- ours: ``parse_document`` + ``convert_document`` (``ToolConfig`` objects, validated);
- FastMCP: ``json.loads`` + ``FastMCP.from_openapi`` (the comparison); its first
  ``list_tools``, where it spends more time still, is shown apart.

Time is measured without tracing; peak memory in a separate run with ``tracemalloc``. The
sides alternate for ``--rounds`` rounds; the medians are compared. Goal: ours / FastMCP
time ≤ 1.0x.

The same run also times ``json.loads`` of the same bytes alone (its own side, a fresh process
each round) and splits ours into ``parse_document`` and ``convert_document``. Goal (issue 36
item 6): parse + convert ≤ 2x ``json.loads``; parse alone is shown for context. FastMCP is
skipped (its figures "not measured") when it is not installed.

Where the time goes: one more fresh process per round (side ``parts``) times each part of
the import's worker task on the same document, wall and CPU seconds: ``json.loads``, the
depth check, ``parse_document`` (both, and decoding), the ``$ref`` resolution with its
budget (time inside ``SchemaResolver.schema``), the tools' validation (``validate_tool``),
the rest of building the tools, and the worker hand-off: pickling the result in the worker
(``pack``) and unpickling it in the server (``unpack``, in a process without the
document), both as the import runs them now and as plain ``pickle`` with the collector on
(how the pool used to hand the result back).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import statistics
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

BACKEND = Path(__file__).resolve().parents[1]
CACHE = BACKEND / "test-artifacts" / "npm-openapi"
DOCUMENT = CACHE / "node_modules" / "@octokit" / "openapi" / "generated" / "api.github.com.json"
PACKAGE = "@octokit/openapi@23.0.2"
GOAL = 1.0
JSON_GOAL = 2.0  # parse + convert / json.loads


def ensure_document() -> Path:
    """GitHub's description, installed with npm on first use."""
    if not DOCUMENT.is_file():
        npm = shutil.which("npm")
        if npm is None:
            raise SystemExit("npm is needed to install @octokit/openapi")
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [npm, "install", "--prefix", str(CACHE), "--no-audit", "--no-fund", PACKAGE],
            check=True,
            capture_output=True,
            timeout=300,
        )
    return DOCUMENT


def _ours(content: bytes) -> tuple[int, float]:
    """The tool count and the seconds ``parse_document`` alone took (the rest is converting).

    As the import's worker task (``convert_fetched``): the collector paused throughout.
    """
    from dynamic_tools.safe_parsing import gc_paused
    from dynamic_tools.tools.openapi import ConversionOptions, convert_document, parse_document

    with gc_paused():
        started = time.perf_counter()
        document = parse_document(content)
        parsed = time.perf_counter() - started
        result = convert_document(document, ConversionOptions(catalog="github"))
    return len(result.tools), parsed


def _given(value: Any) -> Any:
    return value


def _parts(content: bytes) -> dict[str, Any]:
    """Each part's wall and CPU seconds, in the order the import's worker runs them."""
    import gc
    import pickle

    from dynamic_tools import document_workers
    from dynamic_tools.safe_parsing import deeper_than, gc_paused
    from dynamic_tools.tools.openapi import (
        ConversionOptions,
        convert_document,
        parse_document,
        refs,
    )
    from dynamic_tools.tools.openapi import convert as converting
    from dynamic_tools.tools.openapi.document import MAX_DEPTH

    wall: dict[str, float] = {}
    cpu: dict[str, float] = {}

    def timed(part: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        started, used = time.perf_counter(), time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            wall[part] = wall.get(part, 0.0) + time.perf_counter() - started
            cpu[part] = cpu.get(part, 0.0) + time.process_time() - used

    data = timed("json", json.loads, content)
    timed("depth", deeper_than, data, MAX_DEPTH)
    del data
    gc.collect()
    schema, validate = refs.SchemaResolver.schema, converting.validate_tool

    def resolving(*args: Any, **kwargs: Any) -> Any:
        return timed("resolve", schema, *args, **kwargs)

    refs.SchemaResolver.schema = resolving  # type: ignore[method-assign]
    converting.validate_tool = lambda data: timed("validate", validate, data)
    try:
        with gc_paused():  # as the worker's task (convert_fetched)
            document = timed("parse", parse_document, content)
            result = timed(
                "convert", convert_document, document, ConversionOptions(catalog="github")
            )
            del document
    finally:
        refs.SchemaResolver.schema = schema  # type: ignore[method-assign]
        converting.validate_tool = validate
    blob = timed("pack", document_workers.pack, _given, result)
    plain = timed("pack_plain", pickle.dumps, result)
    del result
    gc.collect()
    timed("unpack", document_workers.unpack, blob)
    gc.collect()
    timed("unpack_plain", pickle.loads, plain)
    for figures in (wall, cpu):
        figures["build"] = figures["convert"] - figures["resolve"] - figures["validate"]
        figures["handoff"] = figures["pack"] + figures["unpack"]
        figures["handoff_plain"] = figures["pack_plain"] + figures["unpack_plain"]
    return {"wall": wall, "cpu": cpu, "blob_mib": len(blob) / 2**20}


def _fastmcp(content: bytes, *, list_tools: bool) -> tuple[int, float]:
    import asyncio

    import httpx2
    from fastmcp import FastMCP

    server = FastMCP.from_openapi(
        openapi_spec=json.loads(content),
        client=httpx2.AsyncClient(base_url="https://api.github.com"),
        name="github",
    )
    if not list_tools:
        return 0, 0.0
    started = time.perf_counter()
    count = len(asyncio.run(server.list_tools()))
    return count, time.perf_counter() - started


def measure(side: str, path: Path, memory: bool) -> dict[str, Any]:
    """One measurement in this process: seconds (or peak MiB) and the tool count.

    FastMCP's time covers ``json.loads`` + ``from_openapi``; its first ``list_tools`` (where
    it finishes building the tools) is timed apart as ``list_seconds`` and not traced.
    """
    if side == "parts":
        return _parts(path.read_bytes())
    if side == "ours":
        import dynamic_tools.tools.openapi  # noqa: F401 - import cost is not measured
    elif side == "fastmcp":
        import fastmcp  # noqa: F401
    content = path.read_bytes()
    if memory:
        tracemalloc.start()
    started = time.perf_counter()
    parsed = 0.0
    if side == "json":
        json.loads(content)
        tools, listed = 0, 0.0
        elapsed = time.perf_counter() - started
    elif side == "ours":
        tools, parsed = _ours(content)
        listed = 0.0
        elapsed = time.perf_counter() - started
    else:
        tools, listed = _fastmcp(content, list_tools=not memory)
        elapsed = time.perf_counter() - started - listed
    peak = tracemalloc.get_traced_memory()[1] if memory else 0
    return {
        "side": side,
        "seconds": elapsed,
        "list_seconds": listed,
        "parse_seconds": parsed,
        "peak_mib": peak / 2**20,
        "tools": tools,
    }


def _child(side: str, path: Path, memory: bool) -> dict[str, Any]:
    command = [sys.executable, "-m", "bench.openapi_import", "--child", side, "--doc", str(path)]
    if memory:
        command.append("--memory")
    out = subprocess.run(command, cwd=BACKEND, check=True, capture_output=True, text=True)
    figures: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return figures


def main(rounds: int = 3) -> dict[str, Any]:
    """Run the comparison, print the figures and return them."""
    path = ensure_document()
    peer = importlib.util.find_spec("fastmcp") is not None
    sides = ("json", "ours", "fastmcp") if peer else ("json", "ours")
    times: dict[str, list[float]] = {side: [] for side in sides}
    parses: list[float] = []
    listing: list[float] = []
    parts: list[dict[str, Any]] = []
    tools: dict[str, int] = {}
    for index in range(rounds):
        for side in sides if index % 2 == 0 else sides[::-1]:
            figures = _child(side, path, memory=False)
            times[side].append(figures["seconds"])
            tools[side] = figures["tools"]
            if side == "fastmcp":
                listing.append(figures["list_seconds"])
            if side == "ours":
                parses.append(figures["parse_seconds"])
        parts.append(_child("parts", path, memory=False))
    peaks = {side: _child(side, path, memory=True)["peak_mib"] for side in sides}
    medians = {side: statistics.median(values) for side, values in times.items()}
    parse = statistics.median(parses)
    print(
        f"\nOpenAPI import of {path.name} ({path.stat().st_size / 2**20:.1f} MiB), {rounds} rounds"
    )
    width = max(28, 6 * rounds + 2)
    print(f"{'':16}{'median s':>10}{'runs':>{width}}{'peak MiB':>10}{'tools':>7}")
    rows = [("json.loads", medians["json"], times["json"], "json")]
    rows.append(("ours: parse", parse, parses, ""))
    rows.append(("ours: + convert", medians["ours"], times["ours"], "ours"))
    if peer:
        rows.append(("fastmcp", medians["fastmcp"], times["fastmcp"], "fastmcp"))
    for label, median, values, side in rows:
        runs = ", ".join(f"{t:.2f}" for t in values)
        peak = f"{peaks[side]:>10.1f}{tools[side]:>7}" if side else ""
        print(f"{label:16}{median:>10.3f}{runs:>{width}}{peak}")
    parse_ratio = parse / medians["json"]
    json_ratio = medians["ours"] / medians["json"]
    verdict = "meets" if json_ratio <= JSON_GOAL else "MISSES"
    print(f"ours/json.loads: parse {parse_ratio:.2f}x, parse + convert {json_ratio:.2f}x "
          f"({verdict} the goal ≤{JSON_GOAL:.1f}x)")  # fmt: skip
    split = _print_parts(parts)
    ratio: float | None = None
    if peer:
        print(f"(FastMCP's first list_tools takes a further {statistics.median(listing):.2f} s)")
        ratio = medians["ours"] / medians["fastmcp"]
        verdict = "meets" if ratio <= GOAL else "MISSES"
        print(f"time ours/FastMCP: {ratio:.2f}x ({verdict} the goal ≤{GOAL:.1f}x); "
              f"peak memory ours/FastMCP: {peaks['ours'] / peaks['fastmcp']:.2f}x")  # fmt: skip
    else:
        print("FastMCP is not installed: ours/FastMCP not measured (make bench installs it)")
    return {
        "medians": medians,
        "parse_seconds": parse,
        "peaks": peaks,
        "tools": tools,
        "ratio": ratio,
        "parse_ratio": parse_ratio,
        "json_ratio": json_ratio,
        "parts": split,
    }


_PARTS = (
    ("json", "json.loads"),
    ("depth", "depth check"),
    ("parse", "parse_document"),
    ("resolve", "$ref resolution"),
    ("validate", "tool validation"),
    ("build", "building (rest)"),
    ("convert", "convert_document"),
    ("pack", "hand-off: pack"),
    ("unpack", "hand-off: unpack"),
    ("handoff", "hand-off"),
    ("handoff_plain", "(plain pickle)"),
)


def _print_parts(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The parts' medians (wall and CPU seconds, and per json.loads), printed and returned."""
    wall = {key: statistics.median(run["wall"][key] for run in runs) for key, _ in _PARTS}
    cpu = {key: statistics.median(run["cpu"][key] for run in runs) for key, _ in _PARTS}
    print(f"\nparts (a fresh process each round; medians of {len(runs)})")
    print(f"{'':18}{'wall s':>8}{'CPU s':>8}{'CPU/json':>10}")
    for key, label in _PARTS:
        print(f"{label:18}{wall[key]:>8.3f}{cpu[key]:>8.3f}{cpu[key] / cpu['json']:>9.2f}x")
    cpu_ratio = (cpu["parse"] + cpu["convert"]) / cpu["json"]
    print(f"parse + convert / json.loads in CPU seconds: {cpu_ratio:.2f}x; "
          f"hand-off blob {runs[0]['blob_mib']:.1f} MiB")  # fmt: skip
    return {"wall": wall, "cpu": cpu, "cpu_ratio": cpu_ratio, "blob_mib": runs[0]["blob_mib"]}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--child", choices=["json", "ours", "fastmcp", "parts"])
    parser.add_argument("--doc", type=Path)
    parser.add_argument("--memory", action="store_true")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child, args.doc, args.memory)))
    else:
        main(args.rounds)
