"""The ``yield`` node: pause the run with a message until values matching ``expects`` come.

The answer is checked against ``expects`` and becomes readable as ``$<node id>.<field>``;
with a ``timeout`` and no answer in time, the node fails. The module is ``pause`` because
``yield`` is a Python keyword.

A field may offer ``choices`` taken from an earlier output::

    expects:
      selected_flight_id:
        type: str
        choices: {from: $options, value: $item.id, label: "$item.id at $item.price EUR"}

When the run pauses, the list ``from`` names becomes the field's ``options`` (``value``,
``label`` and the ``item`` itself when it is an object) and its ``enum``: an answer outside
them is refused (REST 422, MCP elicitation as a titled select, the UI as a picker table).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal
from xml.etree.ElementTree import Element

from pydantic import Field, field_validator

from dynamic_tools.engine import events as ev
from dynamic_tools.engine.errors import ExpressionError
from dynamic_tools.engine.node_parts import FrozenModel, NodeBase, ParamSpec
from dynamic_tools.engine.nodes.kind import (
    Kind,
    NodeAt,
    NodeOutcome,
    Path,
    ReferenceSource,
    RunServices,
)
from dynamic_tools.engine.params import answer_specs, check_values
from dynamic_tools.engine.references import parse_reference
from dynamic_tools.engine.scope import Scope
from dynamic_tools.engine.state import RunFailed
from dynamic_tools.engine.xml_reading import ReadNode, error, expect, required, typed

if TYPE_CHECKING:
    from dynamic_tools.engine.plan import RunPlan

MAX_CHOICES = 500
"""The most options one field may offer (more fails the node: nobody picks among thousands)."""
ITEM = "item"
"""The name of one element of ``choices.from`` in ``value`` and ``label``."""


class Choices(FrozenModel):
    """The options of one answer field, taken from a list the run has produced."""

    from_: str = Field(
        alias="from", description="A reference to a list, e.g. $options or $search.flights."
    )
    value: str = Field(
        default="$item",
        description="The answer an option stands for, e.g. $item.id (a string, number or bool).",
    )
    label: str | None = Field(
        default=None,
        description='What the user reads, e.g. "$item.id at $item.price EUR" (default: value).',
    )

    @field_validator("from_")
    @classmethod
    def _one_reference(cls, value: str) -> str:
        try:
            parse_reference(value)
        except ExpressionError as exc:
            raise ValueError(f"'from' must be one reference to a list: {exc.message}") from None
        return value


class AnswerSpec(ParamSpec):
    """One field a yield expects: a param spec, optionally with ``choices``."""

    choices: Choices | None = None


class YieldNode(NodeBase):
    """Pause the run with a message until values matching ``expects`` are given."""

    kind: Literal["yield"] = Field(alias="type")
    message: str = ""
    expects: dict[str, AnswerSpec] = Field(default_factory=dict)

    @field_validator("expects", mode="before")
    @classmethod
    def _short_types(cls, value: Any) -> Any:
        if isinstance(value, dict):  # seeds write `expects: {selected_flight_id: str}`
            return {
                k: ({"type": v, "required": True} if isinstance(v, str) else v)
                for k, v in value.items()
            }
        return value


class YieldKind(Kind[YieldNode]):
    """Waits for an answer from outside the run."""

    name = "yield"
    model = YieldNode
    written_as = "type: yield"

    no_arazzo_equivalent = (
        "a yield node has no Arazzo equivalent and is left out: an Arazzo workflow takes "
        "its inputs at the start only"
    )
    xml_tags = ("yield",)

    def from_xml(
        self, element: Element, attrs: dict[str, Any], here: str, read_node: ReadNode
    ) -> dict[str, Any]:
        expects: dict[str, Any] = {}
        for child in element:
            if child.tag != "expects":
                raise error(here, "xml_element", f"unexpected <{child.tag}> in <yield>")
            for field in child:
                expect(field, "field", here)
                spec = {"required": True} | {
                    k: v for k, v in typed(field.attrib).items() if k != "name"
                }
                for option in field:
                    expect(option, "choices", here)
                    spec["choices"] = dict(option.attrib)
                expects[required(field, "name", here)] = spec
        return {**attrs, "type": "yield", "expects": expects}

    def answer_fields(self, node: YieldNode) -> frozenset[str] | None:
        return frozenset(node.expects)

    def reference_sources(self, node: YieldNode, here: Path) -> list[ReferenceSource]:
        sources = [ReferenceSource(node.message, (*here, "message"))]
        for name, spec in node.expects.items():
            if spec.choices is None:
                continue
            at = (*here, "expects", name, "choices")
            item = frozenset({ITEM})
            sources += [
                ReferenceSource(spec.choices.from_, (*at, "from")),
                ReferenceSource(spec.choices.value, (*at, "value"), item),
            ]
            if spec.choices.label is not None:
                sources.append(ReferenceSource(spec.choices.label, (*at, "label"), item))
        return sources

    async def execute(self, node: YieldNode, at: NodeAt, run: RunServices) -> NodeOutcome:
        full_id = at.full_id
        message = str(run.render(node.message, at.scope, full_id))
        expects = _offered(node, at.scope, run, full_id)
        state = run.node_state(full_id)
        state.status, state.detail = "waiting_input", {"message": message, "expects": expects}
        await run.emit(ev.WaitingInput(node_id=full_id, message=message, expects=expects))
        values = await run.steps.wait_for_input(f"yield:{full_id}", node.timeout)
        if values is None:
            raise RunFailed(f"no answer to '{full_id}' within {node.timeout} s", node_id=full_id)
        checked = check_values(answer_specs(expects), values, what="values")
        await run.emit(ev.Resumed(node_id=full_id, values=checked))
        at.scope.yields[at.node_id] = checked
        return NodeOutcome(output=checked)

    def reuse_refusal(self, node: YieldNode, plan: RunPlan) -> str | None:
        return None

    def reuse(self, node: YieldNode, at: NodeAt, output: Any, run: RunServices) -> NodeOutcome:
        at.scope.yields[at.node_id] = output  # the answer given in the earlier run
        return NodeOutcome(output=output)

    def label(self, node_id: str, node: YieldNode) -> str:
        return f"ask the user ({node_id})"

    def details(self, node: YieldNode) -> dict[str, Any]:
        return {"message": node.message, "expects": _expects(node)}

    def pause(self, node_id: str, node: YieldNode) -> str | None:
        return f'{node_id}: "{node.message}" expects {", ".join(node.expects) or "an answer"}'


def _expects(node: YieldNode) -> dict[str, Any]:
    return {k: v.model_dump(exclude_none=True, by_alias=True) for k, v in node.expects.items()}


def _offered(node: YieldNode, scope: Scope, run: RunServices, full_id: str) -> dict[str, Any]:
    """``expects`` as the run shows it: each field's ``choices`` become ``options`` and ``enum``."""
    shown: dict[str, Any] = {}
    for name, spec in node.expects.items():
        field = spec.model_dump(exclude_none=True, exclude={"choices"})
        if spec.choices is not None:
            options = _options(spec.choices, name, scope, run, full_id)
            field.update(enum=[option["value"] for option in options], options=options)
        shown[name] = field
    return shown


def _options(
    choices: Choices, name: str, scope: Scope, run: RunServices, full_id: str
) -> list[dict[str, Any]]:
    where = f"'{full_id}' expects.{name}.choices"
    items = run.render(choices.from_, scope, full_id)
    if not isinstance(items, list):
        raise RunFailed(
            f"{where}: {choices.from_} is {type(items).__name__}, not a list", node_id=full_id
        )
    if len(items) > MAX_CHOICES:
        raise RunFailed(
            f"{where}: {choices.from_} has {len(items)} items, more than {MAX_CHOICES} options",
            node_id=full_id,
        )
    options = []
    for index, item in enumerate(items):
        local = scope.with_local(ITEM, item)
        value = run.render(choices.value, local, full_id)
        if value is not None and not isinstance(value, str | int | float | bool):
            raise RunFailed(
                f"{where}: the value of item {index} is {type(value).__name__}, "
                "not a string, number or bool",
                node_id=full_id,
            )
        label = run.render(choices.label, local, full_id) if choices.label else value
        option: dict[str, Any] = {"value": value, "label": str(label)}
        if isinstance(item, dict):
            option["item"] = item
        options.append(option)
    return options


KIND = YieldKind()

__all__ = ["KIND", "MAX_CHOICES", "AnswerSpec", "Choices", "YieldKind", "YieldNode"]
