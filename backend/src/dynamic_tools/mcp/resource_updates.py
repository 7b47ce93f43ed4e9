"""``resources/subscribe``: ``notifications/resources/updated`` when a resource's content changes.

A 2025-11-25 session subscribes to URIs (any URI: one that does not exist yet is reported when it
appears, e.g. the manifest of a workflow saved later). Whenever the workflow documents or the
tool registry change (a save, rename or delete over MCP or REST, ``_reload``, a catalog import),
every subscribed resource is read again in its session's view and the session is notified of
each one whose content differs from what it was at subscription (or at the last notification).
Changes are noticed at once after a mutating tool call of this server and otherwise within
:data:`POLL_S` seconds.

Bounds: :data:`MAX_SESSIONS` subscribing sessions, :data:`MAX_PER_SESSION` URIs each; a session
whose notification cannot be delivered (it ended) is forgotten.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types
from loguru import logger

from dynamic_tools.errors import DynamicToolsError, InvalidInputError
from dynamic_tools.mcp.entries import SessionView
from dynamic_tools.mcp.http_context import session_key
from dynamic_tools.mcp.session_config import SessionConfig

POLL_S = 1.0
MAX_SESSIONS = 1_000
MAX_PER_SESSION = 100

Reader = Callable[[SessionView, str], Awaitable[types.ReadResourceResult]]
Views = Callable[[SessionConfig], Awaitable[SessionView]]
Generation = Callable[[], tuple[int, ...]]


@dataclass
class _Subscriber:
    """One session's subscriptions: where to send, in which view, what it last saw."""

    session: Any  # the SDK's ServerSession of the subscribe request (its standalone channel)
    config: SessionConfig
    seen: dict[str, str | None] = field(default_factory=dict)  # uri → content digest


class ResourceUpdates:
    """Subscriptions per session and the watcher that notifies them."""

    def __init__(self, read: Reader, views: Views, generation: Generation) -> None:
        self._read = read
        self._views = views
        self._generation = generation
        self._subscribers: dict[str, _Subscriber] = {}
        self._wake = asyncio.Event()
        self._watcher: asyncio.Task[None] | None = None
        self._last: tuple[int, ...] | None = None

    @property
    def count(self) -> int:
        """How many (session, URI) subscriptions there are."""
        return sum(len(s.seen) for s in self._subscribers.values())

    async def subscribe(self, ctx: Any, view: SessionView, uri: str) -> None:
        """Subscribe the session of ``ctx`` to ``uri``."""
        key = session_key(ctx)
        if key is None:
            raise InvalidInputError(
                "resources/subscribe needs a session (2025-11-25 with initialize)",
                violations=[{"path": "uri", "rule": "session", "message": "no MCP session"}],
            )
        subscriber = self._subscribers.get(key)
        if subscriber is None:
            if len(self._subscribers) >= MAX_SESSIONS:
                raise InvalidInputError(
                    f"too many sessions subscribe to resources (at most {MAX_SESSIONS})",
                    violations=[{"path": "uri", "rule": "limit", "message": "too many sessions"}],
                )
            subscriber = self._subscribers[key] = _Subscriber(ctx.session, view.config)
        if uri not in subscriber.seen and len(subscriber.seen) >= MAX_PER_SESSION:
            raise InvalidInputError(
                f"a session subscribes to at most {MAX_PER_SESSION} resources",
                violations=[{"path": "uri", "rule": "limit", "message": "too many subscriptions"}],
            )
        subscriber.session = ctx.session
        subscriber.seen[uri] = await self._digest(view, uri)
        self._ensure_watcher()

    def unsubscribe(self, ctx: Any, uri: str) -> None:
        """Drop the subscription of the session of ``ctx`` to ``uri`` (none: nothing to do)."""
        key = session_key(ctx)
        subscriber = self._subscribers.get(key) if key is not None else None
        if subscriber is None:
            return
        subscriber.seen.pop(uri, None)
        if not subscriber.seen:
            self._subscribers.pop(str(key), None)

    def poke(self) -> None:
        """Look for changes now (after a mutating tool call)."""
        self._wake.set()

    async def check(self) -> int:
        """Read every subscribed resource again; notify changes. Returns how many were sent."""
        sent = 0
        for key, subscriber in list(self._subscribers.items()):
            try:
                view = await self._views(subscriber.config)
            except DynamicToolsError:  # the session's documents no longer load: try later
                continue
            for uri, before in list(subscriber.seen.items()):
                now = await self._digest(view, uri)
                if now == before:
                    continue
                subscriber.seen[uri] = now
                try:
                    await subscriber.session.send_resource_updated(uri)
                except Exception as exc:  # the session ended: forget it
                    logger.debug("resource update for an ended session dropped: {}", exc)
                    self._subscribers.pop(key, None)
                    break
                sent += 1
        return sent

    async def _digest(self, view: SessionView, uri: str) -> str | None:
        try:
            result = await self._read(view, uri)
        except DynamicToolsError:
            return None  # does not exist (yet)
        text = "".join(
            str(getattr(c, "text", None) or getattr(c, "blob", "")) for c in result.contents
        )
        return hashlib.sha256(text.encode()).hexdigest()

    def _ensure_watcher(self) -> None:
        if self._watcher is None or self._watcher.done():
            self._last = self._generation()
            self._watcher = asyncio.get_running_loop().create_task(self._watch())

    async def _watch(self) -> None:
        """Until nobody subscribes: wait for a poke or :data:`POLL_S`, then check on change."""
        while self._subscribers:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), POLL_S)
            self._wake.clear()
            generation = self._generation()
            if generation == self._last:
                continue
            self._last = generation
            try:
                await self.check()
            except Exception:  # a bug must not end the watcher: log it and go on
                logger.exception("checking subscribed resources failed")

    async def aclose(self) -> None:
        """Stop the watcher."""
        self._subscribers.clear()
        if self._watcher is not None:
            self._watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watcher
            self._watcher = None
