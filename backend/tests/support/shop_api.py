"""A small shop API with state, on loopback in tests of Arazzo workflows (test code)."""

from __future__ import annotations

import asyncio
import shutil
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.support.servers import serve


class Shop:
    """A small shop API with state: what it was asked is kept in ``requests``."""

    def __init__(self, *, hold_poll: int | None = None) -> None:
        self.requests: list[dict[str, Any]] = []
        self.polls = 0
        self.warehouse_calls = 0
        self.hold_poll = hold_poll  # this order poll waits until ``release`` is set
        self.release = threading.Event()
        self.holding = threading.Event()  # set while the held poll waits

    async def handle(self, request: Request) -> Response:
        body = await request.body()
        path = request.url.path.removeprefix("/api")
        self.requests.append(
            {
                "method": request.method,
                "path": path,
                "query": dict(request.query_params),
                "headers": dict(request.headers),
                "cookies": dict(request.cookies),
                "body": body.decode() if body else None,
            }
        )
        if path == "/sessions":
            return JSONResponse({"token": "T-42"}, status_code=201, headers={"X-Session": "S-7"})
        if path.startswith("/items/"):
            if path.endswith("/I9"):
                return JSONResponse({"message": "no such item"}, status_code=404)
            reorder = {"item": "I1", "quantity": 1}  # what to send to order it again
            return JSONResponse(
                {"id": "I1", "name": "Kettle", "price": 25.5, "stock": 3, "reorder": reorder}
            )
        if path == "/orders":
            return JSONResponse(
                {"id": "O-1", "status": "pending"},
                status_code=201,
                headers={"Location": "/orders/O-1"},
            )
        if path == "/warehouse":
            self.warehouse_calls += 1
            if self.warehouse_calls == 1:
                return JSONResponse({"message": "busy"}, status_code=503)
            return JSONResponse({"open": True})
        if path.endswith("/receipt"):
            xml = "<receipt><order id='O-1' status='confirmed'/></receipt>"
            return Response(xml, media_type="application/xml")
        if path.startswith("/orders/"):
            self.polls += 1
            if self.polls == self.hold_poll:
                self.holding.set()
                for _ in range(600):  # at most 60 s
                    if self.release.is_set():
                        break
                    await asyncio.sleep(0.1)
            return JSONResponse({"id": "O-1", "status": "pending" if self.polls < 3 else "done"})
        if path == "/missing":
            return JSONResponse({"noted": True})
        return JSONResponse({"message": "unknown"}, status_code=418)


SEMANTICS = Path(__file__).resolve().parents[1] / "fixtures" / "arazzo" / "semantics"
"""The shop's Arazzo document (``shop.arazzo.yaml``), its OpenAPI source and another document."""


def shop_document(
    folder: Path, *, workflows: str = "", rewrite: Callable[[str], str] | None = None
) -> Path:
    """The shop's Arazzo document copied into ``folder`` (with its sources), maybe edited.

    ``workflows`` (YAML list items) are added after its own; ``rewrite`` changes its text.
    """
    shutil.copytree(SEMANTICS, folder)
    document = folder / "shop.arazzo.yaml"
    text = document.read_text(encoding="utf-8")
    if workflows:
        head, components = text.split("\ncomponents:\n")
        text = head + "\n" + workflows + "components:\n" + components
    document.write_text(rewrite(text) if rewrite else text, encoding="utf-8")
    return document


@contextmanager
def serving_shop(**options: Any) -> Iterator[tuple[Shop, str]]:
    """A :class:`Shop` served on loopback: it and its URL (stopped on exit)."""
    api = Shop(**options)
    app = Starlette(routes=[Route("/{path:path}", api.handle, methods=["GET", "POST"])])
    with serve(app) as url:
        yield api, url


__all__ = ["SEMANTICS", "Shop", "serving_shop", "shop_document"]
