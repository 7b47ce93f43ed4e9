"""RunScopeStore: the tool scope of each run an MCP session started (``tools/scope.py``).

The scope is written before the run is launched and never changes; any process that executes
the run (after a restart, another replica) reads it once. The session's outbound headers are
sealed with Fernet (AES-128-CBC + HMAC-SHA256) under the server's session key: the database
alone does not reveal them. A process holding another key cannot unseal them and says so
(:class:`~dynamic_tools.errors.ConfigurationError`), rather than calling without them.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import os
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Engine, insert, select

from dynamic_tools.errors import ConfigurationError
from dynamic_tools.persistence.db import run_scopes, write_transaction
from dynamic_tools.tools.scope import ToolScope

if TYPE_CHECKING:
    from cryptography.fernet import Fernet

__all__ = ["RunScopeStore", "session_key"]

MAX_CACHED = 1024
KEY_FILE = "session.key"


def session_key(configured: str | None, data_dir: Path) -> bytes:
    """The Fernet key: derived from the configured secret, else read from (or made in) a file.

    The file is created once with mode 0600 in ``data_dir``.
    """
    if configured:
        return base64.urlsafe_b64encode(hashlib.sha256(configured.encode()).digest())
    path = data_dir / KEY_FILE
    try:
        return path.read_bytes().strip()
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    from cryptography.fernet import Fernet  # loaded when a key is first made or used

    key = Fernet.generate_key()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it first
        return path.read_bytes().strip()
    with os.fdopen(fd, "wb") as file:
        file.write(key)
    return key


class RunScopeStore:
    """Scopes by run id; one short transaction per call, off the event loop; read once."""

    def __init__(self, engine: Engine, key: Callable[[], bytes]) -> None:
        self.engine = engine
        self._key = key  # read (or made) when headers are first sealed or unsealed
        self._fernet_made: Fernet | None = None
        self._cache: OrderedDict[str, ToolScope | None] = OrderedDict()

    @property
    def _fernet(self) -> Fernet:
        if self._fernet_made is None:
            from cryptography.fernet import Fernet  # loaded with the first sealed headers

            self._fernet_made = Fernet(self._key())
        return self._fernet_made

    async def save(self, run_id: str, scope: ToolScope) -> None:
        """Record the scope of a run about to start."""
        sealed = (
            self._fernet.encrypt(json.dumps(scope.headers).encode()).decode()
            if scope.headers
            else None
        )

        def work() -> None:
            with write_transaction(self.engine) as conn:
                conn.execute(
                    insert(run_scopes).values(
                        run_id=run_id, scope=scope.to_record(), sealed_headers=sealed
                    )
                )

        await asyncio.to_thread(work)
        self._remember(run_id, scope)

    async def get(self, run_id: str) -> ToolScope | None:
        """The run's scope, or None for a run of the server's own workflows.

        Raises:
            ConfigurationError: the headers were sealed under another session key.
        """
        if run_id in self._cache:
            self._cache.move_to_end(run_id)
            return self._cache[run_id]

        def work() -> tuple[dict[str, object], str | None] | None:
            query = select(run_scopes.c.scope, run_scopes.c.sealed_headers).where(
                run_scopes.c.run_id == run_id
            )
            with self.engine.connect() as conn:
                row = conn.execute(query).first()
            return None if row is None else (dict(row[0]), row[1])

        found = await asyncio.to_thread(work)
        if found is None:
            return self._remember(run_id, None)
        record, sealed = found
        headers: dict[str, str] = {}
        if sealed:
            from cryptography.fernet import InvalidToken

            try:
                headers = json.loads(self._fernet.decrypt(sealed.encode()))
            except InvalidToken:
                raise ConfigurationError(
                    f"the session headers of run '{run_id}' were sealed under another session "
                    "key; give every replica the same SESSION_KEY",
                    context={"run_id": run_id},
                ) from None
        return self._remember(run_id, ToolScope.from_record(record, headers))

    def _remember(self, run_id: str, scope: ToolScope | None) -> ToolScope | None:
        self._cache[run_id] = scope
        self._cache.move_to_end(run_id)
        while len(self._cache) > MAX_CACHED:
            self._cache.popitem(last=False)
        return scope
