"""Findings of a conversion: warnings (something was skipped) and violations (unusable).

Both have the shape of a validation violation: ``path`` (a JSON pointer into the document,
``#/paths/...``),
``rule`` (a stable identifier) and ``message``; ``expected`` / ``actual`` when they help.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

DocumentKind = Literal["openapi_2", "openapi_3", "graphql", "unknown"]
HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


@dataclass(frozen=True)
class Issue:
    """One finding, pointing at the part of the document it is about."""

    path: str
    rule: str
    message: str
    expected: Any = None
    actual: Any = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``expected`` / ``actual`` only when set)."""
        data: dict[str, Any] = {"path": self.path, "rule": self.rule, "message": self.message}
        if self.expected is not None:
            data["expected"] = self.expected
        if self.actual is not None:
            data["actual"] = self.actual
        return data


def pointer(*parts: str) -> str:
    """A JSON pointer (``#/a/b~1c``) from raw segments, escaped per RFC 6901."""
    escaped = (p.replace("~", "~0").replace("/", "~1") for p in parts)
    return "#/" + "/".join(escaped)


class IssueLog:
    """Collects warnings; a key given with a warning makes it appear once per document."""

    def __init__(self) -> None:
        self.items: list[Issue] = []
        self._seen: set[str] = set()

    def add(self, path: str, rule: str, message: str, *, once: str | None = None) -> None:
        """Record a warning (only the first time for a given ``once`` key)."""
        if once is not None:
            if once in self._seen:
                return
            self._seen.add(once)
        self.items.append(Issue(path, rule, message))


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` when it is a mapping, else an empty one (documents are untrusted data)."""
    return value if isinstance(value, dict) else {}
