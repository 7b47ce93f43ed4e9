"""Real servers for tests: uvicorn in a background thread on a free loopback port."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


TICK_S = 0.01


class _Server(uvicorn.Server):
    """uvicorn's server, stopping within 10 ms instead of its 0.1 s polls.

    uvicorn checks ``should_exit`` every 0.1 s, then sleeps 0.1 s after asking connections to
    close and polls them every 0.1 s: ~0.3 s idle per stop, paid by every test that starts a
    server. The same steps, in the same order, polled every 10 ms.
    """

    async def main_loop(self) -> None:
        counter = 0
        while not await self.on_tick(counter):
            counter = (counter + 1) % 8_640_000
            await asyncio.sleep(TICK_S)

    async def on_tick(self, counter: int) -> bool:
        # uvicorn refreshes the Date header when counter % 10 == 0: keep it once per second
        return await super().on_tick(counter if counter % 100 == 0 else 1)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        for connection in list(self.server_state.connections):
            connection.shutdown()
        state = self.server_state
        deadline = time.monotonic() + (self.config.timeout_graceful_shutdown or 0)
        while (state.connections or state.tasks) and time.monotonic() < deadline:
            await asyncio.sleep(TICK_S)
        for task in state.tasks:
            task.cancel(msg="Task cancelled, timeout graceful shutdown exceeded")
        for server in self.servers:
            await server.wait_closed()
        if not self.force_exit:
            await self.lifespan.shutdown()


@contextmanager
def serve(app: Any, port: int | None = None) -> Iterator[str]:
    """Serve ``app`` on 127.0.0.1 until the block ends; yields its base URL.

    At the end, requests still open (a stream, a demo call held by a fault) get 2 s before they
    are cancelled; then the app's shutdown runs and the thread ends. Without that bound uvicorn
    waits for them without end, and each such test spent 10 s in its teardown.
    """
    port = port or free_port()
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        log_config=None,
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=2,
    )
    server = _Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"test server on port {port} did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
