"""One way to call a tool: validate, build, guard, send; failures as typed errors.

Every caller of an HTTP tool goes through :class:`ToolInvoker`: the single-shot pipeline
(``selection/pipeline.py``, which sends in a later stage), MCP API tools (``mcp/api_tools.py``)
and the workflow engine's tool runner (``execution/tool_runner.py``). So the arguments are
checked the same way everywhere (a validator compiled once per tool), the request is built
by the same code from the registry, the SSRF guard and limits apply (the sender), and a
schema mismatch reads the same everywhere: :class:`ArgumentsRejected` with one violation per
problem.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from dynamic_tools.errors import InvalidInputError
from dynamic_tools.http.request_builder import PreparedRequest, SecretLookup, build_request
from dynamic_tools.http.sender import HttpResult, HttpSender
from dynamic_tools.tools.models import ToolConfig
from dynamic_tools.tools.validators import ArgumentValidators
from dynamic_tools.violations import Violation, describe

__all__ = ["ArgumentsRejected", "ToolInvoker"]


class ArgumentsRejected(InvalidInputError):
    """A tool's arguments do not match its input schema: nothing was sent."""

    def __init__(self, tool: str, violations: list[Violation]) -> None:
        super().__init__(
            f"the arguments of '{tool}' do not match its input schema: {describe(violations)}",
            violations=[{"path": v.path, "rule": v.rule, "message": v.message} for v in violations],
            context={"tool": tool},
        )
        self.tool = tool
        self.typed_violations = violations


class ToolInvoker:
    """Validates, builds, guards and sends calls of registry tools (and one-off tools)."""

    def __init__(
        self,
        sender: HttpSender,
        secret: SecretLookup,
        validators: ArgumentValidators | None = None,
    ) -> None:
        self.sender = sender
        self.secret = secret
        self.validators = validators or ArgumentValidators()

    def violations(
        self, tool: ToolConfig, arguments: Mapping[str, Any], *, formats: bool = False
    ) -> list[Violation]:
        """Where ``arguments`` do not match ``tool``'s input schema.

        ``formats``: its ``format``s too, for arguments a model chose.
        """
        return self.validators.violations(tool, arguments, formats=formats)

    def check(
        self, tool: ToolConfig, arguments: Mapping[str, Any], *, formats: bool = False
    ) -> None:
        """Raise :class:`ArgumentsRejected` unless ``arguments`` match the input schema."""
        violations = self.violations(tool, arguments, formats=formats)
        if violations:
            raise ArgumentsRejected(tool.name, violations)

    def build(self, tool: ToolConfig, arguments: dict[str, Any]) -> PreparedRequest:
        """The request of checked ``arguments`` (secrets resolved here, never before).

        :class:`InvalidInputError` when the arguments cannot be placed (a path value with a
        dot segment...), :class:`ConfigurationError` for a missing secret.
        """
        return build_request(tool, arguments, secret=self.secret)

    async def send(
        self,
        request: PreparedRequest,
        *,
        extra_headers: dict[str, str] | None = None,
        timeout_s: float | None = None,
    ) -> HttpResult:
        """Send through the guard (allow-list, no redirects, size and time limits).

        A GraphQL call's ``errors`` are read into ``graphql_errors`` (it failed).
        """
        result = await self.sender.send(request, extra_headers=extra_headers, timeout_s=timeout_s)
        return _read_graphql_errors(request, result)

    async def invoke(
        self,
        tool: ToolConfig,
        arguments: dict[str, Any],
        *,
        extra_headers: dict[str, str] | None = None,
        idempotency_key: str | None = None,
        timeout_s: float | None = None,
    ) -> HttpResult:
        """Check, build and send one call; the API's answer, whatever its status.

        ``idempotency_key`` is the engine's key for a workflow step; ``extra_headers`` (a
        session's, for its own API) may not set it (``http/outbound_headers.py``).
        """
        self.check(tool, arguments)
        request = self.build(tool, arguments)
        if idempotency_key is not None:
            request = replace(request, idempotency_key=idempotency_key)
        result = await self.sender.send(request, extra_headers=extra_headers, timeout_s=timeout_s)
        return _read_graphql_errors(request, result)


def _read_graphql_errors(request: PreparedRequest, result: HttpResult) -> HttpResult:
    """A GraphQL call's answer with its ``errors`` read into ``graphql_errors``."""
    if not request.graphql:
        return result
    errors = graphql_errors(result.body)
    return replace(result, graphql_errors=errors) if errors else result


def graphql_errors(body: Any) -> list[dict[str, Any]]:
    """The ``errors`` of a GraphQL answer as ``{message, path}`` (at most 20)."""
    errors = body.get("errors") if isinstance(body, dict) else None
    if not isinstance(errors, list):
        return []
    found = []
    for error in errors[:20]:
        if isinstance(error, dict):
            path = error.get("path")
            found.append(
                {
                    "message": str(error.get("message") or "error")[:500],
                    "path": [p for p in path if isinstance(p, str | int)][:20]
                    if isinstance(path, list)
                    else [],
                }
            )
        else:
            found.append({"message": str(error)[:500], "path": []})
    return found
