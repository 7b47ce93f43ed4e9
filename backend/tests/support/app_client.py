"""An in-process client for an app, with its lifespan running."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
from fastapi import FastAPI


@asynccontextmanager
async def app_client(app: FastAPI, **headers: str) -> AsyncIterator[httpx.AsyncClient]:
    """Run ``app``'s lifespan and yield an ``httpx.AsyncClient`` talking to it over ASGI."""
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://testserver", headers=headers
        ) as client:
            yield client
