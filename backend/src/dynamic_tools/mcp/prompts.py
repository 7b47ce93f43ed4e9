"""Authoring prompts: author, extend, fix_validation, run_with_inputs.

The prompts are ``workflow.author``, ``workflow.extend``, ``workflow.fix_validation`` and
``workflow.run_with_inputs``.

Each prompt embeds the format reference and names the JSON Schema's resource (and the tools the
session can call), so a model's draft validates. Prompts only ever steer towards safe and
standard tools (validate, save, run); they never ask for a destructive one.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import mcp_types as types

from dynamic_tools.definitions.authoring import WorkflowAuthoring
from dynamic_tools.definitions.repository import WorkflowRepository
from dynamic_tools.errors import InvalidInputError
from dynamic_tools.mcp.authoring_resources import command_catalog, workflow_spec
from dynamic_tools.mcp.entries import SessionView


@dataclass(frozen=True)
class PromptSpec:
    """One prompt: its MCP definition and how its text is made."""

    prompt: types.Prompt
    render: Callable[[SessionView, dict[str, str]], str]


def _argument(name: str, description: str, required: bool = True) -> types.PromptArgument:
    return types.PromptArgument(name=name, description=description, required=required)


def _context(view: SessionView) -> str:
    tools = [
        f"- {c['name']}({', '.join(c['arguments'])})"
        for c in command_catalog(view)
        if c["layer"] in ("api", "recipe")
    ]
    tools += ["- rest_call(method, path, query, body, headers)", "- sql_query(sql)"]
    # The format reference says all a draft needs; the JSON Schema (15k characters, as long
    # again) is a resource the client reads when it wants it, and `workflow.validate` checks
    # every draft against it (docs/performance.md, "Real models": prompt sizes).
    return (
        "## Workflow format reference\n\n"
        + workflow_spec()
        + "\n\n## JSON Schema of documents\n\nThe resource dynamic-tools://workflow.schema; "
        "`workflow.validate` checks a draft against it and names each error's path and line."
        + "\n\n## Tools a `call` node can use\n\n"
        + "\n".join(tools)
    )


_CLOSING = (
    "\n\nWhen the draft is ready: call `workflow.validate` with it, fix every error it lists "
    "(each has a path and a line), and only then call `workflow.save`. Never delete or purge "
    "anything as part of this task."
)


class AuthoringPrompts:
    """The four prompts over the workflow repository and the authoring service."""

    def __init__(self, workflows: WorkflowRepository, authoring: WorkflowAuthoring) -> None:
        self.workflows = workflows
        self.authoring = authoring
        self.specs = {
            spec.prompt.name: spec
            for spec in [
                PromptSpec(
                    types.Prompt(
                        name="workflow.author",
                        title="Author a workflow",
                        description="Draft a new workflow document (YAML) for a goal.",
                        arguments=[
                            _argument("goal", "What the workflow must achieve."),
                            _argument("target_system", "The API or domain it runs on.", False),
                            _argument("constraints", "Rules, limits, approvals.", False),
                        ],
                    ),
                    self._author,
                ),
                PromptSpec(
                    types.Prompt(
                        name="workflow.extend",
                        title="Extend a workflow",
                        description="Change a saved workflow, keeping its order and ids.",
                        arguments=[
                            _argument("workflow_id", "The saved workflow to change."),
                            _argument("changes", "What to add or change."),
                        ],
                    ),
                    self._extend,
                ),
                PromptSpec(
                    types.Prompt(
                        name="workflow.fix_validation",
                        title="Fix validation errors",
                        description="Correct a draft so that it validates, or a document "
                        "whose run failed so that it runs.",
                        arguments=[
                            _argument("content", "The draft document."),
                            _argument(
                                "violations", "Its violations (JSON); computed if omitted.", False
                            ),
                            _argument(
                                "failure",
                                "How a run of the (valid) document failed: 'execution failed "
                                "at node <id>: <the API's message>', then the details.",
                                False,
                            ),
                        ],
                    ),
                    self._fix,
                ),
                PromptSpec(
                    types.Prompt(
                        name="workflow.run_with_inputs",
                        title="Prepare a run",
                        description="Resolve a workflow's inputs, or ask what is missing.",
                        arguments=[
                            _argument("workflow_id", "The saved workflow to run."),
                            _argument("inputs", "Known inputs as a JSON object.", False),
                        ],
                    ),
                    self._run,
                ),
            ]
        }

    def listing(self) -> list[types.Prompt]:
        """Every prompt."""
        return [spec.prompt for spec in self.specs.values()]

    def get(self, view: SessionView, name: str, arguments: dict[str, str]) -> types.GetPromptResult:
        """The prompt ``name`` rendered with ``arguments`` (missing required ones are named)."""
        spec = self.specs.get(name)
        if spec is None:
            raise InvalidInputError(
                f"no prompt named '{name}' (prompts: {', '.join(self.specs)})",
                violations=[{"path": "name", "rule": "enum", "message": "unknown prompt"}],
            )
        missing = [
            a.name for a in spec.prompt.arguments or [] if a.required and not arguments.get(a.name)
        ]
        if missing:
            raise InvalidInputError(
                f"prompt '{name}' needs: {', '.join(missing)}",
                violations=[
                    {"path": f"arguments.{m}", "rule": "required", "message": "missing"}
                    for m in missing
                ],
            )
        text = spec.render(view, arguments)
        return types.GetPromptResult(
            description=spec.prompt.description,
            messages=[
                types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))
            ],
        )

    # --- the four texts --------------------------------------------------------------------
    def _author(self, view: SessionView, args: dict[str, str]) -> str:
        return (
            f"Write a workflow document in YAML for this goal: {args['goal']}\n"
            + (f"Target system: {args['target_system']}\n" if args.get("target_system") else "")
            + (f"Constraints: {args['constraints']}\n" if args.get("constraints") else "")
            + "Declare every value the user must provide as a param. Answer with the YAML only.\n\n"
            + _context(view)
            + _CLOSING
        )

    def _extend(self, view: SessionView, args: dict[str, str]) -> str:
        current = self.workflows.get(args["workflow_id"])
        return (
            f"Change the workflow '{current.id}' as follows: {args['changes']}\n"
            "Keep its id, its existing nodes' ids and their order; change only what is needed. "
            f"Answer with the whole updated document ({current.format}).\n\n"
            f"## Current document (version {current.version})\n\n```{current.format}\n"
            + str(current.content)
            + "\n```\n\nSave it with workflow.save passing expected_version="
            + f"{current.version}.\n\n"
            + _context(view)
            + _CLOSING
        )

    def _fix(self, view: SessionView, args: dict[str, str]) -> str:
        if args.get("failure") and not args.get("violations"):
            return self._fix_run(view, args)
        violations: Any = args.get("violations")
        if not violations:
            violations = json.dumps(self.workflows.validate(args["content"]), indent=1)
        return (
            "This workflow document does not validate. Correct every violation listed (each "
            "names a path and usually a line) and change nothing else. Answer with the whole "
            "corrected document.\n\n## Document\n\n```\n"
            + args["content"]
            + "\n```\n\n## Violations\n\n```json\n"
            + str(violations)
            + "\n```\n\n"
            + _context(view)
            + _CLOSING
        )

    def _fix_run(self, view: SessionView, args: dict[str, str]) -> str:
        """A valid document whose run failed: the failure as it happened, not as violations."""
        return (
            "This workflow document validates, but a run of it failed: "
            + args["failure"]
            + "\n\nChange the document so that a new run succeeds: the step that failed, its "
            "arguments, or the default of the param whose value caused the failure (a re-run "
            "uses the repaired defaults). Change nothing else; keep the workflow's id and its "
            "nodes' ids. Answer with the whole corrected document.\n\n## Document\n\n```\n"
            + args["content"]
            + "\n```\n\n"
            + _context(view)
            + _CLOSING
        )

    def _run(self, view: SessionView, args: dict[str, str]) -> str:
        try:
            inputs = json.loads(args.get("inputs") or "{}")
        except (json.JSONDecodeError, RecursionError):  # not JSON, or nested past its limit
            inputs = {}
        target = self.authoring.target(workflow_id=args["workflow_id"], content=None)
        resolution = self.authoring.resolve_inputs(
            target, inputs if isinstance(inputs, dict) else {}
        )
        return (
            f"Prepare a run of the workflow '{target.workflow_id}'. Here is what is known about "
            "its inputs (outcome per input: resolved, prompt = ask the user, optional, error):\n"
            "```json\n" + resolution.model_dump_json(indent=1) + "\n```\n"
            "For each input with outcome 'prompt' or 'error', ask the user one clear question "
            "(offer the values the listed providers return when there are any). When `ready` "
            f"would be true, call `w_{target.workflow_id}` with the inputs (or `workflow.run`).\n\n"
            "## Inputs\n\n```json\n"
            + self.authoring.preview_inputs(target).model_dump_json(indent=1, by_alias=True)
            + "\n```"
        )
