"""Response models of the run routes and the schema of the events they stream.

The routes: ``/runs``, ``/runs/{id}``, resume, cancel, recover and
``POST /workflows/{id}/runs``; the stream: ``GET /runs/{id}/events``.

The events' schema is derived from the engine's event classes (``engine/events.py``), so the
OpenAPI document — and the UI's types generated from it (``make api-types``) — carry the
closed set of events the engine emits.
"""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any, ClassVar, Literal, Union

from pydantic import (
    BaseModel,
    Field,
    GetJsonSchemaHandler,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    create_model,
    model_serializer,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from dynamic_tools.engine import events as ev
from dynamic_tools.engine.node_parts import ParamView
from dynamic_tools.engine.state import NodeState
from dynamic_tools.execution.launcher import ExecutorView
from dynamic_tools.lazy_model import LazyModel
from dynamic_tools.sparse import schema_without_defaults

RunStatus = Literal["pending", "running", "waiting_input", "succeeded", "failed", "cancelled"]


class RunErrorSummary(LazyModel):
    """Why a run failed, in short.

    The message, the node, and the failed call's status code and what the API said
    (``api_message``, from its response body, else the status text).
    """

    message: str | None = None
    node_id: str | None = None
    status_code: int | None = None
    api_message: str | None = None


class RunTriggerView(LazyModel):
    """What started a run that started itself (docs/triggers.md)."""

    kind: Literal["schedule", "webhook"]
    name: str = Field(description="The schedule's or webhook's name in the workflow document")
    time: str | None = Field(description="The tick, or when the delivery arrived (ISO 8601)")


class RunSummary(LazyModel):
    """A run in a list: ids, status, times."""

    run_id: str
    workflow_id: str
    status: RunStatus
    created_at: str | None = Field(description="ISO 8601")
    started_at: str | None
    finished_at: str | None
    duration_ms: float | None = Field(description="From start (or creation) to the end")
    error: RunErrorSummary | None = None
    redrive_of: str | None = Field(
        default=None, description="The failed run whose succeeded outputs this run reuses"
    )
    owner: str = Field(
        default="admin",
        description="The principal who started the run (admin, key:<id>, oauth:<sub>); runs "
        "from before access control are the admin's",
    )
    trigger: RunTriggerView | None = Field(
        default=None, description="The schedule tick or webhook delivery that started the run"
    )


class RunList(LazyModel):
    """A page of runs, in the order asked (newest first by default)."""

    runs: list[RunSummary]
    total: int = Field(
        description="How many runs match the filters in all, counted up to 10,000 (see total_exact)"
    )
    total_exact: bool = Field(
        default=True, description="False when more than 10,000 match: total is then 10,000"
    )
    limit: int
    offset: int
    next_cursor: str | None = Field(
        default=None,
        description="Pass as cursor for the next page (same filters and sort); null on the last",
    )


class RunStatsBucket(LazyModel):
    """The runs created in one time bucket, by status."""

    start: str = Field(description="ISO 8601; the bucket lasts bucket_s seconds")
    counts: dict[str, int]
    total: int


class WorkflowRunCounts(LazyModel):
    """One workflow's runs in the range, by status."""

    workflow_id: str
    total: int
    by_status: dict[str, int]


class RunStats(LazyModel):
    """Counts of the runs created in a time range: by status, by workflow, per time bucket."""

    since: str
    until: str
    bucket_s: int = Field(description="Each bucket's length in seconds")
    total: int
    by_status: dict[str, int] = Field(description="Every status, 0 when none")
    by_workflow: list[WorkflowRunCounts] = Field(description="Most runs first")
    buckets: list[RunStatsBucket] = Field(description="Oldest first, empty buckets included")


class WaitingPrompt(LazyModel):
    """The yield a run waits on."""

    node_id: str
    message: str = ""
    expects: dict[str, ParamView] = Field(
        default_factory=dict, description="Each field of the answer, with its options to pick from"
    )


class RunState(RunSummary):
    """One run in full: params, per-node state, result, error, waiting, executor."""

    document_version: str | None = None
    params: dict[str, Any]
    nodes: dict[str, NodeState] = Field(
        description="Per node, the engine's own record of it (engine/state.py), as shown"
    )
    result: Any = None
    error: dict[str, Any] | None = None  # type: ignore[assignment]  # the full error here
    waiting: WaitingPrompt | None = None
    updated_at: str | None = None
    event_count: int
    executor: ExecutorView | None = None


class RunStarted(LazyModel):
    """A run that was recorded and handed to its launcher (or answered/cancelled)."""

    run_id: str
    status: RunStatus


class Redriven(RunStarted):
    """A redrive that started: the new run, the run it re-runs and the nodes it reused."""

    redrive_of: str
    reused: list[str] = Field(description="Nodes whose recorded outputs the new run reuses")
    runs_again: dict[str, str] = Field(
        description="The other nodes, each with why it runs again (or is not reused)"
    )


class RedrivePreview(LazyModel):
    """What a redrive would do (``dry_run``): the nodes it would reuse and why the rest run again.

    Nothing was created: the same answer as :class:`Redriven` without a new run.
    """

    dry_run: Literal[True] = True
    redrive_of: str
    reused: list[str] = Field(description="Nodes whose recorded outputs a redrive would reuse")
    runs_again: dict[str, str] = Field(
        description="The other nodes, each with why it would run again (or is not reused)"
    )


class _EventBase(LazyModel):
    """An event as the engine emits it: fields left out while None are left out here too.

    ``seq`` and each class's optional payload fields (``omitted_while_none``) appear only when
    set, as ``Event.to_dict`` has it.
    """

    OMIT_NONE: ClassVar[frozenset[str]] = frozenset({"seq"})

    # No return annotation: pydantic then documents the model's own fields (see sparse.py).
    @model_serializer(mode="wrap")
    def _drop_unset(self, handler: SerializerFunctionWrapHandler):  # type: ignore[no-untyped-def]
        data: dict[str, Any] = handler(self)
        return {k: v for k, v in data.items() if v is not None or k not in self.OMIT_NONE}

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        """The model's schema, the fields left out while None without a default (may be absent)."""
        return schema_without_defaults(core_schema, handler, cls.OMIT_NONE)


_TYPED_FIELDS: dict[tuple[str, str], Any] = {
    ("waiting_input", "expects"): dict[str, ParamView],
}
"""Event fields the engine records as mappings, with the shape the engine gives them."""


def _event_model(cls: type[ev.Event]) -> type[_EventBase]:
    """A pydantic model of one event class as the engine emits it (envelope, type, payload)."""
    fields: dict[str, Any] = {
        "run_id": (str, ...),
        "seq": (int | None, None),
        "type": (Literal[cls.TYPE], ...),
        "at": (str | None, None),
    }
    for field in dataclasses.fields(cls):
        if field.name in ("run_id", "seq", "at"):
            continue
        annotation = Any if field.type in ("Any", Any) else field.type
        annotation = _TYPED_FIELDS.get((cls.TYPE, field.name), annotation)
        fields[field.name] = (annotation, None)
    name = "Event" + "".join(part.title() for part in cls.TYPE.split("_"))
    model = create_model(name, __base__=_EventBase, __doc__=cls.__doc__, **fields)
    model.OMIT_NONE = _EventBase.OMIT_NONE | ev.omitted_while_none(cls)
    return model


def _streamed_model(model: type[_EventBase]) -> type[BaseModel]:
    """``model`` as stored and streamed: with its ``position`` in the run's stream."""
    return create_model(
        "Run" + model.__name__,
        __base__=model,
        __doc__=model.__doc__,
        position=(int, Field(description="The event's id in the stream (SSE id)")),
    )


EVENT_MODELS = [_event_model(cls) for cls in ev.EVENT_TYPES.values()]
STREAMED_EVENT_MODELS = [_streamed_model(model) for model in EVENT_MODELS]

EngineEvent: Any = Annotated[Union[tuple(EVENT_MODELS)], Field(discriminator="type")]  # noqa: UP007
"""One event as the engine emits it (a dry run's events): one of its classes, by ``type``."""

RunEvent: Any = Annotated[Union[tuple(STREAMED_EVENT_MODELS)], Field(discriminator="type")]  # noqa: UP007
"""One run event as stored and streamed (with its ``position``), told apart by ``type``."""


def run_event_schema() -> dict[str, Any]:
    """The JSON Schema of one streamed event: one of the event classes, by ``type``."""
    schema: dict[str, Any] = TypeAdapter(RunEvent).json_schema(
        ref_template="#/components/schemas/{model}"
    )
    return schema
