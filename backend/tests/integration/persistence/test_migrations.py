"""A new database is made from the table definitions and stamped at head; an older one is
upgraded by Alembic. Both ways give exactly the tables the definitions describe, on SQLite and
PostgreSQL, and later migrations apply to a database made either way."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import Engine, inspect, text

from dynamic_tools.persistence.db import (
    HEAD_REVISION,
    alembic_config,
    metadata,
    migrate,
    upgrade_with_alembic,
    write_transaction,
)


def _revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        return conn.execute(text("SELECT version_num FROM alembic_version")).scalar()


def _schema(engine: Engine) -> dict[str, object]:
    """Tables with their columns (name, type, nullability), indexes and unique constraints."""
    with engine.connect() as conn:
        found = inspect(conn)
        return {
            table: {
                "columns": [
                    (c["name"], str(c["type"]), c["nullable"]) for c in found.get_columns(table)
                ],
                "pk": found.get_pk_constraint(table)["constrained_columns"],
                "indexes": sorted(
                    (i["name"], tuple(i["column_names"]), bool(i["unique"]))
                    for i in found.get_indexes(table)
                ),
                "fks": sorted(
                    (tuple(f["constrained_columns"]), f["referred_table"])
                    for f in found.get_foreign_keys(table)
                ),
            }
            for table in sorted(found.get_table_names())
        }


def test_a_new_database_is_made_as_the_migrations_make_it(blank_engine: Engine) -> None:
    migrate(blank_engine)
    assert _revision(blank_engine) == HEAD_REVISION
    with blank_engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), metadata) == []
    made = _schema(blank_engine)
    with write_transaction(blank_engine) as conn:  # the same database, now through Alembic
        for table in [*reversed(metadata.sorted_tables)]:
            conn.execute(text(f"DROP TABLE {table.name}"))
        conn.execute(text("DROP TABLE alembic_version"))
    upgrade_with_alembic(blank_engine)
    assert _revision(blank_engine) == HEAD_REVISION
    with blank_engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), metadata) == []
    assert _schema(blank_engine) == made


def test_a_database_made_new_takes_alembics_downgrade_and_upgrade(blank_engine: Engine) -> None:
    migrate(blank_engine)
    with write_transaction(blank_engine) as conn:
        command.downgrade(alembic_config(conn), "-1")
    assert _revision(blank_engine) != HEAD_REVISION
    migrate(blank_engine)  # an older database: upgraded by Alembic
    assert _revision(blank_engine) == HEAD_REVISION
    with blank_engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), metadata) == []


def test_making_a_new_database_does_not_load_alembic(tmp_path: Path) -> None:
    probe = textwrap.dedent(
        """
        import sys
        from dynamic_tools.persistence.db import make_engine, migrate
        migrate(make_engine(sys.argv[1]))
        print(sorted(m for m in sys.modules if m.split(".")[0] in {"alembic", "mako"}))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, f"sqlite:///{tmp_path / 'new.sqlite'}"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"
