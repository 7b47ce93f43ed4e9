"""Literal credentials are recognised by shape and by name, and walked without recursion."""

from __future__ import annotations

from typing import Any

import pytest

from dynamic_tools.literal_credentials import (
    Finding,
    find_literal_credentials,
    looks_like_credential_field,
    token_shape,
)

JWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N"


@pytest.mark.parametrize(
    ("value", "shape"),
    [
        (f"Bearer {JWT}", "bearer token"),
        ("bearer 3f9a1c7e5d2b4a6f", "bearer token"),
        (JWT, "JSON Web Token"),
        (f"token={JWT}", "JSON Web Token"),
        ("sk-proj-4fA9xQ2mZ7pL0vB3nK8sR1tY", "secret API key"),
        ("sk_live_51HxQ2mZ7pL0vB3nK8sR1tY", "secret API key"),
        ("AKIAIOSFODNN7EXAMPLE", "AWS access key id"),
        ("ASIAY34FZKBOKMUTVV7A", "AWS access key id"),
        ("Basic Ym9iOnB3", "basic credentials"),
        ("ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "GitHub token"),
        ("xoxb-123456789012-abcdefABCDEF", "Slack token"),
        ("AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q", "Google API key"),
        ("-----BEGIN RSA PRIVATE KEY-----\nMIIE...", "private key"),
    ],
)
def test_known_token_shapes_are_recognised(value: str, shape: str) -> None:
    found = token_shape(value)
    assert found is not None and shape in found


@pytest.mark.parametrize(
    "value",
    [
        "application/json",
        "Bearer authentication",  # words, not a token
        "Basic realm",  # not base64 of user:password
        "Basic dGV4dA==",  # base64 of "text": no colon
        "sk-learn-tutorial-basics",  # a slug: no digit
        "bearer",
        "2026-12-01",
        "AKIA",  # too short
        "https://api.example.com/v1/items",
        "",
    ],
)
def test_ordinary_values_have_no_token_shape(value: str) -> None:
    assert token_shape(value) is None


@pytest.mark.parametrize(
    ("name", "value", "credential"),
    [
        ("password", "hunter2", True),
        ("password", 123456, True),  # YAML reads a numeric password as a number
        ("new_password", "x1", True),
        ("access_token", "abc", True),
        ("accessToken", "abc", True),
        ("refreshtoken", "abc", True),
        ("client_secret", "abc", True),
        ("clientSecret", "abc", True),
        ("api_key", "abc", True),
        ("apiKey", "abc", True),
        ("X-API-Key", "abc", True),
        ("private_key", "abc", True),
        ("session_id", "abc", True),
        ("auth", "abc", True),
        ("max_tokens", 256, False),
        ("max_tokens", "256", False),
        ("tokenizer", "cl100k", False),
        ("token_type", "bearer", False),
        ("token_type_hint", "refresh_token", False),
        ("signature_version", "v4", False),
        ("key", "sort-order", False),
        ("password", "", False),  # nothing to leak
        ("password", None, False),
        ("password", True, False),
        ("secret", {"name": "x"}, False),  # an object is walked, not judged by its name
        ("grant_type", "client_credentials", False),
    ],
)
def test_body_fields_are_judged_by_word_and_value(name: str, value: Any, credential: bool) -> None:
    assert looks_like_credential_field(name, value) is credential


def test_findings_name_the_nested_path_in_document_order() -> None:
    body = {
        "auth": {"username": "ada", "password": "hunter2"},
        "items": [{"note": "ok"}, {"header": f"Bearer {JWT}"}],
        "max_tokens": 100,
        "client_secret": "s3cr3t-value",
    }
    found = find_literal_credentials(body, field_rule=looks_like_credential_field)
    assert [(f.path, f.rule) for f in found] == [
        (("auth", "password"), "credential_field"),
        (("items", 1, "header"), "token_shape"),
        (("client_secret",), "credential_field"),
    ]
    assert all("hunter2" not in f.what and JWT not in f.what for f in found)


def test_without_a_field_rule_only_shapes_count() -> None:
    found = find_literal_credentials({"password": "hunter2", "h": f"Bearer {JWT}"})
    assert found == [Finding(("h",), "token_shape", "a bearer token ('Bearer …')")]


def test_references_are_not_literals_when_the_caller_says_so() -> None:
    def literal(text: str) -> str:
        return text.replace("$token", " ")

    assert find_literal_credentials({"h": "Bearer $token"}, literal=literal) == []


def test_a_value_nested_past_the_limit_is_a_finding_and_no_recursion_error() -> None:
    deep: Any = "AKIAIOSFODNN7EXAMPLE"
    for _ in range(5000):  # far past the interpreter's recursion limit
        deep = {"x": deep}
    found = find_literal_credentials(deep, max_depth=64)
    assert [f.rule for f in found] == ["max_depth"]
    assert len(found[0].path) == 65
    shallow = find_literal_credentials({"a": [{"b": "AKIAIOSFODNN7EXAMPLE"}]})
    assert [f.path for f in shallow] == [("a", 0, "b")]
