"""The audit log: who did what to what, when, how it ended — in the database and in the log.

Every authoring and destructive action and every key or credential change is one entry
(``policy.AUDITED``): REST routes are recorded by the edge once their answer is known, MCP tools
by the MCP adapter. Each entry is also one structured log line (``audit`` with its fields), so
a log pipeline sees the same trail. Secrets never appear: the detail is scrubbed by the
redactor, and no request body is recorded — only the action, its target (the ids in the path
or the tool's arguments that name things) and the outcome.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import anyio
from loguru import logger
from sqlalchemy import Engine, func, select

from dynamic_tools.persistence.db import audit_log, utc_now, write_transaction
from dynamic_tools.redaction import redactor

__all__ = ["AuditEntry", "AuditLog", "AuditQuery"]

MAX_TARGET = 1024


@dataclass(frozen=True)
class AuditEntry:
    """One recorded action."""

    entry_id: int
    at: datetime
    principal: str
    action: str
    target: str
    outcome: str
    correlation_id: str | None
    detail: dict[str, Any] | None

    def to_dict(self) -> dict[str, Any]:
        """The entry as ``GET /audit`` shows it."""
        return {
            "entry_id": self.entry_id,
            "at": self.at.isoformat(),
            "principal": self.principal,
            "action": self.action,
            "target": self.target,
            "outcome": self.outcome,
            "correlation_id": self.correlation_id,
            "detail": self.detail,
        }


@dataclass(frozen=True)
class AuditQuery:
    """Filters and a page of ``GET /audit`` (every filter optional)."""

    principal: str | None = None
    action: str | None = None
    target: str | None = None
    outcome: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    limit: int = 50
    offset: int = 0


class AuditLog:
    """Audit entries in the run store's database."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def record_sync(
        self,
        *,
        principal: str,
        action: str,
        target: str,
        outcome: str,
        correlation_id: str | None = None,
        detail: dict[str, Any] | None = None,
    ) -> None:
        """Write one entry and its log line."""
        target = redactor.scrub(target)[:MAX_TARGET]
        detail = redactor.scrub_any(detail) if detail else None
        at = utc_now()
        with write_transaction(self.engine) as connection:
            connection.execute(
                audit_log.insert().values(
                    at=at,
                    principal=principal,
                    action=action,
                    target=target,
                    outcome=outcome,
                    correlation_id=correlation_id,
                    detail=detail,
                )
            )
        logger.bind(
            audit=True,
            principal=principal,
            action=action,
            target=target,
            outcome=outcome,
            correlation_id=correlation_id,
        ).info("audit: {} {} {} ({})", principal, action, target, outcome)

    async def record(self, **entry: Any) -> None:
        """:meth:`record_sync` (same keyword arguments) off the event loop."""
        await anyio.to_thread.run_sync(functools.partial(self.record_sync, **entry))

    def page_sync(self, query: AuditQuery) -> tuple[list[AuditEntry], int]:
        """The entries matching ``query``, newest first, and how many match in all."""
        conditions = []
        if query.principal:
            conditions.append(audit_log.c.principal == query.principal)
        if query.action:
            conditions.append(audit_log.c.action == query.action)
        if query.target:
            conditions.append(audit_log.c.target.contains(query.target, autoescape=True))
        if query.outcome:
            conditions.append(audit_log.c.outcome == query.outcome)
        if query.since:
            conditions.append(audit_log.c.at >= query.since)
        if query.until:
            conditions.append(audit_log.c.at < query.until)
        with self.engine.connect() as connection:
            total = connection.execute(
                select(func.count()).select_from(audit_log).where(*conditions)
            ).scalar_one()
            rows = connection.execute(
                select(audit_log)
                .where(*conditions)
                .order_by(audit_log.c.at.desc(), audit_log.c.entry_id.desc())
                .limit(query.limit)
                .offset(query.offset)
            ).all()
        entries = [
            AuditEntry(
                entry_id=row.entry_id,
                at=row.at,
                principal=row.principal,
                action=row.action,
                target=row.target,
                outcome=row.outcome,
                correlation_id=row.correlation_id,
                detail=row.detail,
            )
            for row in rows
        ]
        return entries, int(total)

    async def page(self, query: AuditQuery) -> tuple[list[AuditEntry], int]:
        """:meth:`page_sync` off the event loop."""
        return await anyio.to_thread.run_sync(self.page_sync, query)
