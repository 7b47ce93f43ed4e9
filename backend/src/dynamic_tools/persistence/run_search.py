"""Finding runs: filters, keyset pages, counts by status over time (docs/run-search.md).

A search is a :class:`RunFilter` (every filter ANDed; several values of one filter ORed),
read from a query string (:func:`filter_from_query`, for ``GET /runs``) or from JSON arguments
(:func:`filter_from_arguments`, for MCP). The store turns it into one indexed query:

- the columns of ``runs`` (workflow, status, owner, trigger, created and ended times) have
  indexes of their own (migration 0011);
- a param or output value (``params.passenger=Ada``) is looked up in ``run_values``, which
  holds each run's top-level scalar params (written with the run) and outputs (written when
  it ends) as text: strings as they are, numbers as JSON writes them, booleans as
  ``true``/``false``. Only the first :data:`VALUE_MAX` characters are indexed, and a search
  compares only its value's first :data:`VALUE_MAX` characters: two values that agree that
  far are found by either;
- an error text is a case-insensitive substring of the error's message or the API's own
  words (``api_message``), its own or its cause's; only runs that failed or were cancelled
  have an error, so the search reads those runs only.

Pages are keyset pages: ``next_cursor`` holds the sort and the last run's sort key and id, so
a page never repeats or skips a run that was there when the first page was read, whatever
started since.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, Integer, Select, cast, func, literal, or_, select
from sqlalchemy.engine import Connection

from dynamic_tools.errors import InvalidInputError
from dynamic_tools.persistence.db import run_values, runs
from dynamic_tools.persistence.run_view import ACTIVE, TERMINAL

__all__ = [
    "MAX_BUCKETS",
    "MAX_COUNTED",
    "RUN_STATUSES",
    "SORTS",
    "TRIGGER_KINDS",
    "VALUE_MAX",
    "RunFilter",
    "RunPage",
    "RunStats",
    "decode_cursor",
    "filter_from_arguments",
    "filter_from_query",
    "page_query",
    "value_rows",
    "value_text",
]

VALUE_MAX = 256
"""Characters of a param or output value indexed (and compared by a search)."""
NAME_MAX = 128
"""A param or output name longer than this is not indexed."""
MAX_COUNTED = 10_000
"""``total`` counts up to this many runs; past it the count says ``total_exact: false``."""
COVERING_INDEX = "ix_runs_created_at_status_workflow_id_owner"
"""The index a count over a time range reads alone (migration 0012)."""
MAX_BUCKETS = 500
"""Time buckets one stats answer may hold."""
RUN_STATUSES = ("pending", "running", "waiting_input", "succeeded", "failed", "cancelled")
TRIGGER_KINDS = ("schedule", "webhook", "manual")
"""``manual``: a run someone started (no schedule or webhook)."""
SORTS = ("-created_at", "created_at", "-finished_at", "finished_at")
_NICE_BUCKETS = (60, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 604800)
_TARGET_BUCKETS = 48
_TEXT_MAX = 255
_QUERY_KEYS = {
    "workflow_id",
    "status",
    "owner",
    "trigger",
    "trigger_name",
    "since",
    "until",
    "ended_after",
    "ended_before",
    "error",
    "sort",
    "cursor",
    "limit",
    "offset",
    "bucket",
}
_FAILED_OR_CANCELLED = ("failed", "cancelled")
ACTIVE_STATUSES = tuple(s for s in RUN_STATUSES if s in ACTIVE)
"""Statuses a cancel acts on."""
REDRIVABLE_STATUSES = tuple(s for s in RUN_STATUSES if s in TERMINAL and s != "succeeded")
"""Statuses a redrive acts on."""


# --- what is indexed ----------------------------------------------------------------------
def value_text(value: Any) -> str | None:
    """A scalar as the index holds it (None for anything else: null, lists, objects)."""
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, int | float):
        text = json.dumps(value)
    elif isinstance(value, str):
        text = value
    else:
        return None
    text = text[:VALUE_MAX]
    if "\x00" in text:
        return None  # PostgreSQL text holds no NUL
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: not text a database stores
        return None
    return text


def value_rows(run_id: str, scope: str, values: Any) -> list[dict[str, str]]:
    """The ``run_values`` rows of a run's params (``scope="params"``) or outputs."""
    if not isinstance(values, Mapping):
        return []
    rows = []
    for name, value in values.items():
        if not isinstance(name, str) or not name or len(name) > NAME_MAX:
            continue
        text = value_text(value)
        if text is not None and value_text(name) == name:
            rows.append({"run_id": run_id, "scope": scope, "name": name, "value": text})
    return rows


# --- the filter -----------------------------------------------------------------------------
@dataclass(frozen=True)
class RunFilter:
    """Which runs: every field given must hold (several values of one field: any of them)."""

    workflow_ids: tuple[str, ...] = ()
    statuses: tuple[str, ...] = ()
    owner: str | None = None
    triggers: tuple[str, ...] = ()
    trigger_name: str | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None
    ended_after: datetime | None = None
    ended_before: datetime | None = None
    values: tuple[tuple[str, str, str], ...] = ()  # (scope, name, value)
    error: str | None = None
    run_ids: tuple[str, ...] = ()

    @property
    def narrowed(self) -> bool:
        """Whether anything beyond the owner narrows it (bulk actions need something)."""
        return any(
            (
                self.workflow_ids,
                self.statuses,
                self.triggers,
                self.trigger_name,
                self.created_after,
                self.created_before,
                self.ended_after,
                self.ended_before,
                self.values,
                self.error,
                self.run_ids,
            )
        )

    @property
    def covered(self) -> bool:
        """Whether every column it reads is in :data:`COVERING_INDEX` (counts read only it)."""
        return not any(
            (
                self.triggers,
                self.trigger_name,
                self.ended_after,
                self.ended_before,
                self.values,
                self.error,
                self.run_ids,
            )
        )

    def within(self, statuses: Iterable[str]) -> RunFilter:
        """This filter, its statuses narrowed to ``statuses`` (an empty set matches nothing)."""
        allowed = tuple(s for s in (self.statuses or RUN_STATUSES) if s in set(statuses))
        return replace(self, statuses=allowed or ("-",))

    def described(self) -> dict[str, Any]:
        """The filter as JSON (for a bulk action's report)."""
        out: dict[str, Any] = {}
        for key, value in (
            ("workflow_id", list(self.workflow_ids)),
            ("status", list(self.statuses)),
            ("owner", self.owner),
            ("trigger", list(self.triggers)),
            ("trigger_name", self.trigger_name),
            ("since", _iso(self.created_after)),
            ("until", _iso(self.created_before)),
            ("ended_after", _iso(self.ended_after)),
            ("ended_before", _iso(self.ended_before)),
            ("error", self.error),
            ("run_ids", list(self.run_ids)),
        ):
            if value:
                out[key] = value
        for scope, name, value in self.values:
            out[f"{scope}.{name}"] = value
        return out

    def conditions(self) -> list[ColumnElement[bool]]:
        """The WHERE clauses over ``runs``."""
        c = runs.c
        where: list[ColumnElement[bool]] = []
        if self.owner is not None:
            where.append(c.owner == self.owner)
        statuses = self.statuses
        if self.error is not None:  # only a failed or cancelled run has an error
            found = (s for s in (statuses or _FAILED_OR_CANCELLED) if s in _FAILED_OR_CANCELLED)
            statuses = tuple(found) or ("-",)
        if statuses:
            where.append(c.status.in_(sorted(set(statuses))))
        if self.workflow_ids:
            where.append(c.workflow_id.in_(sorted(set(self.workflow_ids))))
        if self.triggers:
            kinds = sorted({t for t in self.triggers if t != "manual"})
            either: list[ColumnElement[bool]] = [c.trigger_kind.in_(kinds)] if kinds else []
            if "manual" in self.triggers:
                either.append(c.trigger_kind.is_(None))
            where.append(or_(*either))
        if self.trigger_name is not None:
            where.append(c.trigger_name == self.trigger_name)
        if self.created_after is not None:
            where.append(c.created_at >= self.created_after)
        if self.created_before is not None:
            where.append(c.created_at < self.created_before)
        if self.ended_after is not None:
            where.append(c.finished_at >= self.ended_after)
        if self.ended_before is not None:
            where.append(c.finished_at < self.ended_before)
        for scope, name, value in self.values:
            where.append(
                c.run_id.in_(
                    select(run_values.c.run_id).where(
                        run_values.c.scope == scope,
                        run_values.c.name == name,
                        run_values.c.value == value[:VALUE_MAX],
                    )
                )
            )
        if self.error is not None:
            needle = "%" + _escape_like(self.error.lower()) + "%"
            error = c.error
            texts = [
                error["message"].as_string(),
                error["api_message"].as_string(),
                error[("cause", "message")].as_string(),
                error[("cause", "api_message")].as_string(),
            ]
            where.append(or_(*(func.lower(t).like(needle, escape="\\") for t in texts)))
        if self.run_ids:
            where.append(c.run_id.in_(sorted(set(self.run_ids))))
        return where


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


# --- reading a filter -----------------------------------------------------------------------
def _refuse(path: str, message: str) -> InvalidInputError:
    return InvalidInputError(f"{path}: {message}", violations=[{"path": path, "message": message}])


def _text(path: str, value: str, *, max_length: int = _TEXT_MAX) -> str:
    if "\x00" in value:
        raise _refuse(path, "must not contain a NUL character")
    if len(value) > max_length:
        raise _refuse(path, f"is longer than {max_length} characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise _refuse(path, "is not valid text") from None
    return value


def _split(values: Iterable[str]) -> list[str]:
    """Repeated and comma-separated values, in order, blanks dropped."""
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def _choices(path: str, values: Iterable[str], allowed: Sequence[str]) -> tuple[str, ...]:
    found = []
    for value in values:
        if value not in allowed:
            raise _refuse(path, f"'{value[:80]}' is not one of {', '.join(allowed)}")
        found.append(value)
    return tuple(dict.fromkeys(found))


def _time(path: str, value: str) -> datetime:
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        parsed = None
    if parsed is None or parsed.tzinfo is None:
        raise _refuse(
            path, "expected an ISO 8601 date-time with its offset, e.g. 2026-12-01T09:30:00Z"
        )
    try:
        return parsed.astimezone(UTC)
    except OverflowError:  # past the calendar's ends in UTC: its first or last instant
        edge = datetime.min if parsed.year == 1 else datetime.max
        return edge.replace(tzinfo=UTC)


def _value_key(path: str, key: str, value: str) -> tuple[str, str, str]:
    scope, _, name = key.partition(".")
    if not name:
        raise _refuse(path, "name a param or an output: params.<name>=<value>")
    _text(path, name, max_length=NAME_MAX)
    return scope, name, _text(path, value, max_length=4096)


@dataclass(frozen=True)
class Paging:
    """How a search is paged and sorted (the query string's other half)."""

    sort: str = "-created_at"
    cursor: str | None = None
    limit: int = 50
    offset: int = 0
    bucket: int | None = None


def filter_from_query(
    items: Iterable[tuple[str, str]],
    *,
    max_limit: int = 500,
    prefix: str = "query",
) -> tuple[RunFilter, Paging]:
    """A filter and its paging from a query string's ``(key, value)`` pairs.

    Raises:
        InvalidInputError: an unknown key, a bad status, time, sort, cursor or limit; the
            violation's path names the key (``query.status``, ``query.params.passenger``).
    """
    grouped: dict[str, list[str]] = {}
    for key, value in items:
        if key in _QUERY_KEYS or key.startswith(("params.", "output.")):
            grouped.setdefault(key, []).append(value)
        else:
            raise _refuse(
                f"{prefix}.{key[:80]}",
                "is not a filter of the run search (workflow_id, status, owner, trigger, "
                "trigger_name, since, until, ended_after, ended_before, params.<name>, "
                "output.<name>, error, sort, cursor, limit, offset)",
            )

    def one(key: str) -> str | None:
        values = grouped.get(key)
        if not values:
            return None
        if len(values) > 1:
            raise _refuse(f"{prefix}.{key}", "give it once")
        return values[0]

    def time(key: str) -> datetime | None:
        value = one(key)
        return None if value is None or not value.strip() else _time(f"{prefix}.{key}", value)

    def integer(key: str, low: int, high: int) -> int | None:
        value = one(key)
        if value is None:
            return None
        if not value.strip().isdigit() or not low <= int(value) <= high:
            raise _refuse(f"{prefix}.{key}", f"expected an integer from {low} to {high}")
        return int(value)

    workflow_ids = tuple(
        _text(f"{prefix}.workflow_id", w, max_length=128)
        for w in dict.fromkeys(_split(grouped.get("workflow_id", [])))
    )
    statuses = _choices(f"{prefix}.status", _split(grouped.get("status", [])), RUN_STATUSES)
    triggers = _choices(f"{prefix}.trigger", _split(grouped.get("trigger", [])), TRIGGER_KINDS)
    values = []
    for key, found in grouped.items():
        if key.startswith(("params.", "output.")):
            for value in found:
                values.append(_value_key(f"{prefix}.{key[:80]}", key, value))
    owner = one("owner")
    trigger_name = one("trigger_name")
    error = one("error")
    sort = one("sort") or "-created_at"
    if sort not in SORTS:
        raise _refuse(f"{prefix}.sort", f"'{sort[:80]}' is not one of {', '.join(SORTS)}")
    cursor = one("cursor") or None
    offset = integer("offset", 0, 2**53 - 1) or 0
    if cursor is not None:
        decode_cursor(cursor, sort)  # a value the schema cannot tell: named without a location
        if offset:
            raise _refuse(f"{prefix}.offset", "give a cursor or an offset, not both")
    run_filter = RunFilter(
        workflow_ids=workflow_ids,
        statuses=statuses,
        owner=_text(f"{prefix}.owner", owner) if owner else None,
        triggers=triggers,
        trigger_name=_text(f"{prefix}.trigger_name", trigger_name, max_length=128)
        if trigger_name
        else None,
        created_after=time("since"),
        created_before=time("until"),
        ended_after=time("ended_after"),
        ended_before=time("ended_before"),
        values=tuple(values),
        error=_text(f"{prefix}.error", error) if error and error.strip() else None,
    )
    paging = Paging(
        sort=sort,
        cursor=cursor,
        limit=integer("limit", 1, max_limit) or 50,
        offset=offset,
        bucket=integer("bucket", 60, 366 * 86400),
    )
    return run_filter, paging


def filter_from_arguments(args: Mapping[str, Any]) -> tuple[RunFilter, Paging]:
    """A filter and its paging from JSON arguments (an MCP tool's).

    ``status``, ``workflow_id`` and ``trigger`` take a string or a list of strings;
    ``params`` and ``output`` an object of name → value (a scalar); times ISO 8601.
    """
    pairs: list[tuple[str, str]] = []
    for key, value in args.items():
        if value is None or key in ("dry_run", "confirmation_token", "run_ids"):
            continue
        if key in ("params", "output"):
            if not isinstance(value, Mapping):
                raise _refuse(key, "expected an object of name → value")
            for name, item in value.items():
                text = value_text(item)
                if text is None:
                    raise _refuse(f"{key}.{name}", "expected a string, number or boolean")
                pairs.append((f"{key}.{name}", text))
        elif isinstance(value, list):
            pairs += [(key, str(item)) for item in value]
        elif isinstance(value, bool):
            pairs.append((key, "true" if value else "false"))
        else:
            pairs.append((key, str(value)))
    return filter_from_query(pairs, prefix="arguments")


# --- cursors ------------------------------------------------------------------------------
def encode_cursor(sort: str, at: datetime, run_id: str) -> str:
    """An opaque cursor: the sort, the last run's sort key and its id."""
    raw = json.dumps([sort, at.astimezone(UTC).isoformat(), run_id], separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_cursor(cursor: str, sort: str, *, path: str = "cursor") -> tuple[datetime, str]:
    """The sort key and run id a cursor holds.

    Raises:
        InvalidInputError: not a cursor this server gave, or one given for another sort.
    """
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        given, at, run_id = json.loads(raw)
        when = datetime.fromisoformat(at)
        if not isinstance(given, str) or not isinstance(run_id, str) or when.tzinfo is None:
            raise ValueError(cursor)
    except (ValueError, TypeError, binascii.Error, UnicodeDecodeError):
        raise _refuse(
            path, "is not a cursor this server gave (pass next_cursor as it is)"
        ) from None
    if given != sort:
        raise _refuse(path, f"was given for sort '{given}', not '{sort}'")
    return when, run_id


# --- pages --------------------------------------------------------------------------------
@dataclass(frozen=True)
class RunPage:
    """A page of runs (their rows), the cursor of the next page, and the count."""

    rows: list[dict[str, Any]]
    next_cursor: str | None
    total: int
    total_exact: bool


def _sort_column(sort: str) -> Any:
    return runs.c.finished_at if sort.endswith("finished_at") else runs.c.created_at


def page_query(
    run_filter: RunFilter, paging: Paging, *, count: bool = True
) -> Callable[[Connection], RunPage]:
    """The work of one page on a connection (a function of it)."""

    def work(conn: Connection) -> RunPage:
        column = _sort_column(paging.sort)
        descending = paging.sort.startswith("-")
        where = run_filter.conditions()
        if paging.sort.endswith("finished_at"):
            where.append(column.is_not(None))
        counted = list(where)
        if paging.cursor is not None:
            at, last = decode_cursor(paging.cursor, paging.sort)
            if descending:
                where += [column <= at, or_(column < at, runs.c.run_id > last)]
            else:
                where += [column >= at, or_(column > at, runs.c.run_id > last)]
        order = column.desc() if descending else column.asc()
        query: Select[Any] = (
            select(runs).where(*where).order_by(order, runs.c.run_id).limit(paging.limit + 1)
        )
        if paging.cursor is None and paging.offset:
            query = query.offset(paging.offset)
        rows = [dict(row) for row in conn.execute(query).mappings().all()]
        more = len(rows) > paging.limit
        rows = rows[: paging.limit]
        next_cursor = None
        if more and rows:
            last_row = rows[-1]
            next_cursor = encode_cursor(paging.sort, last_row[column.name], last_row["run_id"])
        total, exact = len(rows), True
        if count:
            total, exact = _count(conn, counted)
        return RunPage(rows, next_cursor, total, exact)

    return work


def _count(conn: Connection, where: list[ColumnElement[bool]]) -> tuple[int, bool]:
    bounded = select(literal(1)).select_from(runs).where(*where).limit(MAX_COUNTED + 1).subquery()
    found = int(conn.execute(select(func.count()).select_from(bounded)).scalar_one())
    return min(found, MAX_COUNTED), found <= MAX_COUNTED


def matching_ids(run_filter: RunFilter, limit: int) -> Callable[[Connection], list[str]]:
    """The ids of up to ``limit`` matching runs, newest first (a function of a connection)."""

    def work(conn: Connection) -> list[str]:
        query = (
            select(runs.c.run_id)
            .where(*run_filter.conditions())
            .order_by(runs.c.created_at.desc(), runs.c.run_id)
            .limit(limit)
        )
        return [str(r[0]) for r in conn.execute(query)]

    return work


# --- counts over time -----------------------------------------------------------------------
@dataclass(frozen=True)
class RunStats:
    """Counts of the runs created in ``[since, until)``: by status, by workflow, over time."""

    since: datetime
    until: datetime
    bucket_s: int
    total: int
    by_status: dict[str, int]
    by_workflow: list[dict[str, Any]]
    buckets: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """As JSON."""
        return {
            "since": self.since.isoformat(),
            "until": self.until.isoformat(),
            "bucket_s": self.bucket_s,
            "total": self.total,
            "by_status": self.by_status,
            "by_workflow": self.by_workflow,
            "buckets": self.buckets,
        }


def stats_range(run_filter: RunFilter, bucket: int | None, now: datetime) -> tuple[RunFilter, int]:
    """The filter with its created range filled in (last 24 hours), and the bucket size."""
    until = run_filter.created_before or now
    since = run_filter.created_after or until - timedelta(days=1)
    if since >= until:
        raise _refuse("since", "must be before until")  # cross-field: named without a location
    span = (until - since).total_seconds()
    if bucket is None:
        wanted = span / _TARGET_BUCKETS
        bucket = next((b for b in _NICE_BUCKETS if b >= wanted), 0) or 86400 * math.ceil(
            wanted / 86400
        )
    if span / bucket > MAX_BUCKETS:
        raise _refuse(
            "bucket",
            f"{bucket} s makes more than {MAX_BUCKETS} buckets over this range: give a larger one",
        )
    return replace(run_filter, created_after=since, created_before=until), bucket


def stats_query(run_filter: RunFilter, bucket: int) -> Callable[[Connection], RunStats]:
    """Counts by status and workflow, and per time bucket by status (a function of a conn)."""

    def work(conn: Connection) -> RunStats:
        assert run_filter.created_after is not None and run_filter.created_before is not None
        c = runs.c
        slot = _bucket_of(conn, bucket).label("slot")
        query = (
            select(slot, c.workflow_id, c.status, func.count())
            .where(*run_filter.conditions())
            .group_by(slot, c.workflow_id, c.status)
        )
        if run_filter.covered:  # SQLite's planner would pick a narrower index, not covering
            query = query.with_hint(runs, f"INDEXED BY {COVERING_INDEX}", "sqlite")
        by_status = dict.fromkeys(RUN_STATUSES, 0)
        workflows: dict[str, dict[str, int]] = {}
        per_bucket: dict[int, dict[str, int]] = {}
        for index, workflow_id, status, n in conn.execute(query):
            status, count = str(status), int(n)
            by_status[status] = by_status.get(status, 0) + count
            counts = workflows.setdefault(str(workflow_id), {})
            counts[status] = counts.get(status, 0) + count
            counts = per_bucket.setdefault(int(index), {})
            counts[status] = counts.get(status, 0) + count
        start = math.floor(run_filter.created_after.timestamp() / bucket)
        end = math.ceil(run_filter.created_before.timestamp() / bucket)
        slots: dict[int, dict[str, int]] = {i: {} for i in range(start, max(end, start + 1))}
        slots.update(per_bucket)
        buckets = [
            {
                "start": datetime.fromtimestamp(i * bucket, UTC).isoformat(),
                "counts": counts,
                "total": sum(counts.values()),
            }
            for i, counts in sorted(slots.items())
        ]
        by_workflow: list[dict[str, Any]] = [
            {"workflow_id": w, "total": sum(counts.values()), "by_status": counts}
            for w, counts in sorted(workflows.items(), key=lambda i: (-sum(i[1].values()), i[0]))
        ]
        return RunStats(
            since=run_filter.created_after,
            until=run_filter.created_before,
            bucket_s=bucket,
            total=sum(by_status.values()),
            by_status=by_status,
            by_workflow=by_workflow,
            buckets=buckets,
        )

    return work


def _bucket_of(conn: Connection, bucket: int) -> Any:
    """The index of a run's time bucket (seconds since the epoch // bucket), per dialect."""
    if conn.dialect.name == "postgresql":
        return func.floor(func.extract("epoch", runs.c.created_at) / bucket)
    # julianday is SQLite's quickest parse of the stored text; the half millisecond keeps a
    # run created on a bucket's first instant out of the bucket before (rounding)
    seconds = (func.julianday(runs.c.created_at) - 2440587.5) * 86400 + 0.0005
    return cast(seconds / bucket, Integer)
