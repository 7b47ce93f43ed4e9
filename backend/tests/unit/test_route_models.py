"""Every JSON route of the API declares a pydantic response model and its handler returns it.

Walks ``app.routes`` (demo on, so its routes are seen and excluded by name, not by accident)
and fails for a handler annotated ``dict[str, Any]`` (or anything that is not the declared
model), a route without a response model, or a response model that takes extra fields.

And walks the OpenAPI document's schemas (answers, error bodies, request bodies, run events):
every object that allows any key (``additionalProperties: true``, or an object with no
properties) is listed below with why; a model with ``extra="allow"`` or a ``dict[str, Any]``
field not listed fails.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args, get_origin

import pytest
from fastapi import APIRouter, FastAPI
from fastapi.routing import APIRoute, iter_route_contexts
from pydantic import BaseModel, ConfigDict
from starlette.responses import Response

from dynamic_tools.api.app import create_app
from dynamic_tools.api.run_models import RunStarted
from dynamic_tools.settings import Settings

# Routes that answer no JSON model, each with why.
NOT_JSON = {
    ("GET", "/runs/{run_id}/events"): "server-sent events (text/event-stream); each data line "
    "is a RunEvent, documented in the OpenAPI document (api/openapi_doc.py)",
    ("GET", "/metrics"): "the Prometheus text format",
    ("POST", "/workflow"): "the pipeline's WorkflowResponse, serialised once with "
    "model_dump_json (no re-validation); its model is documented as the 200 answer",
    ("GET", "/"): "a redirect to the UI (not in the document)",
}
# Response models that take extra fields, each with why.
OPEN_BY_DESIGN = {
    "ToolParameter": "a tool parameter is a JSON Schema: the keywords a form reads are declared, "
    "the others (minimum, pattern, items...) follow as the tool file gives them",
}
# Where the document's schemas allow any key (Schema.field, or Schema for the object itself):
# user data, JSON Schemas and documents, each with what it holds.
FREE_FORM = {
    # the user's own data
    "ChoiceOption.item": "an element of the list a yield offers, as the run produced it",
    "DryRunBody.answers": "request: the answers given to each yield (user data)",
    "DryRunBody.mocks": "request: each tool's mocked answer (user data)",
    "DryRunBody.params": "request: the workflow's params (user data)",
    "DryRunCall.args": "the arguments a dry run's call would send (user data)",
    "ResumeBody.values": "request: a yield's answer (user data)",
    "RunBody.params": "request: the workflow's params (user data)",
    "TargetBody.inputs": "request: a workflow's inputs (user data)",
    "RunState.params": "a run's params (user data)",
    "ScheduleView.params": "the params a schedule's runs start with, as its document says",
    "WebhookView.params": "a webhook's mapping from deliveries to params, as its document says",
    "BulkReport.filter": "the run search's filter as understood: the query's own keys",
    "EventResumed.values": "a yield's answer (user data)",
    "RunEventResumed.values": "a yield's answer (user data)",
    "InputResolution.defaults": "a workflow's params' defaults (user data)",
    "InputResolution.resolved": "the params given or resolved (user data)",
    "InputsPreview.example": "an example params object (user data)",
    "RenderedPreview.inputs": "the inputs given (user data)",
    "RenderedStep.args": "a step's arguments, rendered (user data)",
    "SqlApplied.rows": "rows of the API's answer, as SQL returned them (the API's data)",
    "WorkflowResponse.arguments": "the arguments the LLM chose for the tool (user data)",
    "ErrorBody.context": "the ids and values an error's message refers to: they vary by error",
    # JSON Schemas and documents
    "InputsPreview.schema": "a JSON Schema (of a workflow's params)",
    "ProviderParameter.schema": "a JSON Schema (of a tool parameter)",
    "ToolConfigSchema.$defs": "a JSON Schema's definitions (of a tool config)",
    "ToolConfigSchema.properties": "a JSON Schema's properties (of a tool config)",
    "ToolView.input_schema": "a JSON Schema (a tool's arguments)",
    "ToolView.output_schema": "a JSON Schema (a tool's answer), as its file has it",
    "ToolView.api": "a tool's file form (GET /tools/_schema documents it), as its file has it",
    "ToolView.annotations": "a tool's file form (GET /tools/_schema documents it)",
    "ToolView.auth": "a tool's file form (GET /tools/_schema documents it)",
    "ToolView.graphql": "a tool's file form (GET /tools/_schema documents it)",
    "ToolView.hints": "a tool's file form (GET /tools/_schema documents it)",
    "ToolView.parameters": "a tool's file form: each parameter a JSON Schema plus in/required",
    "ToolView.static_params": "a tool's file form (GET /tools/_schema documents it)",
    "WorkflowDetail.parsed": "a workflow document as parsed (docs/workflow-format.md)",
    "ArazzoExportView.arazzo": "an Arazzo document",
    "ArazzoExportView.openapi": "an OpenAPI document",
    "TravelErrorDetail.details": "the demo travel API (a stand-in for a third-party API)",
    "ValidationError.ctx": "FastAPI's own 422 schema (the demo travel API's)",
    # not typed yet: each carries the shape named
    "AuditEntryView.detail": "not typed yet: what an audited action records varies by action",
    "NodeState.detail": "not typed yet: a node kind's own details (a yield's message, expects...)",
    "EventNodeFailed.detail": "not typed yet: a failed node's details, by node kind",
    "RunEventNodeFailed.detail": "not typed yet: a failed node's details, by node kind",
    "RunState.error": "not typed yet: the run's error (code, message, node_id, cause...), "
    "recorded with the run (older runs' errors may carry other keys)",
    "EventRunCancelled.error": "not typed yet: the run's error",
    "EventRunFailed.error": "not typed yet: the run's error",
    "EventRunSucceeded.error": "not typed yet: the run's error",
    "RunEventRunCancelled.error": "not typed yet: the run's error",
    "RunEventRunFailed.error": "not typed yet: the run's error",
    "RunEventRunSucceeded.error": "not typed yet: the run's error",
    "StepOrder.steps": "not typed yet: each step and how it gets to run",
}
# 204 answers have no body, so no model.
NO_CONTENT = 204
# The demo travel API stands in for a third-party API the tools call; it is not this API.
DEMO_PREFIX = "/demo/"


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> FastAPI:
    tmp: Path = tmp_path_factory.mktemp("routes")
    settings = Settings(
        registry_config_path=tmp / "registry" / "config.yaml",
        data_dir=tmp / "data",
        durable_runs=False,
        demo_api_enabled=True,
        _env_file=None,
    )
    return create_app(settings)


@dataclass(frozen=True)
class Route:
    """An API route as the app serves it (its path with the router's prefix)."""

    path: str
    methods: frozenset[str]
    endpoint: Any
    response_model: Any
    status_code: int | None


def _api_routes(routes: Sequence[Any]) -> list[Route]:
    """Every API route of ``routes``, included routers' routes among them (FastAPI 0.165+)."""
    return [
        Route(
            path=str(context.path),
            methods=frozenset(context.methods or ()),
            endpoint=context.endpoint,
            response_model=context.response_model,
            status_code=context.status_code,
        )
        for context in iter_route_contexts(routes)
        if isinstance(context.original_route, APIRoute)
    ]


def _models(annotation: Any) -> list[Any]:
    """The members of a union (or the one type)."""
    if get_origin(annotation) in (typing.Union, types.UnionType):
        return list(get_args(annotation))
    return [annotation]


def _is_model(annotation: Any) -> bool:
    return inspect.isclass(annotation) and issubclass(annotation, BaseModel)


def _untyped(route: Route) -> str | None:
    """Why ``route`` is not typed, or None when it is."""
    methods = sorted(route.methods or ())
    key = (methods[0] if methods else "", route.path)
    if key in NOT_JSON or route.path.startswith(DEMO_PREFIX):
        return None
    returns = typing.get_type_hints(route.endpoint).get("return", inspect.Signature.empty)
    if route.status_code == NO_CONTENT:
        ok = route.response_model is None and returns in (Response, None, type(None))
        return None if ok else f"a 204 route answers no body, yet returns {returns!r}"
    if route.response_model is None or not all(_is_model(m) for m in _models(route.response_model)):
        return "no response model"
    members = _models(returns)
    if not all(_is_model(m) for m in members):
        return f"returns {returns!r}, not a pydantic model"
    if set(members) != set(_models(route.response_model)):
        return f"returns {returns!r} while it declares {route.response_model!r}"
    return None


def test_every_json_route_returns_its_declared_model(app: FastAPI) -> None:
    routes = _api_routes(app.routes)
    assert len(routes) > 40  # the walk sees the API
    problems = {f"{sorted(r.methods or ())} {r.path}": why for r in routes if (why := _untyped(r))}
    assert problems == {}


def test_the_exceptions_exist(app: FastAPI) -> None:
    """A listed exception that no longer exists is removed from the list, not kept silently."""
    seen = {(m, r.path) for r in _api_routes(app.routes) for m in r.methods or ()}
    assert set(NOT_JSON) <= seen
    assert any(r.path.startswith(DEMO_PREFIX) for r in _api_routes(app.routes))


def test_a_handler_returning_a_dict_is_caught(app: FastAPI) -> None:
    """The check fails for the kind of handler it exists to catch."""
    router = APIRouter()

    @router.get("/x", response_model=RunStarted)
    async def untyped() -> dict[str, Any]:
        return {}

    @router.get("/y")
    async def unmodelled() -> dict[str, Any]:
        return {}

    @router.get("/z", response_model=RunStarted)
    async def typed() -> RunStarted:
        raise NotImplementedError

    x, y, z = _api_routes(router.routes)
    assert "not a pydantic model" in (_untyped(x) or "")
    assert _untyped(y) == "no response model"
    assert _untyped(z) is None


def _open_models(model: type[BaseModel], seen: set[type[BaseModel]]) -> list[str]:
    """``model`` and the models of its fields that allow extra fields (or document none)."""
    if model in seen:
        return []
    seen.add(model)
    schema = model.model_json_schema(mode="serialization")
    ref = schema.get("$ref")  # a recursive model: its schema is one of the definitions
    if isinstance(ref, str):
        schema = schema["$defs"][ref.removeprefix("#/$defs/")]
    open_schema = "properties" not in schema
    # extra fields allowed, or a serializer whose documented answer is an open mapping
    found = [model.__name__] if model.model_config.get("extra") == "allow" or open_schema else []
    for field in model.model_fields.values():
        stack: list[Any] = [field.annotation]
        while stack:
            annotation = stack.pop()
            if _is_model(annotation):
                found += _open_models(annotation, seen)
            stack.extend(get_args(annotation))
    return found


def _response_models(routes: Sequence[Any]) -> list[type[BaseModel]]:
    """The models the routes answer with, error bodies among them."""
    models: list[type[BaseModel]] = []
    for context in iter_route_contexts(routes):
        route = context.original_route
        if not isinstance(route, APIRoute):
            continue
        declared = [*_models(context.response_model)] if context.response_model else []
        declared += [r["model"] for r in route.responses.values() if "model" in r]
        models += [m for m in declared if _is_model(m)]
    return models


def test_no_response_model_takes_extra_fields(app: FastAPI) -> None:
    seen: set[type[BaseModel]] = set()
    open_models = [
        name for model in _response_models(app.routes) for name in _open_models(model, seen)
    ]
    assert sorted(set(open_models)) == sorted(OPEN_BY_DESIGN)


def _open_object(node: Any) -> bool:
    """Whether a schema is an object that takes any key."""
    if not isinstance(node, dict):
        return False
    if node.get("additionalProperties") is True:
        return True
    return node.get("type") == "object" and not {"properties", "additionalProperties"} & set(node)


def _free_form(schemas: dict[str, Any]) -> set[str]:
    """``Schema`` or ``Schema.field`` for each place of ``schemas`` that takes any key."""
    found: set[str] = set()

    def walk(node: Any, where: str) -> None:
        if not isinstance(node, dict):
            return
        if _open_object(node):
            found.add(where)
        for name, sub in (node.get("properties") or {}).items():
            walk(sub, f"{where}.{name}")
        for key in ("items", "additionalProperties"):
            walk(node.get(key), where)
        for key in ("anyOf", "oneOf", "allOf"):
            for sub in node.get(key) or []:
                walk(sub, where)

    for name, schema in schemas.items():
        walk(schema, name)
    return found


def test_every_free_form_object_of_the_document_is_listed_with_why(app: FastAPI) -> None:
    """No ``extra="allow"`` and no ``dict[str, Any]`` in the document but those listed."""
    schemas = app.openapi()["components"]["schemas"]
    found = _free_form(schemas)
    assert found - set(FREE_FORM) - set(OPEN_BY_DESIGN) == set(), "type them, or list them here"
    assert set(FREE_FORM) | set(OPEN_BY_DESIGN) <= found, "listed but typed now: unlist them"


def test_a_free_form_field_or_an_open_model_is_caught() -> None:
    """The document check fails for the kinds of schema it exists to catch."""

    class Loose(BaseModel):
        model_config = ConfigDict(extra="allow")

        name: str

    class Answer(BaseModel):
        typed: RunStarted
        loose: Loose
        anything: dict[str, Any]
        maybe: dict[str, Any] | None = None
        many: list[dict[str, Any]]
        mapped: dict[str, dict[str, Any]]
        closed: dict[str, str]

    schemas = Answer.model_json_schema(ref_template="#/components/schemas/{model}")
    found = _free_form({**schemas.pop("$defs"), "Answer": schemas})
    assert found == {
        "Loose",
        "Answer.anything",
        "Answer.maybe",
        "Answer.many",
        "Answer.mapped",
    }
