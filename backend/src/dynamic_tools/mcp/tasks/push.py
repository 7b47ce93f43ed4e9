"""What a task pushes to its client: ``notifications/tasks/status`` and ``notifications/progress``.

Both go out on the session's standalone stream (the HTTP GET stream; stdout on stdio), because
the ``tools/call`` that created the task has already been answered:

- ``notifications/tasks/status`` carries the whole task (as ``tasks/get`` would return it) each
  time its status changes (``working`` → ``input_required`` → ``working`` → a terminal status);
- ``notifications/progress`` carries the ``progressToken`` of the creating ``tools/call`` (it
  stays valid for the task's lifetime) and the task id in ``_meta``: one per stage of a task's
  own work (drafting, repairing, saving, asking for inputs) and one per finished top-level step
  of its run; the counter only grows.

Notifications are best effort: a client without a GET stream simply does not get them and polls
``tasks/get``. A pusher stops when its session closes.
"""

from __future__ import annotations

from typing import Any, cast

import mcp_types as types
from loguru import logger

from dynamic_tools.mcp.channel import RELATED_TASK


class TaskPush:
    """Sends one task's notifications to the session that created it."""

    def __init__(self, session: Any, task_id: str, progress_token: str | int | None) -> None:
        self.session = session
        self.task_id = task_id
        self.progress_token = progress_token
        self.status = "working"  # what the client was told at creation
        self.count = 0
        self.closed = False

    async def task_changed(self, task: dict[str, Any]) -> None:
        """Send ``notifications/tasks/status`` when the task's status differs from the last sent."""
        if self.closed or task["status"] == self.status:
            return
        self.status = task["status"]
        params = types.TaskStatusNotificationParams.model_validate(task)
        notification = types.TaskStatusNotification(params=params)
        await self._send(notification)

    async def progress(self, message: str, total: float | None = None) -> None:
        """One more step done (only when the client gave a progress token)."""
        if self.closed or self.progress_token is None:
            return
        self.count += 1
        params = types.ProgressNotificationParams(
            progress_token=self.progress_token,
            progress=float(self.count),
            total=total,
            message=message,
            meta={RELATED_TASK: {"taskId": self.task_id}},
        )
        await self._send(types.ProgressNotification(params=params))

    async def _send(self, notification: Any) -> None:
        try:
            # TaskStatusNotification is a 2025-11-25 server notification the SDK's union omits.
            await self.session.send_notification(cast(types.ServerNotification, notification))
        except Exception as exc:  # a closed session: nobody to tell any more
            logger.debug("task {} notification not sent: {}", self.task_id, exc)
            self.closed = True
