"""Resumable streams (streamable HTTP, 2025-11-25): the events of each session, kept for replay.

With an event store the SDK's transport starts every POST response stream with a *priming
event* (an event id, empty data, and a ``retry`` hint of :data:`RETRY_MS`), gives every message
an event id, and answers a ``GET`` with ``Last-Event-ID`` by replaying the events of that
stream after that id, then the rest of the stream live. A client whose connection dropped in
the middle of a long tool call reconnects and still gets the progress and the result.

One :class:`SessionEventStore` per session, never shared: stream ids are request ids (``1``,
``2`` …) that every session reuses, so a shared store would let one session replay another's
events. The SDK's session manager passes a single store to every session, so
:class:`ResumableSessionManager` gives each new session its own. A store keeps the last
:data:`MAX_EVENTS` events of its session, and of the streams that have ended (their response
was sent) only the last :data:`KEEP_ENDED` (a ``tools/list`` answer can be megabytes, and an
ended stream is rarely resumed); what is dropped cannot be replayed. The store goes when the
session ends.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict, deque
from typing import Any

from mcp.server.streamable_http import (
    EventCallback,
    EventId,
    EventMessage,
    EventStore,
    StreamId,
)
from mcp_types import JSONRPCError, JSONRPCMessage, JSONRPCResponse

from dynamic_tools.adapters.mcp_internals import PerSessionEventStores

MAX_EVENTS = 1_000
KEEP_ENDED = 4
RETRY_MS = 1_000


class SessionEventStore(EventStore):
    """The recent events of one session's streams, in order (bounded)."""

    def __init__(self, max_events: int = MAX_EVENTS, keep_ended: int = KEEP_ENDED) -> None:
        self.max_events = max_events
        self.keep_ended = keep_ended
        self._prefix = secrets.token_hex(8)  # ids are not guessable across sessions
        self._next = 0
        self._events: OrderedDict[EventId, tuple[StreamId, JSONRPCMessage | None]] = OrderedDict()
        self._ended: deque[StreamId] = deque()

    @property
    def size(self) -> int:
        """How many events are kept (no ``__len__``: the SDK tests a store for truth)."""
        return len(self._events)

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        """Keep ``message`` (None: a priming event) of ``stream_id``; its new event id."""
        self._next += 1
        event_id = f"{self._prefix}-{self._next}"
        self._events[event_id] = (stream_id, message)
        if isinstance(message, JSONRPCResponse | JSONRPCError):  # the stream has ended
            self._ended.append(stream_id)
            if len(self._ended) > self.keep_ended:
                self._forget(self._ended.popleft())
        while len(self._events) > self.max_events:
            self._events.popitem(last=False)
        return event_id

    def _forget(self, stream_id: StreamId) -> None:
        for event_id in [e for e, (stream, _) in self._events.items() if stream == stream_id]:
            del self._events[event_id]

    async def replay_events_after(
        self, last_event_id: EventId, send_callback: EventCallback
    ) -> StreamId | None:
        """Send the events of ``last_event_id``'s stream that came after it; that stream's id.

        None when the id is unknown (never given, or too old): nothing is replayed.
        """
        found = self._events.get(last_event_id)
        if found is None:
            return None
        stream_id = found[0]
        after = False
        for event_id, (stream, message) in list(self._events.items()):
            if event_id == last_event_id:
                after = True
                continue
            if after and stream == stream_id and message is not None:
                await send_callback(EventMessage(message, event_id))
        return stream_id


class ResumableSessionManager(PerSessionEventStores):
    """The SDK's session manager with an event store of its own for every session."""

    def __init__(self, app: Any, *, retry_interval: int = RETRY_MS, **kwargs: Any) -> None:
        super().__init__(app, retry_interval=retry_interval, **kwargs)

    def new_event_store(self) -> SessionEventStore:
        """A new session's own store (per session: see the module docstring)."""
        return SessionEventStore()
