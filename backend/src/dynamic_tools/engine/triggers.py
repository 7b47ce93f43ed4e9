"""Triggers: the schedules and webhooks a workflow document declares (docs/triggers.md).

A workflow's ``triggers`` list holds entries written with their kind as the key of their name::

    triggers:
      - schedule: morning_check          # a cron expression or an interval
        cron: "0 7 * * 1-5"
        timezone: Europe/Paris
        params: {sku: ABC-1, checked_at: $trigger.time}
        overlap: skip                    # skip | buffer_one | allow
        catch_up: 10m                    # a tick missed while down starts if this recent
      - webhook: partner_order           # POST /hooks/{workflow_id}/partner_order
        secret: secret:PARTNER_HOOK_SECRET
        params: {order_id: $body.order.id, partner: $headers.x_partner}
        filter: "$body.type == 'order.created'"

This module is pure: the models, what each tick's and delivery's params are, when a schedule
fires next. Claiming ticks, starting runs and checking signatures are the adapters'
(``execution/scheduler.py``, ``api/routes/hooks.py``). Cron expressions are read by croniter.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection, Iterator, Mapping
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field

from dynamic_tools.engine.errors import ExpressionError, UnresolvedReferenceError
from dynamic_tools.engine.expressions import evaluate, parse_expression
from dynamic_tools.engine.node_parts import IDENTIFIER, FrozenModel, parse_duration
from dynamic_tools.engine.references import render, resolve_reference

Overlap = Literal["skip", "buffer_one", "allow"]
TRIGGER_ROOTS = {
    "schedule": frozenset({"trigger"}),
    "webhook": frozenset({"trigger", "body", "headers"}),
}
"""The names a trigger's params (and a webhook's filter) may refer to, by kind."""
TRIGGER_FIELDS = {
    "schedule": frozenset({"time", "name", "kind"}),
    "webhook": frozenset({"time", "name", "kind", "id"}),
}
"""What ``$trigger`` holds, by kind (``id``: a delivery's ``webhook-id``)."""
MIN_INTERVAL_S = 1.0
MAX_INTERVAL_S = 366 * 86400.0
"""The longest interval (a year): a longer one is a cron expression's job."""
DEFAULT_CATCH_UP = "1m"
SECRET_PREFIX = "secret:"


class _Trigger(FrozenModel):
    name: str = Field(pattern=IDENTIFIER, description="Unique among the workflow's triggers")
    params: dict[str, Any] = Field(
        default_factory=dict,
        description="The params each run starts with: literals or $trigger / $body / $headers "
        "references",
    )
    enabled: bool = True


class ScheduleTrigger(_Trigger):
    """A run at each tick of a cron expression or an interval."""

    kind: Literal["schedule"] = "schedule"
    cron: str | None = Field(default=None, description="Five fields, or six with seconds first")
    every: str | float | None = Field(default=None, description="An interval: 30s, 5m, 1h, 1d")
    timezone: str = Field(default="UTC", description="The IANA zone the cron is read in")
    overlap: Overlap = Field(
        default="skip",
        description="A tick while the previous run is active: skip it, keep one to start when "
        "it ends (buffer_one), or start it anyway (allow)",
    )
    catch_up: str | float = Field(
        default=DEFAULT_CATCH_UP,
        description="A tick missed while the server was down starts if it is at most this old; "
        "an older one is recorded as skipped",
    )

    @property
    def catch_up_s(self) -> float:
        """The catch-up window in seconds (0 on a value validation refuses; a year at most)."""
        try:
            return min(parse_duration(self.catch_up) or 0.0, MAX_INTERVAL_S)
        except ValueError:
            return 0.0

    @property
    def interval_s(self) -> float | None:
        """The interval in seconds, for an ``every`` schedule (None otherwise, or invalid)."""
        if self.every is None:
            return None
        try:
            return parse_duration(self.every)
        except ValueError:
            return None

    def zone(self) -> ZoneInfo:
        """The schedule's time zone (UTC when the name is unknown: validation reports it)."""
        try:
            return ZoneInfo(self.timezone)
        except (ZoneInfoNotFoundError, ValueError):
            return ZoneInfo("UTC")

    def ticks_after(self, after: datetime) -> Iterator[datetime]:
        """The ticks strictly after ``after`` (aware, UTC), in order; none when not valid.

        An interval counts from the Unix epoch, so every replica and restart agrees on its
        ticks; a cron expression is read in the schedule's zone.
        """
        after = after.astimezone(UTC)
        interval = self.interval_s
        if interval is not None:
            if not MIN_INTERVAL_S <= interval <= MAX_INTERVAL_S:
                return
            epoch = datetime(1970, 1, 1, tzinfo=UTC)
            count = int((after - epoch).total_seconds() // interval) + 1
            while True:
                try:
                    yield epoch + timedelta(seconds=count * interval)
                except OverflowError:  # past the year 9999
                    return
                count += 1
        if self.cron is None or not cron_is_valid(self.cron):
            return
        from croniter import CroniterError, croniter

        schedule = croniter(
            self.cron, after.astimezone(self.zone()), second_at_beginning=_has_seconds(self.cron)
        )
        while True:
            try:
                found = schedule.get_next(datetime)
            except CroniterError:  # no date matches from here (Feb 30): it never fires
                return
            yield found.astimezone(UTC)

    def next_ticks(self, after: datetime, count: int) -> list[datetime]:
        """The next ``count`` ticks after ``after``."""
        out: list[datetime] = []
        for tick in self.ticks_after(after):
            if len(out) >= count:
                break
            out.append(tick)
        return out


class WebhookTrigger(_Trigger):
    """A run for each signed delivery POSTed to ``/hooks/{workflow_id}/{name}``."""

    kind: Literal["webhook"] = "webhook"
    secret: str = Field(
        description="The secret that signs deliveries (Standard Webhooks), as secret:NAME"
    )
    filter: str | None = Field(
        default=None,
        description="An expression over $body and $headers: a delivery for which it is false "
        "is accepted and starts no run",
    )

    @property
    def secret_name(self) -> str:
        """The secret's name (what follows ``secret:``)."""
        return self.secret.removeprefix(SECRET_PREFIX).strip()


Trigger = Annotated[ScheduleTrigger | WebhookTrigger, Field(discriminator="kind")]


def normalize_trigger(entry: Any) -> Any:
    """``{schedule: name, ...}`` / ``{webhook: name, ...}`` → ``{kind, name, ...}``.

    Anything else is left for the model to refuse with its own message.
    """
    if not isinstance(entry, Mapping) or "kind" in entry:
        return entry
    kinds = [k for k in ("schedule", "webhook") if k in entry]
    if len(kinds) != 1:
        return entry
    kind = kinds[0]
    rest = {k: v for k, v in entry.items() if k != kind}
    return {"kind": kind, "name": entry[kind], **rest}


def cron_is_valid(text: str) -> bool:
    """Whether croniter reads ``text`` (five fields, or six with seconds first)."""
    from croniter import croniter  # loaded with the first cron expression

    try:
        return bool(croniter.is_valid(text, second_at_beginning=_has_seconds(text)))
    except (ValueError, TypeError):
        return False


def cron_fires(text: str, after: datetime) -> bool:
    """Whether a valid cron expression matches any date after ``after`` (Feb 30 does not)."""
    from croniter import CroniterError, croniter

    try:
        croniter(text, after, second_at_beginning=_has_seconds(text)).get_next(datetime)
    except CroniterError:
        return False
    return True


def _has_seconds(text: str) -> bool:
    return len(text.split()) == 6


def zone_is_known(name: str) -> bool:
    """Whether ``name`` is an IANA time zone this machine knows."""
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return False
    return True


def header_name(name: str) -> str:
    """How a delivery's header is referred to: lower case, ``-`` as ``_`` (``$headers.x_id``)."""
    return re.sub(r"[^a-z0-9_]", "_", name.lower())


def trigger_lookup(
    trigger: Mapping[str, Any],
    *,
    body: Any = None,
    headers: Mapping[str, str] | None = None,
) -> Any:
    """The names a trigger's params and filter see: ``trigger``, ``body``, ``headers``."""
    names: dict[str, Any] = {"trigger": dict(trigger)}
    if headers is not None:
        names["body"] = body
        names["headers"] = {header_name(k): v for k, v in headers.items()}

    def lookup(name: str) -> Any:
        if name not in names:
            raise KeyError(name)
        return names[name]

    return lookup


def trigger_params(
    entry: ScheduleTrigger | WebhookTrigger,
    trigger: Mapping[str, Any],
    *,
    body: Any = None,
    headers: Mapping[str, str] | None = None,
    optional: Collection[str] = (),
) -> dict[str, Any]:
    """The params a run of ``entry`` starts with, references resolved.

    A param in ``optional`` (the workflow does not require it) whose reference finds nothing
    in the delivery is left out, so its default applies. Any other reference that does not
    resolve raises the engine's reference error, naming the param.
    """
    lookup = trigger_lookup(trigger, body=body, headers=headers)
    params: dict[str, Any] = {}
    for name, value in entry.params.items():
        try:
            params[name] = render(value, lookup, node_id=f"triggers.{entry.name}.params.{name}")
        except UnresolvedReferenceError:
            if name not in optional:
                raise
    return params


def filter_passes(entry: WebhookTrigger, *, body: Any, headers: Mapping[str, str]) -> bool:
    """Whether a delivery passes the webhook's filter (no filter: every delivery)."""
    if entry.filter is None:
        return True
    lookup = trigger_lookup({"kind": "webhook", "name": entry.name}, body=body, headers=headers)
    where = f"triggers.{entry.name}.filter"
    resolve = functools.partial(resolve_reference, lookup=lookup, node_id=where)
    return bool(evaluate(parse_expression(entry.filter), resolve, node_id=where))


def unique_names(entries: list[Any]) -> list[Any]:
    """``entries`` when no two triggers share a name (else a ValueError naming it)."""
    seen: set[str] = set()
    for entry in entries:
        if entry.name in seen:
            raise ValueError(f"two triggers are named '{entry.name}'")
        seen.add(entry.name)
    return entries


__all__ = [
    "DEFAULT_CATCH_UP",
    "MAX_INTERVAL_S",
    "MIN_INTERVAL_S",
    "SECRET_PREFIX",
    "TRIGGER_FIELDS",
    "TRIGGER_ROOTS",
    "ExpressionError",
    "Overlap",
    "ScheduleTrigger",
    "Trigger",
    "WebhookTrigger",
    "cron_fires",
    "cron_is_valid",
    "filter_passes",
    "header_name",
    "normalize_trigger",
    "trigger_lookup",
    "trigger_params",
    "unique_names",
    "zone_is_known",
]
