"""``Problem`` (a check's violation) and the error body's ``Violation`` are closed models that
keep every key the checks give: each producer's violation dumps back unchanged, and a key no
producer gives is not answered.
"""

from __future__ import annotations

from typing import Any

import pytest

from dynamic_tools.api.responses import ErrorBody, Violation
from dynamic_tools.definitions.files import violation as file_violation
from dynamic_tools.engine.errors import ExpressionError
from dynamic_tools.engine.loaders import _violation as loader_violation
from dynamic_tools.engine.sql_query import SqlQueryError
from dynamic_tools.errors import MarkdownWorkflowError, ProcessingLimitError
from dynamic_tools.tools.hints import _violation as hints_violation
from dynamic_tools.tools.openapi.issues import Issue
from dynamic_tools.violations import LoadProblem, Problem
from dynamic_tools.violations import Violation as CheckViolation

SYNTAX = loader_violation("(document)", "syntax", "bad", line=3, column=7)
PRODUCED: list[dict[str, Any]] = [
    SYNTAX,
    loader_violation("graph.a", "type", "not a string", expected="string", actual=3),
    file_violation("workflows.x", "duplicate", "defined twice", actual="a.yaml"),
    CheckViolation("params.d", "required", "missing", severity="warning", line=2).to_dict(),
    LoadProblem("a.yaml", "invalid", "does not validate", 4, [SYNTAX]).to_dict(),
    LoadProblem("t.yaml", "invalid", "bad field", tool="t", field="api").to_dict(),
    *ExpressionError("unknown name", expression="$x.y", position=1, node_id="n").violations,
    *SqlQueryError("too slow", sql="select 1", table="result").violations,
    *ProcessingLimitError(
        "too big", field="source", rule="max_memory", limit=5, setting="S"
    ).violations,
    hints_violation("search", "next", "type", "not a list", index=2),
    Issue("#/paths", "invalid", "not a mapping", expected="object", actual="list").to_dict(),
    {"path": "goal", "field": "goal", "rule": "goal", "message": "empty"},
    {"path": "name", "message": "invalid header name"},
]


@pytest.mark.parametrize("produced", PRODUCED)
def test_a_checks_violation_dumps_back_unchanged(produced: dict[str, Any]) -> None:
    shown = Violation.model_validate(produced).model_dump(mode="json")
    assert shown == produced
    as_problem = Problem.model_validate(produced).model_dump(mode="json")
    always = {"path": None, "rule": None, "line": None}  # a Problem always has these
    assert as_problem == {**always, **produced}


def test_an_undeclared_key_is_not_answered() -> None:
    shown = Problem.model_validate({"message": "m", "secret_internal": 1}).model_dump()
    assert "secret_internal" not in shown


def test_a_markdown_workflow_errors_body_is_an_error_body() -> None:
    error = MarkdownWorkflowError("invalid_format", "no steps", suggestion="add one", line=3)
    body = {**error.to_dict(), "correlation_id": "c1"}
    assert ErrorBody.model_validate(body).model_dump(mode="json") == body
