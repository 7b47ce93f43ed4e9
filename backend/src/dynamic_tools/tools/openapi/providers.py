"""Provider contracts: list/search operations whose results supply other tools' inputs.

A *provider* is a GET tool on a collection path (its last segment is not a ``{placeholder}``)
whose output is an array of objects, or an object with one array-of-objects property
(``{"total_count": 3, "items": [...]}``). Its *resource* is the last
literal path segment that is not a verb (``/pets`` → ``pet``, ``/pet/findByStatus`` → ``pet``,
``/repos/{owner}/{repo}/issues`` → ``issue``), made singular.

An item field ``F`` (a scalar property of the items) *feeds* parameter ``P`` of another tool
when, comparing names case-insensitively without ``_`` and ``-``:

1. ``P`` is the resource followed by ``F`` (``id`` → ``pet_id`` / ``petId``;
   ``number`` → ``issue_number``);
2. ``P`` equals ``F`` and ``F`` is an identifier other than a bare ``id`` (ends in ``id``, or is
   ``key``, ``slug``, ``sha``, ``uuid``, ``login``);
3. ``P`` is the resource itself and ``F`` is the first of ``login``, ``slug``, ``name``,
   ``key``, ``id`` the items have (``repo`` ← ``name`` of a repository list).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from dynamic_tools.tools.models import ToolConfig

_VERB = re.compile(r"^(find|search|list|get|query|fetch|all)", re.IGNORECASE)
_IDENTIFIERS = ("key", "slug", "sha", "uuid", "login")
_NAMING_FIELDS = ("login", "slug", "name", "key", "id")
_SCALARS = frozenset({"string", "integer", "number"})


@dataclass(frozen=True)
class ProviderContract:
    """``provider`` returns items whose ``output_field`` feeds each ``tool.param`` in ``feeds``.

    ``items_at`` is the property holding the items (empty when the result is the array);
    ``required_parameters`` are what calling the provider needs (a search's ``query``...), with
    their JSON Schemas.
    """

    provider: str
    output_field: str
    feeds: tuple[str, ...]
    items_at: str = ""
    required_parameters: tuple[tuple[str, dict[str, Any]], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "provider": self.provider,
            "output_field": self.output_field,
            "items_at": self.items_at,
            "feeds": list(self.feeds),
            "required_parameters": [
                {"name": name, "schema": schema} for name, schema in self.required_parameters
            ],
        }


def find_provider_contracts(tools: Iterable[ToolConfig]) -> list[ProviderContract]:
    """Every provider contract among ``tools``, in tool order then field order."""
    tools = list(tools)
    consumers: dict[str, list[str]] = {}
    for tool in tools:
        for param in tool.parameters:
            consumers.setdefault(_norm(param), []).append(f"{tool.name}.{param}")
    contracts: list[ProviderContract] = []
    for tool in tools:
        found = _items(tool)
        if found is None:
            continue
        items_at, fields = found
        required = tuple(
            (name, param.schema_) for name, param in tool.parameters.items() if param.required
        )
        resource = _resource(tool.api.path)
        naming = next((f for f in _NAMING_FIELDS if f in fields), None)
        for field in fields:
            wanted: set[str] = set()
            if resource:
                wanted.add(_norm(resource + field))
                if field == naming:
                    wanted.add(_norm(resource))
            if _is_identifier(field):
                wanted.add(_norm(field))
            feeds = sorted(
                {
                    target
                    for key in wanted
                    for target in consumers.get(key, [])
                    if not target.startswith(tool.name + ".")
                }
            )
            if feeds:
                contracts.append(
                    ProviderContract(tool.name, field, tuple(feeds), items_at, required)
                )
    return contracts


def _items(tool: ToolConfig) -> tuple[str, list[str]] | None:
    """``(items_at, scalar item fields)`` of a provider, or None."""
    schema = tool.output_schema
    if tool.api.method != "GET" or not isinstance(schema, dict):
        return None
    if tool.api.path.rstrip("/").rsplit("/", 1)[-1].startswith("{"):
        return None  # one item, not a list
    fields = _item_fields(schema)
    if fields:
        return "", fields
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return None
    arrays = [(name, _item_fields(sub)) for name, sub in properties.items()]
    arrays = [(name, found) for name, found in arrays if found]
    if len(arrays) == 1:
        return arrays[0]
    return None


def _item_fields(schema: Any) -> list[str]:
    if not isinstance(schema, dict) or not _has_type(schema, "array"):
        return []
    items = schema.get("items")
    if not isinstance(items, dict):
        return []
    properties = items.get("properties")
    if not isinstance(properties, dict):
        return []
    return [
        name
        for name, sub in properties.items()
        if isinstance(sub, dict) and (not sub.get("type") or _scalar(sub.get("type")))
    ]


def _has_type(schema: dict[str, Any], kind: str) -> bool:
    value = schema.get("type")
    return value == kind or (isinstance(value, list) and kind in value)


def _scalar(kind: Any) -> bool:
    kinds = kind if isinstance(kind, list) else [kind]
    return any(k in _SCALARS for k in kinds)


def _resource(path: str) -> str | None:
    literals = [s for s in path.split("/") if s and "{" not in s and not _VERB.match(s)]
    if not literals:
        return None
    word = literals[-1]
    if word.endswith("ies") and len(word) > 3:
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def _is_identifier(field: str) -> bool:
    norm = _norm(field)
    return norm != "id" and (norm.endswith("id") or norm in _IDENTIFIERS)


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())
