"""An in-process client for an app, with its lifespan running."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
from fastapi import FastAPI


@asynccontextmanager
async def app_client(app: FastAPI, **headers: str) -> AsyncIterator[httpx.AsyncClient]:
    """Run ``app``'s lifespan and yield an ``httpx.AsyncClient`` talking to it over ASGI.

    The lifespan runs in a task of its own, entered and left there, as a server runs it: the
    MCP session manager's task group must be exited in the task that entered it, and an async
    fixture's setup and teardown run in different tasks.
    """
    started = asyncio.Event()
    stop = asyncio.Event()

    async def lifespan() -> None:
        try:
            async with app.router.lifespan_context(app):
                started.set()
                await stop.wait()
        finally:
            started.set()

    task = asyncio.create_task(lifespan())
    await started.wait()
    if task.done():
        task.result()  # the lifespan failed to start: raise its error here
    try:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://testserver", headers=headers
        ) as client:
            yield client
    finally:
        stop.set()
        await task
