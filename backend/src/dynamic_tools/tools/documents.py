"""Fetching API documents, as the tools domain sees it: what a fetch gives, not how it is made.

The catalog service takes a :class:`DocumentSource`; the HTTP adapter
(``http/document_fetch.py``, with the SSRF guard and size limits) implements it, and the
composition root (``bootstrap.py``) or the CLI hands it over. So ``tools`` never imports
``http``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

__all__ = ["DocumentSource", "FetchedDocument", "SourceType"]

SourceType = Literal["url", "path"]


@dataclass(frozen=True)
class FetchedDocument:
    """A document's bytes and where they came from.

    Attributes:
        content: the raw bytes.
        source: the source as given.
        source_type: ``url`` or ``path``.
        location: the URL fetched, or the resolved file path.
        document_url: the http(s) URL of the document (to resolve relative references in
            it), or None for a local file.
        media_type: the ``Content-Type`` of a fetched URL, without parameters.
        etag: the ``ETag`` a fetched URL answered with (asked again with ``If-None-Match``).
        last_modified: its ``Last-Modified`` (asked again with ``If-Modified-Since``).
    """

    content: bytes
    source: str
    source_type: SourceType
    location: str
    document_url: str | None = None
    media_type: str | None = None
    etag: str | None = None
    last_modified: str | None = None


class DocumentSource(Protocol):
    """Reads a document from a URL or a local path (within what the server allows)."""

    async def fetch(self, source: str, source_type: SourceType | None = None) -> FetchedDocument:
        """The document at ``source``; a structured error when it cannot be read."""
        ...
