"""Which run the current task executes, for the adapters the engine calls through its ports.

The launchers set :data:`current_run` (the root run's id) around the interpreter: the DBOS
workflow functions of a run and of its children, and the local launcher's task. The tool runner
reads it to find the run's tool scope (``tools/scope.py``) without the engine knowing of it.
"""

from __future__ import annotations

from contextvars import ContextVar

__all__ = ["current_run"]

current_run: ContextVar[str | None] = ContextVar("dynamic_tools_current_run", default=None)
