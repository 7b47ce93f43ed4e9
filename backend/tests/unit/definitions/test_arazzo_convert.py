"""Converting Arazzo documents: what cannot be carried over is a problem with its place (never
dropped), lenient shortcuts are warnings, a goto back is a bounded loop."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from dynamic_tools.definitions.arazzo.convert import MAX_LOOPS, convert_arazzo

SOURCE = {
    "openapi": "3.0.0",
    "info": {"title": "s", "version": "1"},
    "servers": [{"url": "https://x.example.com"}],
    "paths": {
        "/items/{id}": {
            "get": {
                "operationId": "getItem",
                "parameters": [{"name": "id", "in": "path", "required": True}],
                "responses": {"200": {"description": "ok"}},
            }
        },
        "/items": {
            "post": {
                "operationId": "addItem",
                "requestBody": {
                    "content": {
                        "application/json": {
                            "schema": {"type": "object", "properties": {"name": {"type": "string"}}}
                        }
                    }
                },
                "responses": {"200": {"description": "ok"}},
            }
        },
    },
}
DOC: dict[str, Any] = {
    "arazzo": "1.0.0",
    "info": {"title": "t", "version": "1"},
    "sourceDescriptions": [{"name": "s", "url": "x.yaml", "type": "openapi"}],
    "workflows": [
        {
            "workflowId": "w",
            "inputs": {"type": "object", "properties": {"name": {"type": "string"}}},
            "steps": [
                {
                    "stepId": "add",
                    "operationId": "addItem",
                    "requestBody": {"payload": {"name": "$inputs.name"}},
                    "outputs": {"id": "$response.body#/id"},
                },
                {
                    "stepId": "get",
                    "operationId": "getItem",
                    "parameters": [{"name": "id", "in": "path", "value": "$steps.add.outputs.id"}],
                },
            ],
        }
    ],
}


def _convert(change: Any = None, *, lenient: bool = False) -> Any:
    doc = copy.deepcopy(DOC)
    if change:
        change(doc["workflows"][0]["steps"])
    return convert_arazzo(doc, {"s": SOURCE}, catalog="c", lenient=lenient)


def _problems(result: Any) -> dict[str, tuple[str, str]]:
    return {".".join(map(str, p.path)): (p.rule, p.severity) for p in result.problems}


def test_a_plain_document_converts_without_problems() -> None:
    result = _convert()
    assert result.problems == [] and [t.name for t in result.tools] == ["c_getItem", "c_addItem"]
    graph = result.document["workflows"]["w"]["graph"]
    assert graph["get"]["args"] == {"id": "$add.id"} and graph["get"]["depends_on"] == ["add"]


@pytest.mark.parametrize(
    ("change", "where", "rule"),
    [
        (
            lambda s: s[0]["requestBody"].update(contentType="application/x-www-form-urlencoded"),
            "workflows.0.steps.0.requestBody.contentType",
            "body_content_type",  # the operation takes only JSON
        ),
        (
            lambda s: s[0]["requestBody"].update(payload="name={$inputs.name}"),  # not JSON
            "workflows.0.steps.0.requestBody.payload",
            "unsupported_body",
        ),
        (
            lambda s: s[0]["requestBody"].update(payload="[" * 200 + "]" * 200),
            "workflows.0.steps.0.requestBody.payload",
            "max_depth",
        ),
        (
            lambda s: s[0].update(outputs={"id": "$response.body#/item-id"}),
            "workflows.0.steps.0.outputs.id",
            "arazzo_expression",
        ),
        (
            lambda s: s[1].update(
                onFailure=[{"name": "r", "type": "retry", "stepId": "add", "retryAfter": 1}]
            ),
            "workflows.0.steps.1.onFailure.0",
            "retry_elsewhere",
        ),
        (
            lambda s: s[1]["parameters"][0].update(value="$steps.add.id"),
            "workflows.0.steps.1.parameters.0.value",
            "arazzo_expression",
        ),
    ],
)
def test_what_cannot_be_carried_over_is_a_problem_at_its_place(
    change: Any, where: str, rule: str
) -> None:
    problems = _problems(_convert(change))
    assert problems.get(where) == (rule, "error"), problems


def test_lenient_mode_reads_a_shortcut_as_a_warning() -> None:
    def shortcut(steps: list[dict[str, Any]]) -> None:
        steps[1]["parameters"][0]["value"] = "$steps.add.id"

    result = _convert(shortcut, lenient=True)
    assert not result.errors
    assert ("lenient_expression", "warning") in _problems(result).values()
    assert result.document["workflows"]["w"]["graph"]["get"]["args"] == {"id": "$add.id"}


def test_a_goto_back_is_a_loop_with_a_bound_and_a_warning() -> None:
    def loop(steps: list[dict[str, Any]]) -> None:
        steps[1]["onSuccess"] = [
            {
                "name": "again",
                "type": "goto",
                "stepId": "add",
                "criteria": [{"condition": "$statusCode == 202"}],
            }
        ]

    result = _convert(loop)
    assert not result.errors
    branch = result.document["workflows"]["w"]["graph"]["get__next"]
    assert branch["on"][0] == {
        "when": "($get._status == 202)",
        "goto": "add",
        "max_loops": MAX_LOOPS,
    }
    assert _problems(result)["workflows.0.steps.1.onSuccess.0.stepId"] == ("loop", "warning")


def test_a_workflows_parameters_apply_to_the_steps_whose_operations_take_them() -> None:
    doc = copy.deepcopy(DOC)
    workflow = doc["workflows"][0]
    workflow["parameters"] = [
        {"name": "id", "in": "path", "value": "fixed"},  # getItem takes it; addItem does not
        {"name": "X-Trace", "in": "header", "value": "t-1"},  # no operation takes it
    ]
    result = convert_arazzo(doc, {"s": SOURCE}, catalog="c")
    graph = result.document["workflows"]["w"]["graph"]
    assert result.problems == []
    assert graph["add"]["args"] == {"name": "$name"}
    assert graph["get"]["args"] == {"id": "$add.id"}  # the step's own overrides it
    del workflow["steps"][1]["parameters"]
    graph = convert_arazzo(doc, {"s": SOURCE}, catalog="c").document["workflows"]["w"]["graph"]
    assert graph["get"]["args"] == {"id": "fixed"}


FORM_SOURCE: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "as", "version": "1"},
    "servers": [{"url": "https://as.example.com"}],
    "paths": {
        "/par": {
            "post": {
                "operationId": "par",
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/x-www-form-urlencoded": {
                            "schema": {
                                "type": "object",
                                "required": ["request"],
                                "properties": {
                                    "request": {  # the JWT's claims, sent as a signed JWT
                                        "type": "object",
                                        "properties": {"iss": {"type": "string"}},
                                    }
                                },
                            }
                        }
                    },
                },
                "responses": {"201": {"description": "pushed"}},
            }
        }
    },
}
FORM_DOC: dict[str, Any] = {
    "arazzo": "1.0.1",
    "info": {"title": "t", "version": "1"},
    "sourceDescriptions": [{"name": "s", "url": "x.yaml"}],
    "workflows": [
        {
            "workflowId": "push",
            "inputs": {"type": "object", "properties": {"jwt": {"type": "string"}}},
            "steps": [
                {
                    "stepId": "par",
                    "operationId": "par",
                    "requestBody": {
                        "contentType": "application/x-www-form-urlencoded",
                        "payload": {"request": "$inputs.jwt"},
                    },
                }
            ],
        }
    ],
}


def test_a_text_input_for_an_object_form_field_is_sent_as_text_in_lenient_mode() -> None:
    lenient = convert_arazzo(FORM_DOC, {"s": FORM_SOURCE}, catalog="c", lenient=True)
    assert _problems(lenient) == {
        "workflows.0.steps.0.requestBody.payload.request": ("input_type", "warning")
    }
    (tool,) = lenient.tools
    assert tool.parameters["request"].schema_["anyOf"][1] == {"type": "string"}
    assert tool.parameters["request"].required
    strict = convert_arazzo(FORM_DOC, {"s": FORM_SOURCE}, catalog="c")
    assert _problems(strict) == {
        "workflows.0.steps.0.requestBody.payload.request": ("input_type", "error")
    }
