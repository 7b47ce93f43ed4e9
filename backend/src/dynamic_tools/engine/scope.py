"""What a reference can name while a workflow runs: locals, params, outputs, yield answers."""

from __future__ import annotations

from typing import Any

from dynamic_tools.engine.state import FAILURE_NAME

__all__ = ["Scope"]


class Scope:
    """Names a reference can resolve to: locals (foreach), params, outputs, yield answers."""

    def __init__(
        self,
        *,
        params: dict[str, Any] | None = None,
        outputs: dict[str, Any] | None = None,
        yields: dict[str, Any] | None = None,
        local: dict[str, Any] | None = None,
        failure: dict[str, Any] | None = None,
    ) -> None:
        self.params = params or {}
        self.outputs = outputs or {}
        self.yields = yields or {}
        self.local = local or {}
        self.failure = failure

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

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (for child specs)."""
        return {
            "params": self.params,
            "outputs": self.outputs,
            "yields": self.yields,
            "local": self.local,
            "failure": self.failure,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Scope:
        """Inverse of :meth:`to_dict`."""
        return cls(
            params=data.get("params"),
            outputs=data.get("outputs"),
            yields=data.get("yields"),
            local=data.get("local"),
            failure=data.get("failure"),
        )
