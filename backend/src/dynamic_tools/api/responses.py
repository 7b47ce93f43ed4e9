"""The error answers of the REST API as the OpenAPI document shows them.

Every error body has one shape (built in ``api/errors.py``); :class:`ErrorBody` is its schema.
Routes declare the statuses they can answer with ``responses=errors(...)`` so the document
lists every status a route gives, each with this model:

- 400: the body could not be read (bytes that are not UTF-8 JSON text);
- 404: an id in the path names nothing;
- 409: a stale ``expected_version``, an existing name, or a state that forbids the action;
- 413: the body is over the size limit;
- 422: a parameter or body field does not validate (``violations`` names each);
- 429: too many requests to one webhook (``Retry-After``);
- 502: an outbound call the operation needs could not be made;
- 503: the server is not set up for the operation (the message names the setting).

``BODY`` and ``PARAMS`` are the sets every route with a body, or with parameters, can answer.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, Field

from dynamic_tools.sparse import Sparse
from dynamic_tools.violations import Problem


class Violation(Problem):
    """One thing wrong with the input: where and why.

    The keys of a :class:`Problem`, each there only where the check that found it gives it
    (a request field's violation has ``path``, ``rule`` and ``message``; an expression's has
    ``expression``, ``position`` and ``node_id``; a SQL query's ``field`` and ``table``).
    """

    SPARSE: ClassVar[frozenset[str]] = Problem.SPARSE | {"path", "rule", "line"}


class ErrorBody(Sparse):
    """The body of every error answer.

    ``violations`` on an invalid input (422, and a 413's); ``error_type``, ``line`` and
    ``suggestion`` on a markdown workflow's error.
    """

    SPARSE: ClassVar[frozenset[str]] = frozenset({"violations", "error_type", "line", "suggestion"})

    error_code: str = Field(description="A stable code, e.g. 'not_found', 'invalid_input'.")
    message: str = Field(description="What went wrong, for a person.")
    context: dict[str, Any] = Field(description="Ids and values the message refers to.")
    retryable: bool = Field(description="Whether the same request may succeed later.")
    correlation_id: str | None = Field(description="Quote it when reporting a problem.")
    violations: list[Violation] | None = Field(
        default=None, description="Each field that does not validate (422)."
    )
    error_type: str | None = Field(
        default=None, description="A markdown workflow's error: its type (also error_code)."
    )
    line: int | None = Field(
        default=None, description="A markdown workflow's error: the 1-based line it is about."
    )
    suggestion: str | None = Field(
        default=None, description="A markdown workflow's error: what to do next."
    )


_DESCRIPTIONS = {
    400: "The body could not be read (not UTF-8 JSON text)",
    401: "A valid 'Authorization: Bearer <API_TOKEN>' header is required",
    404: "Not found: the id names nothing",
    409: "Conflict: a stale version, an existing name, or a state that forbids this",
    413: "The body is over the size limit",
    422: "Invalid input: 'violations' names each field",
    429: "Too many requests: Retry-After says when to try again",
    502: "An outbound call this operation needs could not be made",
    503: "The server is not set up for this operation",
}

PARAMS = (422,)
BODY = (400, 413, 422)


def errors(*statuses: int | tuple[int, ...]) -> dict[int | str, dict[str, Any]]:
    """A ``responses=`` mapping documenting ``statuses`` with :class:`ErrorBody`.

    Accepts single statuses and tuples such as :data:`BODY`, in any mix.
    """
    flat: set[int] = set()
    for item in statuses:
        flat.update(item if isinstance(item, tuple) else (item,))
    return {
        status: {"model": ErrorBody, "description": _DESCRIPTIONS[status]}
        for status in sorted(flat)
    }


def inline_schema(model: type[BaseModel]) -> dict[str, Any]:
    """``model``'s JSON Schema (by alias) with its ``$defs`` written in place.

    For a body read as a plain mapping (so the domain reports its own violations) whose
    documented schema is still the model's: the OpenAPI document cannot carry ``$defs``.
    """
    schema = model.model_json_schema(by_alias=True)
    defs: dict[str, Any] = schema.pop("$defs", {})

    def resolve(node: Any, seen: tuple[str, ...]) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                name = ref.removeprefix("#/$defs/")
                if name in seen:  # a recursive model: stop at any object
                    return {"type": "object"}
                return resolve(defs[name], (*seen, name))
            return {key: resolve(value, seen) for key, value in node.items()}
        if isinstance(node, list):
            return [resolve(item, seen) for item in node]
        return node

    resolved: dict[str, Any] = resolve(schema, ())
    resolved.pop("title", None)
    return resolved
