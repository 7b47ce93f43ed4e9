"""The database: engine, tables and migrations (SQLite by default, PostgreSQL by URL).

- ``make_engine(url)`` accepts the forms users write (``sqlite:///file``,
  ``postgresql://user@host/db``, ``postgres://...``) and picks the installed driver
  (psycopg 3 for PostgreSQL). SQLite gets WAL, a busy timeout and foreign keys; its write
  transactions start with ``BEGIN IMMEDIATE`` (see :func:`write_transaction`) so two writers
  never fail half-way on a stale snapshot.
- ``schema`` (PostgreSQL only) puts every table, and Alembic's version table, in that schema by
  setting ``search_path`` on each connection: tests use a unique schema per run.
- ``migrate(engine)`` brings the database to the newest revision (a new one is created from the
  tables here and stamped; an older one is upgraded with Alembic's API); the server calls it on
  start, so no manual step is needed. On PostgreSQL an advisory lock keeps replicas that start
  together from migrating twice.

The table definitions here are what queries use; the migrations under ``migrations/versions``
create the same tables (a test compares the two).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Column,
    DateTime,
    Dialect,
    Engine,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    UniqueConstraint,
    create_engine,
    event,
    inspect,
    text,
)
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.types import TypeDecorator, TypeEngine

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
_MIGRATION_LOCK_ID = 0x64796E746F6F6C  # pg_advisory_lock key: "dyntool"
_SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


class UtcDateTime(TypeDecorator[datetime]):
    """A timezone-aware UTC datetime on every backend (SQLite stores it naive, in UTC)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        """Store in UTC."""
        if value is None:
            return None
        aware = value if value.tzinfo else value.replace(tzinfo=UTC)
        utc = aware.astimezone(UTC)
        return utc.replace(tzinfo=None) if dialect.name == "sqlite" else utc

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        """Read back as an aware UTC datetime."""
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def json_type() -> TypeEngine[Any]:
    """JSON; on PostgreSQL ``json``, not ``jsonb``, which would lose key (node) order."""
    return JSON()


metadata = MetaData()

runs = Table(
    "runs",
    metadata,
    Column("run_id", String(64), primary_key=True),
    Column("workflow_id", String(128), nullable=False),
    Column("document_version", String(64), nullable=True),
    Column("status", String(16), nullable=False),
    Column("params", json_type(), nullable=False),
    Column("result", json_type(), nullable=True),
    Column("error", json_type(), nullable=True),
    Column("waiting", json_type(), nullable=True),
    Column("event_count", Integer, nullable=False),
    Column("created_at", UtcDateTime(), nullable=False),
    Column("updated_at", UtcDateTime(), nullable=False),
    Column("started_at", UtcDateTime(), nullable=True),
    Column("finished_at", UtcDateTime(), nullable=True),
    Column("redrive_of", String(64), nullable=True),
    # the principal who started the run (access/principals.py); earlier runs are the admin's
    Column("owner", String(255), nullable=False, server_default="admin"),
    # the traceparent of the span that started the run: the run span links to it
    Column("trace_link", String(64), nullable=True),
    # what started the run when it started itself (docs/triggers.md): a schedule's tick or a
    # webhook delivery; null for a run someone started
    Column("trigger_kind", String(16), nullable=True),
    Column("trigger_name", String(128), nullable=True),
    Column("trigger_time", UtcDateTime(), nullable=True),
    Index("ix_runs_workflow_id", "workflow_id"),
    Index("ix_runs_workflow_id_created_at", "workflow_id", "created_at"),
    Index("ix_runs_status_created_at", "status", "created_at"),
    Index("ix_runs_trigger_name_created_at", "trigger_name", "created_at"),
    Index("ix_runs_finished_at", "finished_at"),
    Index("ix_runs_owner_created_at", "owner", "created_at"),
    Index("ix_runs_status", "status"),
    Index("ix_runs_created_at", "created_at"),
    # the run search's counts over a time range read this index alone (run_search.py)
    Index(
        "ix_runs_created_at_status_workflow_id_owner",
        "created_at",
        "status",
        "workflow_id",
        "owner",
    ),
)

# One row per node of a run (``run_view.py``): an event reads and writes only its node's row.
# ``ordinal`` keeps the order nodes appear in (the graph's, then children as they start).
run_nodes = Table(
    "run_nodes",
    metadata,
    Column(
        "run_id",
        String(64),
        ForeignKey("runs.run_id", ondelete="CASCADE", name="fk_run_nodes_run_id"),
        primary_key=True,
    ),
    Column("node_id", String(1024), primary_key=True),
    Column("ordinal", Integer, nullable=False),
    Column("state", json_type(), nullable=False),
    Index("ix_run_nodes_run_id_ordinal", "run_id", "ordinal"),
)

# How each finished item of a durable fan-out in flight ended (``item_journal.py``): a fan-out
# of repeatable steps runs in its parent's workflow, and a run recovered mid-way starts only
# the items not found here.
run_items = Table(
    "run_items",
    metadata,
    Column(
        "run_id",
        String(64),
        ForeignKey("runs.run_id", ondelete="CASCADE", name="fk_run_items_run_id"),
        primary_key=True,
    ),
    Column("fan_out", String(1024), primary_key=True),
    Column("item", Integer, primary_key=True),
    Column("outcome", json_type(), nullable=False),
)

# What a run started by an MCP session may call beyond the registry (``run_scopes.py``): the
# session's operations and core-tool prefix as JSON, its outbound headers sealed (Fernet).
run_scopes = Table(
    "run_scopes",
    metadata,
    Column(
        "run_id",
        String(64),
        ForeignKey("runs.run_id", ondelete="CASCADE", name="fk_run_scopes_run_id"),
        primary_key=True,
    ),
    Column("scope", json_type(), nullable=False),
    Column("sealed_headers", Text(), nullable=True),
)

# The top-level scalar params and outputs of each run, as text (``run_search.py``): a search for
# ``params.passenger=Ada`` reads this index, not every run's JSON.
run_values = Table(
    "run_values",
    metadata,
    Column(
        "run_id",
        String(64),
        ForeignKey("runs.run_id", ondelete="CASCADE", name="fk_run_values_run_id"),
        primary_key=True,
    ),
    Column("scope", String(8), primary_key=True),  # "params" or "output"
    Column("name", String(128), primary_key=True),
    Column("value", String(256), nullable=False),
    Index("ix_run_values_lookup", "scope", "name", "value"),
)

# Each tick of a schedule, claimed once whichever replica reaches it first (``trigger_store.py``):
# the unique key is what makes a tick fire once across replicas and restarts.
trigger_ticks = Table(
    "trigger_ticks",
    metadata,
    Column("workflow_id", String(128), primary_key=True),
    Column("trigger_name", String(128), primary_key=True),
    Column("tick_at", UtcDateTime(), primary_key=True),
    # claimed (its run is being started) | started | skipped | buffered | failed
    Column("outcome", String(16), nullable=False),
    Column("reason", String(255), nullable=True),
    Column("run_id", String(64), nullable=True),
    Column("recorded_at", UtcDateTime(), nullable=False),
    Index("ix_trigger_ticks_outcome", "outcome"),
)

# A schedule's state beside its document: paused or not, and the last tick it has dealt with.
trigger_states = Table(
    "trigger_states",
    metadata,
    Column("workflow_id", String(128), primary_key=True),
    Column("trigger_name", String(128), primary_key=True),
    Column("paused", Integer, nullable=False, server_default="0"),
    Column("last_tick", UtcDateTime(), nullable=True),
    Column("updated_at", UtcDateTime(), nullable=False),
    Column("updated_by", String(255), nullable=True),
)

# Webhook deliveries received (``trigger_store.py``): the delivery id is the run's idempotency
# key; the body's digest tells a redelivery from a reused id.
webhook_deliveries = Table(
    "webhook_deliveries",
    metadata,
    Column("workflow_id", String(128), primary_key=True),
    Column("hook", String(128), primary_key=True),
    Column("delivery_id", String(255), primary_key=True),
    Column("body_sha256", String(64), nullable=False),
    Column("run_id", String(64), nullable=True),
    Column("outcome", String(16), nullable=False),  # claimed | started | filtered
    Column("received_at", UtcDateTime(), nullable=False),
)

run_events = Table(
    "run_events",
    metadata,
    Column(
        "run_id",
        String(64),
        ForeignKey("runs.run_id", ondelete="CASCADE", name="fk_run_events_run_id"),
        primary_key=True,
    ),
    Column("position", Integer, primary_key=True),
    Column("seq", Integer, nullable=False),
    Column("source", String(1024), nullable=False),
    Column("type", String(64), nullable=False),
    Column("data", json_type(), nullable=False),
    Column("at", UtcDateTime(), nullable=False),
    UniqueConstraint("run_id", "seq", "source", name="uq_run_events_run_seq_source"),
)


# Markdown workflow sessions (``persistence/markdown_store.py``): one row per session, the whole
# session state as JSON, ``revision`` counting its changes.
markdown_sessions = Table(
    "markdown_sessions",
    metadata,
    Column("session_id", String(255), primary_key=True),
    Column("status", String(16), nullable=False),
    Column("title", String(512), nullable=True),
    Column("state", json_type(), nullable=False),
    Column("revision", Integer, nullable=False),
    Column("created_at", UtcDateTime(), nullable=False),
    Column("updated_at", UtcDateTime(), nullable=False),
    Column("owner", String(255), nullable=False, server_default="admin"),
    Index("ix_markdown_sessions_updated_at", "updated_at"),
)


# Recipes (``persistence/recipe_store.py``, MCP layer 2): a learned call of one tool, scoped to
# the API it was learned on, kept while the tool's schema hash is unchanged.
recipes = Table(
    "recipes",
    metadata,
    Column("recipe_id", String(64), primary_key=True),
    Column("scope", String(64), nullable=False),
    Column("name", String(128), nullable=False),
    Column("tool", String(128), nullable=False),
    Column("fixed", json_type(), nullable=False),
    Column("parameters", json_type(), nullable=False),
    Column("schema_hash", String(64), nullable=False),
    Column("question", String(2000), nullable=False),
    Column("uses", Integer, nullable=False),
    Column("created_at", UtcDateTime(), nullable=False),
    Column("verified_at", UtcDateTime(), nullable=False),
    Column("owner", String(255), nullable=False, server_default="admin"),
    UniqueConstraint("scope", "name", name="uq_recipes_scope_name"),
)


# MCP Tasks (``persistence/task_store.py``): who created each task (its owner), the ttl it was
# given and what the task itself decided (a failure or cancellation before or beside its run).
# ``run_id`` is the run the task follows once it has one; the run's status decides the rest.
mcp_tasks = Table(
    "mcp_tasks",
    metadata,
    Column("task_id", String(64), primary_key=True),
    Column("owner", String(255), nullable=False),
    Column("tool", String(128), nullable=False),
    Column("run_id", String(64), nullable=True),
    Column("status", String(16), nullable=False),
    Column("stage", String(255), nullable=False),
    Column("failure", json_type(), nullable=True),
    Column("ttl_ms", BigInteger, nullable=True),
    Column("expires_at", UtcDateTime(), nullable=True),
    Column("executor", String(64), nullable=False),
    Column("created_at", UtcDateTime(), nullable=False),
    Column("updated_at", UtcDateTime(), nullable=False),
    Index("ix_mcp_tasks_owner_created_at", "owner", "created_at"),
    Index("ix_mcp_tasks_expires_at", "expires_at"),
    Index("ix_mcp_tasks_run_id", "run_id"),
)


# API keys (``access/keys.py``): a key is shown once; only a salted SHA-256 digest of its
# secret part is kept. Revocation and expiry are read at each use, so every replica refuses a
# revoked key at once.
api_keys = Table(
    "api_keys",
    metadata,
    Column("key_id", String(32), primary_key=True),
    Column("name", String(128), nullable=False),
    Column("scopes", json_type(), nullable=False),
    Column("salt", String(64), nullable=False),
    Column("digest", String(128), nullable=False),
    Column("created_by", String(255), nullable=False),
    Column("created_at", UtcDateTime(), nullable=False),
    Column("expires_at", UtcDateTime(), nullable=True),
    Column("revoked_at", UtcDateTime(), nullable=True),
    Column("last_used_at", UtcDateTime(), nullable=True),
    Index("ix_api_keys_name", "name"),
)


# The audit log (``access/audit.py``): every authoring and destructive action and every key or
# credential change — who, what, on what, when, how it ended, and the request's correlation id.
audit_log = Table(
    "audit_log",
    metadata,
    Column("entry_id", Integer, primary_key=True, autoincrement=True),
    Column("at", UtcDateTime(), nullable=False),
    Column("principal", String(255), nullable=False),
    Column("action", String(64), nullable=False),
    Column("target", String(1024), nullable=False),
    Column("outcome", String(32), nullable=False),
    Column("correlation_id", String(64), nullable=True),
    Column("detail", json_type(), nullable=True),
    Index("ix_audit_log_at", "at"),
    Index("ix_audit_log_principal_at", "principal", "at"),
    Index("ix_audit_log_action_at", "action", "at"),
)


def normalize_url(url: str) -> str:
    """A SQLAlchemy URL with an installed driver (``postgresql://`` → psycopg 3)."""
    if url.startswith("postgres://"):
        url = "postgresql://" + url[len("postgres://") :]
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url[len("postgresql://") :]
    return url


def make_engine(url: str, *, schema: str | None = None, pool_size: int | None = None) -> Engine:
    """An engine for ``url``; ``schema`` (PostgreSQL) holds every table.

    ``pool_size`` (PostgreSQL): at most this many connections, none beyond it (a request then
    waits up to 30 s for one); None keeps SQLAlchemy's 5, plus 10 under load.
    """
    url = normalize_url(url)
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})
        _sqlite_setup(engine)
        return engine
    sizing: dict[str, Any] = {}
    if pool_size is not None:
        sizing = {"pool_size": pool_size, "max_overflow": 0, "pool_timeout": 30}
    engine = create_engine(url, pool_pre_ping=True, **sizing)
    if schema is not None:
        if not _SCHEMA_NAME.match(schema):
            raise ValueError(f"'{schema}' is not a plain lower-case schema name")

        @event.listens_for(engine, "connect")
        def _search_path(dbapi_connection: Any, _record: Any) -> None:
            with dbapi_connection.cursor() as cursor:
                cursor.execute(f"SET search_path TO {schema}")
            dbapi_connection.commit()

    return engine


def _sqlite_setup(engine: Engine) -> None:
    """WAL, busy timeout, foreign keys; transactions begun by us (the pysqlite recipe)."""

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # let the "begin" hook issue BEGIN
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(connection: Connection) -> None:
        immediate = connection.get_execution_options().get("dt_write", False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


@contextmanager
def write_transaction(engine: Engine) -> Iterator[Connection]:
    """A transaction meant to write: SQLite takes its write lock at BEGIN (no stale reads)."""
    with engine.connect() as connection:
        connection.execution_options(dt_write=True)
        with connection.begin():
            yield connection


HEAD_REVISION = "0012"
"""The newest migration (``migrations/versions``); a test checks it is Alembic's head."""


def alembic_config(connection: Connection | None = None) -> Config:
    """Alembic's configuration for the packaged migrations (``connection`` handed to env.py)."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


_versions = MetaData()
alembic_version = Table(
    "alembic_version",
    _versions,
    Column("version_num", String(32), nullable=False),
    PrimaryKeyConstraint("version_num", name="alembic_version_pkc"),
)
"""Alembic's version table, as Alembic makes it (a new database is stamped without Alembic)."""


def migrate(engine: Engine) -> None:
    """Bring the database to the newest revision (idempotent).

    A database already at :data:`HEAD_REVISION` is left alone (a restart costs one query). A new
    one, holding none of these tables, gets them as the migrations leave them (``create_all``,
    then Alembic's version table stamped at head; a test compares both ways). Only a database
    at an older revision loads Alembic and upgrades: the server does not keep Alembic in memory
    otherwise, and a first start is faster.
    """
    if _revision(engine) == HEAD_REVISION:
        return
    with write_transaction(engine) as connection:
        if connection.dialect.name == "postgresql":
            lock = text("SELECT pg_advisory_xact_lock(:key)")
            connection.execute(lock, {"key": _MIGRATION_LOCK_ID})
        ours = {table.name for table in metadata.sorted_tables} | {alembic_version.name}
        if ours.isdisjoint(inspect(connection).get_table_names()):
            metadata.create_all(connection)
            alembic_version.create(connection)
            connection.execute(alembic_version.insert().values(version_num=HEAD_REVISION))
        else:
            _upgrade(connection)


def upgrade_with_alembic(engine: Engine) -> None:
    """Run the migrations with Alembic, whatever the database holds.

    Tests compare what it makes with what :func:`migrate` makes of a new database.
    """
    with write_transaction(engine) as connection:
        _upgrade(connection)


def _upgrade(connection: Connection) -> None:
    from alembic import command

    command.upgrade(alembic_config(connection), "head")


def _revision(engine: Engine) -> str | None:
    """The database's Alembic revision, or None (a new database, or no version table yet)."""
    try:
        with engine.connect() as connection:
            found = connection.execute(text("SELECT version_num FROM alembic_version")).first()
    except SQLAlchemyError:
        return None
    return None if found is None else str(found[0])


def ping(engine: Engine) -> None:
    """Run ``SELECT 1`` (readiness); raises when the database does not answer."""
    with engine.connect() as connection:
        connection.execute(text("SELECT 1"))


def utc_now() -> datetime:
    """The current time, aware, in UTC."""
    return datetime.now(UTC)
