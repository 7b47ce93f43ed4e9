"""``completion/complete``: values for prompt arguments and resource template variables.

What completes (the values start with what the client typed, case-insensitive, at most
:data:`MAX_VALUES`, ``hasMore`` beyond):

- prompts ``workflow.extend`` and ``workflow.run_with_inputs``, argument ``workflow_id``: the
  workflows of the session; prompt ``workflow.author``, argument ``target_system``: the
  domains and the API's name;
- template ``workflow://{domain}/{workflow}``: ``domain`` the domains; ``workflow`` the
  workflows (of the domain given in the context, when given) and ``overview``;
- templates ``dynamic-tools://workflow.manifest/{workflow_id}`` and
  ``workflow.manifest:{workflow_id}``: the saved workflows.

Anything else (another prompt, argument or template) completes to no values rather than an
error: a client asks while the user types and an empty list is the useful answer.
"""

from __future__ import annotations

from collections.abc import Iterable

import mcp_types as types

from dynamic_tools.mcp.entries import SessionView

MAX_VALUES = 100
_WORKFLOW_PROMPTS = {"workflow.extend", "workflow.run_with_inputs"}


def complete(
    view: SessionView, saved: Iterable[str], params: types.CompleteRequestParams
) -> types.CompleteResult:
    """The completion of ``params`` in ``view`` (``saved``: the saved workflow ids)."""
    ref, argument = params.ref, params.argument
    context = dict(params.context.arguments or {}) if params.context is not None else {}
    domains = sorted(set(view.domains.values()))
    candidates: list[str] = []
    if isinstance(ref, types.PromptReference):
        if ref.name in _WORKFLOW_PROMPTS and argument.name == "workflow_id":
            candidates = sorted(saved)
        elif ref.name == "workflow.author" and argument.name == "target_system":
            candidates = [*domains, view.label]
    else:
        template = ref.uri
        if template.startswith("workflow://"):
            if argument.name == "domain":
                candidates = domains
            elif argument.name == "workflow":
                domain = context.get("domain")
                every = {**view.guides, **view.workflows}
                candidates = sorted(
                    w for w in every if domain is None or view.domains.get(w) == domain
                )
                candidates.append("overview")
        elif "workflow.manifest" in template and argument.name == "workflow_id":
            candidates = sorted(saved)
    typed = argument.value.casefold()
    matching = [c for c in dict.fromkeys(candidates) if c.casefold().startswith(typed)]
    return types.CompleteResult(
        completion=types.Completion(
            values=matching[:MAX_VALUES],
            total=len(matching),
            has_more=len(matching) > MAX_VALUES,
        )
    )
