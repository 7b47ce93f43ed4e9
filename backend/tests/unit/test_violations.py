"""The shared helpers of violations.py: which violations are errors, where a parser's error is."""

from __future__ import annotations

import pytest
import yaml

from dynamic_tools.violations import errors_only, is_error, syntax_position, where_in_text


def test_errors_only_keeps_errors_in_order_and_a_violation_without_severity_is_one() -> None:
    violations = [
        {"path": "a", "severity": "warning"},
        {"path": "b", "severity": "error"},
        {"path": "c"},
        {"path": "d", "severity": "info"},
    ]
    assert [v["path"] for v in errors_only(violations)] == ["b", "c"]
    assert not is_error(violations[0]) and is_error(violations[2])
    assert errors_only([]) == []


def test_a_yaml_error_is_located_one_based_with_its_problem() -> None:
    with pytest.raises(yaml.YAMLError) as caught:
        yaml.safe_load("a: 1\nb: [1, 2\nc: 3\n")
    line, column, problem = syntax_position(caught.value)
    assert (line, column) == (3, 2)
    assert problem == "expected ',' or ']', but got ':'"
    assert where_in_text(caught.value) == f"line 3, column 2: {problem}"


def test_an_error_without_a_position_has_its_text_only() -> None:
    assert syntax_position(ValueError("bad")) == (None, None, "bad")
    assert where_in_text(ValueError("bad")) is None
