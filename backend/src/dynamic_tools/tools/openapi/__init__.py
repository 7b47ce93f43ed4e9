"""OpenAPI 2.0 / 3.0 / 3.1 documents → :class:`~dynamic_tools.tools.models.ToolConfig` tools.

Public API::

    parse_document(content: bytes | str, *, max_bytes=MAX_DOCUMENT_BYTES) -> Any
        JSON or YAML (safe) → plain data; InvalidInputError (violation path "source") when
        too large, not text, or not parseable.
    detect_kind(document) -> tuple[DocumentKind, str | None]
        ("openapi_2", "2.0") | ("openapi_3", "3.0.3" / "3.1.0") | ("unknown", version-ish)
    normalise_swagger2(document) -> dict
        Swagger 2.0 in OpenAPI 3.0 form (servers, requestBody, components).
    convert_document(document, ConversionOptions(...)) -> ConversionResult
        .kind .version .title .base_url .operation_count
        .tools: list[ToolConfig]; .operations: list[OperationInfo] (aligned with tools)
        .warnings / .violations: list[Issue] (path = JSON pointer, rule, message)
    find_provider_contracts(tools) -> list[ProviderContract]
        list/search operations whose result items feed other tools' inputs.

Never raises for the content of a parsed document: unusable parts are warnings, an unusable
document is reported through ``violations``.
"""

from dynamic_tools.tools.openapi.convert import (
    ConversionOptions,
    ConversionResult,
    OperationInfo,
    convert_document,
)
from dynamic_tools.tools.openapi.document import MAX_DOCUMENT_BYTES, detect_kind, parse_document
from dynamic_tools.tools.openapi.issues import DocumentKind, Issue
from dynamic_tools.tools.openapi.operations import Limits
from dynamic_tools.tools.openapi.providers import ProviderContract, find_provider_contracts
from dynamic_tools.tools.openapi.swagger2 import normalise_swagger2

__all__ = [
    "MAX_DOCUMENT_BYTES",
    "ConversionOptions",
    "ConversionResult",
    "DocumentKind",
    "Issue",
    "Limits",
    "OperationInfo",
    "ProviderContract",
    "convert_document",
    "detect_kind",
    "find_provider_contracts",
    "normalise_swagger2",
    "parse_document",
]
