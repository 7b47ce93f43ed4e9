"""Reading the descriptions an Arazzo document names (``sourceDescriptions``).

OpenAPI ones, and the Arazzo documents whose workflows its steps call.

Through the same fetcher (and so the same allowed roots and hosts) as OpenAPI catalogs; a
relative URL is read next to the Arazzo document.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

from dynamic_tools.definitions.arazzo.convert import MAX_DOCUMENT_DEPTH, ArazzoSource
from dynamic_tools.errors import DynamicToolsError
from dynamic_tools.tools.documents import DocumentSource, FetchedDocument
from dynamic_tools.tools.openapi.document import parse_document


def source_location(url: str, document: FetchedDocument) -> str:
    """Where a source description's ``url`` points, read from ``document``'s place."""
    if urlsplit(url).scheme in ("http", "https", "file"):
        return url
    if document.document_url:
        return urljoin(document.document_url, url)
    return str(Path(document.location).parent / url)


async def read_sources(
    raw: dict[str, Any],
    document: FetchedDocument,
    fetcher: DocumentSource,
    overrides: Mapping[str, str] | None = None,
) -> tuple[dict[str, Any], dict[str, str]]:
    """The parsed OpenAPI sources by name, and why each other one could not be read.

    ``overrides`` reads a source from another place (a path or URL, by source name): a local
    copy of a remote description, for instance.
    """
    found: dict[str, Any] = {}
    unread: dict[str, str] = {}
    for source in raw.get("sourceDescriptions") or []:
        if not isinstance(source, dict) or source.get("type", "openapi") != "openapi":
            continue
        name, url = str(source.get("name")), str(source.get("url", ""))
        url = (overrides or {}).get(name, url)
        try:
            fetched = await fetcher.fetch(source_location(url, document))
            found[name] = parse_document(fetched.content)
        except DynamicToolsError as exc:
            unread[name] = exc.message
    return found, unread


async def read_documents(
    raw: dict[str, Any],
    document: FetchedDocument,
    fetcher: DocumentSource,
    *,
    depth: int = 1,
) -> tuple[dict[str, ArazzoSource], dict[str, str]]:
    """The Arazzo documents ``raw`` names (``type: arazzo``), each read with its own sources.

    Bounded by :data:`MAX_DOCUMENT_DEPTH`; returns them by source name, and why each other
    one could not be read.
    """
    found: dict[str, ArazzoSource] = {}
    unread: dict[str, str] = {}
    for source in raw.get("sourceDescriptions") or []:
        if not isinstance(source, dict) or source.get("type") != "arazzo":
            continue
        name, url = str(source.get("name")), str(source.get("url", ""))
        if depth > MAX_DOCUMENT_DEPTH:
            unread[name] = f"Arazzo documents name each other more than {MAX_DOCUMENT_DEPTH} deep"
            continue
        try:
            fetched = await fetcher.fetch(source_location(url, document))
            child = parse_document(fetched.content)
        except DynamicToolsError as exc:
            unread[name] = exc.message
            continue
        if not isinstance(child, dict) or not isinstance(child.get("arazzo"), str):
            unread[name] = f"'{url}' is not an Arazzo document"
            continue
        sources, missing = await read_sources(child, fetched, fetcher)
        documents, deeper = await read_documents(child, fetched, fetcher, depth=depth + 1)
        unread.update({f"{name}.{k}": v for k, v in {**missing, **deeper}.items()})
        urls = {
            str(s.get("name")): source_location(str(s.get("url", "")), fetched)
            for s in child.get("sourceDescriptions") or []
            if isinstance(s, dict)
        }
        found[name] = ArazzoSource(child, sources, urls, documents)
    return found, unread


__all__ = ["read_documents", "read_sources", "source_location"]
