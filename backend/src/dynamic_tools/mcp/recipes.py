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
from dynamic_tools.mcp.entries import (
    Handler,
    QuestionRecipe,
    Result,
    SessionView,
    ToolCall,
    ToolEntry,
)
from dynamic_tools.mcp.errors import StageFailed, error_result
from dynamic_tools.mcp.recipe_sequences import (
    ReplayFailed,
    draft_sequence,
    is_sequence,
    question_pattern,
    replay,
    sequence_hash,
    sequence_tools,
)
from dynamic_tools.mcp.results import data_result
from dynamic_tools.persistence.recipe_store import Recipe, RecipeStore
from dynamic_tools.selection.query_agent import QueryOutcome
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


def _input_schema(recipe: Recipe) -> dict[str, Any]:
    """A recipe's parameters as a closed JSON Schema object (``required`` lifted out)."""
    properties = {
        name: {k: v for k, v in schema.items() if k != "required"}
        for name, schema in recipe.parameters.items()
    }
    required = [n for n, s in recipe.parameters.items() if s.get("required")]
    schema: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }
    if required:
        schema["required"] = required
    return schema


def recipe_tool(recipe: Recipe, config: ToolConfig) -> types.Tool:
    """The MCP tool of a recipe: the parameters as inputs, the operation's output schema."""
    input_schema = _input_schema(recipe)
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


def zip_steps(
    fixed: dict[str, Any], configs: dict[str, ToolConfig]
) -> list[tuple[ToolConfig, dict[str, Any]]]:
    """Each step of a sequence with the operation it calls."""
    return [(configs[step["tool"]], step) for step in fixed["$steps"]]


def _reads(config: ToolConfig, step: dict[str, Any]) -> bool:
    """Whether a step changes nothing: a read operation, or a free GraphQL query (no mutation)."""
    if config.graphql is not None and config.graphql.schema_sdl is not None:
        query = step["arguments"].get("query")
        return isinstance(query, str) and re.search(r"(^|[}\s])mutation\b", query) is None
    return bool(config.effective_annotations.read_only)


def session_operations(view: SessionView) -> dict[str, ToolConfig]:
    """The operations a recipe of ``view`` may call: the API's, and its free query tool."""
    return {**view.api_tools, **view.choices()}


def sequence_tool(recipe: Recipe) -> types.Tool:
    """The MCP tool of a sequence recipe: its parameters as inputs."""
    input_schema = _input_schema(recipe)
    steps = " → ".join(step["tool"] for step in recipe.fixed["$steps"])
    return types.Tool(
        name=recipe.name,
        description=(
            f"Recipe (learned, runs with no LLM): calls {steps}, each call taking values from "
            f'the previous answers. Learned from "{recipe.question[:200]}"; used {recipe.uses} '
            "time(s). Answers every step's rows and the last answer ('result')."
        ),
        input_schema=input_schema,
        annotations=types.ToolAnnotations(
            title=f"Recipe: {steps}",
            read_only_hint=True,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=True,
        ),
        meta={"execution_type": "http"},
    )


def replay_result(name: str, outcome: QueryOutcome) -> types.CallToolResult:
    """A sequence recipe's answer: its steps, the last answer and the SQL's rows."""
    last = outcome.steps[-1]
    data: dict[str, Any] = {
        "recipe": name,
        "steps": [s.to_dict() for s in outcome.steps],
        "result": last.body,
    }
    if outcome.sql is not None:
        data["sql"] = outcome.sql.model_dump(mode="json")
    shown = outcome.sql.rows if outcome.sql is not None else last.body
    return data_result(data, json.dumps(shown, ensure_ascii=False, default=str))


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
        operations = session_operations(view)
        for recipe in await self.store.for_scope(scope):
            if is_sequence(recipe.fixed):
                configs = [operations.get(name) for name in sequence_tools(recipe.fixed)]
                known = [c for c in configs if c is not None]
                if len(known) != len(configs) or sequence_hash(known) != recipe.schema_hash:
                    stale.append(recipe.recipe_id)
                    continue
                if not all(llm_may_call(c, view.config.allow_unsafe) for c in known):
                    continue
                self._add_sequence(view, recipe, {c.name: c for c in known})
                continue
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

    def _add_sequence(
        self, view: SessionView, recipe: Recipe, configs: dict[str, ToolConfig]
    ) -> None:
        """A sequence recipe: an ``r_*`` tool, and a question pattern ``_query`` replays."""

        async def run(call: ToolCall, values: dict[str, Any], sql: str | None) -> QueryOutcome:
            outcome = await replay(
                self.caller.invoker,
                recipe.fixed,
                values,
                configs,
                headers=call.view.config.api_headers or None,
                sql=sql,
            )
            await self.store.use(recipe.recipe_id)
            return outcome

        async def handle(call: ToolCall) -> Result:
            try:
                outcome = await run(call, dict(call.arguments), None)
            except ReplayFailed as failed:
                return error_result(
                    StageFailed(
                        "recipe",
                        f"{recipe.name}: {failed.message}",
                        context={"recipe": recipe.name},
                        suggestion="Ask the question with the _query tool instead.",
                        steps=[s.to_dict() for s in failed.outcome.steps],
                    )
                )
            return replay_result(recipe.name, outcome)

        view.add(ToolEntry(sequence_tool(recipe), "recipe", handle))
        pattern = question_pattern(recipe.question, recipe.parameters)
        if pattern is not None:
            view.question_recipes.append(
                QuestionRecipe(recipe.name, pattern, dict(recipe.parameters), run)
            )

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

    async def learn(self, call: ToolCall, question: str, outcome: QueryOutcome) -> None:
        """Offer an answered ``_query``: draft, replay once, keep when the replay agrees.

        One successful call teaches a single-operation recipe; several teach a sequence
        (``mcp/recipe_sequences.py``).
        """
        steps = outcome.ok_steps()
        if len(steps) > 1:
            await self._learn_sequence(call, question, outcome)
            return
        if len(steps) != 1:
            return
        step = steps[0]
        config = call.view.api_tools.get(step.tool)
        if config is None:
            return
        arguments = step.arguments
        draft = draft_recipe(question, config, arguments)
        if draft is None:
            return
        session = call.view.config
        replay = await self.caller.call(
            config, arguments, extra_headers=session.api_headers, composed=session.allow_unsafe
        )
        first = success_result(config, step.body).structured_content
        if replay.is_error or _shape(replay.structured_content) != _shape(first):
            logger.info("recipe {} not kept: the replay did not agree", draft.name)
            return
        await self._save(call, question, draft, schema_hash(config))

    async def _learn_sequence(self, call: ToolCall, question: str, outcome: QueryOutcome) -> None:
        """Learn a trace of several calls; kept when a replay with the same values agrees."""
        operations = session_operations(call.view)
        draft = draft_sequence(question, outcome, operations)
        if draft is None:
            return
        configs = {name: operations[name] for name in draft.tools}
        if not all(llm_may_call(c, call.view.config.allow_unsafe) for c in configs.values()):
            return
        if not all(_reads(c, step) for c, step in zip_steps(draft.fixed, configs)):
            return  # replaying a write would repeat it
        try:
            again = await replay(
                self.caller.invoker,
                draft.fixed,
                draft.values,
                configs,
                headers=call.view.config.api_headers or None,
            )
        except ReplayFailed as failed:
            logger.info("recipe {} not kept: the replay failed: {}", draft.name, failed.message)
            return
        first = [_shape(s.body) for s in outcome.ok_steps()]
        if [_shape(s.body) for s in again.steps] != first:
            logger.info("recipe {} not kept: the replay did not agree", draft.name)
            return
        hashed = sequence_hash([configs[name] for name in draft.tools])
        await self._save(
            call,
            question,
            RecipeDraft(draft.name, "+".join(draft.tools)[:128], draft.fixed, draft.parameters),
            hashed,
        )

    async def _save(self, call: ToolCall, question: str, draft: RecipeDraft, hashed: str) -> None:
        _, created = await self.store.save(
            scope=scope_of(call.view),
            owner=call.view.config.recipe_owner,
            name=draft.name,
            tool=draft.tool,
            fixed=draft.fixed,
            parameters=draft.parameters,
            schema_hash=hashed,
            question=question,
        )
        self.generation += 1  # the view shows the new recipe (or its new use count)
        if created:
            await call.channel.tools_changed()
