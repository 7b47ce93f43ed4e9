"""SQLAlchemy stores (runs and their events) and the Alembic migrations that create them."""
