"""Waking a ``recv`` of this process as soon as its message is sent.

DBOS learns of a message by LISTEN/NOTIFY on PostgreSQL, but on SQLite only by polling; the
product's listener polls when another connection commits to the journal (within about 40 ms,
``execution/sqlite_listener.py``). When the answer is sent from the process where the yield
waits, the message is already committed: setting the waiter's signal lets it read the message
at once, without waiting for that check, exactly as the listener does when its poll finds it.

This reaches into DBOS's system database (its waiter map, keyed as DBOS keys it) through
:mod:`dynamic_tools.adapters.dbos_internals`; a DBOS version that changes those internals makes
:func:`wake_local_waiter` a no-op (the poll still delivers), never an error;
``test_an_answer_given_in_this_process_wakes_the_yield_at_once``
(``tests/integration/execution/test_durable_runs.py``) fails if that happens.
"""

from __future__ import annotations

from loguru import logger

from dynamic_tools.adapters import dbos_internals

__all__ = ["wake_local_waiter"]


def wake_local_waiter(workflow_id: str, topic: str) -> bool:
    """Signal a ``recv`` of ``workflow_id`` on ``topic`` waiting in this process, if any.

    Call it only after the message was sent (committed). Returns whether a waiter was told.
    """
    try:
        system_db = dbos_internals.system_database()
        signal = system_db.notifications_map.get(
            dbos_internals.waiter_key(system_db, workflow_id, topic)
        )
    except Exception as exc:  # DBOS changed its internals: the poll still delivers
        logger.debug("no in-process wake for {} ({})", workflow_id, type(exc).__name__)
        return False
    if signal is None:
        return False
    signal.set()
    return True
