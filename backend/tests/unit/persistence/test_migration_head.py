"""The revision a database at head has is the newest migration (restarts skip Alembic by it)."""

from __future__ import annotations

import sys
from pathlib import Path

from alembic.script import ScriptDirectory
from sqlalchemy import text

from dynamic_tools.persistence.db import HEAD_REVISION, alembic_config, make_engine, migrate


def test_head_revision_is_alembics_head() -> None:
    assert ScriptDirectory.from_config(alembic_config()).get_current_head() == HEAD_REVISION


def test_a_database_at_head_is_not_migrated_again(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'runs.sqlite'}")
    migrate(engine)
    with engine.connect() as conn:
        version = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
    assert version == HEAD_REVISION
    for name in [m for m in sys.modules if m == "alembic.command"]:
        del sys.modules[name]
    migrate(engine)  # one query: at head
    assert "alembic.command" not in sys.modules
    engine.dispose()
