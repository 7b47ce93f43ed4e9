"""The building blocks of a session's tool list: entries, calls and the session view."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types
from loguru import logger

from dynamic_tools.engine.models import Workflow, WorkflowDocument
from dynamic_tools.mcp.channel import CallChannel
from dynamic_tools.mcp.session_config import SessionConfig
from dynamic_tools.tools.models import ToolConfig, ToolHints
from dynamic_tools.tools.registry import pick_tools
from dynamic_tools.tools.safety import query_choices
from dynamic_tools.tools.scope import ToolScope

Result = types.CallToolResult | types.InputRequiredResult


@dataclass
class ToolCall:
    """One ``tools/call``: the view it runs in, its arguments and the channel to the client."""

    view: SessionView
    arguments: dict[str, Any]
    channel: CallChannel


Handler = Callable[[ToolCall], Awaitable[Result]]


@dataclass(frozen=True)
class ToolEntry:
    """A tool offered to a session: its MCP definition, its layer and its handler."""

    tool: types.Tool
    layer: str
    handler: Handler
    start_task: Callable[[ToolCall], Awaitable[str]] | None = None  # → run id (task mode)
    start_job: Callable[[ToolCall, Any], Awaitable[str]] | None = None  # work, then → run id
    preview: Callable[[dict[str, Any]], Awaitable[dict[str, Any]]] | None = None
    """Destructive tools: what a call would remove, changing nothing (``confirmation.py``)."""
    check: Callable[[dict[str, Any]], list[dict[str, Any]]] | None = None
    """Checks of the arguments beyond the input schema (a ``w_*`` tool's date formats...):
    their violations are answered with the schema's, all at once (``mcp/arguments.py``)."""


@dataclass(frozen=True)
class QuestionRecipe:
    """A sequence recipe as ``{prefix}_query`` may replay it: its question pattern and runner."""

    name: str
    pattern: re.Pattern[str]
    parameters: dict[str, Any]
    run: Callable[[ToolCall, dict[str, Any], str | None], Awaitable[Any]]


@dataclass
class SessionView:
    """Everything one header configuration sees."""

    config: SessionConfig
    prefix: str
    label: str
    api_tools: dict[str, ToolConfig]
    hints: dict[str, ToolHints]
    workflows: dict[str, Workflow]
    domains: dict[str, str]  # workflow id → domain
    guides: dict[str, Workflow] = field(default_factory=dict)  # X-Workflow-Resources only
    document: WorkflowDocument | None = None  # X-Workflow-URL's document, when given
    document_version: str | None = None
    #: a GraphQL API's free query tools, by the core tool they serve (``{prefix}_query``,
    #: ``{prefix}_execute``); empty for REST
    core_tools: dict[str, ToolConfig] = field(default_factory=dict)
    #: what the session's documents could not serve: ``{header, url, workflow, violations}``
    problems: list[dict[str, Any]] = field(default_factory=list)
    #: natural-language guides (markdown) X-Workflow-Resources gave, by domain
    guide_texts: dict[str, str] = field(default_factory=dict)
    entries: dict[str, ToolEntry] = field(default_factory=dict)
    tools: list[types.Tool] = field(default_factory=list)
    #: names a tool also answers to, unlisted (the designs' ``_plan`` for ``{prefix}_plan``)
    aliases: dict[str, str] = field(default_factory=dict)
    #: recipes ``{prefix}_query`` replays with no LLM when a question matches their pattern
    #: (``mcp/recipes.py``), most used first
    question_recipes: list[QuestionRecipe] = field(default_factory=list)

    def entry(self, name: str) -> ToolEntry | None:
        """The tool ``tools/call`` names: listed, or by one of its aliases."""
        found = self.entries.get(name)
        if found is None and name in self.aliases:
            found = self.entries.get(self.aliases[name])
        return found

    def get_multiple(self, names: list[str]) -> tuple[list[ToolConfig], list[str]]:
        """The session's API tools by name (the pipeline's tool source)."""
        return pick_tools({**self.api_tools, **self.choices()}, names)

    def choices(self) -> dict[str, ToolConfig]:
        """What ``{prefix}_query`` lets the model choose from (safe by default)."""
        free = self.core_tools.get(f"{self.prefix}_query")
        return query_choices(free, self.api_tools, self.config.allow_unsafe)

    def composed_scope(self) -> ToolScope:
        """The scope of a run of a model-composed workflow started in this session.

        No tools of its own (a draft is checked against the registry); it holds every call of
        the run to the safe-by-default rule with the session's ``X-Allow-Unsafe-Paths``.
        """
        return ToolScope(prefix=self.prefix, allow_unsafe=self.config.allow_unsafe, composed=True)

    def add(self, entry: ToolEntry) -> None:
        """Offer ``entry``; a later layer's entry of the same name replaces the earlier one.

        Every replacement is logged (``mcp/layers.py`` states the rule).
        """
        earlier = self.entries.get(entry.tool.name)
        if earlier is not None and earlier.layer != entry.layer:
            logger.info(
                "tool {} of layer {} replaces the one of layer {}",
                entry.tool.name,
                entry.layer,
                earlier.layer,
            )
        self.entries[entry.tool.name] = entry
