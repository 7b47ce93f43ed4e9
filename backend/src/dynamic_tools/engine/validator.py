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
- workflow_depth: sub-workflows calling sub-workflows nest deeper than
  :data:`MAX_WORKFLOW_DEPTH` levels (each level is a nested run of the interpreter).
- unknown_reference, unknown_yield_field: ``$name`` is not a param, output, foreach variable or
  yield node (or the yield does not expect that field); ``$error`` is known only in a node
  named as an ``on_error.fallback`` (the failure that activated it).
- invalid_expression: a ``when`` / ``items`` / ``success`` expression does not parse.
- name_clash: an output or foreach variable reuses a parameter (or yield) name.
- unbounded_foreach: a foreach has no ``max_iterations``.
- error_node_always_runs: an error node is neither activated nor behind a dependency.
- builtin_args, unknown_table: ``rest_call`` / ``sql_query`` arguments are incomplete or name
  no output.
- bad_cron, unknown_timezone, bad_interval, schedule_timing, bad_duration, secret_reference,
  unknown_param, param_value, trigger_reference, missing_param, invalid_expression: a trigger
  (``engine/triggers.py``) that could never fire, or whose params or filter could not be made
  (``_check_trigger``).
- literal_credential: a call's literal argument has a known token shape (a JWT, ``Bearer …``,
  ``sk-…``, ``AKIA…``), or a ``rest_call`` header or query name looks like a credential
  (``engine/credential_checks.py``).

Warnings:
- duplicate_output: two nodes write the same output name.
- never_activated, unreachable: a compensate node nothing activates; a node behind one.
- maybe_skipped_reference: a reference to the output of a node that may be skipped.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from dynamic_tools.engine.argument_checks import ArgumentProblem, argument_problems
from dynamic_tools.engine.credential_checks import credential_problems
from dynamic_tools.engine.errors import ExpressionError
from dynamic_tools.engine.expressions import parse_expression, references
from dynamic_tools.engine.graph import Path, WorkflowGraph
from dynamic_tools.engine.loaders import LoadedDocument
from dynamic_tools.engine.models import Workflow, WorkflowDocument
from dynamic_tools.engine.node_parts import ParamSpec, parse_duration
from dynamic_tools.engine.nodes import kind_of, sub_workflows
from dynamic_tools.engine.nodes.kind import ReferenceSource
from dynamic_tools.engine.nodes.workflow import MAX_WORKFLOW_DEPTH
from dynamic_tools.engine.params import check_values, params_schema
from dynamic_tools.engine.references import Reference, find_references
from dynamic_tools.engine.state import FAILURE_NAME
from dynamic_tools.engine.triggers import (
    MAX_INTERVAL_S,
    MIN_INTERVAL_S,
    SECRET_PREFIX,
    TRIGGER_FIELDS,
    TRIGGER_ROOTS,
    ScheduleTrigger,
    WebhookTrigger,
    cron_fires,
    cron_is_valid,
    zone_is_known,
)
from dynamic_tools.errors import InvalidInputError
from dynamic_tools.violations import Violation

BUILTIN_TOOLS = frozenset({"rest_call", "sql_query"})
_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)
"""Where a cron expression is tried from (a date it matches comes within croniter's search)."""


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
    known_tools: Collection[str] | Mapping[str, Mapping[str, Any] | None] | None = None,
    known_workflows: Collection[str] | Mapping[str, Workflow] = (),
) -> ValidationReport:
    """Validate every workflow of a document.

    Args:
        source: a loaded document (violations then carry lines) or a bare model.
        known_tools: names of callable tools; None skips the unknown-tool check. A mapping
            gives each tool's input schema (or None), and call arguments are checked with it.
        known_workflows: workflow ids defined in other documents (callable as sub-workflows);
            a mapping gives the workflows, and sub-workflow arguments are checked against
            their params (those of this document always are).
    """
    loaded = source if isinstance(source, LoadedDocument) else None
    document = source.document if isinstance(source, LoadedDocument) else source
    checker = _Checker(document, loaded, known_tools, known_workflows)
    for workflow_id, workflow in document.workflows.items():
        checker.check_workflow(workflow_id, workflow)
    checker.check_workflow_cycles()
    checker.check_workflow_depth()
    order = {"error": 0, "warning": 1}
    checker.found.sort(key=lambda v: (order.get(v.severity, 2), v.line or 0, v.path))
    return ValidationReport(checker.found)


class _Checker:
    def __init__(
        self,
        document: WorkflowDocument,
        loaded: LoadedDocument | None,
        known_tools: Collection[str] | Mapping[str, Mapping[str, Any] | None] | None,
        known_workflows: Collection[str] | Mapping[str, Workflow],
    ) -> None:
        self.document = document
        self.loaded = loaded
        self.tools = None if known_tools is None else set(known_tools) | BUILTIN_TOOLS
        self.schemas: Mapping[str, Mapping[str, Any] | None] = (
            known_tools if isinstance(known_tools, Mapping) else {}
        )
        self.workflows = set(document.workflows) | set(known_workflows)
        self.workflow_defs: dict[str, Workflow] = {
            **(dict(known_workflows) if isinstance(known_workflows, Mapping) else {}),
            **document.workflows,
        }
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
                "dependencies and activations form a cycle: "
                + " → ".join(cycle)
                + " (a branch's goto back to an earlier node is a loop: give it max_loops)",
            )
        self._check_names(base, workflow, graph)
        self._check_params(base, workflow)
        for index, trigger in enumerate(workflow.triggers):
            _check_trigger(self.add, (*base, "triggers", index), workflow, trigger)
        for node_id, node in workflow.graph.items():
            self._check_node(base, workflow_id, workflow, graph, node_id, node)
        self._check_reachability(base, workflow, graph)
        if workflow.outputs:
            outputs = [ReferenceSource(workflow.outputs, (*base, "outputs"))]
            for ref, path, _ in _references_in(outputs):
                self._check_reference(path, ref, workflow, graph, consumer=None, local=set())

    def _check_params(self, base: tuple[str | int, ...], workflow: Workflow) -> None:
        """A default must be a valid value; a required param's default is only a suggestion."""
        for name, spec in workflow.params.items():
            if spec.default is None:
                continue
            here = (*base, "params", name, "default")
            try:
                check_values({name: spec}, {name: spec.default})
            except InvalidInputError as exc:
                self.add(
                    here,
                    "default",
                    f"the default of '{name}' is not valid: " + str(exc.violations[0]["message"]),
                    actual=spec.default,
                )
                continue
            if spec.required:
                self.add(
                    here,
                    "required_default",
                    f"'{name}' is required, so callers must give it; its default is only shown "
                    "to them as a suggestion (drop required: true to use the default when the "
                    "value is missing)",
                    severity="warning",
                )

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

    def _check_names(
        self, base: tuple[str | int, ...], workflow: Workflow, graph: WorkflowGraph
    ) -> None:
        params = set(workflow.params)
        yields = graph.answering
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

    def _check_node(
        self,
        base: tuple[str | int, ...],
        workflow_id: str,
        workflow: Workflow,
        graph: WorkflowGraph,
        node_id: str,
        node: Any,
    ) -> None:
        checks = _NodeChecks(self, workflow_id, workflow, graph, node_id, (*base, "graph", node_id))
        kind_of(node).check(node, checks)
        for ref, path, local in _references_in(kind_of(node).reference_sources(node, checks.here)):
            self._check_reference(path, ref, workflow, graph, node_id, local)

    def _check_tool(
        self,
        path: tuple[str | int, ...],
        name: str,
        args: Mapping[str, Any] | None,
        params: Mapping[str, ParamSpec],
    ) -> None:
        self._report_credentials(path, name, args)
        if self.tools is not None and name not in self.tools:
            self.add(
                path,
                "unknown_tool",
                f"tool '{name}' is not registered",
                expected=_close(name, self.tools),
                actual=name,
            )
            return
        schema = self.schemas.get(name)
        if schema is not None and args is not None:
            self._report_arguments(path, argument_problems(name, schema, args, params))

    def _report_arguments(
        self, path: tuple[str | int, ...], problems: list[ArgumentProblem]
    ) -> None:
        args_path = (*path[:-1], "args")
        for problem in problems:
            where = args_path if problem.argument is None else (*args_path, problem.argument)
            self.add(
                where,
                problem.rule,
                problem.message,
                expected=problem.expected,
                actual=problem.actual,
            )

    def _report_credentials(
        self, path: tuple[str | int, ...], tool: str, args: Mapping[str, Any] | None
    ) -> None:
        for problem in credential_problems(tool, args or {}):
            self.add((*path[:-1], "args", *problem.where), problem.rule, problem.message)

    def _check_sub_workflow(
        self,
        path: tuple[str | int, ...],
        workflow_id: str,
        name: str,
        args: Mapping[str, Any] | None,
        params: Mapping[str, ParamSpec],
    ) -> None:
        self.calls[workflow_id].add(name)
        self._report_credentials(path, f"workflow {name}", args)
        if name not in self.workflows:
            self.add(
                path,
                "unknown_workflow",
                f"sub-workflow '{name}' is not defined",
                expected=_close(name, self.workflows),
                actual=name,
            )
            return
        called = self.workflow_defs.get(name)
        if called is not None and args is not None:
            schema = params_schema(called.params)
            self._report_arguments(
                path, argument_problems(f"workflow {name}", schema, args, params)
            )

    def _check_expression(
        self,
        path: tuple[str | int, ...],
        text: str,
        workflow: Workflow,
        graph: WorkflowGraph,
        node_id: str,
        *,
        local: Collection[str],
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
        local: Collection[str],
    ) -> None:
        name = ref.name
        if name in local or name in workflow.params:
            return
        if (
            name == FAILURE_NAME
            and consumer in graph.fallback_targets
            and not (graph.producers(name) or name in graph.answering)
        ):
            return  # the failure that activated this fallback (engine/state.py)
        producers = graph.producers(name)
        node = workflow.graph.get(name)
        fields = kind_of(node).answer_fields(node) if node is not None else None
        if fields is not None:
            field_name = ref.path[0] if ref.path else None
            if field_name is not None and str(field_name) not in fields:
                self.add(
                    path,
                    "unknown_yield_field",
                    f"'{ref.text}' reads field '{field_name}', which yield '{name}' "
                    "does not expect",
                    expected=sorted(fields),
                    actual=field_name,
                )
            producers = [name]
        elif not producers:
            names = set(workflow.params) | set(graph.output_names()) | set(local) | graph.answering
            hint = (
                " ($error is set only in a node named as an on_error.fallback)"
                if name == FAILURE_NAME
                else f"; a literal $ is written $$ (a GraphQL variable: $${name})"
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
            checks = _NodeChecks(self, "", workflow, graph, node_id, (*base, "graph", node_id))
            kind_of(node).check_reach(node, checks)

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

    def check_workflow_depth(self) -> None:
        """Each workflow of the document whose sub-workflow calls nest past the limit."""
        deepest: dict[str, list[str]] = {}  # workflow → its longest chain of calls below it
        for start in self.calls:
            chain = _longest_calls(start, self._calls_of, deepest)
            if len(chain) > MAX_WORKFLOW_DEPTH:
                shown = [start, *chain]
                trail = " → ".join(shown if len(shown) <= 8 else [*shown[:4], "…", *shown[-3:]])
                self.add(
                    ("workflows", start),
                    "workflow_depth",
                    f"sub-workflows nest {len(chain)} levels deep from '{start}' ({trail}); "
                    f"at most {MAX_WORKFLOW_DEPTH} levels run",
                    expected=MAX_WORKFLOW_DEPTH,
                    actual=len(chain),
                )

    def _calls_of(self, workflow_id: str) -> Collection[str]:
        if workflow_id in self.calls:
            return self.calls[workflow_id]
        other = self.workflow_defs.get(workflow_id)
        return sub_workflows(other.graph.values()) if other is not None else ()


def _longest_calls(
    start: str, calls_of: Callable[[str], Collection[str]], known: dict[str, list[str]]
) -> list[str]:
    """The longest chain of sub-workflow calls below ``start`` (an explicit stack).

    A call back to a workflow on the chain (a cycle, reported on its own) ends the chain.
    ``known`` keeps each workflow's chain for the next start.
    """
    stack, on_path = [start], set()
    while stack:
        current = stack[-1]
        if current in known:
            stack.pop()
            continue
        callees = sorted(calls_of(current))
        if current not in on_path:
            on_path.add(current)
            todo = [c for c in callees if c not in known and c not in on_path]
            if todo:
                stack.extend(todo)
                continue
        best: list[str] = []
        for callee in callees:
            below = known.get(callee) if callee not in on_path else None
            if below is not None and len(below) + 1 > len(best):
                best = [callee, *below]
            elif callee in on_path and not best:
                best = [callee]
        known[current] = best
        on_path.discard(current)
        stack.pop()
    return known[start]


def _check_trigger(
    add: Callable[..., None],
    here: tuple[str | int, ...],
    workflow: Workflow,
    trigger: ScheduleTrigger | WebhookTrigger,
) -> None:
    """A schedule that could fire and a webhook that could start a run, else violations."""
    if isinstance(trigger, ScheduleTrigger):
        _check_schedule(add, here, trigger)
    elif not trigger.secret.startswith(SECRET_PREFIX) or not trigger.secret_name:
        add(
            (*here, "secret"),
            "secret_reference",
            f"webhook '{trigger.name}': the secret must be a reference, secret:NAME (the "
            "secret itself is never written in the document)",
            actual=trigger.secret if trigger.secret.startswith(SECRET_PREFIX) else "(hidden)",
        )
    given = set(trigger.params)
    for name, value in trigger.params.items():
        if name not in workflow.params:
            add(
                (*here, "params", name),
                "unknown_param",
                f"{trigger.kind} '{trigger.name}' sets '{name}', which the workflow does not "
                "declare",
                expected=_close(name, workflow.params) or sorted(workflow.params),
                actual=name,
            )
            continue
        texts = [value] if isinstance(value, str) else []
        for ref in (r for text in texts for r in find_references(text)):
            _check_trigger_reference(add, (*here, "params", name), trigger.kind, ref)
        if not any(find_references(t) for t in texts):
            try:
                check_values({name: workflow.params[name]}, {name: value})
            except InvalidInputError as exc:
                add(
                    (*here, "params", name),
                    "param_value",
                    f"{trigger.kind} '{trigger.name}': " + str(exc.violations[0]["message"]),
                    actual=value,
                )
    for name, spec in workflow.params.items():
        if spec.required and name not in given:
            add(
                (*here, "params"),
                "missing_param",
                f"{trigger.kind} '{trigger.name}' does not set '{name}', which the workflow "
                "requires: every run it starts would be refused",
                expected=name,
            )
    if isinstance(trigger, WebhookTrigger) and trigger.filter is not None:
        try:
            expression = parse_expression(trigger.filter)
        except ExpressionError as exc:
            add((*here, "filter"), "invalid_expression", exc.message, actual=trigger.filter)
            return
        for ref in references(expression):
            _check_trigger_reference(add, (*here, "filter"), trigger.kind, ref)


def _check_trigger_reference(
    add: Callable[..., None], path: tuple[str | int, ...], kind: str, ref: Reference
) -> None:
    """``ref`` names what a trigger of ``kind`` gives (``$trigger.<field>`` a field it has)."""
    roots = TRIGGER_ROOTS[kind]
    if ref.name not in roots:
        add(
            path,
            "trigger_reference",
            f"'{ref.text}' names nothing a {kind} gives: use "
            + ", ".join(f"${root}" for root in sorted(roots)),
            expected=sorted(roots),
            actual=ref.text,
        )
    elif ref.name == "trigger" and ref.path and str(ref.path[0]) not in TRIGGER_FIELDS[kind]:
        add(
            path,
            "trigger_reference",
            f"'{ref.text}': a {kind}'s $trigger has " + ", ".join(sorted(TRIGGER_FIELDS[kind])),
            expected=sorted(TRIGGER_FIELDS[kind]),
            actual=ref.text,
        )


def _check_schedule(
    add: Callable[..., None], here: tuple[str | int, ...], schedule: ScheduleTrigger
) -> None:
    if (schedule.cron is None) == (schedule.every is None):
        add(
            here,
            "schedule_timing",
            f"schedule '{schedule.name}' needs exactly one of cron (e.g. '0 7 * * *') or "
            "every (e.g. 15m)",
        )
    if schedule.cron is not None and not cron_is_valid(schedule.cron):
        add(
            (*here, "cron"),
            "bad_cron",
            f"schedule '{schedule.name}': '{schedule.cron}' is not a cron expression (five "
            "fields: minute hour day-of-month month day-of-week; or six with seconds first)",
            actual=schedule.cron,
        )
    elif schedule.cron is not None and not cron_fires(schedule.cron, _EPOCH):
        add(
            (*here, "cron"),
            "bad_cron",
            f"schedule '{schedule.name}': '{schedule.cron}' matches no date (e.g. a 30 "
            "February): it would never fire",
            actual=schedule.cron,
        )
    if schedule.every is not None:
        try:
            seconds = parse_duration(schedule.every)
        except ValueError as exc:
            add((*here, "every"), "bad_interval", str(exc), actual=schedule.every)
        else:
            if seconds is None or not MIN_INTERVAL_S <= seconds <= MAX_INTERVAL_S:
                add(
                    (*here, "every"),
                    "bad_interval",
                    f"schedule '{schedule.name}': the interval must be from "
                    f"{MIN_INTERVAL_S:g}s to 366d (longer: use a cron expression)",
                    actual=schedule.every,
                )
    if not zone_is_known(schedule.timezone):
        add(
            (*here, "timezone"),
            "unknown_timezone",
            f"schedule '{schedule.name}': '{schedule.timezone}' is not an IANA time zone "
            "(e.g. UTC, Europe/Paris, America/New_York)",
            actual=schedule.timezone,
        )
    try:
        window = parse_duration(schedule.catch_up) or 0.0
    except ValueError as exc:
        add((*here, "catch_up"), "bad_duration", str(exc), actual=schedule.catch_up)
    else:
        if window > MAX_INTERVAL_S:
            add(
                (*here, "catch_up"),
                "bad_duration",
                f"schedule '{schedule.name}': the catch-up window is at most 366d",
                actual=schedule.catch_up,
            )


def node_reference_names(node: Any) -> frozenset[str]:
    """The names a node's values read through ``$references`` (expressions aside)."""
    sources = kind_of(node).reference_sources(node, ())
    return frozenset(ref.name for ref, _, _ in _references_in(sources))


def _references_in(
    sources: list[ReferenceSource],
) -> Iterator[tuple[Reference, Path, frozenset[str]]]:
    for source in sources:
        for ref, path in _walk_references(source.value, source.path):
            yield ref, path, source.local


def _walk_references(value: Any, path: Path) -> Iterator[tuple[Reference, Path]]:
    """The references in the strings of ``value``, in document order (an explicit stack)."""
    stack: list[tuple[Any, Path]] = [(value, path)]
    while stack:
        current, here = stack.pop()
        if isinstance(current, str):
            for ref in find_references(current):
                yield ref, here
        elif isinstance(current, dict):
            stack.extend((item, (*here, key)) for key, item in reversed(current.items()))
        elif isinstance(current, list):
            stack.extend((current[i], (*here, i)) for i in reversed(range(len(current))))


def _close(name: str, candidates: Collection[str]) -> list[str]:
    return difflib.get_close_matches(name, sorted(candidates), n=3, cutoff=0.6)


__all__ = [
    "BUILTIN_TOOLS",
    "ValidationReport",
    "node_reference_names",
    "validate_document",
]


@dataclass
class _NodeChecks:
    """The validator's services for one node (the kinds' :class:`NodeChecks`)."""

    checker: _Checker
    workflow_id: str
    workflow: Workflow
    graph: WorkflowGraph
    node_id: str
    here: Path

    @property
    def params(self) -> Collection[str]:
        return self.workflow.params

    def add(
        self,
        path: Path,
        rule: str,
        message: str,
        *,
        severity: str = "error",
        expected: Any = None,
        actual: Any = None,
    ) -> None:
        self.checker.add(path, rule, message, severity=severity, expected=expected, actual=actual)

    @property
    def base_url(self) -> str | None:
        return self.checker.document.base_url

    def tool(self, path: Path, name: str, args: Mapping[str, Any] | None = None) -> None:
        self.checker._check_tool(path, name, args, self.workflow.params)

    def sub_workflow(
        self, path: Path, workflow_id: str, args: Mapping[str, Any] | None = None
    ) -> None:
        self.checker._check_sub_workflow(
            path, self.workflow_id, workflow_id, args, self.workflow.params
        )

    def expression(self, path: Path, text: str, *, local: Collection[str] = ()) -> None:
        self.checker._check_expression(
            path, text, self.workflow, self.graph, self.node_id, local=local
        )
