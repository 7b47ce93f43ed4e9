"""The interpreter: runs one workflow of a validated document, deterministically.

Scheduling (README, "Workflows and runs"): a node named as a goto/default/fallback/
on_partial_failure target,
and every compensate node, runs only when activated; every other node runs once all its
``depends_on`` are settled; a node whose dependencies were all skipped (or one of which
failed) is skipped. Ready nodes run one at a time in document order, so steps are issued in
the same order on every replay; concurrency comes only from ``parallel`` and ``foreach``,
whose branches and items run as children through :meth:`StepRunner.gather`.

The interpreter runs a :class:`~dynamic_tools.engine.plan.RunPlan` (a validated document,
compiled once): parameters were checked when the plan's run was prepared, graphs and node
orders come from the plan. The saga's rules are in ``engine/saga.py``; a call's attempts and
retries in ``engine/tool_calls.py``; children of a fan-out in ``engine/children.py``.
"""

from __future__ import annotations

import asyncio
import copy
import itertools
import time
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

from dynamic_tools.engine import events as ev
from dynamic_tools.engine.call_context import CallContext
from dynamic_tools.engine.children import ChildResult, ChildSpec
from dynamic_tools.engine.errors import ExpressionError, UnresolvedReferenceError
from dynamic_tools.engine.expressions import evaluate, parse_expression
from dynamic_tools.engine.nodes import kind_of
from dynamic_tools.engine.nodes.kind import NodeAt
from dynamic_tools.engine.nodes.steps import step_kind
from dynamic_tools.engine.plan import RunPlan, WorkflowPlan
from dynamic_tools.engine.ports import (
    ChildCancelled,
    ChildFailed,
    ChildOutcome,
    EventSink,
    GatherCancelled,
    StepRunner,
    ToolRunner,
)
from dynamic_tools.engine.redrive import Redrive
from dynamic_tools.engine.references import render, resolve_reference
from dynamic_tools.engine.saga import Compensation, Saga
from dynamic_tools.engine.scope import Scope
from dynamic_tools.engine.state import (
    SETTLED,
    FallbackTriggered,
    NodeState,
    RunFailed,
    RunOutcome,
)
from dynamic_tools.errors import DynamicToolsError

Clock = Callable[[], str]


def utc_now() -> str:
    """The current UTC time, ISO 8601."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class _Pending:
    """The graph's nodes from the first one still pending on, in the graph's order.

    A node never becomes pending again, so the nodes before the first pending one need no
    look: finding the next ready node costs nothing per node already done (a long chain was
    quadratic when every step scanned the whole graph).
    """

    def __init__(self, plan: WorkflowPlan, status: dict[str, str]) -> None:
        self._items = list(plan.workflow.graph.items())
        self._status = status
        self._first = 0

    def rewind(self) -> None:
        """Look from the start again (a loop made earlier nodes pending)."""
        self._first = 0

    def remaining(self) -> Iterator[tuple[str, Any]]:
        """The nodes from the first pending one on (none when every node has settled)."""
        items, status = self._items, self._status
        while self._first < len(items) and status[items[self._first][0]] != "pending":
            self._first += 1
        return itertools.islice(items, self._first, None)


class Interpreter:
    """Runs the workflow of one plan for one run id."""

    def __init__(
        self,
        plan: RunPlan,
        *,
        run_id: str,
        tools: ToolRunner,
        steps: StepRunner,
        events: EventSink,
        clock: Clock = utc_now,
        redrive: Redrive | None = None,
    ) -> None:
        self.plan = plan
        self.redrive = redrive
        self.run_id = run_id
        self.tools = tools
        self.steps = steps
        self.events = events
        self.clock = clock
        self.nodes: dict[str, NodeState] = {}
        self.saga = Saga()
        self._seq = 0
        self._base_steps = steps
        self.step_tag = ""
        """``@<round>`` while a node runs again in a loop (its steps' names end with it)."""

    async def emit(self, event: ev.Event) -> None:
        """Send one event (numbered, so a replayed run's duplicates can be dropped)."""
        self._seq += 1
        await self.events.emit(event.stamped(run_id=self.run_id, seq=self._seq, at=self.clock()))

    # --- entry points ----------------------------------------------------------------------
    async def run(self, params: Mapping[str, Any]) -> RunOutcome:
        """Run the plan's workflow with checked ``params``; never raises for a failure of the run.

        ``params`` are the values :func:`~dynamic_tools.engine.params.check_values` returned
        when the run was prepared (they are not checked again here).
        """
        root = self.plan.root
        workflow = root.workflow
        await self.emit(ev.RunStarted(workflow_id=root.workflow_id))
        try:
            scope = Scope(params=dict(params))
            if workflow.timeout:
                remaining = await self._remaining_time(workflow.timeout)
                result = await asyncio.wait_for(self._execute(root, scope, ""), remaining)
            else:
                result = await self._execute(root, scope, "")
        except TimeoutError:
            failure = RunFailed(f"the workflow timed out after {workflow.timeout} s", node_id=None)
            self._mark_interrupted()
            await self._mark_not_run("the workflow timed out before it")
            await self._compensate(failure)
            return await self._finish("failed", error=failure.to_dict())
        except RunFailed as failure:
            await self._mark_not_run("the run failed before it")
            await self._compensate(failure)
            return await self._finish("failed", error=failure.to_dict())
        except Exception as exc:  # a bug, or the step runner failing: the run still ends
            crashed = RunFailed(
                f"the run stopped on an unexpected error ({_describe(exc)})", node_id=None
            )
            self._mark_interrupted()
            await self._mark_not_run("the run failed before it")
            await self._compensate(crashed)
            return await self._finish("failed", error=crashed.to_dict())
        except asyncio.CancelledError:
            self._mark_interrupted()
            await asyncio.shield(self._wind_down("the run was cancelled before it"))
            await self._finish("cancelled", error={"message": "the run was cancelled"})
            raise
        return await self._finish("succeeded", result=result)

    async def _remaining_time(self, timeout_s: float) -> float:
        """Seconds left of the workflow's timeout, from a start time recorded as a step.

        The start is a step, so a run recovered after a crash keeps its original deadline
        instead of starting the clock again.
        """

        async def started_at() -> float:
            return time.time()

        start = await self.steps.step("workflow:started_at", started_at)
        return max(start + timeout_s - time.time(), 0.0)

    async def run_child(self, spec: ChildSpec) -> ChildResult:
        """Run one parallel branch or foreach item (a spec made by this class).

        Its events are numbered from ``spec.seq_base``; it ends with what it registered, as
        a result or inside :class:`ChildFailed` / :class:`ChildCancelled`.
        """
        self._seq = spec.seq_base
        node = self.plan.of(spec.workflow_id).workflow.graph[spec.node_id]
        step = kind_of(node).child_step(node, spec)
        state = self.node_state(spec.child_id)  # the child's own state, as a node's
        state.status, state.started_at = "running", self.clock()
        try:
            value = await step_kind(step).run_step(
                step, spec.child_id, spec.prefix, spec.scope, self
            )
        except asyncio.CancelledError:
            self._mark_interrupted()
            raise ChildCancelled(self._registered(None), node_id=spec.child_id) from None
        except Exception as exc:
            message = getattr(exc, "message", None) or _describe(exc)
            state.status, state.error, state.ended_at = "failed", message, self.clock()
            raise ChildFailed(message, self._registered(None), node_id=spec.child_id) from None
        state.status, state.output, state.ended_at = "succeeded", value, self.clock()
        return self._registered(value)

    def _mark_interrupted(self) -> None:
        """Nodes still running or waiting when the run is cancelled or times out: cancelled."""
        for state in self.nodes.values():
            if state.status in ("running", "waiting_input"):
                state.status, state.ended_at = "cancelled", self.clock()

    async def _wind_down(self, reason: str) -> None:
        """A cancelled run: what it never reached is not_run, then its compensations run."""
        await self._mark_not_run(reason)
        await self._compensate(None)

    async def _mark_not_run(self, reason: str) -> None:
        """Nodes the run never reached before it ended: ``not_run`` (not "pending" forever)."""
        for full_id, state in self.nodes.items():
            if state.status == "pending":
                state.status, state.error = "not_run", reason
                await self.emit(ev.NodeNotRun(node_id=full_id, reason=reason))

    def _registered(self, value: Any) -> ChildResult:
        """A child's value, plus what the parent must keep: compensations and node states."""
        return ChildResult(
            value=value,
            compensations=tuple(self.saga.entries),
            nodes={k: copy.deepcopy(v) for k, v in self.nodes.items()},
        )

    async def _finish(
        self, status: Any, *, result: Any = None, error: dict[str, Any] | None = None
    ) -> RunOutcome:
        await self.emit(ev.run_ended(status, result=result, error=error))
        return RunOutcome(status=status, result=result, error=error, nodes=self.nodes)

    # --- one workflow (top level or sub-workflow) ------------------------------------------
    async def _execute(self, plan: WorkflowPlan, scope: Scope, prefix: str) -> Any:
        workflow, order = plan.workflow, plan.order
        status = {node_id: "pending" for node_id in order}
        activated: set[str] = set()
        last_output: list[Any] = [None]
        for node_id in order:
            self.nodes[prefix + node_id] = NodeState()
        pending = _Pending(plan, status)
        rounds: dict[str, int] = {}  # how many times each node was made pending again
        loops: dict[tuple[str, str], int] = {}  # times each goto back was taken
        while True:
            ready = self._next_ready(plan, pending, status, activated)
            if ready is None:
                break
            node_id, skip_reason = ready
            state = self.nodes[prefix + node_id]
            if skip_reason:
                status[node_id] = state.status = "skipped"
                state.error = skip_reason
                await self.emit(ev.NodeSkipped(node_id=prefix + node_id, reason=skip_reason))
            else:
                redriven = self.redrive is not None and node_id in self.redrive.outputs
                if not prefix and redriven and node_id not in rounds:  # a loop runs it again
                    outcome, targets = await self._reuse_node(plan, node_id, scope, last_output)
                else:
                    self._enter_round(rounds.get(node_id))
                    try:
                        outcome, targets = await self._run_node(
                            plan, node_id, scope, prefix, last_output
                        )
                    finally:
                        self._enter_round(None)
                status[node_id] = outcome
                back = {t for t in targets if status.get(t, "pending") != "pending"}
                if back:
                    await self._loop_back(
                        plan, node_id, back, status, activated, prefix, rounds, loops
                    )
                    pending.rewind()
                    continue
                activated.update(targets)
            await self._skip_unactivated(plan, node_id, status, activated, prefix)
        for node_id in order:
            if status[node_id] == "pending":
                state = self.nodes[prefix + node_id]
                state.status = "skipped"
                state.error = "not activated" if node_id in plan.activated else "not reached"
                await self.emit(ev.NodeSkipped(node_id=prefix + node_id, reason=state.error))
        if workflow.outputs is not None:
            return self._outputs(plan, scope)
        return last_output[0]

    def _outputs(self, plan: WorkflowPlan, scope: Scope) -> Any:
        """The workflow's ``outputs``; one that reads a node the run skipped is null.

        A branch not taken leaves its nodes' outputs unset: an output read from them is null
        (anywhere else such a reference fails the run, as every unresolved reference does).
        """
        outputs = plan.workflow.outputs
        if not isinstance(outputs, dict):
            return self.render(outputs, scope, None)
        produced = plan.graph.output_names()
        values: dict[str, Any] = {}
        for key, value in outputs.items():
            try:
                values[key] = self.render(value, scope, None)
            except UnresolvedReferenceError as exc:
                name = exc.reference.lstrip("$").split(".", 1)[0]
                if name not in produced or name in scope.outputs:
                    raise
                values[key] = None
        return values

    def _enter_round(self, round_: int | None) -> None:
        """Name the steps of the node about to run ``<name>@<round>`` (a loop's later rounds)."""
        self.step_tag = f"@{round_}" if round_ else ""
        self.steps = _RoundSteps(self._base_steps, self.step_tag) if round_ else self._base_steps

    async def _loop_back(
        self,
        plan: WorkflowPlan,
        node_id: str,
        targets: set[str],
        status: dict[str, str],
        activated: set[str],
        prefix: str,
        rounds: dict[str, int],
        loops: dict[tuple[str, str], int],
    ) -> None:
        """A goto back to ``targets``: the nodes from each on are pending again.

        Bounded by the case's ``max_loops``: one more time fails the run. A node run again
        names its steps with ``@<round>`` (distinct names, so a replay takes the same path).
        """
        node = plan.workflow.graph[node_id]
        bounds = {target: bound for _, target, bound in kind_of(node).loop_targets(node)}
        for target in sorted(targets):
            key = (node_id, target)
            loops[key] = loops.get(key, 0) + 1
            bound = bounds.get(target, 0)
            if loops[key] > bound:
                raise RunFailed(
                    f"'{prefix + node_id}' went back to '{target}' more than its max_loops "
                    f"({bound}) times",
                    node_id=prefix + node_id,
                    context={"loop": target, "max_loops": bound},
                )
            for member in plan.loop_regions[target]:
                rounds[member] = rounds.get(member, 1) + 1
                status[member] = "pending"
                activated.discard(member)
                self.nodes[prefix + member] = NodeState()
            if target in plan.activated:
                activated.add(target)

    async def _skip_unactivated(
        self,
        plan: WorkflowPlan,
        settled: str,
        status: dict[str, str],
        activated: set[str],
        prefix: str,
    ) -> None:
        """Skip the activated-only nodes ``settled`` could activate and nobody did.

        A branch's other targets, a fallback that was not needed: skipped as soon as their
        last activator settles, so what waits for them (a join) goes on.
        """
        work = [settled]
        while work:
            for target in plan.activates[work.pop()]:
                if status.get(target) != "pending" or target in activated:
                    continue
                if any(status.get(a) not in SETTLED for a in plan.activators[target]):
                    continue
                state = self.nodes[prefix + target]
                status[target] = state.status = "skipped"
                state.error = "not activated"
                await self.emit(ev.NodeSkipped(node_id=prefix + target, reason=state.error))
                work.append(target)

    @staticmethod
    def _next_ready(
        plan: WorkflowPlan, pending: _Pending, status: dict[str, str], activated: set[str]
    ) -> tuple[str, str | None] | None:
        """The first pending node, in the graph's order, whose dependencies are settled."""
        for node_id, node in pending.remaining():
            if status[node_id] != "pending":
                continue
            if node_id in plan.activated and node_id not in activated:
                continue
            deps = [status.get(d, "skipped") for d in node.depends_on]
            if any(d not in SETTLED for d in deps):
                continue
            if "failed" in deps:
                return node_id, "a dependency failed"
            if deps and all(d == "skipped" for d in deps):
                return node_id, "every dependency was skipped"
            return node_id, None
        return None

    async def _reuse_node(
        self, plan: WorkflowPlan, node_id: str, scope: Scope, last_output: list[Any]
    ) -> tuple[str, set[str]]:
        """A redrive: take the node's output from the earlier run instead of running it."""
        assert self.redrive is not None
        node = plan.workflow.graph[node_id]
        kind = kind_of(node)
        state = self.nodes[node_id]
        state.started_at = state.ended_at = self.clock()
        await self.emit(ev.NodeStarted(node_id=node_id, kind=kind.name, tool=kind.tool(node)))
        at = NodeAt(workflow=plan, node_id=node_id, full_id=node_id, prefix="", scope=scope)
        outcome = kind.reuse(node, at, self.redrive.outputs[node_id], self)
        state.status, state.output = "succeeded", outcome.output
        state.input = self.redrive.inputs.get(node_id)
        state.detail = {"reused_from": self.redrive.from_run}
        if outcome.is_result:
            last_output[0] = outcome.output
        await self.emit(
            ev.NodeSucceeded(
                node_id=node_id,
                output=outcome.output,
                input=state.input,
                reused_from=self.redrive.from_run,
            )
        )
        return "succeeded", set(outcome.activates)

    async def _run_node(
        self, plan: WorkflowPlan, node_id: str, scope: Scope, prefix: str, last_output: list[Any]
    ) -> tuple[str, set[str]]:
        """Run one node; returns its final status and the nodes it activates."""
        node = plan.workflow.graph[node_id]
        full_id = prefix + node_id
        state = self.nodes[full_id]
        state.status, state.started_at = "running", self.clock()
        kind = kind_of(node)
        await self.emit(ev.NodeStarted(node_id=full_id, kind=kind.name, tool=kind.tool(node)))
        targets: set[str] = set()
        at = NodeAt(workflow=plan, node_id=node_id, full_id=full_id, prefix=prefix, scope=scope)
        try:
            outcome = await kind.execute(node, at, self)
            state.output = outcome.output
            targets = set(outcome.activates)
            if outcome.is_result:
                last_output[0] = outcome.output
        except FallbackTriggered as fallback:
            scope.failure = {"node_id": full_id, **fallback.failure}
            state.status, state.error, state.ended_at = "failed", fallback.message, self.clock()
            await self.emit(
                ev.NodeFailed(
                    node_id=full_id,
                    error=fallback.message,
                    fallback=fallback.target,
                    input=state.input,
                    detail=state.detail if state.detail.get("tool") else None,
                )
            )
            return "failed", {fallback.target}
        except RunFailed as failure:
            state.status, state.error, state.ended_at = "failed", failure.message, self.clock()
            detail = state.detail if state.detail.get("tool") else None
            await self.emit(
                ev.NodeFailed(
                    node_id=full_id, error=failure.message, input=state.input, detail=detail
                )
            )
            raise
        except (UnresolvedReferenceError, ExpressionError, DynamicToolsError) as exc:
            state.status, state.error, state.ended_at = "failed", exc.message, self.clock()
            await self.emit(ev.NodeFailed(node_id=full_id, error=exc.message, input=state.input))
            raise RunFailed(exc.message, node_id=full_id) from None
        except Exception as exc:  # evaluating the node raised something unforeseen
            message = f"node '{full_id}' failed on an unexpected error ({_describe(exc)})"
            state.status, state.error, state.ended_at = "failed", message, self.clock()
            await self.emit(ev.NodeFailed(node_id=full_id, error=message, input=state.input))
            raise RunFailed(message, node_id=full_id) from None
        state.status, state.ended_at = "succeeded", self.clock()
        await self.emit(ev.NodeSucceeded(node_id=full_id, output=state.output, input=state.input))
        return "succeeded", targets

    # --- what node kinds use (engine/nodes/kind.py: RunServices) ---------------------------
    def now(self) -> str:
        """The run's clock."""
        return self.clock()

    async def set_input(self, full_id: str, value: Any) -> None:
        """Record a running node's input and emit it (the run view shows it while it runs)."""
        self.node_state(full_id).input = value
        await self.emit(ev.NodeInput(node_id=full_id, input=value))

    def node_state(self, full_id: str) -> NodeState:
        """The state of a node, made when missing (a branch step, an item)."""
        return self.nodes.setdefault(full_id, NodeState())

    def call_context(self, full_id: str) -> CallContext:
        """What one tool call of node ``full_id`` may use."""
        return CallContext(
            run_id=self.run_id,
            tools=self.tools,
            steps=self.steps,
            emit=self.emit,
            state=self.node_state(full_id),
            base_url=self.plan.base_url,
        )

    def register(self, compensation: Compensation) -> None:
        """Keep an undo for the saga."""
        self.saga.register(compensation)

    async def execute_workflow(self, plan: WorkflowPlan, scope: Scope, prefix: str) -> Any:
        """Run a sub-workflow of the plan under ``prefix``."""
        return await self._execute(plan, scope, prefix)

    def render(self, value: Any, scope: Scope, node_id: str | None) -> Any:
        """``value`` with its references resolved in ``scope``."""
        return render(value, scope.lookup, node_id=node_id)

    def evaluate(self, text: str, scope: Scope, node_id: str) -> Any:
        """The value of expression ``text`` in ``scope``."""
        return evaluate(
            parse_expression(text, node_id=node_id),
            lambda ref: resolve_reference(ref, scope.lookup, node_id=node_id),
            node_id=node_id,
        )

    async def _compensate(self, failure: RunFailed | None) -> None:
        """Saga: run registered compensations newest first (unless a node handled it)."""
        if failure is not None and failure.context.get("handled"):
            return
        for entry in self.saga.newest_first():
            await self.compensation_call(f"saga:{entry.node_id}", entry.call, entry.args)

    async def compensation_call(self, name: str, tool: str, args: Any) -> dict[str, Any]:
        """Call an undo tool once, as a step; what it did (never raises)."""

        async def attempt() -> dict[str, Any]:
            try:
                result = await self.tools.call(
                    tool, args, idempotency_key=f"{self.run_id}:{name}", timeout_s=None
                )
            except Exception as exc:  # a failed compensation is recorded, never fatal here
                return {
                    "call": tool,
                    "ok": False,
                    "error": getattr(exc, "message", None) or _describe(exc),
                }
            return {
                "call": tool,
                "ok": result.ok,
                "status_code": result.status_code,
                "error": None if result.ok else f"HTTP {result.status_code}",
            }

        outcome = await self.steps.step(f"compensate:{name}", attempt)
        await self.emit(ev.Compensated(name=name, **outcome))
        return outcome

    # --- children ---------------------------------------------------------------------------
    async def gather(
        self,
        name: str,
        children: list[ChildSpec],
        *,
        concurrency: int | None,
        fail_fast: bool,
        repeatable: bool = False,
    ) -> list[ChildOutcome]:
        """Run the children; keep what they registered even if the run stops meanwhile.

        When the run is cancelled or times out during the gather, the children's
        compensations are kept here (they run with the parent's) before the cancellation
        goes on.
        """
        try:
            return await self.steps.gather(
                name,
                children,
                run_child=self._child_entry,
                concurrency=concurrency,
                fail_fast=fail_fast,
                repeatable=repeatable,
            )
        except GatherCancelled as stopped:
            for outcome in stopped.outcomes:
                self.absorb_child(outcome.value)
            raise

    async def _child_entry(self, spec: ChildSpec, steps: StepRunner | None = None) -> ChildResult:
        child = Interpreter(
            self.plan,
            run_id=self.run_id,
            tools=self.tools,
            steps=steps or self._base_steps,
            events=self.events,
            clock=self.clock,
        )
        return await child.run_child(spec)

    def child_seq_base(self, index: int) -> int:
        """Where a child's event numbers start: distinct per child, deterministic on replay.

        Each child gets a block of 100,000 numbers after its parent's current number, so
        siblings never share a number (a sink keyed on (run_id, seq) keeps every event).
        """
        return (self._seq * 1000 + index + 1) * 100_000

    def absorb_child(self, result: ChildResult | None) -> Any:
        """Keep what a child registered (compensations, node states); its value."""
        if result is None:
            return None
        self.saga.extend(result.compensations)
        self.nodes.update(result.nodes)
        return result.value


class _RoundSteps:
    """A step runner naming every step ``<name>@<round>``: a node a loop runs again."""

    def __init__(self, steps: StepRunner, tag: str) -> None:
        self._steps = steps
        self._tag = tag

    async def step(self, name: str, fn: Callable[[], Any]) -> Any:
        return await self._steps.step(name + self._tag, fn)

    async def sleep(self, name: str, seconds: float) -> None:
        await self._steps.sleep(name + self._tag, seconds)

    async def wait_for_input(self, name: str, timeout_s: float | None) -> dict[str, Any] | None:
        return await self._steps.wait_for_input(name, timeout_s)  # never in a loop

    async def gather(self, name: str, children: list[ChildSpec], **options: Any) -> Any:
        return await self._steps.gather(name, children, **options)  # never in a loop

    def __getattr__(self, name: str) -> Any:  # what a runner offers beyond the protocol
        return getattr(self._steps, name)


def _describe(exc: Exception) -> str:
    """``TypeName: text`` of an unexpected exception (its text cut to 200 characters)."""
    text = " ".join(str(exc).split())
    text = text if len(text) <= 200 else text[:197] + "..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


__all__ = ["Interpreter", "RunFailed", "utc_now"]
