"""``dynamic-tools keys``: create, list and revoke API keys, on the server's database.

The operator's commands work on the database directly (``DATABASE_URL``, or the SQLite file in
``DATA_DIR``), so the first key can be made before any credential exists; every change is in
the audit log as the operator's (``cli``). A key is printed once, at creation: only a salted
digest is kept.
"""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from dynamic_tools.access.audit import AuditLog
from dynamic_tools.access.keys import ApiKeyStore, parse_expiry
from dynamic_tools.access.principals import parse_scopes
from dynamic_tools.errors import DynamicToolsError
from dynamic_tools.persistence.db import make_engine, migrate, utc_now
from dynamic_tools.settings import Settings

keys_app = typer.Typer(help="Create, list and revoke API keys.", no_args_is_help=True)
OPERATOR = "cli"
console = Console()


def _stores(settings: Settings) -> tuple[ApiKeyStore, AuditLog]:
    engine = make_engine(settings.effective_database_url)
    migrate(engine)
    return ApiKeyStore(engine), AuditLog(engine)


def _fail(message: str) -> typer.Exit:
    Console(stderr=True, soft_wrap=True).print(f"[red]error:[/] {message}", highlight=False)
    return typer.Exit(1)


def _settings() -> Settings:
    from dynamic_tools.cli.main import load_settings

    return load_settings()


@keys_app.command("create")
def create(
    name: Annotated[str, typer.Option(help="What the key is for, e.g. ci")],
    scopes: Annotated[str, typer.Option(help="Comma-separated: read, run, author, admin")],
    expires: Annotated[
        str | None, typer.Option(help="Lifetime, e.g. 30d, 12h, 90m, 2w (default: none)")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON")] = False,
) -> None:
    """Create a key and print it once (store it now: it cannot be shown again)."""
    keys, audit = _stores(_settings())
    try:
        key, text = keys.create_sync(
            name=name,
            scopes=parse_scopes(scopes),
            created_by=OPERATOR,
            expires_at=parse_expiry(expires),
        )
    except ValueError as exc:
        raise _fail(str(exc)) from None
    except DynamicToolsError as exc:
        raise _fail(exc.message) from None
    audit.record_sync(
        principal=OPERATOR, action="keys create", target=f"key_id={key.key_id}", outcome="ok"
    )
    if as_json:
        print(json.dumps({**key.to_dict(), "key": text}))
        return
    console.print(f"[bold]{text}[/]", soft_wrap=True, highlight=False)
    console.print(
        f"key {key.key_id} '{key.name}', scopes {', '.join(sorted(s.value for s in key.scopes))}"
        + (f", expires {key.expires_at.isoformat()}" if key.expires_at else "")
        + " — shown once: store it now",
        highlight=False,
    )


@keys_app.command("list")
def list_keys(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON")] = False,
) -> None:
    """Every key: name, scopes, created, last used, expiry, state (never the key)."""
    keys, _ = _stores(_settings())
    now = utc_now()
    found = [k.to_dict(now) for k in keys.list_sync()]
    if as_json:
        print(json.dumps(found))
        return
    table = Table("id", "name", "scopes", "created", "last used", "expires", "state")
    for key in found:
        table.add_row(
            key["key_id"],
            key["name"],
            ",".join(key["scopes"]),
            key["created_at"][:19],
            (key["last_used_at"] or "never")[:19],
            (key["expires_at"] or "never")[:19],
            key["state"],
        )
    console.print(table)


@keys_app.command("revoke")
def revoke(
    key: Annotated[str, typer.Argument(help="The key's id, or its name (the newest active one)")],
) -> None:
    """Revoke a key: refused at once by every server sharing the database."""
    keys, audit = _stores(_settings())
    try:
        revoked = keys.revoke_sync(key)
    except DynamicToolsError as exc:
        raise _fail(exc.message) from None
    audit.record_sync(
        principal=OPERATOR, action="keys revoke", target=f"key_id={revoked.key_id}", outcome="ok"
    )
    console.print(f"revoked key {revoked.key_id} '{revoked.name}'", highlight=False)
