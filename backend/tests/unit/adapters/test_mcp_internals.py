"""The MCP SDK's internals the product relies on (adapters/mcp_internals.py) are still there.

Fails on an SDK release that changes the version or the shape of any of them: read the new
release, adjust the adapter, then the pin.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import inspect
from typing import Any

from mcp.client.session import ClientSession
from mcp.server.connection import Connection
from mcp.server.session import ServerSession
from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.dispatcher import Dispatcher

from dynamic_tools.adapters import mcp_internals
from dynamic_tools.mcp.event_store import ResumableSessionManager, SessionEventStore


def test_the_installed_sdk_is_the_one_the_adapter_was_written_for() -> None:
    assert importlib.metadata.version("mcp") == mcp_internals.MCP_VERSION


def test_a_client_session_stamps_and_dispatches_raw_requests() -> None:
    source = inspect.getsource(ClientSession)
    assert "self._stamp: Callable[[dict[str, Any], CallOptions], None]" in source
    assert "self._dispatcher: Dispatcher[Any]" in source
    parameters = list(inspect.signature(Dispatcher.send_raw_request).parameters)
    assert parameters == ["self", "method", "params", "opts"]


async def test_an_unchecked_request_is_stamped_then_sent_raw() -> None:
    sent: list[tuple[str, Any, Any]] = []

    class FakeDispatcher:
        async def send_raw_request(self, method: str, params: Any, opts: Any) -> dict[str, Any]:
            sent.append((method, params, opts))
            return {"task": {"taskId": "t1"}}

    session: Any = type("Session", (), {})()
    session._stamp = lambda data, opts: data["params"].setdefault("_meta", {"stamped": True})
    session._dispatcher = FakeDispatcher()
    raw = await mcp_internals.send_unchecked_request(session, "tools/call", {"name": "x"})
    assert raw == {"task": {"taskId": "t1"}}
    assert sent == [("tools/call", {"name": "x", "_meta": {"stamped": True}}, {})]


def test_a_server_session_keeps_its_connection_with_an_exit_stack() -> None:
    assert "connection" in inspect.signature(ServerSession.__init__).parameters
    assert "self._connection = connection" in inspect.getsource(ServerSession.__init__)
    assert inspect.get_annotations(Connection, eval_str=True)["exit_stack"] is (
        contextlib.AsyncExitStack
    )
    called: list[str] = []
    stack = contextlib.ExitStack()
    session = type("Session", (), {})()
    session._connection = type("C", (), {"exit_stack": stack})()  # type: ignore[attr-defined]
    assert mcp_internals.on_session_close(session, lambda: called.append("closed"))
    stack.close()
    assert called == ["closed"]
    assert not mcp_internals.on_session_close(object(), lambda: None)


def test_each_admitted_session_gets_its_own_event_store() -> None:
    parameters = list(inspect.signature(StreamableHTTPSessionManager._admit_session).parameters)
    assert parameters == ["self", "requestor"]
    assert "self._event_store = event_store" in inspect.getsource(
        StreamableHTTPServerTransport.__init__
    )
    manager = ResumableSessionManager(app=object())
    first, second = manager._admit_session(None), manager._admit_session(None)
    assert first is not None and second is not None
    assert isinstance(first._event_store, SessionEventStore)
    assert isinstance(second._event_store, SessionEventStore)
    assert first._event_store is not second._event_store
