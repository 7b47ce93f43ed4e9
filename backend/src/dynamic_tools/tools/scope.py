"""What a run may call beyond the server registry: the tools of the MCP session that started it.

A session that brings its own API (``X-Target-URL``) and its own workflows (``X-Workflow-URL``)
runs those workflows against everything it can call: the registry, the operations of its API,
and its core tools ``{prefix}_query`` / ``{prefix}_execute``. A :class:`ToolScope` is that set,
frozen when the run starts and stored with it, so a run resumed by another process (after a
restart, on another replica) calls exactly what it was validated against, with the session's
outbound headers (``X-Target-Headers``, stored sealed, never shown).

A run of a model-composed workflow (``composed``) carries a scope too, even without tools of its
own: it holds every call of the run to the safe-by-default rule (``tools/safety.py``) with the
session's ``X-Allow-Unsafe-Paths``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dynamic_tools.tools.models import ToolConfig

__all__ = ["CORE_SUFFIXES", "ToolScope"]

CORE_SUFFIXES = ("_query", "_execute")


@dataclass(frozen=True)
class ToolScope:
    """The session's own tools, its core tools' prefix and its outbound headers.

    ``tools`` are the operations of the session's API (empty when the session uses the
    registry as its API: then ``{prefix}_query`` / ``{prefix}_execute`` work over the
    registry); a GraphQL API's free query tools are stored there too, under the core tools'
    names. ``headers`` go with every call of those operations, and of the core tools when
    they work over them; never with a registry tool (whose credentials are the server's),
    even when the core tools work over the registry.
    """

    prefix: str
    tools: dict[str, ToolConfig] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict, repr=False)
    #: X-Allow-Unsafe-Paths: glob patterns of paths, operation names or mutation fields that
    #: model-composed calls may use although they change things (``tools/safety.py``)
    allow_unsafe: tuple[str, ...] = ()
    #: the run's workflow was composed by a model (a draft run from MCP, or one the authoring
    #: job drafted): every call it makes is held to the safe-by-default rule
    composed: bool = False

    @property
    def core_tools(self) -> tuple[str, str]:
        """``{prefix}_query`` and ``{prefix}_execute``."""
        return (f"{self.prefix}_query", f"{self.prefix}_execute")

    @property
    def operations(self) -> dict[str, ToolConfig]:
        """The session's API operations (without the stored core tools of a GraphQL API)."""
        return {n: t for n, t in self.tools.items() if n not in self.core_tools}

    def names(self) -> set[str]:
        """Every name this scope adds to the registry's."""
        return set(self.tools) | set(self.core_tools)

    def to_record(self) -> dict[str, Any]:
        """JSON form without the headers (stored apart, sealed)."""
        return {
            "prefix": self.prefix,
            "tools": {n: t.model_dump(mode="json", by_alias=True) for n, t in self.tools.items()},
            "allow_unsafe": list(self.allow_unsafe),
            **({"composed": True} if self.composed else {}),
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any], headers: dict[str, str]) -> ToolScope:
        """Inverse of :meth:`to_record`."""
        return cls(
            prefix=str(record["prefix"]),
            tools={str(n): ToolConfig.model_validate(t) for n, t in dict(record["tools"]).items()},
            headers=headers,
            allow_unsafe=tuple(str(p) for p in record.get("allow_unsafe") or ()),
            composed=record.get("composed") is True,
        )
