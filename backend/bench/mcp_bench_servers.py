"""The servers of ``bench.mcp_bench``, each run in its own process by uvicorn.

``python -m bench.mcp_bench_servers KIND CONFIG_JSON`` where KIND is one of:

- ``api``: the fake target API (:class:`bench.mcp_bench_registry.FakeApi`);
- ``ours``: the real app, ``create_app(Settings(...))``, on the generated registry; MCP at
  ``/mcp`` (``durable_runs`` from the config);
- ``fastmcp``: a FastMCP 4.1.2 server over streamable HTTP at ``/mcp`` exposing the tools our
  server lists (same names, descriptions, input/output schemas and annotations, read from
  a JSON dump of our ``tools/list``). Each API tool is a :class:`HttpTool`: it validates the
  arguments against the input schema (one pre-compiled ``jsonschema`` validator per tool, as
  FastMCP's function tools validate theirs), builds the same request from the same tool
  config (path, query, header and body parameters) and sends it with one shared
  ``httpx.AsyncClient``, and answers the JSON as text plus structured content (wrapped as
  ``{"result": ...}`` for a non-object, as ours). Our other tools (``api_query``, ``w_*``,
  authoring…) are listed only, so both ``tools/list`` answers carry the same tools.

Every server: one worker, log level WARNING, no access log, uvicorn's default loop and HTTP
implementation, like ``bench.overhead_servers``.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import yaml

from bench.overhead import BenchmarkError
from bench.overhead_servers import serve

BACKEND_DIR = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"
START_TIMEOUT_S = 120.0
WRAPPED = "result"


# --- processes (used by bench.mcp_bench) --------------------------------------------------------


@dataclass
class Proc:
    """One server process of :mod:`bench.mcp_bench_servers`."""

    label: str
    kind: str
    config: dict[str, Any]
    workdir: Path
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """Base URL."""
        return f"http://{HOST}:{self.config['port']}"

    @property
    def log_path(self) -> Path:
        """Where the process writes its output."""
        return self.workdir / f"{self.label}.log"

    def start(self) -> None:
        """Start the process; :meth:`wait_ready` waits for it."""
        config_path = self.workdir / f"{self.label}.json"
        config_path.write_text(json.dumps(self.config), encoding="utf-8")
        env = {**os.environ, "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "bench.mcp_bench_servers", self.kind, str(config_path)],
                cwd=BACKEND_DIR,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )

    def wait_ready(self, path: str | None = "/healthz") -> None:
        """Wait until ``path`` answers 200 (or, with None, the port accepts connections)."""
        deadline = time.monotonic() + START_TIMEOUT_S
        with httpx.Client(timeout=2.0, trust_env=False) as client:
            while time.monotonic() < deadline:
                assert self.process is not None
                if self.process.poll() is not None:
                    raise BenchmarkError(f"{self.label} exited:\n{self.log_tail()}")
                try:
                    if path is None:
                        with socket.create_connection((HOST, self.config["port"]), timeout=1):
                            return
                    elif client.get(self.url + path).status_code == 200:
                        return
                except (OSError, httpx.TransportError):
                    pass
                time.sleep(0.1)
        raise BenchmarkError(f"{self.label} did not start:\n{self.log_tail()}")

    def stop(self) -> None:
        """Terminate (then kill) the process."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)

    def rss_mib(self) -> float | None:
        """The process's resident set size now (``VmRSS``), MiB; None off Linux."""
        return self._status_mib("VmRSS:")

    def peak_rss_mib(self) -> float | None:
        """The process's peak resident set size (``VmHWM``), MiB; None off Linux."""
        return self._status_mib("VmHWM:")

    def _status_mib(self, field: str) -> float | None:
        """One memory field of ``/proc/<pid>/status``, MiB; None off Linux."""
        if self.process is None:
            return None
        try:
            status = Path(f"/proc/{self.process.pid}/status").read_text(encoding="ascii")
        except OSError:
            return None
        for line in status.splitlines():
            if line.startswith(field):
                return round(int(line.split()[1]) / 1024, 1)
        return None

    def log_tail(self, lines: int = 40) -> str:
        """The end of the process's output."""
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "(no output)"
        return "\n".join(text.splitlines()[-lines:]) or "(no output)"


# --- ours ---------------------------------------------------------------------------------------


def our_app(config: dict[str, Any]) -> Any:
    """``create_app(Settings(...))`` on the generated registry, no LLM, no demo API."""
    from dynamic_tools.api.app import create_app
    from dynamic_tools.settings import Settings

    settings = Settings(
        _env_file=None,
        host="127.0.0.1",
        port=config["port"],
        api_token=None,
        registry_config_path=Path(config["registry_config_path"]),
        data_dir=Path(config["data_dir"]),
        seed_examples_from=None,
        durable_runs=config["durable_runs"],
        allowed_target_hosts=["127.0.0.1"],
        enable_demo_api=False,
        log_level="WARNING",
        log_json=True,
    )
    return create_app(settings)


# --- FastMCP -----------------------------------------------------------------------------------


def http_spec(tool_config: dict[str, Any]) -> dict[str, Any]:
    """What :class:`HttpTool` needs of a tool config: method, URL template, parameter places."""
    api = tool_config["api"]
    return {
        "method": api["method"],
        "url": api["base_url"].rstrip("/") + api["path"],
        "places": {
            n: p.get("in", "query") for n, p in (tool_config.get("parameters") or {}).items()
        },
    }


def build_http_request(spec: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    """``httpx`` request keywords for ``arguments``: path filled in, query, headers, JSON body."""
    path_values = {n: v for n, v in arguments.items() if spec["places"].get(n) == "path"}
    url = spec["url"].format(**{n: str(v) for n, v in path_values.items()})
    query: list[tuple[str, str]] = []
    headers: dict[str, str] = {}
    body: dict[str, Any] = {}
    for name, value in arguments.items():
        place = spec["places"].get(name)
        if place == "query":
            values = value if isinstance(value, list) else [value]
            query += [(name, _scalar(v)) for v in values]
        elif place == "header":
            headers[name] = _scalar(value)
        elif place == "body":
            body[name] = value
    request: dict[str, Any] = {"method": spec["method"], "url": url}
    if query:
        request["params"] = query
    if headers:
        request["headers"] = headers
    if body:
        request["json"] = body
    return request


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def fastmcp_app(config: dict[str, Any]) -> Any:
    """The FastMCP peer (see the module docstring)."""
    import httpx
    from fastmcp import FastMCP
    from fastmcp.tools.base import Tool, ToolResult
    from jsonschema import Draft202012Validator
    from mcp_types import TextContent
    from pydantic import PrivateAttr

    clients: dict[str, httpx.AsyncClient] = {}

    def client() -> httpx.AsyncClient:
        if "http" not in clients:
            clients["http"] = httpx.AsyncClient(timeout=30.0, trust_env=False)
        return clients["http"]

    class HttpTool(Tool):
        """An API operation: validate, send the same HTTP request, answer the JSON."""

        _spec: dict[str, Any] = PrivateAttr(default_factory=dict)
        _validator: Any = PrivateAttr(default=None)

        async def run(self, arguments: dict[str, Any]) -> ToolResult:
            errors = [e.message for e in self._validator.iter_errors(arguments)]
            if errors:
                text = json.dumps({"error_code": "INVALID_INPUT", "messages": errors})
                return ToolResult(content=[TextContent(type="text", text=text)], is_error=True)
            response = await client().request(**build_http_request(self._spec, arguments))
            data = response.json()
            text = json.dumps(data, ensure_ascii=False)
            if response.status_code >= 400:
                return ToolResult(content=[TextContent(type="text", text=text)], is_error=True)
            structured = data if isinstance(data, dict) else {WRAPPED: data}
            return ToolResult(
                content=[TextContent(type="text", text=text)], structured_content=structured
            )

    class ListedTool(Tool):
        """A tool of ours that has no HTTP operation behind it: listed, not callable here."""

        async def run(self, arguments: dict[str, Any]) -> ToolResult:
            text = f"{self.name} is listed for the benchmark only"
            return ToolResult(content=[TextContent(type="text", text=text)], is_error=True)

    specs = {}
    for path in sorted(Path(config["tools_dir"]).glob("*.yaml")):
        tool_config = yaml.safe_load(path.read_text(encoding="utf-8"))
        specs[tool_config["name"]] = http_spec(tool_config)
    listed = json.loads(Path(config["tools_json"]).read_text(encoding="utf-8"))
    server = FastMCP("fastmcp-peer")
    for item in listed:
        fields = {
            "name": item["name"],
            "description": item.get("description"),
            "parameters": item["inputSchema"],
            "output_schema": item.get("outputSchema"),
            "annotations": item.get("annotations"),
        }
        if item["name"] in specs:
            http_tool = HttpTool(**fields)
            http_tool._spec = specs[item["name"]]
            http_tool._validator = Draft202012Validator(item["inputSchema"])
            server.add_tool(http_tool)
        else:
            server.add_tool(ListedTool(**fields))
    return server.http_app(path="/mcp")


def sdk_app(config: dict[str, Any]) -> Any:
    """The bare ``mcp`` SDK peer: a low-level ``Server`` listing the same tools (as stored in
    ``tools_json``) over streamable HTTP, calling the API operations as the FastMCP peer does."""
    import contextlib

    import httpx
    import mcp_types as types
    from jsonschema import Draft202012Validator
    from mcp.server.lowlevel import Server
    from mcp.server.streamable_http_manager import (
        StreamableHTTPASGIApp,
        StreamableHTTPSessionManager,
    )
    from starlette.applications import Starlette
    from starlette.routing import Route

    listed = json.loads(Path(config["tools_json"]).read_text(encoding="utf-8"))
    tools = [types.Tool.model_validate(item) for item in listed]
    specs = {}
    for path in sorted(Path(config["tools_dir"]).glob("*.yaml")):
        tool_config = yaml.safe_load(path.read_text(encoding="utf-8"))
        specs[tool_config["name"]] = http_spec(tool_config)
    validators = {t.name: Draft202012Validator(t.input_schema) for t in tools if t.name in specs}
    clients: dict[str, httpx.AsyncClient] = {}

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = dict(params.arguments or {})
        if params.name not in specs:
            text = f"{params.name} is listed for the benchmark only"
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=text)], is_error=True
            )
        errors = [e.message for e in validators[params.name].iter_errors(arguments)]
        if errors:
            text = json.dumps({"error_code": "INVALID_INPUT", "messages": errors})
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=text)], is_error=True
            )
        if "http" not in clients:
            clients["http"] = httpx.AsyncClient(timeout=30.0, trust_env=False)
        response = await clients["http"].request(
            **build_http_request(specs[params.name], arguments)
        )
        data = response.json()
        text = json.dumps(data, ensure_ascii=False)
        structured = data if isinstance(data, dict) else {WRAPPED: data}
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)],
            structured_content=None if response.status_code >= 400 else structured,
            is_error=response.status_code >= 400,
        )

    server: Any = Server("sdk-peer", on_list_tools=list_tools, on_call_tool=call_tool)
    manager = StreamableHTTPSessionManager(app=server, json_response=False, stateless=False)
    asgi = StreamableHTTPASGIApp(manager)

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> Any:
        async with manager.run():
            yield

    async def healthz(request: Any) -> Any:
        from starlette.responses import JSONResponse

        return JSONResponse({"status": "ok"})

    routes = [Route("/mcp", endpoint=asgi), Route("/healthz", endpoint=healthz)]
    return Starlette(routes=routes, lifespan=lifespan)


def main(argv: list[str]) -> None:
    """Start one server: ``KIND CONFIG_JSON``."""
    kind, config_path = argv
    config = json.loads(Path(config_path).read_text(encoding="utf-8"))
    if kind == "api":
        from bench.mcp_bench_registry import FakeApi

        app: Any = FakeApi()
    elif kind == "ours":
        app = our_app(config)
    elif kind == "fastmcp":
        app = fastmcp_app(config)
    elif kind == "sdk":
        app = sdk_app(config)
    else:
        raise SystemExit(f"unknown server kind {kind!r}; use api, ours, fastmcp or sdk")
    serve(app, config["port"])


if __name__ == "__main__":
    main(sys.argv[1:])
