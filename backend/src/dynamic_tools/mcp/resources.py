"""Workflow resources: a guide per domain and a JSON graph per workflow.

Design: docs/design-sources.md#tool-discovery-design (strategy 2).

- ``workflow://{domain}/overview`` — markdown: the team's guide (X-Workflow-Resources) when
  given, then the domain's workflows, their steps, the rules;
- ``workflow://{domain}/graph`` — JSON: the domain's dependency graph (nodes and edges);
- ``workflow://{domain}/{workflow}`` — JSON: the structured graph of one workflow;
- ``dynamic-tools://session/problems`` — JSON: what the session's headers could not serve
  (workflows, documents, tool hints: each left out once, the rest served; listed only when
  there is something).

Both are listed as resources and as resource templates. ``ENABLE_WORKFLOWS=false`` removes them.
Further resources (the authoring ones, docs/design-sources.md#mcp-authoring-design) register
through :attr:`ResourceSet.extra`.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import mcp_types as types

from dynamic_tools.errors import NotFoundError
from dynamic_tools.mcp.entries import SessionView
from dynamic_tools.mcp.workflow_text import dependency_graph, overview, workflow_graph

SCHEME = "workflow://"
PROBLEMS = "dynamic-tools://session/problems"
Reader = Callable[[SessionView], Awaitable[tuple[str, str]]]  # → (mime type, text)


@dataclass
class ExtraResource:
    """A resource offered beside the workflow ones (read by ``reader``)."""

    resource: types.Resource
    reader: Reader


@dataclass
class ResourceSet:
    """The session's resources: workflow guides and graphs, plus registered extras."""

    extra: list[ExtraResource] = field(default_factory=list)
    templates_extra: list[types.ResourceTemplate] = field(default_factory=list)
    template_readers: list[Callable[[SessionView, str], Awaitable[tuple[str, str] | None]]] = field(
        default_factory=list
    )

    def listing(self, view: SessionView) -> list[types.Resource]:
        """Every resource of the session."""
        items = [e.resource for e in self.extra]
        if view.problems:
            items.append(
                types.Resource(
                    uri=PROBLEMS,
                    name="session document problems",
                    description=f"{len(view.problems)} item(s) of this session's headers "
                    "(workflows, documents, tool hints) left out, each with its violations "
                    "(JSON).",
                    mime_type="application/json",
                )
            )
        for domain in sorted(set(view.domains.values()) | set(view.guide_texts)):
            items.append(
                types.Resource(
                    uri=f"{SCHEME}{domain}/overview",
                    name=f"{domain} overview",
                    description=f"How the {domain} workflows and tools fit together (markdown).",
                    mime_type="text/markdown",
                )
            )
            items.append(
                types.Resource(
                    uri=f"{SCHEME}{domain}/graph",
                    name=f"{domain} dependency graph",
                    description=f"The {domain} workflows and the tools they call, as nodes and "
                    "edges (JSON).",
                    mime_type="application/json",
                )
            )
        for workflow_id, workflow in {**view.guides, **view.workflows}.items():
            items.append(
                types.Resource(
                    uri=f"{SCHEME}{view.domains[workflow_id]}/{workflow_id}",
                    name=f"{workflow_id} graph",
                    description=workflow.description or workflow_id,
                    mime_type="application/json",
                )
            )
        return items

    def templates(self, view: SessionView) -> list[types.ResourceTemplate]:
        """The URI templates of the workflow resources (and registered extras)."""
        items = list(self.templates_extra)
        if view.workflows or view.guides:
            items += [
                types.ResourceTemplate(
                    uri_template=SCHEME + "{domain}/overview",
                    name="workflow overview",
                    description="The natural-language guide of a domain's workflows.",
                    mime_type="text/markdown",
                ),
                types.ResourceTemplate(
                    uri_template=SCHEME + "{domain}/{workflow}",
                    name="workflow graph",
                    description="The structured JSON graph of one workflow.",
                    mime_type="application/json",
                ),
            ]
        return items

    async def read(self, view: SessionView, uri: str) -> types.ReadResourceResult:
        """The contents of ``uri``; :class:`NotFoundError` naming it when unknown."""
        for extra in self.extra:
            if str(extra.resource.uri) == uri:
                mime, text = await extra.reader(view)
                return _contents(uri, mime, text)
        for reader in self.template_readers:
            found = await reader(view, uri)
            if found is not None:
                return _contents(uri, *found)
        if uri == PROBLEMS and view.problems:
            return _contents(uri, "application/json", json.dumps(view.problems, indent=2))
        if uri.startswith(SCHEME):
            domain, _, name = uri[len(SCHEME) :].partition("/")
            every = {**view.guides, **view.workflows}
            in_domain = {w: wf for w, wf in every.items() if view.domains[w] == domain}
            guide = view.guide_texts.get(domain)
            if (in_domain or guide) and name == "overview":
                tools = list(view.api_tools.values())
                text = overview(
                    domain, in_domain, tools, view.hints, served=view.workflows, guide=guide
                )
                return _contents(uri, "text/markdown", text)
            if (in_domain or guide) and name == "graph":
                graph = dependency_graph(domain, in_domain, view.workflows, view.hints)
                return _contents(uri, "application/json", json.dumps(graph, indent=2))
            if name in in_domain:
                graph = workflow_graph(name, in_domain[name], domain=domain)
                return _contents(uri, "application/json", json.dumps(graph, indent=2, default=str))
        raise NotFoundError(
            f"resource '{uri}' does not exist in this session (see resources/list)",
            context={"uri": uri},
        )


def _contents(uri: str, mime: str, text: str) -> types.ReadResourceResult:
    return types.ReadResourceResult(
        contents=[types.TextResourceContents(uri=uri, mime_type=mime, text=text)]
    )
