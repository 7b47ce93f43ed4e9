"""``$ref`` resolution and schema conversion to plain JSON Schema (draft 2020-12).

:class:`SchemaResolver` inlines local references (``#/...``) so a tool's schemas stand alone:

- A reference already being expanded on the current path (a recursive schema) is expanded at
  most ``max_recursion`` times, then cut: the cut leaves ``{"type": "object", "description":
  "... recursive reference to #/components/schemas/X, not expanded"}`` and one warning naming
  the reference (rule ``recursive_ref``).
- References nested more than ``max_depth`` levels deep are summarised the same way (keeping
  the target's ``type``, never adding constraints); the count is reported once per document
  (rule ``ref_depth_limit``). This keeps a tool's schemas small enough for an LLM's context.
- External or dangling references become ``{"description": "unresolved reference ..."}``
  with a warning (rule ``unresolved_ref``).
- Expansions that do not depend on the path they were reached by are memoised and shared, so
  a large document (GitHub's: 1,200 operations over 900 component schemas) converts once.

OpenAPI 3.0 keywords are rewritten to their JSON Schema meaning (``nullable`` → a ``null``
type, boolean ``exclusiveMinimum``/``exclusiveMaximum`` → numbers); presentation-only keys
(``example``, ``xml``, ``externalDocs``, ``discriminator``, ``x-*``) are dropped.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from dynamic_tools.tools.openapi.issues import IssueLog

_DROPPED = frozenset({"example", "xml", "externalDocs", "discriminator", "$schema", "$id"})
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "dependentSchemas"})
_SCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_SCHEMA_ONE = frozenset(
    {
        "additionalProperties",
        "not",
        "contains",
        "if",
        "then",
        "else",
        "propertyNames",
        "unevaluatedItems",
        "unevaluatedProperties",
        "additionalItems",
    }
)
_MISSING = object()


class SchemaResolver:
    """Resolves references in one document and converts its schemas."""

    def __init__(
        self,
        document: dict[str, Any],
        log: IssueLog,
        *,
        openapi_30: bool,
        max_recursion: int = 1,
    ) -> None:
        self.document = document
        self.log = log
        self.openapi_30 = openapi_30
        self.max_recursion = max_recursion
        self.depth_cuts = 0
        self._targets: dict[str, Any] = {}
        self._memo: dict[tuple[str, int], dict[str, Any]] = {}
        self._stack: list[str] = []
        self._floor = 1 << 30  # lowest stack index a recursion cut pointed at

    # --- plain objects (parameters, request bodies, responses, path items) ----------------
    def lookup(self, ref: str) -> Any:
        """The target of a local reference ``#/a/b``, or None when it does not exist."""
        found = self._targets.get(ref, _MISSING)
        if found is not _MISSING:
            return found
        target: Any = None
        if ref.startswith("#"):
            target = self.document
            for raw in ref[1:].lstrip("/").split("/") if ref not in ("#", "#/") else []:
                key = unquote(raw).replace("~1", "/").replace("~0", "~")
                if isinstance(target, dict) and key in target:
                    target = target[key]
                elif isinstance(target, list) and key.isdigit() and int(key) < len(target):
                    target = target[int(key)]
                else:
                    target = None
                    break
        self._targets[ref] = target
        return target

    def deref(self, node: Any, where: str) -> Any:
        """Follow ``$ref`` chains of a non-schema object; None (and a warning) if dangling."""
        seen: set[str] = set()
        while isinstance(node, dict) and isinstance(node.get("$ref"), str):
            ref = node["$ref"]
            if ref in seen:
                self.log.add(where, "recursive_ref", f"reference cycle through {ref}")
                return None
            seen.add(ref)
            target = self.lookup(ref)
            if target is None:
                self.log.add(where, "unresolved_ref", f"unresolved reference {ref}", once=ref)
                return None
            node = target
        return node

    # --- schemas ---------------------------------------------------------------------------
    def schema(self, node: Any, *, max_depth: int) -> Any:
        """``node`` as a self-contained JSON Schema, references inlined up to ``max_depth``."""
        return self._convert(node, max_depth)

    def _convert(self, node: Any, budget: int) -> Any:
        if not isinstance(node, dict):
            return node if isinstance(node, bool) else {}
        ref = node.get("$ref")
        if isinstance(ref, str):
            expanded = self._expand(ref, budget)
            if len(node) == 1:
                return expanded
            siblings = self._keywords({k: v for k, v in node.items() if k != "$ref"}, budget)
            return {**expanded, **siblings}
        return self._keywords(node, budget)

    def _expand(self, ref: str, budget: int) -> dict[str, Any]:
        occurrences = self._stack.count(ref) if ref in self._stack else 0
        if occurrences >= self.max_recursion:
            self._floor = min(self._floor, self._stack.index(ref))
            self.log.add(
                ref,
                "recursive_ref",
                f"recursive reference {ref} was cut after {self.max_recursion} expansion(s); "
                "it is described as a plain object",
                once=f"recursive:{ref}",
            )
            return {"type": "object", "description": _summary(self.lookup(ref), ref, "recursive")}
        target = self.lookup(ref)
        if target is None or not ref.startswith("#"):
            self.log.add(ref, "unresolved_ref", f"unresolved reference {ref}", once=ref)
            return {"description": f"unresolved reference {ref}"}
        if budget <= 0:
            self.depth_cuts += 1
            cut: dict[str, Any] = {"description": _summary(target, ref, "nested")}
            kind = target.get("type") if isinstance(target, dict) else None
            if isinstance(kind, str) and kind != "null" and not _nullable(target):
                cut["type"] = kind
            return cut
        key = (ref, budget)
        memo = self._memo.get(key)
        if memo is not None:
            return memo
        position = len(self._stack)
        outer_floor, self._floor = self._floor, 1 << 30
        self._stack.append(ref)
        try:
            result = self._convert(target, budget - 1)
        finally:
            self._stack.pop()
        if not isinstance(result, dict):
            result = {} if result is True else {"not": {}}
        if self._floor >= position:  # no cut pointed above this expansion: path-independent
            self._memo[key] = result
        self._floor = min(outer_floor, self._floor)
        return result

    def _keywords(self, node: dict[str, Any], budget: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in _DROPPED or key.startswith("x-"):
                continue
            if key in _SCHEMA_MAPS:
                if isinstance(value, dict):
                    out[key] = {name: self._convert(sub, budget) for name, sub in value.items()}
            elif key == "items":
                if isinstance(value, list):  # tuple form
                    out["prefixItems"] = [self._convert(sub, budget) for sub in value]
                else:
                    out[key] = self._convert(value, budget)
            elif key in _SCHEMA_ONE:
                out[key] = self._convert(value, budget)
            elif key in _SCHEMA_LISTS:
                if isinstance(value, list):
                    out[key] = [self._convert(sub, budget) for sub in value]
            elif key == "examples":
                if isinstance(value, list):
                    out[key] = value
            elif key == "required":
                if isinstance(value, list) and all(isinstance(v, str) for v in value):
                    out[key] = value
            else:
                out[key] = value
        if self.openapi_30:
            _rewrite_30(out)
        return out


def _nullable(node: dict[str, Any]) -> bool:
    return node.get("nullable") is True


def _rewrite_30(out: dict[str, Any]) -> None:
    """OpenAPI 3.0 schema keywords in their draft 2020-12 form (in place)."""
    if out.pop("nullable", None) is True:
        kind = out.get("type")
        if isinstance(kind, str):
            out["type"] = [kind, "null"]
        if isinstance(out.get("enum"), list) and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
    for exclusive, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        flag = out.get(exclusive)
        if isinstance(flag, bool):
            del out[exclusive]
            if flag and bound in out:
                out[exclusive] = out.pop(bound)


def _summary(target: Any, ref: str, why: str) -> str:
    text = ""
    if isinstance(target, dict):
        text = str(target.get("title") or target.get("description") or "").strip()
        text = text.splitlines()[0][:200] if text else ""
    note = (
        f"recursive reference to {ref}, not expanded"
        if why == "recursive"
        else f"schema {ref}, not expanded (nesting limit)"
    )
    return f"{text} ({note})" if text else note
