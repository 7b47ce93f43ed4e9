"""Request and response of the single-shot pipeline: its design's fields, plus extras.

Design: docs/design-sources.md#single-shot-pipeline-design.

Extras beyond the design: ``warnings``, ``timings_ms`` (per stage and ``total``) and ``usage``
(LLM tokens summed over every LLM call of the request).
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, WithJsonSchema, field_validator

from dynamic_tools.lazy_model import LazyModel
from dynamic_tools.sparse import Sparse

ErrorStage = Literal[
    "tool_retrieval",
    "tool_context_generation",
    "llm_selection",
    "api_execution",
    "result_sql",
    "response_formatting",
]


WORKFLOW_EXAMPLE: dict[str, JsonValue] = {
    "user_instructions": "Find flights from AMS to BCN on 2026-12-01",
    "tool_ids": ["search_flights", "check_availability"],
    "format_response": False,
}
"""The /docs example: tools of the bundled travel example (``make run``)."""


class WorkflowRequest(LazyModel):
    """Request model for complete MCP workflow execution."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,  # JSON types as documented
        json_schema_extra={"examples": [WORKFLOW_EXAMPLE]},
    )

    user_instructions: str = Field(
        ...,
        min_length=1,
        max_length=20_000,
        description="Natural language instructions for what to accomplish",
        json_schema_extra={"pattern": r"\S"},  # not blank: checked below, with its own message
    )
    tool_ids: list[str] = Field(
        ...,
        min_length=1,
        max_length=500,
        description="List of tool identifiers to make available for selection",
        json_schema_extra={"items": {"type": "string", "pattern": r"\S"}},  # none blank
    )
    format_response: bool = Field(
        default=False, description="Whether to format the raw API response using LLM"
    )
    response_format_instructions: str | None = Field(
        default=None, max_length=5_000, description="Custom instructions for response formatting"
    )
    sql: str | None = Field(
        default=None,
        min_length=1,
        max_length=20_000,
        description="SQL run over the API's answer once it arrives: one read-only SELECT/WITH "
        "over the table 'result' (the response's rows: the body when it is a list, else the "
        "first list inside it, e.g. a GraphQL field; one object is one row), to filter, rank "
        "or aggregate what the API cannot. The answer's 'sql' says what ran and its rows.",
    )

    @field_validator("user_instructions")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value

    @field_validator("tool_ids")
    @classmethod
    def _ids_not_blank(cls, value: list[str]) -> list[str]:
        for index, item in enumerate(value):
            if not item.strip():
                raise ValueError(f"item {index} is blank")
        return value


class TokenUsage(LazyModel):
    """LLM tokens used by one request, over every LLM call it made."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    llm_calls: int = 0

    def add(self, prompt: int, completion: int, *, calls: int = 1) -> None:
        """Count ``calls`` requests to the LLM (a failed one too) and their tokens."""
        self.prompt_tokens += prompt
        self.completion_tokens += completion
        self.total_tokens += prompt + completion
        self.llm_calls += calls


class SqlApplied(LazyModel):
    """What the ``sql`` of a request did with the API's answer."""

    query: str = Field(description="The SQL that ran")
    table_rows: int = Field(description="Rows of the table 'result' it ran over")
    rows: list[dict[str, Any]] = Field(description="What it returned")


class GraphQLError(LazyModel):
    """One error of a GraphQL answer: its message and the path of the field it is about."""

    message: str
    path: list[str | int]


class HttpSpec(Sparse):
    """The HTTP request built from the registry, as shown (secrets as ``***``).

    ``PreparedRequest.http_spec`` builds it; the answer keeps that mapping as it is, documented
    with this model (a test checks that the two agree).
    """

    model_config = ConfigDict(extra="forbid")

    SPARSE: ClassVar[frozenset[str]] = frozenset(
        {"query_params", "headers", "content_type", "body"}
    )

    method: str
    url: str
    query_params: dict[str, str | list[str]] | None = Field(
        default=None, description="Each query parameter: its value, or a repeated one's values"
    )
    headers: dict[str, str] | None = None
    content_type: str | None = Field(
        default=None,
        description="How the body travels, when it has one: application/json, "
        "application/x-www-form-urlencoded or multipart/form-data",
    )
    body: Any = Field(
        default=None,
        description="The body's fields, when it has one: secret fields as ***, files as their "
        "filename, content_type and size_bytes",
    )


class RawResponse(Sparse):
    """What the API answered (the single-shot pipeline design's ``raw_response``, with headers).

    ``HttpResult.to_dict`` builds it; the answer keeps that mapping as it is, documented with
    this model (a test checks that the two agree).
    """

    model_config = ConfigDict(extra="forbid")

    SPARSE: ClassVar[frozenset[str]] = frozenset({"truncated", "graphql_errors"})

    status_code: int
    headers: dict[str, str]
    body: Any = Field(description="The body: JSON when it parses, else its text")
    execution_time_ms: float
    truncated: bool | None = Field(default=None, description="Cut at the size limit")
    graphql_errors: list[GraphQLError] | None = Field(
        default=None, description="A GraphQL answer's errors (the call failed)"
    )


def _documented_as(model: type[BaseModel]) -> WithJsonSchema:
    """The JSON Schema of ``model`` for a field kept as a mapping of that shape."""
    return WithJsonSchema(_inline_schema(model))


def _inline_schema(model: type[BaseModel]) -> dict[str, Any]:
    """``model``'s serialization JSON Schema with its ``$defs`` written in place."""
    schema = model.model_json_schema(mode="serialization")
    defs: dict[str, Any] = schema.pop("$defs", {})

    def resolve(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                return resolve(defs[ref.removeprefix("#/$defs/")])
            return {key: resolve(value) for key, value in node.items()}
        if isinstance(node, list):
            return [resolve(item) for item in node]
        return node

    resolved: dict[str, Any] = resolve(schema)
    return resolved


class WorkflowResponse(LazyModel):
    """Response model for workflow execution results."""

    status: Literal["success", "error"] = Field(
        ..., description="Overall workflow execution status"
    )
    selected_tool: str | None = Field(
        default=None, description="Name of the tool selected by LLM (present on success)"
    )
    arguments: dict[str, Any] | None = Field(
        default=None, description="The arguments the LLM chose, after validation"
    )
    http_spec: Annotated[dict[str, Any], _documented_as(HttpSpec)] | None = Field(
        default=None,
        description="The HTTP request built from the registry (secrets shown as ***)",
    )
    raw_response: Annotated[dict[str, Any], _documented_as(RawResponse)] | None = Field(
        default=None, description="Raw API response data (present on success)"
    )
    formatted_response: str | None = Field(
        default=None, description="LLM-formatted response (present when format_response=true)"
    )
    error: str | None = Field(default=None, description="Error message (present on error)")
    error_stage: ErrorStage | None = Field(
        default=None, description="Stage where error occurred (present on error)"
    )
    warnings: list[str] = Field(default_factory=list, description="Non-fatal problems")
    timings_ms: dict[str, float] = Field(
        default_factory=dict, description="Milliseconds per stage, and 'total'"
    )
    sql: SqlApplied | None = Field(
        default=None, description="The SQL run over the answer, and its rows (when asked)"
    )
    usage: TokenUsage = Field(default_factory=TokenUsage, description="LLM token usage")
