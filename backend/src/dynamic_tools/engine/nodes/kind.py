"""What a node kind is: one class that knows its model, graph facts, rules, execution and views.

Every node kind is one module of this package holding its pydantic model and a
:class:`Kind` subclass; the registry (``engine/nodes/__init__.py``) lists them. The rest of
the engine never asks "which kind is this node?": the graph, the validator, the interpreter,
the step views and the MCP text ask the node's kind (:func:`~dynamic_tools.engine.nodes.kind_of`).

The defaults here fit a node that calls nothing, activates nothing and writes no output; a
kind overrides what it does differently. Two families share more:

- *step kinds* (``call``, ``workflow``) can also stand inside a ``parallel`` branch or as a
  ``foreach`` step; they implement :meth:`Kind.run_step` and :meth:`Kind.check_step`;
- *fan-out kinds* (``parallel``, ``foreach``) run steps as children; they implement
  :meth:`Kind.child_step`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeVar

from dynamic_tools.engine.node_parts import NodeBase
from dynamic_tools.engine.state import RunFailed
from dynamic_tools.engine.xml_reading import ReadNode

if TYPE_CHECKING:
    from xml.etree.ElementTree import Element

    from dynamic_tools.engine.call_context import CallContext
    from dynamic_tools.engine.children import ChildResult, ChildSpec
    from dynamic_tools.engine.events import Event
    from dynamic_tools.engine.graph import WorkflowGraph
    from dynamic_tools.engine.plan import RunPlan, WorkflowPlan
    from dynamic_tools.engine.ports import ChildOutcome, StepRunner
    from dynamic_tools.engine.saga import Compensation
    from dynamic_tools.engine.scope import Scope
    from dynamic_tools.engine.state import NodeState

Path = tuple[str | int, ...]
N = TypeVar("N", bound=NodeBase)


@dataclass(frozen=True)
class NodeOutcome:
    """What executing a node gave: its output, the nodes it activates.

    ``is_result``: the output counts as the workflow's result when it has no ``outputs``
    (the last call or sub-workflow that ran).
    """

    output: Any = None
    activates: frozenset[str] = frozenset()
    is_result: bool = False


@dataclass(frozen=True)
class ReferenceSource:
    """A value of a node that may hold ``$references``, where it is, and the names local to it."""

    value: Any
    path: Path
    local: frozenset[str] = field(default_factory=frozenset)


@dataclass(frozen=True)
class CallSite:
    """One call a node may make: a tool (with its written arguments) or a sub-workflow.

    What a node kind declares through :meth:`Kind.calls`; a workflow's behaviour hints (is it
    read-only? may it destroy something?) are derived from every call site it reaches,
    sub-workflows included (:func:`~dynamic_tools.engine.nodes.calls_reached`).
    ``undo``: the call is a compensation (it runs only to undo an earlier call).
    """

    tool: str | None = None
    workflow: str | None = None
    args: Mapping[str, Any] = field(default_factory=dict)
    undo: bool = False


@dataclass(frozen=True)
class NodeAt:
    """Where a node runs: its workflow, its ids (``full_id`` with the prefix), its scope."""

    workflow: WorkflowPlan
    node_id: str
    full_id: str
    prefix: str
    scope: Scope


class RunServices(Protocol):
    """What the interpreter offers a node kind while it executes one of its nodes."""

    run_id: str
    plan: RunPlan
    steps: StepRunner
    step_tag: str
    """``@<round>`` while a loop runs a node again (else empty)."""

    def now(self) -> str:
        """The run's clock (ISO 8601)."""
        ...

    async def emit(self, event: Event) -> None:
        """Send one run event."""
        ...

    def node_state(self, full_id: str) -> NodeState:
        """The state of a node (made when missing, e.g. for a branch step or an item)."""
        ...

    async def set_input(self, full_id: str, value: Any) -> None:
        """Record a running node's input and tell the run's watchers (a ``node_input``)."""
        ...

    def render(self, value: Any, scope: Scope, node_id: str | None) -> Any:
        """``value`` with its ``$references`` and ``${...}`` resolved."""
        ...

    def evaluate(self, text: str, scope: Scope, node_id: str) -> Any:
        """The value of an expression."""
        ...

    def call_context(self, full_id: str) -> CallContext:
        """What one tool call (with its retries) may use."""
        ...

    def register(self, compensation: Compensation) -> None:
        """Keep an undo for the saga (run newest first if the run fails)."""
        ...

    async def execute_workflow(self, plan: WorkflowPlan, scope: Scope, prefix: str) -> Any:
        """Run a (sub-)workflow of the plan; its result."""
        ...

    async def gather(
        self,
        name: str,
        children: list[ChildSpec],
        *,
        concurrency: int | None,
        fail_fast: bool,
        repeatable: bool = False,
    ) -> list[ChildOutcome]:
        """Run children (branches, items) through the step runner.

        ``repeatable``: every child is one repeatable step (:meth:`StepKind.repeatable`).
        """
        ...

    def child_seq_base(self, index: int) -> int:
        """Where the event numbers of child ``index`` start."""
        ...

    def absorb_child(self, result: ChildResult | None) -> Any:
        """Keep a child's compensations and node states; its value."""
        ...

    async def compensation_call(self, name: str, tool: str, args: Any) -> dict[str, Any]:
        """Call an undo tool once, as a step; never raises."""
        ...


class NodeChecks(Protocol):
    """What the validator offers a node kind while it checks one of its nodes."""

    node_id: str
    here: Path

    @property
    def graph(self) -> WorkflowGraph:
        """The workflow's graph facts."""
        ...

    @property
    def params(self) -> Collection[str]:
        """The workflow's parameter names."""
        ...

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
        """Report a violation at ``path``."""
        ...

    @property
    def base_url(self) -> str | None:
        """The document's base URL (what a ``rest_call`` without one is sent to)."""
        ...

    def tool(self, path: Path, name: str, args: Mapping[str, Any] | None = None) -> None:
        """Check that ``name`` is a callable tool (and ``args`` fit its input schema)."""
        ...

    def sub_workflow(
        self, path: Path, workflow_id: str, args: Mapping[str, Any] | None = None
    ) -> None:
        """Check that ``workflow_id`` exists and ``args`` fit its params.

        The call is recorded for cycle detection.
        """
        ...

    def expression(self, path: Path, text: str, *, local: Collection[str] = ()) -> None:
        """Check that an expression parses and that its references name something."""
        ...


class ArazzoOperation(Protocol):
    """A registered tool as an Arazzo operation (see :class:`ArazzoSteps`)."""

    @property
    def operation_id(self) -> str:
        """The ``operationId`` of the tool in the OpenAPI description written beside it."""
        ...

    @property
    def content_type(self) -> str:
        """How the tool sends its body (``application/json``, a form, multipart)."""
        ...

    def param_in(self, name: str) -> str | None:
        """Where the tool takes argument ``name`` (``path``, ``query``, ``body``...).

        None when the tool declares no such parameter.
        """
        ...


class ArazzoSteps(Protocol):
    """What the Arazzo exporter offers a node kind while it writes one of its nodes.

    The exporter (``definitions/arazzo/export.py``) walks the nodes and asks each node's kind; a
    kind writes its nodes as Arazzo steps (:meth:`Kind.arazzo_step`), adds to other steps
    (:meth:`Kind.arazzo_actions`), or declares why it has no Arazzo equivalent
    (:attr:`Kind.no_arazzo_equivalent`).
    """

    def warn(self, node_id: str | None, message: str) -> None:
        """Record what is left out (a warning with rule ``no_arazzo_equivalent``)."""
        ...

    def value(self, value: Any, node_id: str, answer: Mapping[str, str] | None = None) -> Any:
        """``value`` with its references rewritten as Arazzo runtime expressions.

        ``answer`` maps names local to the step (``result``...) to what they read.
        """
        ...

    def condition(self, text: str, node_id: str) -> str:
        """An expression of ours as an Arazzo condition."""
        ...

    def operation(self, tool: str) -> ArazzoOperation | None:
        """The tool as an operation of the OpenAPI description (None: it cannot be one)."""
        ...

    def on_error(self, step: dict[str, Any], node_id: str, on_error: Any) -> None:
        """Write an ``on_error`` as the step's ``onFailure`` actions."""
        ...

    def step(self, node_id: str) -> dict[str, Any] | None:
        """The Arazzo step written for a node (None: the node has none)."""
        ...

    def goto(self, node_id: str) -> dict[str, Any]:
        """The action (without its name) that hands over to a node (a goto, or an end)."""
        ...


class Kind(ABC, Generic[N]):
    """One node kind. Subclasses set the class attributes and override what they do."""

    name: ClassVar[str]
    """The value of ``type`` for this kind."""
    model: ClassVar[type[NodeBase]]
    """The pydantic model of its nodes."""
    written_as: ClassVar[str]
    """How a node of this kind starts in YAML (for the reference)."""
    shorthand: ClassVar[str | None] = None
    """A field whose presence implies this kind when ``type`` is missing."""
    only_when_activated: ClassVar[bool] = False
    """Its nodes run only when something activates them (never just after dependencies)."""
    is_step: ClassVar[bool] = False
    """Its nodes can be a parallel branch or a foreach step."""
    xml_tags: ClassVar[tuple[str, ...]] = ()
    """The XML elements of its nodes (``engine/xml_format.py`` reads the document's frame)."""

    # --- reading ----------------------------------------------------------------------------
    def from_xml(
        self, element: Element, attrs: dict[str, Any], here: str, read_node: ReadNode
    ) -> dict[str, Any]:
        """The mapping (as the YAML form gives it) of one of its XML elements.

        ``attrs`` are the element's attributes, typed, without ``id``; ``read_node`` reads a
        nested node element (a branch, a step).
        """
        return {**attrs, "type": self.name}

    # --- graph facts ------------------------------------------------------------------------
    def steps(self, node: N) -> list[tuple[Path, Any]]:
        """The call / sub-workflow steps of the node, with where each is (``()`` for itself)."""
        return []

    def targets(self, node: N, node_ids: Collection[str]) -> list[tuple[Path, str]]:
        """Nodes this node names to activate (besides its steps' fallbacks)."""
        return []

    def loop_targets(self, node: N) -> list[tuple[Path, str, int]]:
        """Earlier nodes this node can go back to (a loop), where each is named, and its bound.

        A loop target is not an activation: when taken, the nodes from the target on run
        again (at most the bound times), see the interpreter.
        """
        return []

    def activation_targets(self, node: N, node_ids: Collection[str]) -> list[tuple[Path, str]]:
        """Every node this node can activate, with where in it each is named."""
        found = list(self.targets(node, node_ids))
        for path, step in self.steps(node):
            if step.on_error and step.on_error.fallback:
                found.append(((*path, "on_error", "fallback"), step.on_error.fallback))
        return found

    def outputs(self, node: N) -> list[tuple[str, Path]]:
        """Output names the node writes, with where each is named."""
        return [(step.output, (*path, "output")) for path, step in self.steps(node) if step.output]

    def may_be_skipped(self, node: N) -> bool:
        """Whether the node can end without writing its outputs while the run goes on."""
        return False

    def answer_fields(self, node: N) -> frozenset[str] | None:
        """The fields of ``$<node id>`` when the node's id is itself a readable name (yield)."""
        return None

    def reference_sources(self, node: N, here: Path) -> list[ReferenceSource]:
        """The node's values that may hold ``$references`` (expressions are checked apart)."""
        return []

    def tool(self, node: N) -> str | None:
        """The tool the node itself calls (a call node's), named in its start event."""
        return None

    def tools(self, node: N) -> list[str]:
        """Every tool the node may call (compensations included), in document order."""
        return []

    def undo_tools(self, node: N) -> list[str]:
        """The tools among :meth:`tools` that undo something (compensations)."""
        return []

    def calls(self, node: N) -> list[CallSite]:
        """Every call the node may make (tools and sub-workflows), compensations included.

        What the node contributes to its workflow's behaviour hints. The default fits a node
        that calls nothing (a branch, a pause for input, an error): it adds no effect.
        """
        return []

    # --- validation -------------------------------------------------------------------------
    def check(self, node: N, checks: NodeChecks) -> None:
        """Report what is wrong with the node (beyond its model and references)."""

    def check_step(self, node: N, checks: NodeChecks, here: Path) -> None:
        """Step kinds: report what is wrong with the node as a step at ``here``."""

    def check_reach(self, node: N, checks: NodeChecks) -> None:
        """Report a node that can never run."""
        if checks.graph.unreachable(checks.node_id):
            checks.add(
                checks.here,
                "unreachable",
                f"node '{checks.node_id}' only depends on nodes that never run",
                severity="warning",
            )

    # --- execution --------------------------------------------------------------------------
    @abstractmethod
    async def execute(self, node: N, at: NodeAt, run: RunServices) -> NodeOutcome:
        """Run the node; raise :class:`~dynamic_tools.engine.state.RunFailed` to fail it."""

    async def run_step(
        self, node: N, full_id: str, prefix: str, scope: Scope, run: RunServices
    ) -> Any:
        """Step kinds: run the node as a step (top level, branch or item); its value."""
        raise RunFailed(f"a {self.name} node is not a step", node_id=full_id)

    def child_step(self, node: N, spec: ChildSpec) -> Any:
        """Fan-out kinds: the step a child (a branch or an item) runs."""
        raise RunFailed(f"a {self.name} node has no children", node_id=spec.child_id)

    # --- redrive ----------------------------------------------------------------------------
    def reuse_refusal(self, node: N, plan: RunPlan) -> str | None:
        """Why a succeeded node cannot give its recorded output to a redrive (None: it can)."""
        return f"a {self.name} node cannot be reused"

    def reuse(self, node: N, at: NodeAt, output: Any, run: RunServices) -> NodeOutcome:
        """Take ``output``, recorded by an earlier run, as this node's outcome.

        Writes what executing it would have written into the scope, activates what it
        activated.
        """
        raise RunFailed(self.reuse_refusal(node, run.plan) or "not reusable", node_id=at.full_id)

    # --- Arazzo export -----------------------------------------------------------------------
    no_arazzo_equivalent: ClassVar[str | None] = None
    """Why its nodes have no Arazzo step (the export's warning); None when it writes one.

    A kind that sets neither this nor :meth:`arazzo_step` is left out with a generic warning.
    """
    arazzo_ends: ClassVar[bool] = False
    """A goto to one of its nodes is an Arazzo ``end`` (an error node: the step fails)."""

    def arazzo_step(self, node_id: str, node: N, out: ArazzoSteps) -> dict[str, Any] | None:
        """The node as an Arazzo step (None: it has none, and ``out`` was told why)."""
        out.warn(
            node_id,
            self.no_arazzo_equivalent
            or f"a {self.name} node has no Arazzo equivalent and is left out",
        )
        return None

    def arazzo_actions(self, node_id: str, node: N, out: ArazzoSteps) -> None:
        """Once every step is written: what the node adds to other steps (a branch's cases)."""

    # --- views ------------------------------------------------------------------------------
    def label(self, node_id: str, node: N) -> str:
        """A few words for the node in a workflow's one-line shape."""
        return node_id

    def details(self, node: N) -> dict[str, Any]:
        """What the node does, as the step view shows it."""
        return {}

    def activation(self, node: N, path: Path) -> dict[str, Any]:
        """How this node activates the target named at ``path`` (``via`` and ``when``)."""
        where = f" of branch '{path[1]}'" if path[0] == "branches" else ""
        where = " of its step" if path[0] == "step" else where
        return {"via": "fallback", "when": f"the call{where} gave up"}

    def alternatives(self, node_id: str, node: N, label_of: Mapping[str, str]) -> list[str]:
        """Lines of the workflow's shape for the paths this node chooses between."""
        return []

    def failure_notes(self, node_id: str, node: N, nodes: Mapping[str, Any]) -> list[str]:
        """How the node behaves on failure (retries, fallbacks, undo), one line each."""
        return []

    def pause(self, node_id: str, node: N) -> str | None:
        """Where the node pauses for input, in words (None when it does not)."""
        return None


__all__ = [
    "ArazzoOperation",
    "ArazzoSteps",
    "CallSite",
    "Kind",
    "NodeAt",
    "NodeChecks",
    "NodeOutcome",
    "Path",
    "ReferenceSource",
    "RunServices",
]
