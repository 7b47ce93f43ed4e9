"""The ``call`` node: call a tool (a registered tool, ``rest_call`` or ``sql_query``).

A call may retry (``on_error``), hand over to a fallback node when it gives up, test its
result (``success``), and register an undo (``compensate_with``) that the saga runs if the
run later fails. Attempts and retries are in ``engine/tool_calls.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal
from xml.etree.ElementTree import Element

from pydantic import Field

from dynamic_tools.engine.criteria import (
    ANSWER_LOCALS,
    Criterion,
    CriterionError,
    compile_criterion,
)
from dynamic_tools.engine.node_parts import (
    IDENTIFIER,
    NamedOutputs,
    NodeBase,
    OnError,
    ToolStep,
)
from dynamic_tools.engine.nodes.kind import (
    ArazzoSteps,
    CallSite,
    NodeAt,
    NodeChecks,
    NodeOutcome,
    Path,
    ReferenceSource,
    RunServices,
)
from dynamic_tools.engine.nodes.step_kind import StepKind
from dynamic_tools.engine.references import type_name
from dynamic_tools.engine.saga import Compensation
from dynamic_tools.engine.scope import Scope
from dynamic_tools.engine.sql_query import table_names
from dynamic_tools.engine.tool_calls import call_with_retries
from dynamic_tools.engine.xml_reading import ReadNode, call_body
from dynamic_tools.errors import InvalidInputError


class CallNode(NodeBase):
    """Call a tool (a registered tool, ``rest_call`` or ``sql_query``)."""

    kind: Literal["call"] = Field(default="call", alias="type")
    call: str = Field(min_length=1)
    args: dict[str, Any] = Field(default_factory=dict)
    body: Any = Field(
        default=None,
        description="The request body as one value — a reference ($order, "
        "$quote.request) or an object: its properties are the tool's body arguments, under "
        "args (args win); checked against the tool's input schema when the call is made.",
    )
    output: str | None = Field(default=None, pattern=IDENTIFIER)
    on_error: OnError | None = None
    compensate_with: ToolStep | None = None
    success: str | None = Field(default=None, description="Expression over $result.")
    criteria: list[Criterion] = Field(
        default_factory=list,
        max_length=50,
        description="Success criteria (all must hold); when given they alone decide success.",
    )
    outputs: NamedOutputs = Field(
        default=None,
        description="Named values taken from the answer ($result, $status, $headers); "
        "when given they are the node's output instead of the body.",
    )


def _body_arguments(body: Any, node_id: str) -> dict[str, Any]:
    """A call's ``body`` as arguments: an object's properties (None: no body)."""
    if body is None:
        return {}
    if not isinstance(body, dict):
        kind = type_name(body)
        raise InvalidInputError(
            f"the body of node '{node_id}' is a {kind}, not an object of the tool's body "
            "properties",
            violations=[{"path": f"{node_id}.body", "rule": "body_type", "message": kind}],
            context={"node_id": node_id},
        )
    return body


class CallKind(StepKind[CallNode]):
    """Calls one tool, with retries, a success test and an optional undo."""

    name = "call"
    model = CallNode
    written_as = "call: search_flights"
    shorthand = "call"

    xml_tags = ("step",)

    def from_xml(
        self, element: Element, attrs: dict[str, Any], here: str, read_node: ReadNode
    ) -> dict[str, Any]:
        return {**attrs, **call_body(element, here)}

    def reference_sources(self, node: CallNode, here: Path) -> list[ReferenceSource]:
        sources = [ReferenceSource(node.args, (*here, "args"))]
        if node.body is not None:
            sources.append(ReferenceSource(node.body, (*here, "body")))
        if node.outputs:
            sources.append(ReferenceSource(node.outputs, (*here, "outputs"), ANSWER_LOCALS))
        for index, criterion in enumerate(node.criteria):
            if criterion.context is not None:
                where = (*here, "criteria", index, "context")
                sources.append(ReferenceSource(criterion.context, where, ANSWER_LOCALS))
        if node.compensate_with is not None:  # rendered once the call's output is set
            own = frozenset({node.output}) if node.output else frozenset()
            sources.append(
                ReferenceSource(node.compensate_with.args, (*here, "compensate_with", "args"), own)
            )
        return sources

    def tool(self, node: CallNode) -> str | None:
        return node.call

    def tools(self, node: CallNode) -> list[str]:
        return [node.call] + ([node.compensate_with.call] if node.compensate_with else [])

    def undo_tools(self, node: CallNode) -> list[str]:
        return [node.compensate_with.call] if node.compensate_with else []

    def calls(self, node: CallNode) -> list[CallSite]:
        found = [CallSite(tool=node.call, args=node.args)]
        if node.compensate_with is not None:
            undo = node.compensate_with
            found.append(CallSite(tool=undo.call, args=undo.args, undo=True))
        return found

    def check_step(self, node: CallNode, checks: NodeChecks, here: Path) -> None:
        if node.body is None:
            checks.tool((*here, "call"), node.call, node.args)
        elif isinstance(node.body, dict):  # values with references are left to the run
            checks.tool((*here, "call"), node.call, {**node.body, **node.args})
        else:  # what a reference holds is known when the run gets there
            checks.tool((*here, "call"), node.call)
        if node.body is not None and not isinstance(node.body, dict | str):
            checks.add(
                (*here, "body"),
                "body_type",
                "a body is an object of the tool's body properties, or a reference to one",
                actual=node.body,
            )
        if node.compensate_with is not None:
            undo = node.compensate_with
            checks.tool((*here, "compensate_with", "call"), undo.call, undo.args)
        if node.success:
            checks.expression((*here, "success"), node.success, local=ANSWER_LOCALS)
        for index, criterion in enumerate(node.criteria):
            where = (*here, "criteria", index, "condition")
            if criterion.type == "simple":
                checks.expression(where, criterion.condition, local=ANSWER_LOCALS)
                continue
            try:
                compile_criterion(criterion)
            except CriterionError as exc:
                checks.add(where, "invalid_criterion", str(exc), actual=criterion.condition)
        if node.on_error is not None and node.on_error.retry_if:
            where = (*here, "on_error", "retry_if")
            checks.expression(where, node.on_error.retry_if, local=ANSWER_LOCALS)
        if node.call == "rest_call":
            for key in ("method", "path"):
                if key not in node.args:
                    checks.add(
                        (*here, "args"), "builtin_args", f"rest_call needs args.{key}", expected=key
                    )
            if "base_url" not in node.args and checks.base_url is None:
                checks.add(
                    (*here, "args"),
                    "builtin_args",
                    "rest_call needs a base URL: give the document a base_url, or args.base_url",
                    expected="base_url",
                )
        elif node.call == "sql_query":
            _check_sql(node, checks, here)

    def repeatable(self, node: CallNode) -> bool:
        return True

    async def run_step(
        self, node: CallNode, full_id: str, prefix: str, scope: Scope, run: RunServices
    ) -> Any:
        args = run.render(node.args, scope, full_id)
        if node.body is not None:
            args = {**_body_arguments(run.render(node.body, scope, full_id), full_id), **args}
        await run.set_input(full_id, args)
        outcome = await call_with_retries(
            run.call_context(full_id),
            node,
            full_id,
            args,
            # a foreach item's id ends in its index; a loop's round adds @<round>
            idempotency_key=f"{run.run_id}:{full_id}{run.step_tag}",
            scope=scope,
        )
        if node.compensate_with is not None:
            scope.set_output(node.output, outcome)
            run.register(
                Compensation(
                    node_id=full_id,
                    call=node.compensate_with.call,
                    args=run.render(node.compensate_with.args, scope, full_id),
                    ignore_error=node.compensate_with.ignore_error,
                )
            )
        return outcome

    def reuse(self, node: CallNode, at: NodeAt, output: Any, run: RunServices) -> NodeOutcome:
        outcome = super().reuse(node, at, output, run)
        if node.compensate_with is not None:  # what it did still stands: undo it if this fails
            run.register(
                Compensation(
                    node_id=at.full_id,
                    call=node.compensate_with.call,
                    args=run.render(node.compensate_with.args, at.scope, at.full_id),
                    ignore_error=node.compensate_with.ignore_error,
                )
            )
        return outcome

    def arazzo_step(self, node_id: str, node: CallNode, out: ArazzoSteps) -> dict[str, Any] | None:
        """An ``operationId`` step: args are parameters (by the tool's ``in``) and a payload."""
        operation = out.operation(node.call)
        if operation is None:
            out.warn(node_id, f"'{node.call}' is not a registered operation: the call is left out")
            return None
        step: dict[str, Any] = {"stepId": node_id, "operationId": operation.operation_id}
        parameters, payload = [], {}
        for name, value in node.args.items():
            where = operation.param_in(name)
            converted = out.value(value, node_id)
            if where == "body":
                payload[name] = converted
            else:
                parameters.append({"name": name, "in": where or "query", "value": converted})
        if parameters:
            step["parameters"] = parameters
        if node.body is not None:  # the whole body; args set its properties over it
            request: dict[str, Any] = {
                "contentType": operation.content_type,
                "payload": out.value(node.body, node_id),
            }
            if payload:
                request["replacements"] = [
                    {"target": "/" + k.replace("~", "~0").replace("/", "~1"), "value": v}
                    for k, v in payload.items()
                ]
            step["requestBody"] = request
        elif payload:
            step["requestBody"] = {"contentType": operation.content_type, "payload": payload}
        criteria = []
        for criterion in node.criteria:
            if criterion.type == "simple":
                criteria.append({"condition": out.condition(criterion.condition, node_id)})
            else:
                item = {"condition": criterion.condition, "type": criterion.type}
                item["context"] = out.value(
                    criterion.context or "$result", node_id, answer=_ARAZZO_ANSWER
                )
                criteria.append(item)
        if node.success:
            criteria.append({"condition": out.condition(node.success, node_id)})
        if criteria:
            step["successCriteria"] = criteria
        if node.outputs:
            step["outputs"] = {
                k: out.value(v, node_id, answer=_ARAZZO_ANSWER) for k, v in node.outputs.items()
            }
        elif node.output:
            step["outputs"] = {"body": "$response.body"}
        if node.compensate_with is not None:
            out.warn(
                node_id,
                f"compensate_with ({node.compensate_with.call}) has no Arazzo "
                "equivalent: nothing undoes this call when a later step fails",
            )
        out.on_error(step, node_id, node.on_error)
        return step

    def label(self, node_id: str, node: CallNode) -> str:
        return node.call

    def step_details(self, node: CallNode) -> dict[str, Any]:
        return {
            "tool": node.call,
            "output": node.output,
            "retries": node.on_error.retry if node.on_error else 0,
            "fallback": node.on_error.fallback if node.on_error else None,
            "compensate_with": node.compensate_with.call if node.compensate_with else None,
            "compensation": (
                {
                    "call": node.compensate_with.call,
                    "when": "if the run fails, times out or is cancelled after this call "
                    "succeeded (undone newest first)",
                }
                if node.compensate_with
                else None
            ),
            "success": node.success,
            **(
                {"criteria": [c.model_dump(exclude_none=True) for c in node.criteria]}
                if node.criteria
                else {}
            ),
            **({"outputs": sorted(node.outputs)} if node.outputs else {}),
        }

    def failure_notes(self, node_id: str, node: CallNode, nodes: Mapping[str, Any]) -> list[str]:
        notes = super().failure_notes(node_id, node, nodes)
        if node.compensate_with:
            notes.append(f"{node_id}: undone by {node.compensate_with.call} if the run aborts")
        return notes


_ARAZZO_ANSWER = {
    "result": "$response.body",
    "status": "$statusCode",
    "headers": "$response.header",
}
"""What the names local to a call's answer read in Arazzo."""


def _check_sql(node: CallNode, checks: NodeChecks, here: Path) -> None:
    sql = node.args.get("sql")
    if not isinstance(sql, str) or not sql.strip():
        checks.add(
            (*here, "args"), "builtin_args", "sql_query needs args.sql (text)", expected="sql"
        )
        return
    outputs = checks.graph.output_names()
    for table in table_names(sql):
        if table not in outputs:
            checks.add(
                (*here, "args", "sql"),
                "unknown_table",
                f"sql_query reads table '{table}', but no node has an output of that name",
                expected=sorted(outputs),
                actual=table,
            )


KIND = CallKind()

__all__ = ["KIND", "CallKind", "CallNode"]
