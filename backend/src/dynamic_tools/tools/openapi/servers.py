"""Base URLs from ``servers``: variables' defaults substituted, relative URLs resolved.

A relative server URL (``/v2``, or none at all, which OpenAPI reads as ``/``) is resolved
against the URL the document was fetched from. When that URL is not http(s) (a local file),
the server cannot be used and the caller reports it, unless a ``base_url`` was given.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urljoin, urlsplit

from dynamic_tools.tools.openapi.issues import as_dict

_VARIABLE = re.compile(r"\{([^{}]+)\}")


def server_url(server: Any, document_url: str | None) -> tuple[str | None, str | None]:
    """``(base_url, problem)`` for one Server Object; exactly one of them is None."""
    if not isinstance(server, dict) or not isinstance(server.get("url"), str):
        return None, "a server needs a 'url' string"
    url: str = server["url"].strip()
    variables = as_dict(server.get("variables"))
    missing: list[str] = []

    def substitute(match: re.Match[str]) -> str:
        spec = variables.get(match.group(1))
        if isinstance(spec, dict) and spec.get("default") is not None:
            return str(spec["default"])
        missing.append(match.group(1))
        return match.group(0)

    url = _VARIABLE.sub(substitute, url)
    if missing:
        return None, f"server variable '{missing[0]}' has no default"
    try:
        if not urlsplit(url).scheme:
            if not document_url or urlsplit(document_url).scheme not in ("http", "https"):
                return None, (
                    f"the server URL '{url or '/'}' is relative and the document has no "
                    "http(s) location to resolve it against; pass base_url"
                )
            url = urljoin(document_url, url or "/")
    except ValueError as exc:  # e.g. 'http://[host]': brackets hold only an IP address
        return None, f"'{url}' is not a valid URL ({exc})"
    return clean_base_url(url)


def clean_base_url(url: str) -> tuple[str | None, str | None]:
    """``(url, None)`` for an absolute http(s) URL, else ``(None, problem)``.

    The URL may have no query, fragment or credentials; a trailing ``/`` is removed.
    """
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number in range
    except ValueError as exc:
        return None, f"'{url}' is not a valid URL ({exc})"
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None, f"'{url}' is not an absolute http(s) URL"
    if parts.query or parts.fragment:
        return None, f"'{url}' has a query or fragment"
    if parts.username or parts.password:
        return None, "a base URL must not carry credentials"
    return url.rstrip("/"), None


def first_base_url(servers: Any, document_url: str | None) -> tuple[str | None, str | None]:
    """The first usable server of a ``servers`` list, or ``(None, first problem)``."""
    problem: str | None = None
    for server in servers if isinstance(servers, list) else []:
        url, why = server_url(server, document_url)
        if url is not None:
            return url, None
        problem = problem or why
    return None, problem
