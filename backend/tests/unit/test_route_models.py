"""Every JSON route of the API declares a pydantic response model and its handler returns it.

Walks ``app.routes`` (demo on, so its routes are seen and excluded by name, not by accident)
and fails for a handler annotated ``dict[str, Any]`` (or anything that is not the declared
model), a route without a response model, or a response model that takes extra fields.
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
from pydantic import BaseModel
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
# Response models that still take extra fields (not closed yet), each with what it carries.
STILL_OPEN = {
    "Problem": "violations and file problems: severity, expected, actual, file, tool... vary "
    "by validator (violations.py)",
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
    open_schema = "properties" not in model.model_json_schema(mode="serialization")
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


def test_no_response_model_takes_extra_fields(app: FastAPI) -> None:
    seen: set[type[BaseModel]] = set()
    open_models = [
        name
        for route in _api_routes(app.routes)
        if route.response_model is not None
        for member in _models(route.response_model)
        if _is_model(member)
        for name in _open_models(member, seen)
    ]
    assert sorted(set(open_models)) == sorted(STILL_OPEN)
