"""The REST shapes of schedules and webhooks (docs/triggers.md)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from dynamic_tools.lazy_model import LazyModel


class TickView(LazyModel):
    """One tick of a schedule and what became of it."""

    time: str = Field(description="The tick (ISO 8601, UTC)")
    outcome: Literal["claimed", "started", "skipped", "buffered", "failed"] = Field(
        description="claimed: its run is being started (a moment, or until a replica repairs "
        "a claim whose process died)"
    )
    reason: str | None = Field(description="Why it was skipped, buffered or failed")
    run_id: str | None = Field(description="The run it started (or will start, when buffered)")


class ScheduleView(LazyModel):
    """A schedule as its document declares it, with its state and next fire times."""

    name: str
    cron: str | None
    every: str | None
    timezone: str
    overlap: Literal["skip", "buffer_one", "allow"]
    catch_up: str
    enabled: bool = Field(description="As the document says (enabled: false never fires)")
    paused: bool = Field(description="Paused by someone (POST …/pause); resume to fire again")
    paused_by: str | None
    params: dict[str, Any]
    next_fire_times: list[str] = Field(description="The next five ticks (none when not firing)")
    last_ticks: list[TickView] = Field(description="The latest ticks, newest first")


class ScheduleList(LazyModel):
    """The schedules of one workflow."""

    workflow_id: str
    schedules: list[ScheduleView]


class DeliveryView(LazyModel):
    """A delivery received."""

    delivery_id: str
    received_at: str
    run_id: str | None = Field(description="The run it started (none: the filter said no)")
    outcome: Literal["claimed", "started", "filtered"] = Field(
        description="started: its run exists; filtered: the filter said no; claimed: its run "
        "is being started"
    )


class WebhookView(LazyModel):
    """A webhook as its document declares it: where to POST, what it maps, its last deliveries."""

    name: str
    path: str = Field(description="Where senders POST deliveries, e.g. /hooks/book/partner")
    url: str = Field(description="The path on this server's base URL")
    enabled: bool
    secret: str = Field(description="The secret's reference (secret:NAME), never its value")
    secret_set: bool = Field(description="Whether the server has a value for the secret")
    params: dict[str, Any]
    filter: str | None
    last_deliveries: list[DeliveryView]


class WebhookList(LazyModel):
    """The webhooks of one workflow."""

    workflow_id: str
    webhooks: list[WebhookView]


class WebhookExample(LazyModel):
    """A signed example delivery: copy the curl to try the webhook (valid for five minutes)."""

    body: str
    headers: dict[str, str]
    curl: str


class ExampleBody(LazyModel):
    """The body to sign (default: an empty JSON object)."""

    body: Any = Field(default_factory=dict, description="Any JSON value")


class DeliveryAccepted(LazyModel):
    """A delivery taken: the run it started, or why none started."""

    run_id: str | None = Field(description="The run the delivery started (or started before)")
    duplicate: bool = Field(description="A redelivery: the run is the first delivery's")
    filtered: bool = Field(description="The webhook's filter said no: no run")
    status_url: str | None = Field(description="Where to read the run (needs a credential)")
