"""What one call node needs from the run around it, and nothing more."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from dynamic_tools.engine.events import Event
from dynamic_tools.engine.ports import StepRunner, ToolRunner
from dynamic_tools.engine.state import NodeState

__all__ = ["CallContext"]


@dataclass(frozen=True)
class CallContext:
    """The run-side collaborators of :func:`~dynamic_tools.engine.tool_calls.call_with_retries`.

    ``state`` is the node's state (attempts and retry detail are written there); ``emit``
    sends a run event; ``base_url`` is the document's, for ``rest_call`` without one.
    """

    run_id: str
    tools: ToolRunner
    steps: StepRunner
    emit: Callable[[Event], Awaitable[None]]
    state: NodeState
    base_url: str | None = None
