"""How a task's own work reaches the client after ``tools/call`` has answered.

A task that drafts a workflow (``workflow.author_and_run``) may need the client: MCP sampling for
the draft, an elicitation form for missing inputs. Its ``tools/call`` has long been answered, so
these requests follow the 2025-11-25 Tasks flow: the task turns ``input_required`` and each
request goes out, tagged with the task, on the stream of a ``tasks/result`` request the client
has open for it (the client is expected to call ``tasks/result`` when it sees
``input_required``). The whole wait — for a ``tasks/result`` stream and for the answer — is
bounded by ``MCP_CLIENT_REQUEST_TIMEOUT_S``; then :class:`ClientRequestTimeout` fails the task.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPError, NoBackChannelError
from mcp_types.jsonrpc import CONNECTION_CLOSED

from dynamic_tools.mcp.channel import CallChannel, ClientRequestTimeout

T = TypeVar("T")
Waiting = Callable[[str | None], Awaitable[None]]  # what the task waits for; None: no more


class ClientLink:
    """The ``tasks/result`` streams a client keeps open for one task, and requests over them."""

    def __init__(self, task_id: str, timeout_s: float, waiting: Waiting) -> None:
        self.task_id = task_id
        self.timeout_s = timeout_s
        self.waiting = waiting
        self._streams: list[CallChannel] = []
        self._arrived = asyncio.Event()

    @contextmanager
    def attach(self, channel: CallChannel) -> Iterator[None]:
        """Offer a ``tasks/result`` request's channel while the block runs."""
        self._streams.append(channel)
        self._arrived.set()
        try:
            yield
        finally:
            self._drop(channel)

    def _drop(self, channel: CallChannel) -> None:
        if channel in self._streams:
            self._streams.remove(channel)
        if not self._streams:
            self._arrived.clear()

    async def elicit(self, message: str, schema: dict[str, Any]) -> types.ElicitResult:
        """An elicitation answered through the task's ``tasks/result`` stream."""

        async def send(channel: CallChannel) -> types.ElicitResult | None:
            return None if channel.elicit is None else await channel.elicit(message, schema)

        return await self._request("elicitation", send)

    async def sample(self, prompt: str) -> str:
        """A completion from the client's model through the task's ``tasks/result`` stream."""

        async def send(channel: CallChannel) -> str | None:
            return None if channel.sample is None else await channel.sample(prompt)

        return await self._request("sampling", send)

    async def _request(self, what: str, send: Callable[[CallChannel], Awaitable[T | None]]) -> T:
        await self.waiting(what)
        try:
            with anyio.fail_after(self.timeout_s):
                while True:  # ends by an answer, or the timeout
                    await self._arrived.wait()
                    channel = self._streams[-1]
                    try:
                        answer = await send(channel)
                    except NoBackChannelError:
                        answer = None
                    except MCPError as exc:
                        if exc.code != CONNECTION_CLOSED:
                            raise
                        answer = None
                    if answer is not None:
                        return answer
                    self._drop(channel)  # this stream cannot carry it: wait for another
        except TimeoutError:
            raise ClientRequestTimeout(what, self.timeout_s, task_id=self.task_id) from None
        finally:
            await self.waiting(None)
