"""API keys: credentials for people and machines, shown once, stored only as a salted digest.

A key reads ``dtk_<key id>_<secret>``: the id finds the row, the secret (32 random bytes,
URL-safe base64) is checked against ``sha256(salt + secret)`` in constant time. A key's secret
is random and long, so a fast digest is as safe as a slow one (nothing to guess), and checking
one costs microseconds on every request. Revocation and expiry are read from the database at
each use: a revoked key is refused at once by every replica sharing it.

The store runs its short transactions off the event loop (``anyio.to_thread``), as the other
stores do.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import anyio
from sqlalchemy import Engine, or_, select, update

from dynamic_tools.access.principals import Principal, Scope
from dynamic_tools.errors import InvalidInputError, NotFoundError
from dynamic_tools.persistence.db import api_keys, utc_now, write_transaction

__all__ = ["KEY_PREFIX", "ApiKey", "ApiKeyStore", "parse_expiry"]

KEY_PREFIX = "dtk_"
_KEY = re.compile(r"^dtk_([A-Za-z0-9]{16})_([A-Za-z0-9_-]{43})$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,127}$")
_DURATION = re.compile(r"^\s*(\d{1,6})\s*(m|h|d|w)\s*$")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
#: last_used_at is written at most this often per key (a busy key costs no write per request)
_LAST_USED_EVERY = timedelta(seconds=60)


@dataclass(frozen=True)
class ApiKey:
    """A key as listed: never its secret."""

    key_id: str
    name: str
    scopes: frozenset[Scope]
    created_by: str
    created_at: datetime
    expires_at: datetime | None
    revoked_at: datetime | None
    last_used_at: datetime | None

    @property
    def principal_id(self) -> str:
        """The id of the principal the key speaks for (runs it starts are owned by it)."""
        return f"key:{self.key_id}"

    def state(self, now: datetime) -> str:
        """``active``, ``revoked`` or ``expired``."""
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at is not None and self.expires_at <= now:
            return "expired"
        return "active"

    def to_dict(self, now: datetime | None = None) -> dict[str, Any]:
        """The key as ``keys list`` and ``GET /keys`` show it."""
        return {
            "key_id": self.key_id,
            "name": self.name,
            "principal": self.principal_id,
            "scopes": sorted(s.value for s in self.scopes),
            "created_by": self.created_by,
            "created_at": self.created_at.isoformat(),
            "expires_at": self.expires_at.isoformat() if self.expires_at else None,
            "revoked_at": self.revoked_at.isoformat() if self.revoked_at else None,
            "last_used_at": self.last_used_at.isoformat() if self.last_used_at else None,
            "state": self.state(now or utc_now()),
        }


def parse_expiry(text: str | None, now: datetime | None = None) -> datetime | None:
    """``30d``, ``12h``, ``90m``, ``2w`` from now; None for no expiry.

    Raises:
        InvalidInputError: not a duration (names the field ``expires``).
    """
    if text is None or not text.strip():
        return None
    match = _DURATION.match(text)
    if match is None or int(match.group(1)) == 0:
        raise InvalidInputError(
            f"'{text}' is not a duration; write it as 30d, 12h, 90m or 2w",
            violations=[{"path": "expires", "rule": "duration", "message": "e.g. 30d"}],
        )
    amount, unit = int(match.group(1)), _UNITS[match.group(2)]
    return (now or utc_now()) + timedelta(**{unit: amount})


def _digest(salt: str, secret: str) -> str:
    return hashlib.sha256(f"{salt}:{secret}".encode()).hexdigest()


def _row_to_key(row: Any) -> ApiKey:
    return ApiKey(
        key_id=row.key_id,
        name=row.name,
        scopes=frozenset(Scope(s) for s in row.scopes),
        created_by=row.created_by,
        created_at=row.created_at,
        expires_at=row.expires_at,
        revoked_at=row.revoked_at,
        last_used_at=row.last_used_at,
    )


class ApiKeyStore:
    """API keys in the run store's database."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    # --- synchronous: the CLI uses these directly ------------------------------------------
    def create_sync(
        self,
        *,
        name: str,
        scopes: frozenset[Scope],
        created_by: str,
        expires_at: datetime | None = None,
    ) -> tuple[ApiKey, str]:
        """A new key and its full text (shown once, never stored).

        Raises:
            InvalidInputError: a bad name, no scopes, or an expiry in the past.
        """
        now = utc_now()
        violations = []
        if not _NAME.match(name):
            violations.append(
                {
                    "path": "name",
                    "rule": "pattern",
                    "message": "1 to 128 letters, digits, '_', '.', '@' or '-', starting with a "
                    "letter or digit",
                }
            )
        if not scopes:
            violations.append(
                {"path": "scopes", "rule": "min_items", "message": "give at least one scope"}
            )
        if expires_at is not None and expires_at <= now:
            violations.append({"path": "expires", "rule": "future", "message": "in the past"})
        if violations:
            raise InvalidInputError(
                "the key cannot be created: " + "; ".join(v["message"] for v in violations),
                violations=violations,
            )
        key_id = secrets.token_hex(8)
        secret = secrets.token_urlsafe(32)
        salt = secrets.token_hex(16)
        with write_transaction(self.engine) as connection:
            connection.execute(
                api_keys.insert().values(
                    key_id=key_id,
                    name=name,
                    scopes=sorted(s.value for s in scopes),
                    salt=salt,
                    digest=_digest(salt, secret),
                    created_by=created_by,
                    created_at=now,
                    expires_at=expires_at,
                )
            )
        key = ApiKey(key_id, name, scopes, created_by, now, expires_at, None, None)
        return key, f"{KEY_PREFIX}{key_id}_{secret}"

    def list_sync(self) -> list[ApiKey]:
        """Every key, newest first."""
        with self.engine.connect() as connection:
            rows = connection.execute(select(api_keys).order_by(api_keys.c.created_at.desc()))
            return [_row_to_key(row) for row in rows]

    def revoke_sync(self, key: str) -> ApiKey:
        """Revoke a key by id or name (the newest active one of that name).

        Raises:
            NotFoundError: no such key.
        """
        now = utc_now()
        with write_transaction(self.engine) as connection:
            row = connection.execute(select(api_keys).where(api_keys.c.key_id == key)).first()
            if row is None:
                row = connection.execute(
                    select(api_keys)
                    .where(api_keys.c.name == key, api_keys.c.revoked_at.is_(None))
                    .order_by(api_keys.c.created_at.desc())
                ).first()
            if row is None:
                raise NotFoundError(f"no API key '{key}'", context={"key": key})
            if row.revoked_at is None:
                connection.execute(
                    update(api_keys).where(api_keys.c.key_id == row.key_id).values(revoked_at=now)
                )
        revoked = _row_to_key(row)
        return revoked if revoked.revoked_at else _with_revoked(revoked, now)

    def any_active_sync(self) -> bool:
        """Whether some key is neither revoked nor expired (access control is then on)."""
        now = utc_now()
        usable = select(api_keys.c.key_id).where(
            api_keys.c.revoked_at.is_(None),
            or_(api_keys.c.expires_at.is_(None), api_keys.c.expires_at > now),
        )
        with self.engine.connect() as connection:
            return connection.execute(usable.limit(1)).first() is not None

    def verify_sync(self, text: str) -> Principal | None:
        """The principal of an active key whose secret matches, else None."""
        match = _KEY.match(text)
        if match is None:
            return None
        key_id, secret = match.groups()
        with self.engine.connect() as connection:
            row = connection.execute(select(api_keys).where(api_keys.c.key_id == key_id)).first()
        if row is None or not hmac.compare_digest(row.digest, _digest(row.salt, secret)):
            return None
        key = _row_to_key(row)
        now = utc_now()
        if key.state(now) != "active":
            return None
        if key.last_used_at is None or now - key.last_used_at > _LAST_USED_EVERY:
            with write_transaction(self.engine) as connection:
                connection.execute(
                    update(api_keys).where(api_keys.c.key_id == key_id).values(last_used_at=now)
                )
        return Principal(key.principal_id, key.name, "key", key.scopes)

    # --- async: the server ------------------------------------------------------------------
    async def create(
        self,
        *,
        name: str,
        scopes: frozenset[Scope],
        created_by: str,
        expires_at: datetime | None = None,
    ) -> tuple[ApiKey, str]:
        """:meth:`create_sync` off the event loop."""
        return await anyio.to_thread.run_sync(
            lambda: self.create_sync(
                name=name, scopes=scopes, created_by=created_by, expires_at=expires_at
            )
        )

    async def list(self) -> list[ApiKey]:
        """:meth:`list_sync` off the event loop."""
        return await anyio.to_thread.run_sync(self.list_sync)

    async def revoke(self, key: str) -> ApiKey:
        """:meth:`revoke_sync` off the event loop."""
        return await anyio.to_thread.run_sync(self.revoke_sync, key)

    async def any_active(self) -> bool:
        """:meth:`any_active_sync` off the event loop."""
        return await anyio.to_thread.run_sync(self.any_active_sync)

    async def verify(self, text: str) -> Principal | None:
        """:meth:`verify_sync` off the event loop."""
        return await anyio.to_thread.run_sync(self.verify_sync, text)


def _with_revoked(key: ApiKey, at: datetime) -> ApiKey:
    return ApiKey(
        key.key_id,
        key.name,
        key.scopes,
        key.created_by,
        key.created_at,
        key.expires_at,
        at,
        key.last_used_at,
    )
