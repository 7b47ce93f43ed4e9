"""``dynamic-tools``: serve the app, list tools, check tool files."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.table import Table

from dynamic_tools.cli.catalogs import (
    import_arazzo_command,
    import_graphql_command,
    import_openapi_command,
)
from dynamic_tools.cli.keys import keys_app
from dynamic_tools.settings import Settings

if TYPE_CHECKING:
    from dynamic_tools.cli.runs import RunsClient

app = typer.Typer(
    help="Dynamic Tools: HTTP APIs as tools that LLMs use correctly.", no_args_is_help=True
)
tools_app = typer.Typer(help="Inspect the tool registry.", no_args_is_help=True)
app.add_typer(tools_app, name="tools")
runs_app = typer.Typer(
    help="List and show workflow runs (through the server's API).", no_args_is_help=True
)
app.add_typer(runs_app, name="runs")
app.add_typer(keys_app, name="keys")
ServerOption = Annotated[str | None, typer.Option(help="Server URL (default: this config's)")]
app.command("import-openapi")(import_openapi_command)
app.command("import-graphql")(import_graphql_command)
app.command("import-arazzo")(import_arazzo_command)
console = Console()


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Interface (default: HOST or 127.0.0.1)")] = None,
    port: Annotated[int | None, typer.Option(help="Port (default: PORT or 8000)")] = None,
    access_log: Annotated[
        bool | None,
        typer.Option(
            "--access-log/--no-access-log",
            help="One log line per request (default: ACCESS_LOG, off)",
        ),
    ] = None,
) -> None:
    """Serve the REST API, the demo API and the docs."""
    import uvicorn

    from dynamic_tools.api.app import create_app

    given = {"host": host, "port": port, "access_log": access_log}
    overrides = {k: v for k, v in given.items() if v is not None}
    settings = load_settings(**overrides)
    _refuse_if_journal_in_use(settings)
    settings = _loopback_unless_protected(settings)
    console.print(
        f"Dynamic Tools on [bold]{settings.base_url}[/] — docs at {settings.base_url}/docs",
        highlight=False,
    )
    uvicorn.run(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        log_config=None,
        access_log=settings.access_log,
    )


@app.command()
def mcp() -> None:
    """Serve MCP on stdin/stdout (for Claude Desktop, Cursor, VS Code); logs go to stderr."""
    import anyio

    from dynamic_tools.mcp.stdio import run_stdio

    settings = load_settings()
    _refuse_if_journal_in_use(settings)
    anyio.run(run_stdio, settings)


def load_settings(**overrides: object) -> Settings:
    """The settings, or a one-line error per bad setting and exit 1 (no traceback)."""
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        err = Console(stderr=True, soft_wrap=True)
        for problem in exc.errors():
            name = ".".join(str(p) for p in problem["loc"]).upper() or "settings"
            message = str(problem["msg"]).removeprefix("Value error, ")
            said = message if message.startswith(name) else f"{name}: {message}"
            err.print(f"[red]error:[/] {said}", highlight=False)
        raise typer.Exit(1) from None


def _loopback_unless_protected(settings: Settings) -> Settings:
    """Settings that listen on loopback only when no credential is configured at all.

    Without API_TOKEN, an issuer or an active API key, anyone who reaches the server is its
    admin: it listens on 127.0.0.1 then, whatever HOST says, unless ALLOW_OPEN_ACCESS=true.
    """
    from dynamic_tools.access.keys import ApiKeyStore
    from dynamic_tools.persistence.db import make_engine, migrate

    if settings.access_control_configured:
        return settings
    engine = make_engine(settings.effective_database_url)
    try:
        migrate(engine)
        if ApiKeyStore(engine).any_active_sync():
            return settings
    finally:
        engine.dispose()
    err = Console(stderr=True, soft_wrap=True)
    if settings.host in LOOPBACK_HOSTS or settings.allow_open_access:
        err.print(
            "note: no credential is configured (API_TOKEN, an API key or an issuer): every "
            f"request that reaches {settings.host}:{settings.port} acts as admin.",
            highlight=False,
        )
        return settings
    err.print(
        f"[yellow]warning:[/] no credential is configured (API_TOKEN, an API key or an issuer): "
        f"listening on 127.0.0.1 instead of {settings.host}. Configure one (README: Access "
        "control), or set ALLOW_OPEN_ACCESS=true to let anyone who reaches it act as admin.",
        highlight=False,
    )
    return settings.model_copy(update={"host": "127.0.0.1"})


LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


def _refuse_if_journal_in_use(settings: Settings) -> None:
    from dynamic_tools.bootstrap import journal_in_use

    reason = journal_in_use(settings)
    if reason is not None:
        Console(stderr=True, soft_wrap=True).print(f"[red]error:[/] {reason}", highlight=False)
        raise typer.Exit(1)


@tools_app.command("list")
def list_tools(
    directory: Annotated[
        Path | None, typer.Option(help="A tools directory to read instead")
    ] = None,
) -> None:
    """List the registered tools and any problems in tool files."""
    from dynamic_tools.bootstrap import make_registry

    registry = make_registry(load_settings(), tools_dir=directory)
    problems = registry.reload()
    table = Table("name", "method", "endpoint", "description")
    for tool in registry.all():
        table.add_row(
            tool.name, tool.api.method, tool.api.base_url + tool.api.path, tool.description
        )
    console.print(table)
    for problem in problems:
        console.print(
            f"[red]{problem.file}[/] {problem.tool or ''} {problem.field}: {problem.reason}",
            highlight=False,
        )
    raise typer.Exit(code=1 if problems else 0)


@app.command()
def validate(
    files: Annotated[list[Path], typer.Argument(help="Workflow documents (YAML, JSON or XML)")],
    tools_dir: Annotated[
        Path | None, typer.Option(help="Tool configs to check calls against (default: registry)")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print violations as JSON")] = False,
    server: Annotated[
        str | None,
        typer.Option(help="Ask this running server instead (its tools and saved workflows)"),
    ] = None,
) -> None:
    """Validate workflow documents: every violation with its line; exit 1 on any error.

    Calls are checked against the registry's tools (names and arguments), sub-workflows
    against the given files and the registry's saved workflows: the server's verdict. With
    --server, a running server validates each file (POST /workflows/validate).
    """
    import json

    import httpx

    from dynamic_tools.cli.validate import validate_files, validate_on_server

    checked_tools = True
    if server is not None:
        if tools_dir is not None:
            console.print("[red]--tools-dir and --server exclude each other[/]")
            raise typer.Exit(code=2)
        try:
            results = validate_on_server(files, _client(server))
        except httpx.HTTPStatusError as exc:
            _print_error(exc.response)
            raise typer.Exit(code=1) from None
        except httpx.HTTPError as exc:
            console.print(f"[red]cannot reach the server: {type(exc).__name__}[/]")
            raise typer.Exit(code=1) from None
    else:
        settings = load_settings()
        directory = tools_dir or settings.tools_dir
        results = validate_files(files, settings=settings, tools_dir=directory)
        checked_tools = directory.is_dir()
    if as_json:
        console.print_json(json.dumps({str(k): v for k, v in results.items()}))
    else:
        for path, violations in results.items():
            _print_violations(path, violations, checked_tools=checked_tools)
    from dynamic_tools.violations import errors_only

    failed = any(errors_only(vs) for vs in results.values())
    raise typer.Exit(code=1 if failed else 0)


def _print_violations(
    path: Path, violations: list[dict[str, object]], *, checked_tools: bool
) -> None:
    from dynamic_tools.violations import errors_only, is_error

    errors = len(errors_only(violations))
    warnings = len(violations) - errors
    status = "[red]invalid[/]" if errors else "[green]valid[/]"
    console.print(
        f"{path}: {status} ({errors} error(s), {warnings} warning(s))"
        + ("" if checked_tools else " — tool names not checked (no tools directory)"),
        highlight=False,
        soft_wrap=True,
    )
    for v in violations:
        colour = "red" if is_error(v) else "yellow"
        where = f"line {v['line']}: " if v["line"] else ""
        console.print(
            f"  [{colour}]{v['severity']}[/] {where}{v['path']}: {v['message']} "
            f"[dim]({v['rule']})[/]",
            highlight=False,
            soft_wrap=True,
        )


def _client(server: str | None) -> RunsClient:
    from dynamic_tools.cli.runs import RunsClient

    settings = load_settings()
    token = settings.api_token.get_secret_value() if settings.api_token else None
    return RunsClient(server or settings.base_url, token)


@app.command()
def run(
    workflow: Annotated[str, typer.Argument(help="Workflow id")],
    param: Annotated[list[str] | None, typer.Option("-p", "--param", help="key=value")] = None,
    server: ServerOption = None,
    follow: Annotated[bool, typer.Option(help="Show progress until the run ends")] = True,
) -> None:
    """Start a workflow run on the server and show its progress live."""
    import httpx

    from dynamic_tools.cli.runs import describe_event, parse_params, print_run

    try:
        params = parse_params(param or [])
    except ValueError as exc:
        console.print(f"[red]{exc}[/]")
        raise typer.Exit(code=2) from None
    client = _client(server)
    try:
        started = client.start(workflow, params)
    except httpx.HTTPStatusError as exc:
        _print_error(exc.response)
        raise typer.Exit(code=1) from None
    except httpx.HTTPError as exc:
        console.print(f"[red]cannot reach the server: {type(exc).__name__}[/]")
        raise typer.Exit(code=1) from None
    run_id = started["run_id"]
    console.print(f"run [bold]{run_id}[/] started", highlight=False)
    if not follow:
        return
    with console.status(f"running {workflow}…"):
        for event in client.events(run_id):
            line = describe_event(event)
            if line:
                console.print(line, highlight=False)
    final = client.get(run_id)
    print_run(console, final)
    raise typer.Exit(code=0 if final["status"] == "succeeded" else 1)


@runs_app.command("list")
def runs_list(
    status: Annotated[str | None, typer.Option(help="Filter by status")] = None,
    workflow: Annotated[str | None, typer.Option(help="Filter by workflow id")] = None,
    server: ServerOption = None,
) -> None:
    """List runs, newest first."""
    from dynamic_tools.cli.runs import print_runs

    print_runs(console, _client(server).list(status=status, workflow_id=workflow))


@runs_app.command("show")
def runs_show(run_id: str, server: ServerOption = None) -> None:
    """Show one run with its nodes, result and error."""
    import httpx

    from dynamic_tools.cli.runs import print_run

    try:
        print_run(console, _client(server).get(run_id))
    except httpx.HTTPStatusError as exc:
        _print_error(exc.response)
        raise typer.Exit(code=1) from None


def _print_error(response: object) -> None:
    import httpx

    assert isinstance(response, httpx.Response)
    try:
        body = response.json()
    except ValueError:
        body = {"message": response.text}
    console.print(f"[red]{response.status_code}: {body.get('message', body)}[/]", highlight=False)
    for violation in body.get("violations", []):
        console.print(f"  {violation.get('path')}: {violation.get('message')}", highlight=False)


@app.command("export-arazzo")
def export_arazzo_command(
    workflow_id: Annotated[str, typer.Argument(help="The workflow to export")],
    out: Annotated[
        Path, typer.Option(help="Folder for <id>.arazzo.yaml and its OpenAPI description")
    ] = Path("."),
) -> None:
    """Write a workflow as an Arazzo 1.0 document, with an OpenAPI 3.1 description of its tools.

    What has no Arazzo equivalent (parallel, foreach, yield, compensation) is listed.
    """
    import yaml

    from dynamic_tools.bootstrap import load_definitions
    from dynamic_tools.definitions.arazzo.export import OPENAPI_FILE, export_arazzo
    from dynamic_tools.errors import DynamicToolsError

    registry, workflows = load_definitions(load_settings())
    try:
        workflows.workflow(workflow_id)
    except DynamicToolsError as exc:
        console.print(f"[red]{exc.code}[/]: {exc.message}", highlight=False)
        raise typer.Exit(code=1) from None
    export = export_arazzo(
        workflow_id,
        workflows.definitions(),
        registry.find,
        source=lambda name: registry.get_source(name) if registry.find(name) else None,
    )
    out.mkdir(parents=True, exist_ok=True)
    document = out / f"{workflow_id}.arazzo.yaml"
    document.write_text(yaml.safe_dump(export.arazzo, sort_keys=False), encoding="utf-8")
    (out / OPENAPI_FILE).write_text(yaml.safe_dump(export.openapi, sort_keys=False), "utf-8")
    console.print(f"wrote {document} and {out / OPENAPI_FILE}", highlight=False, soft_wrap=True)
    for warning in export.warnings:
        console.print(
            f"  [yellow]warning[/] {warning['path']}: {warning['message']}",
            highlight=False,
            soft_wrap=True,
        )
