"""What a reference can name while a workflow runs: locals, params, outputs, yield answers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dynamic_tools.engine.state import FAILURE_NAME

__all__ = ["Scope"]


@dataclass(eq=False)
class Scope:
    """Names a reference can resolve to: locals (foreach), params, outputs, yield answers.

    A child's spec journals it (:func:`~dynamic_tools.engine.journal.to_json`): one key per
    field, ``failure`` null unless a fallback is running.
    """

    params: dict[str, Any] = field(default_factory=dict)
    outputs: dict[str, Any] = field(default_factory=dict)
    yields: dict[str, Any] = field(default_factory=dict)
    local: dict[str, Any] = field(default_factory=dict)
    failure: dict[str, Any] | None = None

    def lookup(self, name: str) -> Any:
        """The value of ``name``; KeyError when nothing has that name.

        ``error`` is, after everything else, the failure that activated the last fallback.
        """
        for space in (self.local, self.params, self.outputs, self.yields):
            if name in space:
                return space[name]
        if name == FAILURE_NAME and self.failure is not None:
            return self.failure
        raise KeyError(name)

    def set_output(self, name: str | None, value: Any) -> None:
        """Store a node's output under its declared name."""
        if name:
            self.outputs[name] = value

    def with_local(self, name: str, value: Any) -> Scope:
        """A copy with one more local variable."""
        return Scope(
            params=self.params,
            outputs=dict(self.outputs),
            yields=self.yields,
            local={**self.local, name: value},
            failure=self.failure,
        )

    def copy(self) -> Scope:
        """A copy a child starts from: what it names is the parent's, what it sets its own.

        The same as the child of a durable run gets, which decodes its own from the journal.
        """
        return Scope(
            params=self.params,
            outputs=dict(self.outputs),
            yields=self.yields,
            local=dict(self.local),
            failure=self.failure,
        )
