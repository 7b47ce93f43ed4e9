"""Principals and scopes: who makes a request, and what they may do.

Scopes (README "Access control"):

- ``read``: list and view definitions (workflows, tools, catalogs) and one's own runs;
- ``run``: start, resume, cancel and redrive one's own runs; call tools over MCP;
- ``author``: save, rename and import workflows, tools, catalogs and markdown workflows;
- ``admin``: everything, including deleting, purging, every principal's runs and tasks, keys
  and recovery. ``admin`` holds every other scope; no other scope implies another.

With no credential configured at all (no ``API_TOKEN``, no API key, no issuer) the server is
a one-person tool: every request is :data:`LOCAL`, an admin — and the server listens on
loopback only unless told otherwise.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum

__all__ = ["ADMIN_ID", "LOCAL", "Principal", "Scope", "parse_scopes"]


class Scope(StrEnum):
    """What a principal may do."""

    READ = "read"
    RUN = "run"
    AUTHOR = "author"
    ADMIN = "admin"


#: the principal id of the API_TOKEN holder and of one-person setups; runs created before
#: ownership existed belong to it
ADMIN_ID = "admin"


@dataclass(frozen=True)
class Principal:
    """Who makes a request: a stable ``id``, a display ``name``, how they proved it, scopes."""

    id: str
    name: str
    kind: str  # token (API_TOKEN) | key (an API key) | oauth (an access token) | local
    scopes: frozenset[Scope] = field(default_factory=frozenset)

    @property
    def is_admin(self) -> bool:
        """Whether this principal holds ``admin`` (every scope, every principal's data)."""
        return Scope.ADMIN in self.scopes

    def may(self, scope: Scope) -> bool:
        """Whether this principal holds ``scope`` (``admin`` holds them all)."""
        return self.is_admin or scope in self.scopes

    def owns(self, owner: str | None) -> bool:
        """Whether data owned by ``owner`` is this principal's to see and act on."""
        return self.is_admin or owner == self.id

    def to_dict(self) -> dict[str, object]:
        """The principal as ``GET /me`` shows it."""
        return {
            "id": self.id,
            "name": self.name,
            "kind": self.kind,
            "scopes": sorted(s.value for s in self.scopes),
        }


#: every request of a server with no credential configured
LOCAL = Principal(ADMIN_ID, "local user", "local", frozenset(Scope))


def parse_scopes(values: Iterable[str] | str) -> frozenset[Scope]:
    """Scopes from names (``"read,run"``, ``"read run"`` or a list).

    Raises:
        ValueError: an unknown scope (the message lists the known ones).
    """
    if isinstance(values, str):
        values = values.replace(",", " ").split()
    found: set[Scope] = set()
    for value in values:
        name = value.strip().lower()
        if not name:
            continue
        try:
            found.add(Scope(name))
        except ValueError:
            known = ", ".join(s.value for s in Scope)
            raise ValueError(f"unknown scope '{value}'; the scopes are {known}") from None
    return frozenset(found)
