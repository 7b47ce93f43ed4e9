"""Alembic environment: runs the migrations on the connection the application hands over.

``persistence.db.migrate`` passes its connection in ``config.attributes["connection"]``. Run by
hand (``alembic -c <ini> upgrade head``), it connects to the settings' database instead.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy.engine import Connection

from dynamic_tools.persistence.db import make_engine, metadata


def _run(connection: Connection) -> None:
    context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations() -> None:
    """Migrate online, on the given connection or on the settings' database."""
    connection = context.config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    from dynamic_tools.settings import get_settings

    engine = make_engine(get_settings().effective_database_url)
    try:
        with engine.begin() as own:
            _run(own)
    finally:
        engine.dispose()


run_migrations()
