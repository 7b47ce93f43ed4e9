"""A workflow document never carries a literal credential in a call's arguments.

Refused at validation with the node and the argument named (``literal_credential``);
``$references`` stay allowed, in whole strings or inside text.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from dynamic_tools.engine.credential_checks import credential_problems
from dynamic_tools.engine.loaders import load_document
from dynamic_tools.engine.validator import validate_document
from dynamic_tools.violations import Violation

JWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N"
BASE = "workflows.w.graph"


def document(graph: dict[str, Any]) -> str:
    return yaml.safe_dump(
        {
            "domain": "creds",
            "base_url": "https://api.example.com",
            "workflows": {"w": {"params": {"token": {"type": "str"}}, "graph": graph}},
        },
        sort_keys=False,
    )


def credential_violations(graph: dict[str, Any]) -> list[Violation]:
    report = validate_document(load_document(document(graph), name="creds.yaml"))
    return [v for v in report.violations if v.rule in ("literal_credential", "max_depth")]


@pytest.mark.parametrize(
    ("value", "shape"),
    [
        (JWT, "JSON Web Token"),
        (f"Bearer {JWT}", "bearer token"),
        ("sk-proj-4fA9xQ2mZ7pL0vB3nK8sR1tY", "secret API key"),
        ("AKIAIOSFODNN7EXAMPLE", "AWS access key id"),
        ("Basic Ym9iOnB3", "basic credentials"),
    ],
)
def test_a_call_argument_of_a_token_shape_is_refused_naming_node_and_argument(
    value: str, shape: str
) -> None:
    [violation] = credential_violations({"get": {"call": "some_tool", "args": {"key": value}}})
    assert violation.path == f"{BASE}.get.args.key"
    assert violation.severity == "error" and violation.line is not None
    assert shape in violation.message and "secret:NAME" in violation.message
    assert value not in violation.message


def test_rest_call_headers_body_and_query_are_checked_nested() -> None:
    found = credential_violations(
        {
            "post": {
                "call": "rest_call",
                "args": {
                    "method": "POST",
                    "path": "/login",
                    "headers": {"X-Custom": f"Bearer {JWT}", "Authorization": "$token"},
                    "query": {"client_secret": "$token", "v": "2"},
                    "body": {"login": {"user": "ada", "keys": ["AKIAIOSFODNN7EXAMPLE"]}},
                },
            }
        }
    )
    assert sorted(v.path for v in found) == [
        f"{BASE}.post.args.body.login.keys.0",
        f"{BASE}.post.args.headers.Authorization",  # a rest_call carries no secrets at all
        f"{BASE}.post.args.headers.X-Custom",
        f"{BASE}.post.args.query.client_secret",
    ]


def test_references_stay_allowed() -> None:
    graph = {
        "call_it": {
            "call": "some_tool",
            "args": {"authorization_note": "Bearer $token", "jwt": "$token", "price": "costs $5"},
        },
        "rest": {
            "call": "rest_call",
            "depends_on": ["call_it"],
            "args": {"method": "POST", "path": "/x", "headers": {"X-Custom": "Bearer $token"}},
        },
    }
    assert credential_violations(graph) == []


def test_compensations_parallel_branches_and_sub_workflows_are_checked() -> None:
    found = credential_violations(
        {
            "book": {
                "call": "some_tool",
                "args": {"id": "1"},
                "compensate_with": {"call": "undo_tool", "args": {"key": JWT}},
            },
            "both": {
                "type": "parallel",
                "depends_on": ["book"],
                "branches": {"a": {"call": "some_tool", "args": {"key": f"Bearer {JWT}"}}},
            },
            "sub": {
                "type": "workflow",
                "workflow": "w",
                "depends_on": ["both"],
                "args": {"token": JWT},
            },
        }
    )
    assert sorted(v.path for v in found) == [
        f"{BASE}.book.compensate_with.args.key",
        f"{BASE}.both.branches.a.args.key",
        f"{BASE}.sub.args.token",
    ]


def test_the_check_walks_with_a_stack_and_a_depth_limit() -> None:
    args: Any = "AKIAIOSFODNN7EXAMPLE"
    for _ in range(3000):  # past the interpreter's recursion limit
        args = {"x": args}
    [problem] = credential_problems("some_tool", args)
    assert problem.rule == "max_depth" and len(problem.where) == 65
