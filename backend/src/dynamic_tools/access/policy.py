"""The one table of what each action needs: every route, MCP tool, resource and prompt.

A route is named ``"METHOD /path/template"`` as FastAPI declares it; ``None`` means open to
anyone (health checks, the protected-resource metadata, the UI's static bundle). An MCP tool
is named as listed, or by its family: a registry API tool, ``{prefix}_query``/``_execute``/
``_plan``, a recipe ``r_*``, a workflow ``w_*``, a markdown workflow tool. A test walks every
route of the app and every MCP tool, resource and prompt a server lists, and fails when one has
no entry here — so nothing new is reachable without a declared scope.

Scopes (``access/principals.py``): ``read`` views, ``run`` starts and acts on one's own runs
and calls tools, ``author`` saves definitions, ``admin`` deletes, purges, sees everyone's and
manages keys. What a principal owns is decided apart (``Principal.owns``): a ``run`` scope
acts only on the principal's own runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dynamic_tools.access.principals import Scope

__all__ = [
    "HOOKS_PREFIX",
    "MCP_METHOD_SCOPES",
    "MCP_PROMPT_SCOPE",
    "MCP_RESOURCE_SCOPE",
    "MCP_TOOL_SCOPES",
    "OPEN",
    "ROUTE_SCOPES",
    "UnknownAction",
    "audited",
    "mcp_method_scope",
    "mcp_tool_scope",
    "route_scope",
]

READ, RUN, AUTHOR, ADMIN = Scope.READ, Scope.RUN, Scope.AUTHOR, Scope.ADMIN

#: marks a route anyone may call (no credential needed)
OPEN = None
#: webhook deliveries: open routes whose credential is the delivery's signature (docs/triggers.md)
HOOKS_PREFIX = "/hooks/"
#: the demo travel API's routes: reading them needs ``read``, booking ``run``
DEMO_PREFIX = "/demo/"

ROUTE_SCOPES: dict[str, Scope | None] = {
    # health and discovery: open
    "GET /healthz": OPEN,
    "GET /readyz": OPEN,
    "GET /.well-known/oauth-protected-resource": OPEN,
    "GET /.well-known/oauth-protected-resource/mcp": OPEN,
    "GET /metrics": READ,
    "GET /openapi.json": READ,
    "GET /docs": READ,
    "GET /docs/oauth2-redirect": READ,
    "GET /redoc": READ,
    "GET /me": READ,
    # the single-shot pipeline: it calls a tool
    "POST /workflow": RUN,
    # tools
    "GET /tools": READ,
    "GET /tools/_schema": READ,
    "GET /tools/{name}": READ,
    "POST /tools": AUTHOR,
    "PUT /tools/{name}": AUTHOR,
    "POST /tools/_reload": AUTHOR,
    "DELETE /tools/{name}": ADMIN,
    # catalogs
    "GET /catalogs": READ,
    "GET /catalogs/{name}": READ,
    "POST /catalogs/validate": READ,
    "POST /catalogs/preview": READ,
    "POST /catalogs": AUTHOR,
    "POST /catalogs/{name}/enabled": AUTHOR,
    "PATCH /catalogs/{name}/enabled": AUTHOR,
    "DELETE /catalogs/{name}": ADMIN,
    # workflow documents
    "GET /workflows": READ,
    "GET /workflows/{workflow_id}": READ,
    "GET /workflows/{workflow_id}/plan": READ,
    "GET /workflows/{workflow_id}/inputs": READ,
    "POST /workflows/validate": READ,
    "POST /workflows/{workflow_id}/dry-run": READ,
    "POST /workflows": AUTHOR,
    "PUT /workflows/{workflow_id}": AUTHOR,
    "POST /workflows/{workflow_id}/rename": AUTHOR,
    "POST /workflows/_reload": AUTHOR,
    "DELETE /workflows/{workflow_id}": ADMIN,
    # runs: a principal's own (admins: everyone's)
    "POST /workflows/{workflow_id}/runs": RUN,
    "GET /runs": READ,
    "GET /runs/stats": READ,
    "POST /runs/cancel": RUN,
    "POST /runs/redrive": RUN,
    "GET /runs/{run_id}": READ,
    "GET /runs/{run_id}/events": READ,
    "POST /runs/{run_id}/resume": RUN,
    "POST /runs/{run_id}/redrive": RUN,
    "POST /runs/{run_id}/cancel": RUN,
    "DELETE /runs": ADMIN,
    "POST /runs/recover": ADMIN,
    # schedules and webhooks (docs/triggers.md): changing a schedule's state is authoring
    "GET /workflows/{workflow_id}/schedules": READ,
    "POST /workflows/{workflow_id}/schedules/{name}/pause": AUTHOR,
    "POST /workflows/{workflow_id}/schedules/{name}/resume": AUTHOR,
    "POST /workflows/{workflow_id}/schedules/{name}/run": RUN,
    "GET /workflows/{workflow_id}/webhooks": READ,
    "POST /workflows/{workflow_id}/webhooks/{name}/example": AUTHOR,  # signs with the secret
    "POST /hooks/{workflow_id}/{name}": OPEN,  # the signature is the credential
    # authoring helpers: reading, except running a draft
    "POST /authoring/preview-inputs": READ,
    "POST /authoring/preview-rendered": READ,
    "POST /authoring/step-plan": READ,
    "POST /authoring/resolve-inputs": READ,
    "GET /authoring/providers": READ,
    "POST /authoring/runs": RUN,
    # keys and the audit log
    "GET /keys": ADMIN,
    "POST /keys": ADMIN,
    "DELETE /keys/{key_id}": ADMIN,
    "GET /audit": ADMIN,
}

#: MCP tools by exact name
MCP_TOOL_SCOPES: dict[str, Scope] = {
    "workflow.list": READ,
    "workflow.get": READ,
    "workflow.validate": READ,
    "workflow.preview_inputs": READ,
    "workflow.preview_rendered": READ,
    "workflow.resolve_inputs": READ,
    "workflow.step_plan": READ,
    "workflow.save": AUTHOR,
    "workflow.rename": AUTHOR,
    "workflow.author_and_run": AUTHOR,
    "workflow.repair_and_rerun": AUTHOR,
    "workflow.run": RUN,
    "workflow.execute": RUN,
    "workflow.cancel": RUN,
    "workflow.resume": RUN,
    "workflow.redrive": RUN,
    "workflow.list_runs": READ,
    "workflow.run_stats": READ,
    "workflow.cancel_runs": RUN,
    "workflow.redrive_runs": RUN,
    "workflow.delete": ADMIN,
    "workflow.purge_history": ADMIN,
    "workflow.schedules.list": READ,
    "workflow.schedules.pause": AUTHOR,
    "workflow.schedules.resume": AUTHOR,
    "workflow.schedules.run_now": RUN,
    "workflow.webhooks.list": READ,
    "catalog.validate_openapi": READ,
    "catalog.preview_import": READ,
    "catalog.import_openapi": AUTHOR,
    "catalog.set_enabled": AUTHOR,
    "catalog.remove": ADMIN,
    "command.list": READ,
    "provider.list": READ,
    # markdown workflows: the client's own session
    "load_workflow": RUN,
    "execute_workflow_step": RUN,
    "report_step_result": RUN,
    "get_workflow_state": RUN,
    "reset_workflow": RUN,
}

#: the planner's short name (docs/seed-names.md), served as an alias of ``{prefix}_plan``
PLANNER_ALIAS = "_plan"

#: every resource (workflow guides and graphs, specs, schemas, catalogs) and every prompt
MCP_RESOURCE_SCOPE = READ
MCP_PROMPT_SCOPE = READ

#: MCP methods beyond tools, resources and prompts that act on runs (a principal's own)
MCP_METHOD_SCOPES: dict[str, Scope] = {
    "tasks/get": READ,
    "tasks/list": READ,
    "tasks/result": READ,
    "tasks/cancel": RUN,
    "tasks/update": RUN,  # 2026-07-28: answers a task's input requests (resumes its run)
}


#: actions recorded in the audit log beyond those needing ``author`` or ``admin``
_AUDITED_ALSO = frozenset(
    {
        "POST /runs/{run_id}/cancel",
        "POST /runs/{run_id}/redrive",
        "workflow.cancel",
        "POST /runs/cancel",
        "POST /runs/redrive",
        "workflow.cancel_runs",
        "workflow.redrive_runs",
    }
)


def audited(action: str, scope: Scope | None) -> bool:
    """Whether ``action`` (a route key or an MCP tool name) goes into the audit log.

    Every authoring and destructive action: whatever needs ``author`` or ``admin`` (saves,
    imports, deletes, purges, key changes, recovery), and cancelling or redriving a run.
    """
    return scope in (AUTHOR, ADMIN) or action in _AUDITED_ALSO


class UnknownAction(LookupError):
    """An action with no declared scope: refused (and a test fails before it ships)."""


def route_scope(method: str, path_template: str) -> Scope | None:
    """The scope ``METHOD /template`` needs (None: open).

    Raises:
        UnknownAction: the route has no entry.
    """
    key = f"{method.upper()} {path_template}"
    if key in ROUTE_SCOPES:
        return ROUTE_SCOPES[key]
    if path_template.startswith(DEMO_PREFIX):  # the demo API: a target like any other API
        return READ if method.upper() == "GET" else RUN
    raise UnknownAction(key)


def mcp_tool_scope(name: str, *, prefix: str) -> Scope:
    """The scope an MCP tool needs: by name, else by family.

    Families: ``{prefix}_plan`` reads; ``{prefix}_query``/``_execute``, recipes ``r_*``,
    workflows ``w_*`` and every other name (an API tool: a registered or session operation)
    run. Unknown names are API tools by construction: the server lists nothing else.
    """
    if name in MCP_TOOL_SCOPES:
        return MCP_TOOL_SCOPES[name]
    if name in (f"{prefix}_plan", PLANNER_ALIAS):
        return READ
    return RUN


def mcp_method_scope(method: str, params: Mapping[str, Any] | None, *, prefix: str) -> Scope | None:
    """The scope an MCP request needs (None: any authenticated principal may send it).

    ``tools/call`` by its tool (:func:`mcp_tool_scope`); reading resources and prompts needs
    :data:`MCP_RESOURCE_SCOPE` / :data:`MCP_PROMPT_SCOPE`; ``tasks/*`` as
    :data:`MCP_METHOD_SCOPES`; listing tools (filtered by scope), ``initialize``, ``ping`` and
    notifications need none.
    """
    if method == "tools/call":
        name = params.get("name") if params else None
        return mcp_tool_scope(str(name), prefix=prefix) if isinstance(name, str) else None
    if method.startswith("resources/") and method != "resources/unsubscribe":
        return MCP_RESOURCE_SCOPE
    if method.startswith("prompts/"):
        return MCP_PROMPT_SCOPE
    return MCP_METHOD_SCOPES.get(method)
