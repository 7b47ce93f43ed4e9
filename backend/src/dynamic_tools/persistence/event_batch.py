"""Storing a batch of run events in one transaction, with a handful of statements per run.

For each run in the batch: its row is read once (``FOR UPDATE`` / under SQLite's write lock),
the events already stored among the batch's ``(seq, source)`` keys are read once, the states
of the nodes the batch touches are read once; then the new events, the new and changed node
rows and the run's row are written with one statement each (``executemany``). An event's cost
is its own JSON and rows, whatever the run's size and however many events came with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from loguru import logger
from sqlalchemy import bindparam, delete, insert, select, update
from sqlalchemy.engine import Connection

from dynamic_tools.engine import events as ev
from dynamic_tools.engine.state import NodeState
from dynamic_tools.persistence.db import run_events, run_nodes, run_values, runs, utc_now
from dynamic_tools.persistence.run_search import value_rows
from dynamic_tools.persistence.run_view import (
    TERMINAL,
    RunEvent,
    RunRecord,
    StoredEvent,
    apply_event,
    node_from_row,
    parse_time,
    stored_node,
    touched_node,
)

__all__ = ["LATER", "UPDATE_NODE", "append_events"]

LATER = 1_000_000
"""Ordinals of nodes first seen in an event (children, items) start here, after the graph's."""

_MUTABLE = ("status", "result", "error", "waiting", "event_count", "started_at", "finished_at")
"""The run's columns an event may change (``updated_at`` aside)."""

UPDATE_NODE = (  # executemany: b_run, b_node, b_state
    update(run_nodes)
    .where(run_nodes.c.run_id == bindparam("b_run"), run_nodes.c.node_id == bindparam("b_node"))
    .values(state=bindparam("b_state"))
)

# Built once: a statement built per batch costs more in SQLAlchemy than its round trip does.
_RUN_FOR_UPDATE = select(runs).where(runs.c.run_id == bindparam("b_run")).with_for_update()
_STORED_KEYS = select(run_events.c.seq, run_events.c.source).where(
    run_events.c.run_id == bindparam("b_run"),
    run_events.c.seq.in_(bindparam("b_seqs", expanding=True)),
)
_NODE_STATES = select(run_nodes.c.node_id, run_nodes.c.state).where(
    run_nodes.c.run_id == bindparam("b_run"),
    run_nodes.c.node_id.in_(bindparam("b_nodes", expanding=True)),
)
_INSERT_EVENTS = insert(run_events)
_INSERT_NODES = insert(run_nodes)
_UPDATE_RUN = (
    update(runs)
    .where(runs.c.run_id == bindparam("b_run"))
    .values({name: bindparam(f"b_{name}") for name in (*_MUTABLE, "updated_at")})
)


def append_events(
    conn: Connection, events: Sequence[ev.Event], stored_up_to: dict[str, int] | None = None
) -> list[StoredEvent | None]:
    """Store ``events`` (in order) and apply them to their runs; None for each one not stored.

    An event is not stored when its run is unknown (logged) or when it is a duplicate (the
    same run, seq and source already stored, or earlier in the batch).

    ``stored_up_to``: per run, the highest ``seq`` the caller knows to be the last stored
    (kept up to date here). A batch whose every ``seq`` is above it skips the read of the
    stored keys; a duplicate written meanwhile by another process then fails the insert on
    the table's unique key, which the caller handles (:meth:`RunStore._write_batch` stores
    the batch event by event). A mark that is wrong either way costs time, never an event.
    """
    by_run: dict[str, list[int]] = {}
    for index, event in enumerate(events):
        by_run.setdefault(event.run_id, []).append(index)
    stored: list[StoredEvent | None] = [None] * len(events)
    for run_id, indexes in by_run.items():
        batch = [events[i] for i in indexes]
        for index, item in zip(
            indexes, _append_run(conn, run_id, batch, stored_up_to), strict=True
        ):
            stored[index] = item
    return stored


def _append_run(
    conn: Connection, run_id: str, events: list[ev.Event], marks: dict[str, int] | None
) -> list[StoredEvent | None]:
    found = conn.execute(_RUN_FOR_UPDATE, {"b_run": run_id}).mappings().first()
    if found is None:
        for event in events:
            logger.warning("event {} for unknown run {} dropped", event.TYPE, run_id)
        return [None] * len(events)
    row: dict[str, Any] = dict(found)
    given = [e.seq for e in events if e.seq is not None]
    existing: set[tuple[int, str]] = set()
    mark = marks.get(run_id) if marks is not None else None
    if given and (mark is None or min(given) <= mark):
        keys = conn.execute(_STORED_KEYS, {"b_run": run_id, "b_seqs": sorted(set(given))})
        existing = {(int(seq), str(source)) for seq, source in keys}
    touched = {node_id for e in events if (node_id := touched_node(e)) is not None}
    nodes: dict[str, NodeState] = {}
    if touched:
        states = conn.execute(_NODE_STATES, {"b_run": run_id, "b_nodes": sorted(touched)})
        nodes = {str(n): node_from_row(state) for n, state in states}
    known = set(nodes)
    new_nodes: dict[str, int] = {}
    changed: set[str] = set()
    event_rows: list[dict[str, Any]] = []
    out: list[StoredEvent | None] = []
    position = int(row["event_count"])
    ended = False
    for event in events:
        seq = event.seq if event.seq is not None else -(position + 1)
        key = (seq, event.source)
        if key in existing:
            out.append(None)
            continue
        existing.add(key)
        position += 1
        at = parse_time(event.at or None)
        data = event.payload()
        event_rows.append(
            {
                "run_id": run_id,
                "position": position,
                "seq": seq,
                "source": event.source,
                "type": event.TYPE,
                "data": data,
                "at": at,
            }
        )
        previous_status = str(row["status"])
        node_id = touched_node(event)
        view, node = apply_event(row, event, at, nodes.get(node_id) if node_id else None)
        row.update(view, event_count=position)
        ended = ended or (previous_status not in TERMINAL and str(row["status"]) in TERMINAL)
        after_nodes: dict[str, NodeState] = {}
        if node_id is not None and node is not None:
            nodes[node_id] = node
            after_nodes[node_id] = node
            if node_id in known:
                changed.add(node_id)
            else:
                new_nodes.setdefault(node_id, LATER + position)
        stored = RunEvent(run_id, position, seq, event.TYPE, at, data)
        out.append(StoredEvent(stored, RunRecord.from_row(row, after_nodes), previous_status))
    if not event_rows:
        return out
    conn.execute(_INSERT_EVENTS, event_rows)
    if new_nodes:
        conn.execute(
            _INSERT_NODES,
            [
                {"run_id": run_id, "node_id": n, "ordinal": ordinal, "state": stored_node(nodes[n])}
                for n, ordinal in new_nodes.items()
            ],
        )
    if changed:
        conn.execute(
            UPDATE_NODE,
            [
                {"b_run": run_id, "b_node": n, "b_state": stored_node(nodes[n])}
                for n in sorted(changed)
            ],
        )
    if marks is not None:
        if ended:
            marks.pop(run_id, None)
        elif given:
            marks[run_id] = max(mark or 0, *given)
    if ended:  # the run's outputs, for the run search (docs/run-search.md)
        _index_outputs(conn, run_id, row.get("result"))
    columns = {f"b_{name}": row[name] for name in _MUTABLE}
    conn.execute(_UPDATE_RUN, {**columns, "b_run": run_id, "b_updated_at": utc_now()})
    return out


def _index_outputs(conn: Connection, run_id: str, result: Any) -> None:
    """Index the top-level scalar outputs of a run that ended (replacing any already there)."""
    conn.execute(
        delete(run_values).where(run_values.c.run_id == run_id, run_values.c.scope == "output")
    )
    rows = value_rows(run_id, "output", result)
    if rows:
        conn.execute(insert(run_values), rows)
