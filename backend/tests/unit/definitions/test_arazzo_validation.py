"""Arazzo documents checked against the OAI JSON Schema and the rules it cannot express: every
OAI example validates (its OpenAPI sources read when they are here), and each broken rule is
reported with its path and line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from dynamic_tools.definitions.arazzo.validation import check_arazzo
from tests.conftest import FIXTURES

OAI = FIXTURES / "arazzo" / "oai"
EXAMPLES = [*sorted(OAI.glob("*.arazzo.yaml")), OAI / "bnpl-arazzo.yaml"]


def local_sources(path: Path) -> dict[str, Any]:
    """The OpenAPI sources of an example that are here (by file name, relative or remote)."""
    raw = yaml.safe_load(path.read_text())
    found = {}
    for source in raw.get("sourceDescriptions", []):
        candidate = OAI / Path(source["url"]).name
        if source.get("type", "openapi") == "openapi" and candidate.is_file():
            found[source["name"]] = yaml.safe_load(candidate.read_text())
    return found


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_every_oai_example_validates(path: Path) -> None:
    check = check_arazzo(path.read_text(), name=path.name, sources=local_sources(path))
    assert check.valid, check.violations
    assert check.arazzo_version and check.arazzo_version.startswith("1.0")
    assert check.workflows and check.title


def test_operations_are_resolved_in_their_sources_leniently_by_case() -> None:
    path = OAI / "FAPI-PAR.arazzo.yaml"  # names operation 'PAR'; its source says 'Par'
    check = check_arazzo(path.read_text(), name=path.name, sources=local_sources(path))
    assert check.valid
    assert ("operation_case", "workflows.0.steps.0.operationId") in {
        (w["rule"], w["path"]) for w in check.warnings
    }
    unread = check_arazzo(path.read_text(), name=path.name, unread={"auth-api": "no file"})
    assert ("source_not_read", "sourceDescriptions.0.url") in {
        (w["rule"], w["path"]) for w in unread.warnings
    }


BROKEN = """arazzo: 1.0.1
info: {title: Broken, version: "1"}
sourceDescriptions:
  - {name: pets, url: ./pets.yaml, type: openapi}
  - {name: pets, url: ./other.yaml, type: openapi}
workflows:
  - workflowId: buy
    inputs: {type: object, properties: {tag: {type: string}}}
    steps:
      - stepId: find
        operationId: $sourceDescriptions.pets.findPets
        parameters:
          - {name: tag, in: query, value: $inputs.color}
      - stepId: find
        operationId: $sourceDescriptions.pets.nope
        onFailure:
          - {name: again, type: goto, stepId: nowhere}
      - stepId: pay
        operationPath: '{$sourceDescriptions.pets.url}#/paths/~1missing/get'
        parameters:
          - {name: id, in: path, value: $steps.ghost.outputs.id}
          - reference: $components.parameters.absent
      - stepId: sub
        workflowId: no_such_workflow
  - workflowId: buy
    steps:
      - {stepId: a, operationId: $sourceDescriptions.pets.findPets}
  - workflowId: incomplete
"""
PETS = {
    "openapi": "3.1.0",
    "info": {"title": "pets", "version": "1"},
    "paths": {"/pets": {"get": {"operationId": "findPets"}}},
}


def test_each_broken_rule_is_reported_with_path_and_line() -> None:
    check = check_arazzo(BROKEN, name="broken.yaml", sources={"pets": PETS})
    found = {(v["rule"], v["path"], v["line"]) for v in check.violations}
    base = "workflows.0.steps"
    expected = {
        ("duplicate_source", "sourceDescriptions.1.name", 5),
        ("duplicate_workflow_id", "workflows.1.workflowId", 25),
        ("duplicate_step_id", f"{base}.1.stepId", 14),
        ("unknown_input", f"{base}.0.parameters.0.value", 13),
        ("unknown_operation", f"{base}.1.operationId", 15),
        ("unknown_goto_target", f"{base}.1.onFailure.0.stepId", 17),
        ("unresolvable_operation_path", f"{base}.2.operationPath", 19),
        ("unknown_step", f"{base}.2.parameters.0.value", 21),
        ("unknown_component", f"{base}.2.parameters.1.reference", 22),
        ("unknown_workflow", f"{base}.3.workflowId", 24),
    }
    assert expected <= found, expected - found
    schema = [v for v in check.violations if v["rule"] == "schema"]
    assert any(v["path"] == "workflows.2" and "steps" in v["message"] for v in schema), schema
    assert not check.valid and check.workflows == ["buy", "buy", "incomplete"]


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("arazzo: [unclosed", "syntax"),
        ("- a list", "type"),
        ("arazzo: 1.0.0\n", "schema"),
        ("a: &x [*x]", "max_depth"),  # a recursive alias: refused, never walked
    ],
    ids=["bad_yaml", "not_a_mapping", "schema", "recursive_alias"],
)
def test_a_document_that_is_not_arazzo_is_refused_with_a_reason(text: str, rule: str) -> None:
    check = check_arazzo(text, name="x.yaml")
    assert not check.valid
    assert check.violations and check.violations[0]["rule"] == rule, check
    assert check.violations[0]["line"] is not None  # a place to look, even for the whole text
