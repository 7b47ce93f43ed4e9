"""``dynamic-tools import-openapi SOURCE --catalog NAME``: import an OpenAPI catalog locally.

``import-graphql SCHEMA --catalog NAME --endpoint URL`` imports a GraphQL schema the same way;
``import-arazzo DOCUMENT --catalog NAME`` an Arazzo document (its workflows too).

Runs the catalog service on this machine's registry root (``REGISTRY_CONFIG_PATH``): the
document is validated, then ``catalogs/<name>.yaml`` and its tool manifest are written. The
operator may name any local file; URLs are fetched only from hosts the outbound guard allows.
A running server sees the new tools after ``POST /tools/_reload`` or a restart.
"""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any

import typer
from rich.console import Console

console = Console()
MAX_WARNINGS_SHOWN = 20


def import_graphql_command(
    source: Annotated[str, typer.Argument(help="Path or http(s) URL of the schema (SDL or JSON)")],
    catalog: Annotated[str, typer.Option("--catalog", help="Catalog name")],
    endpoint: Annotated[str, typer.Option(help="The GraphQL endpoint's URL")],
    prefix: Annotated[str | None, typer.Option(help="Prefix for the tool names")] = None,
    overwrite: Annotated[bool, typer.Option(help="Replace an existing catalog")] = False,
    include: Annotated[
        list[str] | None, typer.Option(help="Only this root field; repeatable")
    ] = None,
    enabled: Annotated[bool, typer.Option(help="Register the tools at once")] = True,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON")] = False,
) -> None:
    """Import a GraphQL schema as a tool catalog: each root field becomes a tool."""
    import_openapi_command(
        source,
        catalog,
        prefix=prefix,
        overwrite=overwrite,
        base_url=endpoint,
        include=include,
        enabled=enabled,
        as_json=as_json,
    )


def import_openapi_command(
    source: Annotated[str, typer.Argument(help="Path or http(s) URL of the OpenAPI document")],
    catalog: Annotated[str, typer.Option("--catalog", help="Catalog name")],
    prefix: Annotated[str | None, typer.Option(help="Prefix for the tool names")] = None,
    overwrite: Annotated[bool, typer.Option(help="Replace an existing catalog")] = False,
    base_url: Annotated[
        str | None, typer.Option(help="API base URL instead of the document's servers")
    ] = None,
    include: Annotated[
        list[str] | None,
        typer.Option(help="Only this operation (operationId or 'GET /path'); repeatable"),
    ] = None,
    enabled: Annotated[bool, typer.Option(help="Register the tools at once")] = True,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON")] = False,
) -> None:
    """Import an OpenAPI 2.0/3.0/3.1 document as a tool catalog."""
    _run_import(
        as_json,
        source,
        catalog,
        prefix=prefix,
        overwrite=overwrite,
        base_url=base_url,
        include=include or None,
        enabled=enabled,
    )


def import_arazzo_command(
    source: Annotated[str, typer.Argument(help="Path or http(s) URL of the Arazzo document")],
    catalog: Annotated[str, typer.Option("--catalog", help="Catalog name")],
    lenient: Annotated[
        bool,
        typer.Option(help="Read the shortcuts some runners accept, each reported as a warning"),
    ] = False,
    base_url: Annotated[
        str | None, typer.Option(help="API base URL instead of the sources' servers")
    ] = None,
    source_at: Annotated[
        list[str] | None,
        typer.Option(
            "--source", help="Read a source description elsewhere: NAME=PATH_OR_URL; repeatable"
        ),
    ] = None,
    overwrite: Annotated[bool, typer.Option(help="Replace an existing catalog")] = False,
    workflow: Annotated[
        list[str] | None,
        typer.Option(
            "--workflow",
            help="Import only this workflow (its Arazzo id); repeatable. Default: every one "
            "that can be converted",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON")] = False,
) -> None:
    """Import an Arazzo 1.0 document: its operations as tools, its workflows as w_* workflows."""
    sources: dict[str, str] = {}
    for item in source_at or []:
        name, sep, where = item.partition("=")
        if not sep or not name or not where:
            console.print(f"[red]invalid_input[/]: --source '{item}' is not NAME=PATH_OR_URL")
            raise typer.Exit(code=2)
        sources[name] = where
    _run_import(
        as_json,
        source,
        catalog,
        overwrite=overwrite,
        base_url=base_url,
        lenient=lenient,
        sources=sources or None,
        workflows=workflow or None,
    )


def _run_import(as_json: bool, source: str, catalog: str, **options: Any) -> None:
    from dynamic_tools.errors import DynamicToolsError

    try:
        result = asyncio.run(_import(source, catalog, **options))
    except DynamicToolsError as exc:
        if as_json:
            console.print_json(json.dumps(exc.to_dict()))
        else:
            console.print(f"[red]{exc.code}[/]: {exc.message}", highlight=False, soft_wrap=True)
            for violation in getattr(exc, "violations", [])[:MAX_WARNINGS_SHOWN]:
                console.print(
                    f"  {violation.get('path')}: {violation.get('message')}",
                    highlight=False,
                    soft_wrap=True,
                )
        raise typer.Exit(code=1) from None
    if as_json:
        console.print_json(json.dumps(result))
        return
    _print_result(result)


async def _import(source: str, catalog: str, **options: Any) -> dict[str, Any]:
    from dynamic_tools.bootstrap import (
        load_definitions,
        make_catalogs,
        make_guard,
        make_http_client,
    )
    from dynamic_tools.cli.main import load_settings

    settings = load_settings()
    registry, workflows = load_definitions(settings)
    async with make_http_client(settings) as client:
        # The server's guard (allow-list, mode, its own address); local files anywhere the
        # user can read: the CLI runs as the user, on their own files.
        service = make_catalogs(
            settings,
            registry=registry,
            guard=make_guard(settings),
            http_client=client,
            any_local_path=True,
            workflows=workflows,
        )
        imported = await service.import_openapi(source, catalog, **options)
        return imported.model_dump(mode="json")


def _print_result(result: dict[str, Any]) -> None:
    console.print(
        f"[green]imported[/] catalog [bold]{result['catalog_id']}[/]: "
        f"{result['command_count']} tools, {result['provider_contract_count']} provider "
        f"contracts, {len(result['warnings'])} warnings",
        highlight=False,
    )
    console.print(f"  config:   {result['catalog_path']}", highlight=False, soft_wrap=True)
    console.print(f"  manifest: {result['manifest_path']}", highlight=False, soft_wrap=True)
    if result.get("workflow_file"):
        console.print(
            f"  workflows: {', '.join(result.get('workflows') or [])} "
            f"(in {result['workflow_file']})",
            highlight=False,
            soft_wrap=True,
        )
    for left in result.get("left_out") or []:
        why = left["problems"][0]["message"] if left["problems"] else "not chosen"
        console.print(
            f"  [yellow]left out[/] workflow {left['workflow_id']}: {why}",
            highlight=False,
            soft_wrap=True,
        )
    for warning in result["warnings"][:MAX_WARNINGS_SHOWN]:
        console.print(
            f"  [yellow]warning[/] {warning['path']}: {warning['message']}",
            highlight=False,
            soft_wrap=True,
        )
    hidden = len(result["warnings"]) - MAX_WARNINGS_SHOWN
    if hidden > 0:
        console.print(f"  … {hidden} more warnings (use --json)", highlight=False)
    console.print("A running server loads it after POST /tools/_reload or a restart.")
