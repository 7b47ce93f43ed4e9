"""The saga: compensations registered by successful calls, undone newest first on failure.

A call with ``compensate_with`` registers its (rendered) compensation when it succeeds. When
the run fails, times out or is cancelled, the registered compensations run newest first,
unless a compensate node already handled the failure. Calls inside parallel branches and
foreach items register theirs in the child, which hands them to the parent however it ends;
the parent appends them in branch / item order, after what it had registered before the
fan-out, so they are undone first, the last branch or item first.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["Compensation", "Saga"]


@dataclass(frozen=True)
class Compensation:
    """One registered undo: the call to make, with its rendered arguments.

    Journaled inside a child's result (:func:`~dynamic_tools.engine.journal.to_json`).
    """

    node_id: str
    call: str
    args: Any
    ignore_error: bool = False


class Saga:
    """The compensations of one run (or one child), in registration order."""

    def __init__(self) -> None:
        self._entries: list[Compensation] = []

    def register(self, compensation: Compensation) -> None:
        """Add the undo of a call that just succeeded."""
        self._entries.append(compensation)

    def extend(self, compensations: Iterable[Compensation]) -> None:
        """Take over what a child registered (after everything registered so far)."""
        self._entries.extend(compensations)

    def newest_first(self) -> Iterator[Compensation]:
        """The order in which they are undone."""
        return reversed(self._entries)

    @property
    def entries(self) -> list[Compensation]:
        """Every compensation, oldest first (a copy)."""
        return list(self._entries)

    def __len__(self) -> int:
        return len(self._entries)
