"""Log notifications to the client (``logging/setLevel``, ``notifications/message``).

A 2025-11-25 session that sets a level receives the server's log messages about its own
requests at that level or above: ``debug`` when a tool call starts, ``info`` when it answers,
``notice`` for errors the caller can fix (validation, not found, conflict), ``warning`` for
execution errors and ``error`` for internal ones (with the correlation id). A session that has
not set a level receives none. Levels are kept per session (``Mcp-Session-Id``; the process on
stdio), at most :data:`MAX_SESSIONS` of them, the least recently set dropped first.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import mcp_types as types
from loguru import logger

from dynamic_tools.mcp.http_context import session_key

LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
MAX_SESSIONS = 10_000
LOGGER = "dynamic-tools"
ERROR_LEVELS = {"internal": "error", "execution": "warning"}  # other categories: notice


class ClientLog:
    """The level each session asked for, and the sending of messages at or above it."""

    def __init__(self) -> None:
        self._levels: OrderedDict[str, int] = OrderedDict()

    def set_level(self, ctx: Any, level: str) -> None:
        """Remember ``level`` for the session of ``ctx`` (a stateless request has none)."""
        key = session_key(ctx)
        if key is None:
            return
        self._levels[key] = LEVELS.index(level)
        self._levels.move_to_end(key)
        while len(self._levels) > MAX_SESSIONS:
            self._levels.popitem(last=False)

    def level(self, ctx: Any) -> str | None:
        """The level the session of ``ctx`` set (None: no messages)."""
        key = session_key(ctx)
        found = self._levels.get(key) if key is not None else None
        return LEVELS[found] if found is not None else None

    async def send(self, ctx: Any, level: str, data: Any) -> bool:
        """Send ``data`` at ``level`` on the request's stream if the session wants it."""
        key = session_key(ctx)
        wanted = self._levels.get(key) if key is not None else None
        if wanted is None or LEVELS.index(level) < wanted:
            return False
        notification = types.LoggingMessageNotification(
            params=types.LoggingMessageNotificationParams(level=level, data=data, logger=LOGGER)
        )
        try:
            await ctx.session.send_notification(notification, related_request_id=ctx.request_id)
        except Exception as exc:  # the client went away: the log message is not worth a failure
            logger.debug("log notification not sent: {}", exc)
            return False
        return True

    async def tool_error(self, ctx: Any, tool: str, payload: dict[str, Any]) -> bool:
        """Tell the session about an error result of ``tool`` (level from its category)."""
        level = ERROR_LEVELS.get(str(payload.get("category")), "notice")
        data = {
            "event": "tool_error",
            "tool": tool,
            "error_code": payload.get("error_code"),
            "message": payload.get("message"),
            "correlation_id": payload.get("correlation_id"),
        }
        return await self.send(ctx, level, data)
