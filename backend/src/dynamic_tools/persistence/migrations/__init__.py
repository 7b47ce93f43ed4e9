"""Alembic migrations of the run store (applied on start by ``persistence.db.migrate``)."""
