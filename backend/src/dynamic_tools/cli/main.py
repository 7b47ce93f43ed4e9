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
