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

What inlining produces is measured *while* it is built, bottom-up, with each memoised
expansion's measures kept beside it: its size (approximate JSON bytes), the references it
inlines, and how deep its schemas nest. Shared expansions are cheap to build but not to use
(a tool manifest writes every copy), so a document whose references multiply (a "$ref bomb":
8 levels of 10 references each make 10^8 copies of 4 KB of text) is stopped at the first
expansion that crosses a limit, long before anything is copied:

- one schema (a parameter, the body, the output) over ``max_schema_bytes``, or all of a
  document's schemas over ``max_document_bytes`` or ``max_document_refs`` references, raise
  :class:`ExpansionLimit` (the conversion is refused);
- a schema nesting deeper than ``max_levels`` raises :class:`SchemaTooDeep` (the operation is
  skipped), which also keeps the recursion here far from Python's limit.

OpenAPI 3.0 keywords are rewritten to their JSON Schema meaning (``nullable`` → a ``null``
type, boolean ``exclusiveMinimum``/``exclusiveMaximum`` → numbers); presentation-only keys
(``example``, ``xml``, ``externalDocs``, ``discriminator``, ``x-*``) are dropped.
"""

from __future__ import annotations

from typing import Any, NamedTuple
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
MAX_SCHEMA_BYTES = 2 * 1024 * 1024
MAX_DOCUMENT_BYTES = 32 * 1024 * 1024
MAX_DOCUMENT_REFS = 100_000
MAX_LEVELS = 40


class ExpansionLimit(Exception):
    """Inlining references would produce more than a limit allows; the conversion stops.

    Attributes:
        rule: ``max_schema_bytes``, ``max_document_bytes`` or ``max_document_refs``.
        ref: the reference whose expansion crossed the limit.
        limit: the limit.
        message: says which limit, and where.
    """

    def __init__(self, rule: str, ref: str, limit: int, message: str) -> None:
        super().__init__(rule, ref, limit, message)
        self.rule = rule
        self.ref = ref
        self.limit = limit
        self.message = message


class SchemaTooDeep(Exception):
    """A schema would nest deeper than ``limit`` schema levels once inlined (at ``ref``)."""

    def __init__(self, ref: str, limit: int) -> None:
        super().__init__(ref, limit)
        self.ref = ref
        self.limit = limit
        self.message = (
            f"its schema nests deeper than {limit} levels once references are inlined "
            f"(through {ref})"
        )


class _Built(NamedTuple):
    """A converted schema and its measures: JSON bytes, references inlined, nesting height."""

    value: Any
    size: int
    refs: int
    height: int


class SchemaResolver:
    """Resolves references in one document and converts its schemas."""

    def __init__(
        self,
        document: dict[str, Any],
        log: IssueLog,
        *,
        openapi_30: bool,
        max_recursion: int = 1,
        max_schema_bytes: int = MAX_SCHEMA_BYTES,
        max_document_bytes: int = MAX_DOCUMENT_BYTES,
        max_document_refs: int = MAX_DOCUMENT_REFS,
        max_levels: int = MAX_LEVELS,
    ) -> None:
        self.document = document
        self.log = log
        self.openapi_30 = openapi_30
        self.max_recursion = max_recursion
        self.max_schema_bytes = max_schema_bytes
        self.max_document_bytes = max_document_bytes
        self.max_document_refs = max_document_refs
        self.max_levels = max_levels
        self.depth_cuts = 0
        self.produced_bytes = 0  # by every schema returned so far
        self.produced_refs = 0
        self._targets: dict[str, Any] = {}
        self._memo: dict[tuple[str, int], _Built] = {}
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
        """``node`` as a self-contained JSON Schema, references inlined up to ``max_depth``.

        Raises :class:`ExpansionLimit` or :class:`SchemaTooDeep` (see the module docstring).
        """
        built = self._convert(node, max_depth, 0, "#")
        self.produced_bytes += built.size
        self.produced_refs += built.refs
        return built.value

    def _convert(self, node: Any, budget: int, level: int, where: str) -> _Built:
        if not isinstance(node, dict):
            return _Built(node, 5, 0, 0) if isinstance(node, bool) else _Built({}, 2, 0, 0)
        ref = node.get("$ref")
        if isinstance(ref, str):
            expanded = self._expand(ref, budget, level)
            if len(node) == 1:
                return expanded
            siblings = self._keywords(
                {k: v for k, v in node.items() if k != "$ref"}, budget, level, ref
            )
            return _Built(
                {**expanded.value, **siblings.value},
                expanded.size + siblings.size,
                expanded.refs + siblings.refs,
                max(expanded.height, siblings.height),
            )
        return self._keywords(node, budget, level, where)

    def _expand(self, ref: str, budget: int, level: int) -> _Built:
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
            cut = {"type": "object", "description": _summary(self.lookup(ref), ref, "recursive")}
            return _Built(cut, _plain_size(cut), 1, 1)
        target = self.lookup(ref)
        if target is None or not ref.startswith("#"):
            self.log.add(ref, "unresolved_ref", f"unresolved reference {ref}", once=ref)
            unresolved = {"description": f"unresolved reference {ref}"}
            return _Built(unresolved, _plain_size(unresolved), 0, 1)
        if budget <= 0:
            self.depth_cuts += 1
            cut = {"description": _summary(target, ref, "nested")}
            kind = target.get("type") if isinstance(target, dict) else None
            if isinstance(kind, str) and kind != "null" and not _nullable(target):
                cut["type"] = kind
            return _Built(cut, _plain_size(cut), 1, 1)
        key = (ref, budget)
        memo = self._memo.get(key)
        if memo is None:
            position = len(self._stack)
            outer_floor, self._floor = self._floor, 1 << 30
            self._stack.append(ref)
            try:
                built = self._convert(target, budget - 1, level, ref)
                value = built.value
                if not isinstance(value, dict):
                    value = {} if value is True else {"not": {}}
                memo = _Built(value, built.size, built.refs + 1, max(built.height, 1))
                if self._floor >= position:  # no cut pointed above it: path-independent
                    self._memo[key] = memo
            finally:
                self._stack.pop()
                self._floor = min(outer_floor, self._floor)
        self._check(memo, ref, level)
        return memo

    def _check(self, built: _Built, ref: str, level: int) -> None:
        """Refuse an expansion that crosses a limit (the bottom-up measures make it exact)."""
        if level + built.height > self.max_levels:
            raise SchemaTooDeep(ref, self.max_levels)
        if built.size > self.max_schema_bytes:
            raise ExpansionLimit(
                "max_schema_bytes",
                ref,
                self.max_schema_bytes,
                f"inlining {ref} makes a schema of more than {self.max_schema_bytes:,} bytes "
                "(limit max_schema_bytes); its references multiply",
            )
        if self.produced_bytes + built.size > self.max_document_bytes:
            raise ExpansionLimit(
                "max_document_bytes",
                ref,
                self.max_document_bytes,
                f"inlining {ref} takes the document's schemas past {self.max_document_bytes:,} "
                "bytes (limit max_document_bytes); its references multiply",
            )
        if self.produced_refs + built.refs > self.max_document_refs:
            raise ExpansionLimit(
                "max_document_refs",
                ref,
                self.max_document_refs,
                f"inlining {ref} takes the document past {self.max_document_refs:,} inlined "
                "references (limit max_document_refs); its references multiply",
            )

    def _keywords(self, node: dict[str, Any], budget: int, level: int, where: str) -> _Built:
        if level >= self.max_levels:
            raise SchemaTooDeep(where, self.max_levels)
        out: dict[str, Any] = {}
        size, refs, height = 2, 0, 1

        def sub(value: Any) -> Any:
            nonlocal size, refs, height
            built = self._convert(value, budget, level + 1, where)
            size += built.size + 2
            refs += built.refs
            height = max(height, built.height + 1)
            return built.value

        for key, value in node.items():
            if key in _DROPPED or key.startswith("x-"):
                continue
            size += len(key) + 4
            if key in _SCHEMA_MAPS:
                if isinstance(value, dict):
                    out[key] = {name: sub(item) for name, item in value.items()}
                    size += sum(len(str(name)) + 4 for name in value)
            elif key == "items":
                if isinstance(value, list):  # tuple form
                    out["prefixItems"] = [sub(item) for item in value]
                else:
                    out[key] = sub(value)
            elif key in _SCHEMA_ONE:
                out[key] = sub(value)
            elif key in _SCHEMA_LISTS:
                if isinstance(value, list) and value:  # an empty oneOf is invalid: dropped
                    out[key] = [sub(item) for item in value]
            elif key == "examples":
                if isinstance(value, list):
                    out[key] = value
                    size += _plain_size(value)
            elif key == "required":
                if isinstance(value, list) and all(isinstance(v, str) for v in value):
                    out[key] = value
                    size += _plain_size(value)
            else:
                out[key] = value
                if isinstance(value, str):  # most keywords: measured here, not walked
                    size += len(value) + 2
                else:
                    size += _plain_size(value)
        if self.openapi_30:
            _rewrite_30(out)
        return _Built(out, size, refs, height)


def _plain_size(value: Any) -> int:
    """About how many bytes ``value`` takes as JSON (without recursion)."""
    size = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            size += len(item) + 2
        elif isinstance(item, dict):
            size += 2 + sum(len(str(k)) + 4 for k in item)
            stack.extend(item.values())
        elif isinstance(item, list):
            size += 2 + len(item)
            stack.extend(item)
        else:
            size += 6
    return size


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
