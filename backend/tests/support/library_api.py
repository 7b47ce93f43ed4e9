"""A small library API that records every call it receives, for the safe-by-default tests.

``/openapi.json`` describes it (a session's ``X-Target-URL``): ``list_books`` (``GET
/books``), ``get_book`` (``GET /books/{book_id}``), ``add_book`` (``POST /books``),
``delete_book`` (``DELETE /books/{book_id}``) and ``search_books`` (``POST /books/search``, a
read over POST). ``received`` holds ``(method, path)`` of every call of ``/books``, so a test
proves what reached the API and what did not. Test code only.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel

from tests.support.servers import serve


class NewBook(BaseModel):
    title: str
    author: str = "unknown"


class Search(BaseModel):
    text: str


@dataclass
class LibraryApi:
    """The running API: its URL, its books and what it received."""

    url: str = ""
    books: list[dict[str, Any]] = field(
        default_factory=lambda: [{"id": "b1", "title": "Dune", "author": "Herbert"}]
    )
    received: list[tuple[str, str]] = field(default_factory=list)

    @property
    def openapi(self) -> str:
        """The URL of its OpenAPI document (X-Target-URL)."""
        return f"{self.url}/openapi.json"

    @property
    def host(self) -> str:
        """host:port, for ALLOWED_TARGET_HOSTS."""
        return self.url.removeprefix("http://")

    def writes(self) -> list[tuple[str, str]]:
        """The calls that could change something (not GET/HEAD/OPTIONS)."""
        return [(m, p) for m, p in self.received if m not in ("GET", "HEAD", "OPTIONS")]

    def search_tool(self) -> str:
        """A registry tool over ``POST /books/search``, annotated read-only (a search)."""
        return f"""\
name: search_books
description: Search the library's books by a text
api:
  method: POST
  base_url: "{self.url}"
  path: /books/search
parameters:
  text: {{type: string, in: body, required: true, description: "Words of the title"}}
annotations: {{read_only: true, destructive: false}}
"""


def library_app(api: LibraryApi) -> FastAPI:
    """The API and its recording middleware."""
    app = FastAPI(title="Library")

    @app.middleware("http")
    async def record(request: Request, call_next):  # type: ignore[no-untyped-def]
        if request.url.path.startswith("/books"):
            api.received.append((request.method, request.url.path))
        response: Response = await call_next(request)
        return response

    @app.get("/books", operation_id="list_books", summary="List every book")
    async def list_books() -> JSONResponse:
        return JSONResponse(api.books)

    @app.get("/books/{book_id}", operation_id="get_book", summary="Get one book by its id")
    async def get_book(book_id: str) -> JSONResponse:
        book = next((b for b in api.books if b["id"] == book_id), None)
        return JSONResponse(book) if book else JSONResponse({"error": "no book"}, 404)

    @app.post("/books", operation_id="add_book", summary="Add a book", status_code=201)
    async def add_book(book: NewBook) -> JSONResponse:
        added = {"id": f"b{len(api.books) + 1}", **book.model_dump()}
        api.books.append(added)
        return JSONResponse(added, status_code=201)

    @app.delete("/books/{book_id}", operation_id="delete_book", summary="Delete a book")
    async def delete_book(book_id: str) -> JSONResponse:
        api.books[:] = [b for b in api.books if b["id"] != book_id]
        return JSONResponse({"deleted": book_id})

    @app.post("/books/search", operation_id="search_books", summary="Search books by title")
    async def search_books(search: Search) -> JSONResponse:
        text = search.text.lower()
        return JSONResponse([b for b in api.books if text in b["title"].lower()])

    return app


@contextmanager
def running_library_api() -> Iterator[LibraryApi]:
    """Serve the API on loopback until the block ends."""
    api = LibraryApi()
    with serve(library_app(api)) as url:
        api.url = url
        yield api
