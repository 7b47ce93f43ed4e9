"""Tool names: ``[a-zA-Z0-9_-]``, at most 64 characters, unique, deterministic.

A name comes from the operationId (else ``<method> <path>``, e.g. ``get_pets_petId``), with
an optional prefix. Other characters become ``_``. A name over 64 characters is cut to 55
and given ``_`` plus the first 8 hex digits of the SHA-1 of the full name, so the same
document always yields the same names and two long names that share a beginning still
differ. A name already taken gets ``_2``, ``_3``... (inside the 64 characters), in document
order.
"""

from __future__ import annotations

import hashlib
import re

MAX_NAME = 64
_HASH_LEN = 8
_INVALID = re.compile(r"[^a-zA-Z0-9_-]+")


def sanitise(text: str) -> str:
    """``text`` with every run of other characters replaced by ``_`` (ends trimmed)."""
    return _INVALID.sub("_", text).strip("_")


def base_name(operation_id: object, method: str, path: str) -> str:
    """The unsanitised, unprefixed name of an operation."""
    if isinstance(operation_id, str) and sanitise(operation_id):
        return operation_id
    return f"{method.lower()} {path}"


def shorten(name: str, limit: int = MAX_NAME) -> str:
    """``name`` if it fits, else its first characters, ``_`` and a short hash of all of it."""
    if len(name) <= limit:
        return name
    digest = hashlib.sha1(name.encode("utf-8"), usedforsecurity=False).hexdigest()[:_HASH_LEN]
    return f"{name[: limit - _HASH_LEN - 1].rstrip('_-')}_{digest}"


class NameAllocator:
    """Hands out unique tool names in call order."""

    def __init__(self, prefix: str | None = None) -> None:
        self.prefix = sanitise(prefix) if prefix else ""
        self._taken: set[str] = set()

    def allocate(self, raw: str) -> str:
        """A unique, valid name for ``raw`` (an operationId or ``method_path``)."""
        name = sanitise(raw) or "operation"
        if self.prefix:
            name = f"{self.prefix}_{name}"
        name = shorten(name)
        candidate, counter = name, 1
        while candidate in self._taken:
            counter += 1
            suffix = f"_{counter}"
            candidate = shorten(name, MAX_NAME - len(suffix)) + suffix
        self._taken.add(candidate)
        return candidate
