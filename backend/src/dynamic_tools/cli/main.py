"""``dynamic-tools``: serve the app, list tools, check tool files."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from dynamic_tools.settings import Settings

app = typer.Typer(
    help="Dynamic Tools: HTTP APIs as tools that LLMs use correctly.", no_args_is_help=True
)
tools_app = typer.Typer(help="Inspect the tool registry.", no_args_is_help=True)
app.add_typer(tools_app, name="tools")
console = Console()


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Interface (default: HOST or 127.0.0.1)")] = None,
    port: Annotated[int | None, typer.Option(help="Port (default: PORT or 8000)")] = None,
) -> None:
    """Serve the REST API, the demo API and the docs."""
    import uvicorn

    from dynamic_tools.api.app import create_app

    overrides = {k: v for k, v in {"host": host, "port": port}.items() if v is not None}
    settings = Settings(**overrides)  # type: ignore[arg-type]
    console.print(
        f"Dynamic Tools on [bold]{settings.base_url}[/] — docs at {settings.base_url}/docs",
        highlight=False,
    )
    uvicorn.run(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        log_config=None,
        access_log=False,
    )


@tools_app.command("list")
def list_tools(
    directory: Annotated[
        Path | None, typer.Option(help="A tools directory to read instead")
    ] = None,
) -> None:
    """List the registered tools and any problems in tool files."""
    from dynamic_tools.tools.registry import ToolRegistry

    settings = Settings()
    registry = ToolRegistry(
        directory or settings.tools_dir, variables=settings.template_variables()
    )
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
) -> None:
    """Validate workflow documents: every violation with its line; exit 1 on any error."""
    import json

    from dynamic_tools.cli.validate import validate_files

    settings = Settings()
    directory = tools_dir or settings.tools_dir
    results = validate_files(files, tools_dir=directory, variables=settings.template_variables())
    if as_json:
        console.print_json(json.dumps({str(k): v for k, v in results.items()}))
    else:
        for path, violations in results.items():
            _print_violations(path, violations, checked_tools=directory.is_dir())
    failed = any(v["severity"] == "error" for vs in results.values() for v in vs)
    raise typer.Exit(code=1 if failed else 0)


def _print_violations(
    path: Path, violations: list[dict[str, object]], *, checked_tools: bool
) -> None:
    errors = sum(1 for v in violations if v["severity"] == "error")
    warnings = len(violations) - errors
    status = "[red]invalid[/]" if errors else "[green]valid[/]"
    console.print(
        f"{path}: {status} ({errors} error(s), {warnings} warning(s))"
        + ("" if checked_tools else " — tool names not checked (no tools directory)"),
        highlight=False,
        soft_wrap=True,
    )
    for v in violations:
        colour = "red" if v["severity"] == "error" else "yellow"
        where = f"line {v['line']}: " if v["line"] else ""
        console.print(
            f"  [{colour}]{v['severity']}[/] {where}{v['path']}: {v['message']} "
            f"[dim]({v['rule']})[/]",
            highlight=False,
            soft_wrap=True,
        )
