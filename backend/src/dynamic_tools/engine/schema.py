"""The JSON Schema of workflow documents (served as the ``workflow.schema`` resource)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any, get_args

from dynamic_tools.engine.models import ParamType, WorkflowDocument

SCHEMA_ID = "https://dynamic-tools.dev/schemas/workflow-document.json"


@lru_cache(maxsize=1)
def document_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) a document must satisfy before semantic validation."""
    schema = WorkflowDocument.model_json_schema(by_alias=True, mode="validation")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = SCHEMA_ID
    schema["title"] = "Dynamic Tools workflow document"
    # The designs write `expects: {field: str}`: a type name is short for
    # {type: ..., required: true}.
    type_names = list(get_args(ParamType))
    schema["$defs"]["YieldNode"]["properties"]["expects"]["additionalProperties"] = {
        "anyOf": [{"$ref": "#/$defs/AnswerSpec"}, {"enum": type_names}]
    }
    return schema


__all__ = [
    "SCHEMA_ID",
    "document_schema",
]
