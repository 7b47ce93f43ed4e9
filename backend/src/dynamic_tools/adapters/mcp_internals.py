"""Every use of the MCP SDK's internals, in one place.

- :func:`send_unchecked_request`: a client request sent below the SDK's result check (a
  2025-11-25 ``tools/call`` answered by a task, which the SDK would refuse as a
  ``CallToolResult``), stamped like every other request of the session
  (``mcp/tasks/client.py:call_task``);
- :func:`on_session_close`: a callback run when a server session's connection closes
  (``mcp/tasks/runtime.py``, the task notifications pushed to a session);
- :class:`PerSessionEventStores`: the SDK's session manager giving each new session an event
  store of its own (``mcp/event_store.py``).

They are written for :data:`MCP_VERSION`; ``tests/unit/adapters/test_mcp_internals.py``
asserts that version and the shape of every name used below, so it fails on the next SDK
release that changes one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp.client.session import ClientSession
from mcp.server.streamable_http import EventStore, StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

__all__ = ["MCP_VERSION", "PerSessionEventStores", "on_session_close", "send_unchecked_request"]

MCP_VERSION = "2.3.0"
"""The SDK release these internals were read from (``pyproject.toml`` pins it)."""


async def send_unchecked_request(
    session: ClientSession, method: str, params: dict[str, Any]
) -> dict[str, Any]:
    """Send ``method`` with ``params`` on ``session``; the raw JSON-RPC result, unchecked."""
    data: dict[str, Any] = {"method": method, "params": params}
    options: Any = {}
    session._stamp(data, options)
    result: dict[str, Any] = await session._dispatcher.send_raw_request(
        method, data["params"], options
    )
    return result


def on_session_close(server_session: Any, callback: Callable[[], Any]) -> bool:
    """Run ``callback`` when the connection of ``server_session`` closes.

    False when the session has no such connection (then nothing is registered).
    """
    connection = getattr(server_session, "_connection", None)
    exit_stack = getattr(connection, "exit_stack", None)
    if exit_stack is None:
        return False
    exit_stack.callback(callback)
    return True


class PerSessionEventStores(StreamableHTTPSessionManager):
    """The SDK's session manager; a new session gets the store :meth:`new_event_store` makes.

    The SDK itself passes the one store it was given to every session.
    """

    def new_event_store(self) -> EventStore | None:
        """The event store of a new session (None: the one given to the manager)."""
        return None

    def _admit_session(self, requestor: Any) -> StreamableHTTPServerTransport | None:
        transport = super()._admit_session(requestor)
        if transport is not None:
            store = self.new_event_store()
            if store is not None:
                transport._event_store = store
        return transport
