"""Whatever a tool call, a reference or a node raises, the run ends (property tests).

A run left ``running`` with no one working on it is the failure these tests guard against:
every exception the HTTP stack can raise (and made-up ones) is thrown at a step, and the run
must end — failed with a structured error naming the node, or through its fallback — within
the attempts its ``on_error`` allows.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dynamic_tools.engine.loaders import load_document
from dynamic_tools.engine.local import EventList, LocalSteps, MockTools
from dynamic_tools.engine.models import WorkflowDocument
from dynamic_tools.engine.ports import ToolCallFailed, ToolResult
from tests.conftest import FIXTURES
from tests.support.http_exceptions import http_stack_exceptions
from tests.support.plans import DocumentRunner

HOSTILE = FIXTURES / "workflows" / "engine" / "hostile.yaml"
DOCUMENT: WorkflowDocument = load_document(HOSTILE.read_text(), name=HOSTILE.name).document
FAILURES = st.one_of(
    http_stack_exceptions(),
    st.builds(
        ToolCallFailed,
        st.text(max_size=30),
        kind=st.sampled_from(["transport", "timeout", "refused", "anything"]),
    ),
)
PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))


def make(mocks: Mapping[str, Any]) -> tuple[DocumentRunner, MockTools, EventList]:
    tools, events = MockTools(mocks), EventList()
    interp = DocumentRunner(DOCUMENT, run_id="r-1", tools=tools, steps=LocalSteps(), events=events)
    return interp, tools, events


def assert_ended(outcome: Any, events: EventList) -> None:
    assert outcome.status in ("succeeded", "failed")
    stuck = {
        n: s.status for n, s in outcome.nodes.items() if s.status in ("running", "waiting_input")
    }
    assert not stuck, stuck
    assert [e["type"] for e in events.events][-1] == f"run_{outcome.status}"


@PROPERTY
@given(error=FAILURES)
async def test_a_raising_call_fails_its_node_within_its_attempts(error: Exception) -> None:
    interp, tools, events = make({"target": error})
    outcome = await interp.run("one_call", {})
    assert_ended(outcome, events)
    assert outcome.status == "failed"
    assert outcome.error["node_id"] == "call_it"
    assert outcome.error["message"].startswith("target ")
    assert 1 <= outcome.nodes["call_it"].attempts == len(tools.calls) <= 3
    failed = events.of("attempt_failed")
    assert len(failed) == len(tools.calls) and all(e["error"] for e in failed)


@PROPERTY
@given(error=FAILURES)
async def test_a_raising_call_takes_its_fallback(error: Exception) -> None:
    interp, tools, events = make({"target": error, "backup": {"ok": True}})
    outcome = await interp.run("with_fallback", {})
    assert_ended(outcome, events)
    assert outcome.status == "succeeded", outcome.error
    assert outcome.nodes["call_it"].status == "failed"
    assert outcome.nodes["recover"].status == "succeeded"
    reason = tools.calls[-1][1]["reason"]
    assert reason.startswith("target ") and reason == outcome.nodes["call_it"].error


@PROPERTY
@given(error=FAILURES)
async def test_a_raising_call_inside_foreach_and_parallel_ends_the_run(error: Exception) -> None:
    interp, _, events = make({"target": error, "backup": {"ok": True}})
    outcome = await interp.run("fan_out", {})
    assert_ended(outcome, events)
    assert outcome.status == "failed" and outcome.error["node_id"] == "each"


class HostileBody(dict[str, Any]):
    """An answer that raises ``error`` whenever anything looks inside it."""

    def __init__(self, error: Exception) -> None:
        super().__init__(x=1)
        self.error = error

    def _raise(self, *args: Any, **kwargs: Any) -> Any:
        raise self.error

    __getitem__ = __contains__ = get = keys = items = values = _raise
    __eq__ = __lt__ = __gt__ = __le__ = __ge__ = __len__ = __bool__ = __repr__ = _raise  # type: ignore[assignment]
    __hash__ = None  # type: ignore[assignment]

    def __iter__(self) -> Iterator[str]:
        raise self.error


@PROPERTY
@given(error=http_stack_exceptions(), when_target=st.booleans())
async def test_a_reference_or_expression_that_raises_fails_its_node(
    error: Exception, when_target: bool
) -> None:
    interp, _, events = make({"source": ToolResult(200, HostileBody(error)), "backup": {"x": 1}})
    outcome = await interp.run("uses_output", {})
    assert_ended(outcome, events)
    assert outcome.status == "failed"
    failed = [n for n, s in outcome.nodes.items() if s.status == "failed"]
    assert failed and outcome.error["node_id"] == failed[0]
    assert outcome.error["message"]
