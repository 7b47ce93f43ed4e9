"""Steps: the node kinds that can stand inside a ``parallel`` branch or a ``foreach`` step.

:data:`STEP_KINDS` lists them (the fan-out kinds' models need them before the registry of
every kind exists); :data:`StepNode` is the union of their models, and the registry
(``engine/nodes/__init__.py``) refuses to load when a kind it lists is a step kind missing
here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Union

from pydantic import Field

from dynamic_tools.engine.node_parts import with_kind
from dynamic_tools.engine.nodes import call, workflow
from dynamic_tools.engine.nodes.step_kind import StepKind

STEP_KINDS: tuple[StepKind[Any], ...] = (call.KIND, workflow.KIND)
"""The step kinds (each a :class:`StepKind`)."""

if TYPE_CHECKING:
    StepNode = call.CallNode | workflow.WorkflowNode
else:
    StepNode = Annotated[
        Union[tuple(kind.model for kind in STEP_KINDS)],  # noqa: UP007
        Field(discriminator="kind"),
    ]
"""A step of any step kind (the models of :data:`STEP_KINDS`, told apart by ``type``)."""
STEP_KIND_NAMES = frozenset(kind.name for kind in STEP_KINDS)
"""The names of the step kinds (the nodes that make attempts)."""
STEP_TAGS = frozenset(tag for kind in STEP_KINDS for tag in kind.xml_tags)
"""The XML elements of steps (``<step>``, ``<subworkflow>``)."""
_BY_MODEL = {kind.model: kind for kind in STEP_KINDS}
_SHORTHANDS = {kind.shorthand: kind.name for kind in STEP_KINDS if kind.shorthand}


def step_kind(step: Any) -> StepKind[Any]:
    """The kind of a step."""
    return _BY_MODEL[type(step)]


def step_with_kind(value: Any) -> Any:
    """A step's mapping with ``type`` filled from its shape (``call:`` or ``workflow:``)."""
    return with_kind(value, _SHORTHANDS)


__all__ = ["STEP_KINDS", "STEP_KIND_NAMES", "STEP_TAGS", "StepNode", "step_kind", "step_with_kind"]
