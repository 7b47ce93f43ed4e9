"""Layer 2: recipes ``r_*`` learned from successful ``{prefix}_query`` answers, run with no LLM.

A recipe is the operation the LLM chose plus an argument template:

- the operation's **required** arguments, and optional ones whose value appears in the
  question, become the recipe's parameters (they vary from one question to the next);
- other optional arguments the LLM chose are **fixed** in the template (and named in the
  recipe's name, so different templates are different recipes).

Only read-only operations are learned: a recipe is verified by replaying the call once before it
is kept (same status class, same response shape), and replaying a write would repeat it. A
recipe's call is model-composed (the LLM chose it): every replay is held to the
safe-by-default rule (``tools/safety.py``) with the session's ``X-Allow-Unsafe-Paths``. The
store deduplicates by name; a recipe whose operation's schema hash changed (or whose operation
vanished) is deleted the next time the session's tools are built.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from loguru import logger

from dynamic_tools.mcp.api_tools import (
    ApiCaller,
    annotations_of,
    output_schema_of,
    success_result,
)
from dynamic_tools.mcp.entries import Handler, Result, SessionView, ToolCall, ToolEntry
from dynamic_tools.persistence.recipe_store import Recipe, RecipeStore
from dynamic_tools.selection.models import WorkflowResponse
from dynamic_tools.tools.models import ToolConfig
from dynamic_tools.tools.safety import llm_may_call

MAX_NAME = 64


def schema_hash(config: ToolConfig) -> str:
    """A hash of what a recipe relies on: the operation's endpoint and input schema."""
    data = {
        "api": config.api.model_dump(mode="json"),
        "input": config.input_schema(),
        "static": config.static_params.model_dump(mode="json"),
    }
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def scope_of(view: SessionView) -> str:
    """The API a recipe belongs to (the registry, or one X-Target-URL), and whose it is.

    Recipes are learned from one principal's questions and hold their values: another
    principal's session neither sees nor replays them. The admin's keep their scope as before.
    """
    target = view.config.target_url
    api = "registry" if target is None else hashlib.sha256(target.encode()).hexdigest()[:32]
    owner = view.config.recipe_owner
    if owner == "admin":
        return api
    return f"{api}~{hashlib.sha256(owner.encode()).hexdigest()[:16]}"


@dataclass(frozen=True)
class RecipeDraft:
    """A recipe before verification."""

    name: str
    tool: str
    fixed: dict[str, Any]
    parameters: dict[str, Any]


def _mentioned(value: Any, question: str) -> bool:
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, str | int | float):
        text = str(value).strip().lower()
        return bool(text) and text in question.lower()
    return False


def _slug(value: Any) -> str:
    return re.sub(r"[^a-z0-9]+", "_", str(value).lower()).strip("_")[:16] or "x"


def draft_recipe(
    question: str, config: ToolConfig, arguments: dict[str, Any]
) -> RecipeDraft | None:
    """The recipe a successful answer teaches, or None when it must not be learned."""
    if not config.effective_annotations.read_only:
        return None
    parameters: dict[str, Any] = {}
    fixed: dict[str, Any] = {}
    for name, value in arguments.items():
        param = config.parameters.get(name)
        if param is None:
            return None
        if param.required or _mentioned(value, question):
            parameters[name] = {**param.schema_, "required": param.required}
        else:
            fixed[name] = value
    name = f"r_{config.name}"
    for key in sorted(fixed):
        name += f"_{_slug(key)}_{_slug(fixed[key])}"
    if parameters:
        name += "_by_" + "_".join(sorted(parameters))
    if len(name) > MAX_NAME:
        digest = hashlib.sha256(name.encode()).hexdigest()[:8]
        name = name[: MAX_NAME - 9] + "_" + digest
    return RecipeDraft(name=name, tool=config.name, fixed=fixed, parameters=parameters)


def _shape(value: Any) -> Any:
    """The JSON shape of a response body: types, and the keys of objects (first item of lists)."""
    if isinstance(value, dict):
        return {"object": sorted(value)}
    if isinstance(value, list):
        return {"list": _shape(value[0]) if value else None}
    return type(value).__name__


def recipe_tool(recipe: Recipe, config: ToolConfig) -> types.Tool:
    """The MCP tool of a recipe: the parameters as inputs, the operation's output schema."""
    properties = {
        name: {k: v for k, v in schema.items() if k != "required"}
        for name, schema in recipe.parameters.items()
    }
    required = [n for n, s in recipe.parameters.items() if s.get("required")]
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }
    if required:
        input_schema["required"] = required
    fixed = ", ".join(f"{k}={json.dumps(v)}" for k, v in recipe.fixed.items()) or "nothing"
    output_schema, _ = output_schema_of(config)
    return types.Tool(
        name=recipe.name,
        description=(
            f"Recipe (learned, runs with no LLM): calls {config.name} with {fixed} fixed. "
            f'Learned from "{recipe.question[:200]}"; used {recipe.uses} time(s). '
            f"{config.description.split('.')[0]}."
        ),
        input_schema=input_schema,
        output_schema=output_schema,
        annotations=annotations_of(config, title=f"Recipe: {config.name}"),
        meta={"execution_type": "http", "http_method": config.api.method},
    )


class RecipeLayer:
    """Learns recipes from ``_query`` answers and offers them as tools."""

    name = "recipes"

    def __init__(self, store: RecipeStore, caller: ApiCaller) -> None:
        self.store = store
        self.caller = caller
        self.generation = 0  # bumped when a recipe is created or removed in this process

    async def extend(self, view: SessionView) -> None:
        """Add the scope's valid recipes to ``view``; delete those whose operation changed."""
        scope = scope_of(view)
        stale = []
        for recipe in await self.store.for_scope(scope):
            config = view.api_tools.get(recipe.tool)
            if config is None or schema_hash(config) != recipe.schema_hash:
                stale.append(recipe.recipe_id)
                continue
            if not llm_may_call(config, view.config.allow_unsafe):
                continue  # learned where writes were allowed; this session keeps to reads
            view.add(
                ToolEntry(recipe_tool(recipe, config), "recipe", self._handler(recipe, config))
            )
        if stale:
            removed = await self.store.invalidate(scope, stale)
            logger.info("removed {} recipes whose operation changed", removed)
            self.generation += 1

    def _handler(self, recipe: Recipe, config: ToolConfig) -> Handler:
        async def handle(call: ToolCall) -> Result:
            arguments = {**recipe.fixed, **call.arguments}
            session = call.view.config
            result = await self.caller.call(
                config, arguments, extra_headers=session.api_headers, composed=session.allow_unsafe
            )
            if not result.is_error:
                await self.store.use(recipe.recipe_id)
            return result

        return handle

    async def learn(self, call: ToolCall, question: str, response: WorkflowResponse) -> None:
        """Offer a successful answer: draft, replay once, keep when the replay agrees."""
        tool, arguments = response.selected_tool, response.arguments
        raw = response.raw_response or {}
        if tool is None or arguments is None or not 200 <= int(raw.get("status_code", 0)) < 300:
            return
        config = call.view.api_tools.get(tool)
        if config is None:
            return
        draft = draft_recipe(question, config, arguments)
        if draft is None:
            return
        session = call.view.config
        replay = await self.caller.call(
            config, arguments, extra_headers=session.api_headers, composed=session.allow_unsafe
        )
        first = success_result(config, raw.get("body")).structured_content
        if replay.is_error or _shape(replay.structured_content) != _shape(first):
            logger.info("recipe {} not kept: the replay did not agree", draft.name)
            return
        _, created = await self.store.save(
            scope=scope_of(call.view),
            owner=call.view.config.recipe_owner,
            name=draft.name,
            tool=draft.tool,
            fixed=draft.fixed,
            parameters=draft.parameters,
            schema_hash=schema_hash(config),
            question=question,
        )
        self.generation += 1  # the view shows the new recipe (or its new use count)
        if created:
            await call.channel.tools_changed()
