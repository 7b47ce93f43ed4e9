"""Validation of workflow documents: every violation at once, each with a path and a rule.

Runs after loading (which already checked the model). Errors stop a run from starting;
warnings are reported and do not. Rules:

Errors:
- unknown_dependency, unknown_target: depends_on / goto / default / fallback /
  on_partial_failure names no node.
- invalid_partial_failure_target: on_partial_failure names a node that is not a compensate node.
- cycle: dependencies and activations form a cycle.
- unknown_tool, unknown_workflow, workflow_cycle: a call or sub-workflow names nothing, or a
  workflow calls itself.
- unknown_reference, unknown_yield_field: ``$name`` is not a param, output, foreach variable or
  yield node (or the yield does not expect that field); ``$error`` is known only in a node
  named as an ``on_error.fallback`` (the failure that activated it).
- invalid_expression: a ``when`` / ``items`` / ``success`` expression does not parse.
- name_clash: an output or foreach variable reuses a parameter (or yield) name.
- unbounded_foreach: a foreach has no ``max_iterations``.
- error_node_always_runs: an error node is neither activated nor behind a dependency.
- builtin_args, unknown_table: ``rest_call`` / ``sql_query`` arguments are incomplete or name
  no output.

Warnings:
- duplicate_output: two nodes write the same output name.
- never_activated, unreachable: a compensate node nothing activates; a node behind one.
- maybe_skipped_reference: a reference to the output of a node that may be skipped.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from typing import Any

from dynamic_tools.engine.errors import ExpressionError
from dynamic_tools.engine.expressions import parse_expression, references
from dynamic_tools.engine.graph import Path, WorkflowGraph
from dynamic_tools.engine.loaders import LoadedDocument
from dynamic_tools.engine.models import (
    BranchNode,
    CallNode,
    CompensateNode,
    ErrorNode,
    ForeachNode,
    ParallelNode,
    Workflow,
    WorkflowDocument,
    WorkflowNode,
    YieldNode,
)
from dynamic_tools.engine.references import Reference, find_references
from dynamic_tools.engine.sql_query import table_names
from dynamic_tools.engine.state import FAILURE_NAME
from dynamic_tools.violations import Violation

BUILTIN_TOOLS = frozenset({"rest_call", "sql_query"})


@dataclass
class ValidationReport:
    """Every violation of a document, errors first."""

    violations: list[Violation] = field(default_factory=list)

    @property
    def errors(self) -> list[Violation]:
        """Violations that stop a run."""
        return [v for v in self.violations if v.severity == "error"]

    @property
    def warnings(self) -> list[Violation]:
        """Violations that are only reported."""
        return [v for v in self.violations if v.severity == "warning"]

    @property
    def ok(self) -> bool:
        """No errors (warnings allowed)."""
        return not self.errors


def validate_document(
    source: LoadedDocument | WorkflowDocument,
    *,
    known_tools: Collection[str] | None = None,
    known_workflows: Collection[str] = (),
) -> ValidationReport:
    """Validate every workflow of a document.

    Args:
        source: a loaded document (violations then carry lines) or a bare model.
        known_tools: names of callable tools; None skips the unknown-tool check.
        known_workflows: workflow ids defined in other documents (callable as sub-workflows).
    """
    loaded = source if isinstance(source, LoadedDocument) else None
    document = source.document if isinstance(source, LoadedDocument) else source
    checker = _Checker(document, loaded, known_tools, set(known_workflows))
    for workflow_id, workflow in document.workflows.items():
        checker.check_workflow(workflow_id, workflow)
    checker.check_workflow_cycles()
    order = {"error": 0, "warning": 1}
    checker.found.sort(key=lambda v: (order.get(v.severity, 2), v.line or 0, v.path))
    return ValidationReport(checker.found)


class _Checker:
    def __init__(
        self,
        document: WorkflowDocument,
        loaded: LoadedDocument | None,
        known_tools: Collection[str] | None,
        known_workflows: set[str],
    ) -> None:
        self.document = document
        self.loaded = loaded
        self.tools = None if known_tools is None else set(known_tools) | BUILTIN_TOOLS
        self.workflows = set(document.workflows) | known_workflows
        self.found: list[Violation] = []
        self.calls: dict[str, set[str]] = {}

    # --- reporting ---------------------------------------------------------------------------
    def add(
        self,
        path: tuple[str | int, ...],
        rule: str,
        message: str,
        *,
        severity: str = "error",
        expected: Any = None,
        actual: Any = None,
    ) -> None:
        line = self.loaded.line_of(path) if self.loaded else None
        self.found.append(
            Violation(
                ".".join(str(p) for p in path), rule, message, severity, line, expected, actual
            )
        )

    # --- one workflow ------------------------------------------------------------------------
    def check_workflow(self, workflow_id: str, workflow: Workflow) -> None:
        base: tuple[str | int, ...] = ("workflows", workflow_id)
        graph = WorkflowGraph(workflow)
        self.calls[workflow_id] = set()
        self._check_targets(base, workflow, graph)
        for cycle in graph.cycles():
            self.add(
                (*base, "graph", cycle[0]),
                "cycle",
                "dependencies and activations form a cycle: " + " → ".join(cycle),
            )
        self._check_names(base, workflow, graph)
        for node_id, node in workflow.graph.items():
            self._check_node(base, workflow_id, workflow, graph, node_id, node)
        self._check_reachability(base, workflow, graph)
        if workflow.outputs:
            for ref, path in _references_in([(workflow.outputs, (*base, "outputs"))]):
                self._check_reference(path, ref, workflow, graph, consumer=None, local=set())

    def _check_targets(
        self, base: tuple[str | int, ...], workflow: Workflow, graph: WorkflowGraph
    ) -> None:
        nodes = workflow.graph
        for node_id, node in nodes.items():
            here = (*base, "graph", node_id)
            for dep in node.depends_on:
                if dep not in nodes:
                    self.add(
                        (*here, "depends_on"),
                        "unknown_dependency",
                        f"node '{node_id}' depends on '{dep}', which is not a node",
                        expected=_close(dep, nodes),
                        actual=dep,
                    )
            for where, target in graph.activation_targets(node_id):
                if target not in nodes:
                    self.add(
                        (*here, *where),
                        "unknown_target",
                        f"node '{node_id}' activates '{target}', which is not a node",
                        expected=_close(target, nodes),
                        actual=target,
                    )
            if isinstance(node, ParallelNode):
                target = node.on_partial_failure
                if target in nodes and not isinstance(nodes[target], CompensateNode):
                    self.add(
                        (*here, "on_partial_failure"),
                        "invalid_partial_failure_target",
                        f"on_partial_failure names '{target}', which is a "
                        f"{nodes[target].kind} node, not a compensate node",
                        expected="abort, continue, rollback_all or a compensate node",
                        actual=target,
                    )

    def _check_names(
        self, base: tuple[str | int, ...], workflow: Workflow, graph: WorkflowGraph
    ) -> None:
        params = set(workflow.params)
        yields = {n for n, node in workflow.graph.items() if isinstance(node, YieldNode)}
        seen: dict[str, str] = {}
        for node_id, output, path in graph.outputs():
            where = (*base, "graph", *path)
            if output in params:
                self.add(
                    where,
                    "name_clash",
                    f"output '{output}' of node '{node_id}' has the name of a parameter",
                    actual=output,
                )
            elif output in yields:
                self.add(
                    where,
                    "name_clash",
                    f"output '{output}' of node '{node_id}' has the name of a yield node",
                    actual=output,
                )
            if output in seen and seen[output] != node_id:
                self.add(
                    where,
                    "duplicate_output",
                    f"output '{output}' is written by '{seen[output]}' and '{node_id}'; "
                    "the later one wins",
                    severity="warning",
                    actual=output,
                )
            seen.setdefault(output, node_id)
        for node_id, node in workflow.graph.items():
            if isinstance(node, ForeachNode) and (node.as_ in params or node.as_ in seen):
                self.add(
                    (*base, "graph", node_id, "as"),
                    "name_clash",
                    f"foreach variable '{node.as_}' hides a parameter or output",
                    actual=node.as_,
                )

    def _check_node(
        self,
        base: tuple[str | int, ...],
        workflow_id: str,
        workflow: Workflow,
        graph: WorkflowGraph,
        node_id: str,
        node: Any,
    ) -> None:
        here = (*base, "graph", node_id)
        local: set[str] = set()
        if isinstance(node, CallNode | WorkflowNode):
            self._check_step(here, workflow_id, node)
            if isinstance(node, CallNode) and node.success:
                self._check_expression(
                    (*here, "success"), node.success, workflow, graph, node_id, local={"result"}
                )
        elif isinstance(node, ParallelNode):
            for name, branch in node.branches.items():
                self._check_step((*here, "branches", name), workflow_id, branch)
        elif isinstance(node, ForeachNode):
            self._check_step((*here, "step"), workflow_id, node.step)
            local = {node.as_}
            if node.max_iterations is None:
                self.add(
                    here,
                    "unbounded_foreach",
                    f"foreach '{node_id}' needs max_iterations (a bound on its items)",
                    expected="max_iterations: <n>",
                )
            if isinstance(node.items, str):
                self._check_expression(
                    (*here, "items"), node.items, workflow, graph, node_id, local=set()
                )
        elif isinstance(node, BranchNode):
            for index, case in enumerate(node.on):
                if case.when is not None:
                    self._check_expression(
                        (*here, "on", index, "when"),
                        case.when,
                        workflow,
                        graph,
                        node_id,
                        local=set(),
                    )
        elif isinstance(node, CompensateNode):
            for index, step in enumerate(node.steps):
                self._check_tool((*here, "steps", index, "call"), step.call)
        elif isinstance(node, ErrorNode | YieldNode):
            pass
        for ref, path in _references_in(_reference_sources(node, here)):
            self._check_reference(
                path, ref, workflow, graph, node_id, local if path[len(here)] == "step" else set()
            )

    def _check_step(
        self, here: tuple[str | int, ...], workflow_id: str, node: CallNode | WorkflowNode
    ) -> None:
        if isinstance(node, CallNode):
            self._check_tool((*here, "call"), node.call)
            if node.compensate_with is not None:
                self._check_tool((*here, "compensate_with", "call"), node.compensate_with.call)
            self._check_builtin_args(here, node)
        else:
            self.calls[workflow_id].add(node.workflow)
            if node.workflow not in self.workflows:
                self.add(
                    (*here, "workflow"),
                    "unknown_workflow",
                    f"sub-workflow '{node.workflow}' is not defined",
                    expected=_close(node.workflow, self.workflows),
                    actual=node.workflow,
                )

    def _check_tool(self, path: tuple[str | int, ...], name: str) -> None:
        if self.tools is not None and name not in self.tools:
            self.add(
                path,
                "unknown_tool",
                f"tool '{name}' is not registered",
                expected=_close(name, self.tools),
                actual=name,
            )

    def _check_builtin_args(self, here: tuple[str | int, ...], node: CallNode) -> None:
        if node.call == "rest_call":
            for key in ("method", "path"):
                if key not in node.args:
                    self.add(
                        (*here, "args"), "builtin_args", f"rest_call needs args.{key}", expected=key
                    )
        elif node.call == "sql_query":
            sql = node.args.get("sql")
            if not isinstance(sql, str) or not sql.strip():
                self.add(
                    (*here, "args"),
                    "builtin_args",
                    "sql_query needs args.sql (text)",
                    expected="sql",
                )
                return
            outputs = {o for _, o, _ in WorkflowGraph.outputs_of(self._workflow_of(here))}
            for table in table_names(sql):
                if table not in outputs:
                    self.add(
                        (*here, "args", "sql"),
                        "unknown_table",
                        f"sql_query reads table '{table}', but no node has an output of that name",
                        expected=sorted(outputs),
                        actual=table,
                    )

    def _workflow_of(self, path: tuple[str | int, ...]) -> Workflow:
        return self.document.workflows[str(path[1])]

    def _check_expression(
        self,
        path: tuple[str | int, ...],
        text: str,
        workflow: Workflow,
        graph: WorkflowGraph,
        node_id: str,
        *,
        local: set[str],
    ) -> None:
        try:
            expression = parse_expression(text)
        except ExpressionError as exc:
            self.add(path, "invalid_expression", exc.message, actual=text)
            return
        for ref in references(expression):
            self._check_reference(path, ref, workflow, graph, node_id, local)

    def _check_reference(
        self,
        path: tuple[str | int, ...],
        ref: Reference,
        workflow: Workflow,
        graph: WorkflowGraph,
        consumer: str | None,
        local: set[str],
    ) -> None:
        name = ref.name
        if name in local or name in workflow.params:
            return
        if (
            name == FAILURE_NAME
            and consumer in _fallback_targets(graph)
            and not (graph.producers(name) or isinstance(workflow.graph.get(name), YieldNode))
        ):
            return  # the failure that activated this fallback (engine/state.py)
        producers = graph.producers(name)
        node = workflow.graph.get(name)
        if isinstance(node, YieldNode):
            field_name = ref.path[0] if ref.path else None
            if field_name is not None and str(field_name) not in node.expects:
                self.add(
                    path,
                    "unknown_yield_field",
                    f"'{ref.text}' reads field '{field_name}', which yield '{name}' "
                    "does not expect",
                    expected=sorted(node.expects),
                    actual=field_name,
                )
            producers = [name]
        elif not producers:
            names = (
                set(workflow.params)
                | set(graph.output_names())
                | local
                | {n for n, x in workflow.graph.items() if isinstance(x, YieldNode)}
            )
            hint = (
                " ($error is set only in a node named as an on_error.fallback)"
                if name == FAILURE_NAME
                else ""
            )
            self.add(
                path,
                "unknown_reference",
                f"'{ref.text}' names nothing: not a parameter, output, foreach variable "
                f"or yield node{hint}",
                expected=_close(name, names) or sorted(names),
                actual=ref.text,
            )
            return
        if consumer is not None:
            for producer in producers:
                if graph.may_be_skipped(producer) and not graph.guarded_by(consumer, producer):
                    self.add(
                        path,
                        "maybe_skipped_reference",
                        f"'{ref.text}' reads the output of '{producer}', which may be "
                        f"skipped when '{consumer}' runs",
                        severity="warning",
                        actual=ref.text,
                    )

    def _check_reachability(
        self, base: tuple[str | int, ...], workflow: Workflow, graph: WorkflowGraph
    ) -> None:
        for node_id, node in workflow.graph.items():
            here = (*base, "graph", node_id)
            activated = graph.is_activated(node_id)
            if isinstance(node, CompensateNode) and not activated:
                self.add(
                    here,
                    "never_activated",
                    f"compensate node '{node_id}' is never activated (no goto, fallback "
                    "or on_partial_failure names it)",
                    severity="warning",
                )
            elif isinstance(node, ErrorNode) and not activated and not node.depends_on:
                self.add(
                    here,
                    "error_node_always_runs",
                    f"error node '{node_id}' is not activated by any branch or fallback "
                    "and has no depends_on: it would fail every run",
                )
            elif graph.unreachable(node_id) and not isinstance(node, CompensateNode):
                self.add(
                    here,
                    "unreachable",
                    f"node '{node_id}' only depends on nodes that never run",
                    severity="warning",
                )

    def check_workflow_cycles(self) -> None:
        reported: set[frozenset[str]] = set()
        for start in self.calls:
            stack, seen = [(start, [start])], set()
            while stack:
                current, trail = stack.pop()
                for callee in self.calls.get(current, ()):
                    if callee == start:
                        if frozenset(trail) not in reported:
                            reported.add(frozenset(trail))
                            self.add(
                                ("workflows", start),
                                "workflow_cycle",
                                "workflow calls itself: " + " → ".join([*trail, callee]),
                            )
                        stack.clear()
                        break
                    if callee not in seen:
                        seen.add(callee)
                        stack.append((callee, [*trail, callee]))


def _fallback_targets(graph: WorkflowGraph) -> set[str]:
    """Nodes named as an ``on_error.fallback`` (where ``$error`` is set)."""
    return {
        target
        for node_id in graph.nodes
        for where, target in graph.activation_targets(node_id)
        if where[-1] == "fallback"
    }


def _reference_sources(node: Any, here: Path) -> list[tuple[Any, Path]]:
    """The values of a node that may hold ``$references`` (expressions are checked apart)."""
    if isinstance(node, CallNode):
        sources: list[tuple[Any, Path]] = [(node.args, (*here, "args"))]
        if node.compensate_with is not None:
            sources.append((node.compensate_with.args, (*here, "compensate_with", "args")))
        return sources
    if isinstance(node, WorkflowNode):
        return [(node.args, (*here, "args"))]
    if isinstance(node, ParallelNode):
        return [
            src
            for name, branch in node.branches.items()
            for src in _reference_sources(branch, (*here, "branches", name))
        ]
    if isinstance(node, ForeachNode):
        return _reference_sources(node.step, (*here, "step"))
    if isinstance(node, YieldNode | ErrorNode):
        return [(node.message, (*here, "message"))]
    if isinstance(node, CompensateNode):
        return [(step.args, (*here, "steps", i, "args")) for i, step in enumerate(node.steps)]
    return []


def node_reference_names(node: Any) -> frozenset[str]:
    """The names a node's values read through ``$references`` (expressions aside)."""
    return frozenset(ref.name for ref, _ in _references_in(_reference_sources(node, ())))


def _references_in(sources: list[tuple[Any, Path]]) -> Iterator[tuple[Reference, Path]]:
    for value, path in sources:
        yield from _walk_references(value, path)


def _walk_references(value: Any, path: Path) -> Iterator[tuple[Reference, Path]]:
    if isinstance(value, str):
        for ref in find_references(value):
            yield ref, path
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _walk_references(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _walk_references(item, (*path, index))


def _close(name: str, candidates: Collection[str]) -> list[str]:
    return difflib.get_close_matches(name, sorted(candidates), n=3, cutoff=0.6)


__all__ = [
    "BUILTIN_TOOLS",
    "ValidationReport",
    "node_reference_names",
    "validate_document",
]
