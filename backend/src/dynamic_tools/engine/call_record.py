"""What one attempt of a call node records: its journaled step result, typed.

Each attempt is a durable step (``call:<node>:<attempt>``) whose result is a
:class:`CallRecord` in the JSON form :func:`~dynamic_tools.engine.journal.to_json` gives; a
replay decodes it with :func:`~dynamic_tools.engine.journal.from_json`. The form is that of the
dicts the engine journaled before the record was typed, so runs journaled then replay now:

- an answer: ``{"ok": true, "status_code": 200, "body": …}``, plus ``headers`` (the answer
  headers a node reads, when there are any) and ``too_deep`` (when the answer nests past the
  limit);
- a refused status: the same keys, ``"ok": false`` and a ``failure``;
- no answer (transport, timeout, refused, error): ``{"ok": false, "failure": {…}}``, without
  ``status_code`` and ``body``;
- ``sql_query``: ``{"ok": true, "status_code": null, "body": [rows]}``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dynamic_tools.engine.journal import OMIT_EMPTY, OMIT_NONE, omit_together

__all__ = ["CallFailure", "CallRecord"]


@dataclass(frozen=True)
class CallFailure:
    """Why one attempt failed.

    ``kind``: ``transport``, ``timeout`` (retried when ``retry_on`` says so), ``status`` (by its
    code), ``criteria`` (an answer the node's criteria refused: retried when ``retry_on`` has
    ``criteria``), ``success_check``, ``refused`` (the request could not be made as asked) and
    ``error`` (an unexpected exception) — the last three are never retried.
    """

    kind: str
    message: str
    status_code: int | None = None
    retry_after_s: float | None = None


@dataclass(frozen=True)
class CallRecord:
    """One attempt's outcome: the answer (if any), and why it failed (if it did).

    ``status_code`` and ``body`` are left out of the JSON together when there was no answer
    (both None); ``sql_query`` answers rows with no status.
    """

    ok: bool
    status_code: int | None = field(default=None, metadata=omit_together("answer"))
    body: Any = field(default=None, metadata=omit_together("answer"))
    headers: dict[str, str] = field(default_factory=dict, metadata=OMIT_EMPTY)
    too_deep: int | None = field(default=None, metadata=OMIT_NONE)
    failure: CallFailure | None = field(default=None, metadata=OMIT_NONE)
