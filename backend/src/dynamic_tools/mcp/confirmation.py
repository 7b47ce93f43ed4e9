"""Destructive tools say what they will remove, and ask the user before they do.

A destructive tool (``workflow.delete``, ``workflow.cancel``, ``workflow.purge_history``,
``catalog.remove``) has a *preview*: what the call would remove, computed without changing
anything (``summary`` is one sentence for a person). Then, for every call:

- ``dry_run: true`` answers the preview and changes nothing;
- when the client supports elicitation, the user is asked to confirm with the summary; a
  decline or a cancel answers ``confirmed: false`` and changes nothing;
- otherwise (no elicitation on this session) the call goes ahead, and its result repeats the
  summary under ``removed``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from dynamic_tools.mcp.channel import CallChannel

Preview = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]

DRY_RUN = {
    "type": "boolean",
    "default": False,
    "description": "Only say what would be removed; change nothing.",
}
CONFIRM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "confirm": {
            "type": "boolean",
            "title": "Go ahead",
            "description": "Tick to confirm; this cannot be undone.",
            "default": False,
        }
    },
    "required": ["confirm"],
}


async def confirmed(channel: CallChannel, tool: str, summary: str) -> bool | None:
    """Ask the user to confirm ``summary``: True, False (declined), None (cannot ask)."""
    if channel.elicit is None:
        return None
    answer = await channel.elicit(f"{tool}: {summary} Go ahead?", CONFIRM_SCHEMA)
    return answer.action == "accept" and bool((answer.content or {}).get("confirm"))


def not_confirmed(plan: dict[str, Any]) -> dict[str, Any]:
    """The answer when the user did not confirm: nothing changed."""
    return {
        **plan,
        "confirmed": False,
        "changed": False,
        "message": "Not confirmed by the user: nothing was changed.",
    }


__all__ = ["CONFIRM_SCHEMA", "DRY_RUN", "Preview", "confirmed", "not_confirmed"]
