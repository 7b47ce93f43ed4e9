"""The run store of the persistence tests, on each database of the root ``engine`` fixture."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine

from dynamic_tools.persistence.run_store import RunStore


@pytest.fixture
def store(engine: Engine) -> RunStore:
    """A run store polling fast (tests wait on its streams)."""
    return RunStore(engine, poll_interval_s=0.05)
