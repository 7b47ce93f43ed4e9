"""The markdown workflow errors: one constructor per error type, each with its suggestion.

Every error is a :class:`~dynamic_tools.errors.MarkdownWorkflowError` carrying ``error_type``,
``message``, ``line`` (1-based, of the markdown document; None where no line applies) and a
``suggestion`` a model can act on. The edges map them like any ``InvalidInputError``.
"""

from __future__ import annotations

import difflib
from typing import Any, Literal

from dynamic_tools.errors import InvalidInputError, MarkdownWorkflowError

__all__ = [
    "ERROR_TYPES",
    "ErrorType",
    "MarkdownWorkflowError",
    "empty_workflow",
    "file_not_found",
    "invalid_arguments",
    "invalid_format",
    "invalid_request",
    "missing_tool_spec",
    "no_workflow_loaded",
    "step_out_of_order",
    "unknown_tool",
    "variable_missing",
]

ErrorType = Literal[
    "file_not_found",
    "invalid_format",
    "empty_workflow",
    "missing_tool_spec",
    "variable_missing",
    "step_out_of_order",
    "no_workflow_loaded",
    "unknown_tool",
    "invalid_request",
]
ERROR_TYPES: tuple[str, ...] = ErrorType.__args__  # type: ignore[attr-defined]

FORMAT_HINT = (
    "A step is '### 🔧 WORKFLOW STEP: <name>', then its description in a fenced block (```), "
    "then '### 🛠️ TOOL: <tool>' (or '### 🛠️ TOOLS:' and a '- tool' list) and optional "
    "'### 📥 INPUTS:', '### 📤 OUTPUTS:' and '### ✅ ASSERT:' lists "
    "(docs/markdown-workflows.md)."
)


def file_not_found(path: str, reason: str, *, available: list[str]) -> MarkdownWorkflowError:
    """The workflow file does not exist, or is not inside the registry directory."""
    listed = ", ".join(available[:20]) if available else "none"
    return MarkdownWorkflowError(
        "file_not_found",
        f"workflow file '{path}': {reason}",
        suggestion=(
            "Give a path relative to the registry directory (markdown files there: "
            f"{listed}), or pass the markdown itself as 'content'."
        ),
        context={"path": path, "available": available[:50]},
    )


def invalid_format(message: str, line: int | None, *, hint: str = "") -> MarkdownWorkflowError:
    """The markdown does not follow the workflow format at ``line``."""
    where = f"line {line}: " if line is not None else ""
    return MarkdownWorkflowError(
        "invalid_format",
        f"{where}{message}",
        suggestion=f"{hint} {FORMAT_HINT}".strip(),
        line=line,
    )


def empty_workflow(source: str, line_count: int) -> MarkdownWorkflowError:
    """No step heading in the document."""
    return MarkdownWorkflowError(
        "empty_workflow",
        f"'{source}' has no workflow step ({line_count} lines, no '### 🔧 WORKFLOW STEP:' heading)",
        suggestion="Add at least one step. " + FORMAT_HINT,
        line=1,
        context={"source": source},
    )


def missing_tool_spec(step: str, line: int) -> MarkdownWorkflowError:
    """A step names no tool."""
    return MarkdownWorkflowError(
        "missing_tool_spec",
        f"line {line}: step '{step}' has no '🛠️ TOOL:' or '🛠️ TOOLS:' section",
        suggestion=(
            f"Add '### 🛠️ TOOL: <tool name>' under the step '{step}' (line {line}), naming the "
            "tool the model must call for it; several tools go in a '### 🛠️ TOOLS:' list."
        ),
        line=line,
        context={"step": step},
    )


def unknown_tool(
    step: str, tool: str, line: int, *, callable_tools: list[str], unknown: list[dict[str, Any]]
) -> MarkdownWorkflowError:
    """A step names a tool this session cannot call (``unknown`` lists every such tool)."""
    close = difflib.get_close_matches(tool, callable_tools, n=3)
    guess = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    return MarkdownWorkflowError(
        "unknown_tool",
        f"line {line}: step '{step}' names tool '{tool}', which this session cannot call",
        suggestion=(
            f"Use one of the tools this session can call.{guess} Fix the tool name in the "
            "workflow (or connect the server that provides it) and load the workflow again."
        ),
        line=line,
        violations=unknown,
        context={"step": step, "tool": tool, "callable_tools": sorted(callable_tools)[:100]},
    )


def variable_missing(
    variable: str, line: int, *, step: str, when: str, suggestion: str
) -> MarkdownWorkflowError:
    """A variable a step needs has no value (``when`` says at which moment it was needed)."""
    return MarkdownWorkflowError(
        "variable_missing",
        f"line {line}: variable '{variable}' needed by step '{step}' has no value {when}",
        suggestion=suggestion,
        line=line,
        context={"variable": variable, "step": step},
    )


def step_out_of_order(
    message: str, *, expected: int | None, line: int | None, suggestion: str, reported: int | None
) -> MarkdownWorkflowError:
    """A call names a step other than the one the session is at."""
    return MarkdownWorkflowError(
        "step_out_of_order",
        message,
        suggestion=suggestion,
        line=line,
        context={"step_number": reported, "expected_step_number": expected},
    )


def no_workflow_loaded(session_id: str) -> MarkdownWorkflowError:
    """A step or state call in a session that has no workflow."""
    return MarkdownWorkflowError(
        "no_workflow_loaded",
        "no markdown workflow is loaded in this session",
        suggestion=(
            "Call load_workflow first, with 'path' (a .md file in the registry directory) or "
            "'content' (the markdown itself). If you loaded one before a reconnect, pass the "
            "same 'session_id' you used then."
        ),
        context={"session_id": session_id},
    )


def invalid_request(
    message: str, suggestion: str, *, line: int | None = None
) -> MarkdownWorkflowError:
    """The arguments of a call do not fit (nothing was changed)."""
    return MarkdownWorkflowError("invalid_request", message, suggestion=suggestion, line=line)


def invalid_arguments(tool: str, exc: InvalidInputError) -> MarkdownWorkflowError:
    """The server's check of a markdown tool's arguments, as an ``invalid_request`` error.

    Every markdown error carries ``error_type`` and ``suggestion`` (docs/markdown-workflows.md),
    those the input schema catches before the tool runs too; the violations are kept.
    """
    return MarkdownWorkflowError(
        "invalid_request",
        exc.message,
        suggestion=f"Call {tool} again with the arguments its input schema describes: fix each "
        "argument named in violations (nothing was changed).",
        violations=exc.violations,
        context=exc.context,
    )
