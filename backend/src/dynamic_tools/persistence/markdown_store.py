"""MarkdownSessionStore: markdown workflow sessions in the database (table ``markdown_sessions``).

One row per session id: the whole session state as JSON (what
:class:`~dynamic_tools.markdown.state.SessionState` dumps), its workflow status and title for
listing, and ``revision``, which counts the changes. It implements the ``SessionStore`` port of
:mod:`dynamic_tools.markdown.service`.

Like :class:`~dynamic_tools.persistence.run_store.RunStore`: a sync SQLAlchemy engine behind
:func:`asyncio.to_thread`, one short transaction per call. :meth:`update` reads the row under
the write lock (``FOR UPDATE`` on PostgreSQL, ``BEGIN IMMEDIATE`` on SQLite) and applies the
caller's change in the same transaction, so two reports for one session, from two threads or
two replicas, never both apply to the same state; a change that raises writes nothing.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import Engine, delete, func, insert, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from dynamic_tools.persistence.db import markdown_sessions, utc_now, write_transaction

T = TypeVar("T")
Change = Callable[[dict[str, Any] | None], tuple[dict[str, Any] | None, T]]

_TITLE_MAX = 512


ADMIN = "admin"  # access/principals.ADMIN_ID: the owner of sessions from before ownership
MAX_KEY = 255


class MarkdownSessionStore:
    """Markdown workflow sessions by session id (see the module docstring)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    async def get(self, session_id: str) -> dict[str, Any] | None:
        """The state of ``session_id``, or None when it has none."""
        return await asyncio.to_thread(self._get_sync, session_id)

    def _get_sync(self, session_id: str) -> dict[str, Any] | None:
        query = select(markdown_sessions.c.state).where(
            markdown_sessions.c.session_id == session_id
        )
        with self.engine.connect() as conn:
            row = conn.execute(query).first()
        return dict(row[0]) if row is not None else None

    async def update(self, session_id: str, change: Change[T], *, owner: str = ADMIN) -> T:
        """Apply ``change`` to the session's state atomically; returns what ``change`` returns.

        ``change`` gets the current state (None when the session has none) and returns the new
        state (None: write nothing) and a result. It runs in a worker thread, inside the
        transaction: it must not block on anything but CPU. A new session is ``owner``'s.
        """
        return await asyncio.to_thread(self._update_sync, session_id, change, owner)

    def owned_by(self, owner: str) -> OwnedSessions:
        """This store as ``owner`` sees it (see :class:`OwnedSessions`)."""
        return OwnedSessions(self, owner)

    def _update_sync(self, session_id: str, change: Change[T], owner: str = ADMIN) -> T:
        for attempt in range(3):
            try:
                with write_transaction(self.engine) as conn:
                    return self._apply(conn, session_id, change, owner)
            except IntegrityError:  # another writer created the row first: read it and retry
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def _apply(self, conn: Connection, session_id: str, change: Change[T], owner: str = ADMIN) -> T:
        table = markdown_sessions
        query = select(table.c.state, table.c.revision).where(table.c.session_id == session_id)
        row = conn.execute(query.with_for_update()).first()
        current = dict(row[0]) if row is not None else None
        new_state, result = change(current)
        if new_state is None:
            return result
        now = utc_now()
        values = {
            "state": new_state,
            "status": str(new_state.get("status", ""))[:16],
            "title": _title(new_state),
            "updated_at": now,
        }
        if row is None:
            conn.execute(
                insert(table).values(
                    session_id=session_id, revision=1, created_at=now, owner=owner, **values
                )
            )
        else:
            conn.execute(
                update(table)
                .where(table.c.session_id == session_id)
                .values(revision=int(row[1]) + 1, **values)
            )
        return result

    async def delete(self, session_id: str) -> bool:
        """Forget a session; False when it had no state."""

        def work() -> bool:
            with write_transaction(self.engine) as conn:
                result = conn.execute(
                    delete(markdown_sessions).where(markdown_sessions.c.session_id == session_id)
                )
                return bool(result.rowcount)

        return await asyncio.to_thread(work)

    async def revision(self, session_id: str) -> int:
        """How many times the session's state was written (0 when it has none)."""

        def work() -> int:
            query = select(markdown_sessions.c.revision).where(
                markdown_sessions.c.session_id == session_id
            )
            with self.engine.connect() as conn:
                row = conn.execute(query).first()
            return int(row[0]) if row is not None else 0

        return await asyncio.to_thread(work)

    async def purge(self, *, idle_since: datetime) -> int:
        """Delete the sessions not changed since ``idle_since``; returns how many."""

        def work() -> int:
            with write_transaction(self.engine) as conn:
                result = conn.execute(
                    delete(markdown_sessions).where(markdown_sessions.c.updated_at < idle_since)
                )
                return int(result.rowcount)

        return await asyncio.to_thread(work)

    async def count(self) -> int:
        """How many sessions have state."""

        def work() -> int:
            with self.engine.connect() as conn:
                total = conn.execute(select(func.count()).select_from(markdown_sessions))
                return int(total.scalar_one())

        return await asyncio.to_thread(work)


def _title(state: dict[str, Any]) -> str | None:
    workflow = state.get("workflow")
    title = workflow.get("title") if isinstance(workflow, dict) else None
    return str(title)[:_TITLE_MAX] if title else None


class OwnedSessions:
    """The markdown sessions of one principal: the same session ids, kept apart from others'.

    A client names its workflow session (``session_id``, or its MCP session); two principals
    naming the same id get two sessions, and neither can tell the other's exists. The admin
    (and a one-person setup) keeps the ids as given, as before access control.
    """

    def __init__(self, store: MarkdownSessionStore, owner: str) -> None:
        self.store = store
        self.owner = owner

    def key(self, session_id: str) -> str:
        """The stored id of ``session_id`` for this owner (at most 255 characters)."""
        if self.owner == ADMIN:
            return session_id
        tag = hashlib.sha256(self.owner.encode()).hexdigest()[:16]
        key = f"p{tag}:{session_id}"
        if len(key) > MAX_KEY:
            key = f"p{tag}:{hashlib.sha256(session_id.encode()).hexdigest()}"
        return key

    async def get(self, session_id: str) -> dict[str, Any] | None:
        """The state of this owner's ``session_id``, or None."""
        return await self.store.get(self.key(session_id))

    async def update(self, session_id: str, change: Change[T]) -> T:
        """:meth:`MarkdownSessionStore.update` on this owner's ``session_id``."""
        return await self.store.update(self.key(session_id), change, owner=self.owner)
