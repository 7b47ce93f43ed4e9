"""Running documents in tests the way a prepared run does: plan once, params checked once."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dynamic_tools.engine.interpreter import Interpreter
from dynamic_tools.engine.models import WorkflowDocument
from dynamic_tools.engine.plan import RunPlan, compile_plan
from dynamic_tools.engine.state import NodeState, RunOutcome
from dynamic_tools.engine.validator import ValidationReport


def plan_of(document: WorkflowDocument, workflow_id: str, *, validated: bool = False) -> RunPlan:
    """The plan of ``workflow_id``.

    Unless ``validated``, the document is compiled without being validated: tests of the
    interpreter's own guards (an unresolved reference, a failing expression) run documents
    the validator refuses, which no real run can.
    """
    return compile_plan(document, workflow_id, report=None if validated else ValidationReport())


class DocumentRunner:
    """An interpreter per run of any workflow of one document (the last one is kept)."""

    def __init__(self, document: WorkflowDocument, **interpreter: Any) -> None:
        self.document = document
        self.options = interpreter
        self.interpreter: Interpreter | None = None

    async def run(self, workflow_id: str, params: Mapping[str, Any]) -> RunOutcome:
        """Plan ``workflow_id``, check ``params`` as a prepared run does, and run it.

        Bad params raise :class:`~dynamic_tools.errors.InvalidInputError`, as preparing the
        run does.
        """
        plan = plan_of(self.document, workflow_id)
        values = plan.check_params(params)
        self.interpreter = Interpreter(plan, **self.options)
        return await self.interpreter.run(values)

    @property
    def nodes(self) -> dict[str, NodeState]:
        """The node states of the last run."""
        assert self.interpreter is not None, "nothing ran yet"
        return self.interpreter.nodes


def prepared(document: WorkflowDocument, workflow_id: str, params: Mapping[str, Any]) -> Any:
    """``plan`` and checked ``params`` for a launcher's ``start``, as a prepared run has them."""
    plan = plan_of(document, workflow_id)
    return {"plan": plan, "params": plan.check_params(params)}
