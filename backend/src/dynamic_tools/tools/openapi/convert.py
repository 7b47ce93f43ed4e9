"""A whole document → tools: :func:`convert_document` and its result.

Order of work: detect the kind, normalise Swagger 2.0 to the 3.0 shape, list every operation
in document order, name them all (so that ``include`` never changes a name), then convert the
selected ones. An operation that cannot be represented is skipped with a warning; nothing in
a document makes this raise. A document whose inlined references would grow past
``Limits`` (a "$ref bomb") is refused with a violation naming the limit, and no tools.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from dynamic_tools.safe_parsing import gc_paused
from dynamic_tools.tools.models import ToolConfig
from dynamic_tools.tools.openapi.document import detect_kind
from dynamic_tools.tools.openapi.issues import (
    HTTP_METHODS,
    DocumentKind,
    Issue,
    IssueLog,
    as_dict,
    pointer,
)
from dynamic_tools.tools.openapi.names import NameAllocator, base_name
from dynamic_tools.tools.openapi.operations import Limits, OperationBuilder, Skip
from dynamic_tools.tools.openapi.refs import ExpansionLimit, SchemaResolver, SchemaTooDeep
from dynamic_tools.tools.openapi.security import AuthMapper, secret_env_name
from dynamic_tools.tools.openapi.servers import clean_base_url, first_base_url
from dynamic_tools.tools.openapi.swagger2 import normalise_swagger2
from dynamic_tools.tools.schema_check import remembering


@dataclass(frozen=True)
class ConversionOptions:
    """How to convert.

    Attributes:
        catalog: the catalog name; gives the secret reference ``secret:<CATALOG>_TOKEN``.
        prefix: put before every tool name (``<prefix>_<name>``).
        base_url: use this instead of the document's servers.
        document_url: where the document came from (resolves relative server URLs).
        include: convert only these operations: each entry an operationId, a generated tool
            name, or ``"METHOD /path"``. Unknown entries are violations.
        limits: description length and ``$ref`` inlining depths.
        max_recursion: how many times a recursive ``$ref`` is expanded on one path.
        body_media_types: the request body media type to send, by operation (keyed by its
            operationId or ``"METHOD /path"``, not a tool name as ``include`` also takes), when
            the operation offers several (an Arazzo step's contentType);
            otherwise JSON, else a form, else multipart form data.
    """

    catalog: str | None = None
    prefix: str | None = None
    base_url: str | None = None
    document_url: str | None = None
    include: Sequence[str] | None = None
    limits: Limits = field(default_factory=Limits)
    max_recursion: int = 1
    body_media_types: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class OperationInfo:
    """Where a tool came from."""

    tool: str
    method: str
    path: str
    operation_id: str | None
    pointer: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "tool": self.tool,
            "method": self.method.upper(),
            "path": self.path,
            "operation_id": self.operation_id,
            "pointer": self.pointer,
        }


@dataclass
class ConversionResult:
    """Tools made from a document, what was skipped (warnings) and what is fatal (violations).

    ``operations[i]`` describes ``tools[i]``. ``operation_count`` counts every operation in
    the document, converted or not.
    """

    kind: DocumentKind
    version: str | None = None
    title: str | None = None
    base_url: str | None = None
    operation_count: int = 0
    tools: list[ToolConfig] = field(default_factory=list)
    operations: list[OperationInfo] = field(default_factory=list)
    warnings: list[Issue] = field(default_factory=list)
    violations: list[Issue] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        """True when there is no violation."""
        return not self.violations


@dataclass(frozen=True)
class _Op:
    path: str
    method: str
    op: dict[str, Any]
    item: dict[str, Any]
    where: str
    name: str


def convert_document(document: Any, options: ConversionOptions | None = None) -> ConversionResult:
    """Convert a parsed OpenAPI 2.0 / 3.0 / 3.1 document into :class:`ToolConfig` objects.

    The tools' schemas are checked remembering what passed (:func:`remembering`): the
    expansions the resolver shares between tools are checked once, and never changed after.
    The garbage collector is paused meanwhile (:func:`~dynamic_tools.safe_parsing.gc_paused`):
    the tools are acyclic data, and each full collection would walk the whole document again.
    """
    with gc_paused(), remembering():
        return _convert(document, options or ConversionOptions())


def _convert(document: Any, options: ConversionOptions) -> ConversionResult:
    kind, version = detect_kind(document)
    result = ConversionResult(kind=kind, version=version)
    if kind == "unknown":
        result.violations.append(
            Issue(
                "#",
                "unknown_kind",
                "not an OpenAPI document: expected 'openapi: 3.0.x|3.1.x|3.2.x' or "
                "'swagger: \"2.0\"'",
                actual=version,
            )
        )
        return result
    doc: dict[str, Any] = normalise_swagger2(document) if kind == "openapi_2" else document
    info = doc.get("info")
    if isinstance(info, dict) and info.get("title"):
        result.title = str(info["title"])
    log = IssueLog()
    resolver = SchemaResolver(
        doc,
        log,
        openapi_30=kind == "openapi_2" or str(version).startswith("3.0"),
        max_recursion=options.max_recursion,
        max_schema_bytes=options.limits.max_schema_bytes,
        max_document_bytes=options.limits.max_document_bytes,
        max_document_refs=options.limits.max_document_refs,
        max_levels=options.limits.max_schema_levels,
    )
    operations = _operations(doc, resolver, options, result)
    result.operation_count = len(operations)
    selected = _select(operations, options.include, result)
    base_url, base_problem = _document_base(doc, options, result)
    result.base_url = base_url
    components = as_dict(doc.get("components"))
    auth = AuthMapper(
        components.get("securitySchemes"), log, secret_env=secret_env_name(options.catalog)
    )
    builder = OperationBuilder(resolver, log, options.limits)
    lacking_base = 0
    for entry in selected:
        url = base_url
        if options.base_url is None:
            own = entry.op.get("servers") or entry.item.get("servers")
            if own:
                url = first_base_url(own, options.document_url)[0] or base_url
        if url is None:
            lacking_base += 1
            continue
        requirements = entry.op.get("security", doc.get("security"))
        try:
            data = builder.build(
                name=entry.name,
                method=entry.method,
                path=entry.path,
                where=entry.where,
                op=entry.op,
                item=entry.item,
                base_url=url,
                auth=auth.for_requirements(requirements),
                prefer=options.body_media_types.get(_op_id(entry.op) or "")
                or options.body_media_types.get(f"{entry.method.upper()} {entry.path}"),
            )
            tool = validate_tool(data)
        except Skip as skip:
            log.add(entry.where, skip.rule, f"skipped: {skip.message}")
            continue
        except SchemaTooDeep as deep:
            log.add(entry.where, "max_schema_levels", f"skipped: {deep.message}")
            continue
        except ExpansionLimit as limit:
            result.violations.append(
                Issue(entry.where, limit.rule, limit.message, expected=limit.limit)
            )
            result.tools.clear()
            result.operations.clear()
            break
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            loc = ".".join(str(p) for p in first["loc"]) or "(tool)"
            log.add(entry.where, "invalid_tool", f"skipped: {loc}: {first['msg']}")
            continue
        tool = tool.model_copy(update={"annotations": tool.effective_annotations})
        result.tools.append(tool)
        result.operations.append(
            OperationInfo(entry.name, entry.method, entry.path, _op_id(entry.op), entry.where)
        )
    if lacking_base:
        result.violations.append(
            Issue(
                "#/servers",
                "no_base_url",
                f"{base_problem}; {lacking_base} operation(s) have no usable server URL",
            )
        )
    if resolver.depth_cuts:
        log.add(
            "#",
            "ref_depth_limit",
            f"{resolver.depth_cuts} schema reference(s) nested deeper than the limit "
            f"(input {options.limits.input_depth}, output {options.limits.output_depth}) "
            "are summarised, not expanded",
        )
    if result.operation_count == 0:
        result.violations.append(
            Issue("#/paths", "no_operations", "the document has no operations")
        )
    result.warnings = _swagger_paths(log.items) if kind == "openapi_2" else log.items
    return result


def validate_tool(data: dict[str, Any]) -> ToolConfig:
    """The converter's tool data as a :class:`ToolConfig`, validated (once: the only check)."""
    return ToolConfig.model_validate(data)


_SWAGGER_PLACES = (
    ("#/components/schemas/", "#/definitions/"),
    ("#/components/parameters/", "#/parameters/"),
    ("#/components/responses/", "#/responses/"),
    ("#/components/securitySchemes/", "#/securityDefinitions/"),
)


def _swagger_paths(issues: list[Issue]) -> list[Issue]:
    """Issues of a Swagger 2.0 document pointing at its own places, not the normalised ones."""
    out = []
    for issue in issues:
        path, message = issue.path, issue.message
        for new, old in _SWAGGER_PLACES:
            path, message = path.replace(new, old), message.replace(new, old)
        path = path.removesuffix("/requestBody")
        out.append(Issue(path, issue.rule, message, issue.expected, issue.actual))
    return out


def _operations(
    doc: dict[str, Any],
    resolver: SchemaResolver,
    options: ConversionOptions,
    result: ConversionResult,
) -> list[_Op]:
    paths = doc.get("paths")
    if paths is None:
        return []
    if not isinstance(paths, dict):
        result.violations.append(Issue("#/paths", "invalid_paths", "'paths' must be a mapping"))
        return []
    names = NameAllocator(options.prefix)
    found: list[_Op] = []
    for path, raw_item in paths.items():
        item = resolver.deref(raw_item, pointer("paths", str(path)))
        if not isinstance(item, dict):
            continue
        for method, op in item.items():
            if method not in HTTP_METHODS or not isinstance(op, dict):
                continue
            where = pointer("paths", str(path), method)
            name = names.allocate(base_name(op.get("operationId"), method, str(path)))
            found.append(_Op(str(path), method, op, item, where, name))
    return found


def _select(
    operations: list[_Op], include: Sequence[str] | None, result: ConversionResult
) -> list[_Op]:
    if include is None:
        return operations
    keys: dict[str, int] = {}
    for number, entry in enumerate(operations):
        keys.setdefault(entry.name, number)
        if _op_id(entry.op):
            keys.setdefault(str(_op_id(entry.op)), number)
        keys.setdefault(f"{entry.method.upper()} {entry.path}", number)
    chosen: set[int] = set()
    for position, wanted in enumerate(include):
        text = str(wanted).strip()
        method, _, rest = text.partition(" ")
        index: int | None = keys.get(text)
        if index is None and rest:
            index = keys.get(f"{method.upper()} {rest.strip()}")
        if index is None:
            result.violations.append(
                Issue(
                    f"include[{position}]",
                    "unknown_operation",
                    f"'{text}' matches no operation (use an operationId, a tool name or "
                    "'METHOD /path')",
                )
            )
        else:
            chosen.add(index)
    return [entry for number, entry in enumerate(operations) if number in chosen]


def _document_base(
    doc: dict[str, Any], options: ConversionOptions, result: ConversionResult
) -> tuple[str | None, str | None]:
    if options.base_url is not None:
        url, problem = clean_base_url(options.base_url.strip())
        if url is None:
            result.violations.append(Issue("base_url", "invalid_base_url", str(problem)))
        return url, problem
    servers = doc.get("servers")
    if not servers:
        servers = [{"url": "/"}]  # OpenAPI's default server
    return first_base_url(servers, options.document_url)


def _op_id(op: dict[str, Any]) -> str | None:
    value = op.get("operationId")
    return value if isinstance(value, str) else None
