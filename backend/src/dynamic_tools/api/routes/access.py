"""``/me``, ``/keys`` and ``/audit``: who am I, API keys (admins), the audit log (admins)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from pydantic import ConfigDict, Field

from dynamic_tools.access.audit import AuditQuery
from dynamic_tools.access.keys import parse_expiry
from dynamic_tools.access.principals import parse_scopes
from dynamic_tools.api.deps import PrincipalDep, ServicesDep, note_audit_target
from dynamic_tools.api.responses import errors
from dynamic_tools.errors import InvalidInputError
from dynamic_tools.lazy_model import LazyModel

router = APIRouter(tags=["Access"])
#: an RFC 3339 date-time, as the document declares it
_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")
_DATE_TIME: dict[str, Any] = {"format": "date-time", "examples": ["2026-11-27T00:00:00Z"]}


def _time(field: str, value: str | None) -> datetime | None:
    """An RFC 3339 date-time filter."""
    if value is None:
        return None
    try:
        if not _RFC3339.match(value):
            raise ValueError(value)
        moment = datetime.fromisoformat(value.upper().replace("Z", "+00:00"))
    except ValueError:
        raise InvalidInputError(
            f"'{value}' is not an RFC 3339 date-time (2026-11-27T00:00:00Z)",
            violations=[{"path": f"query.{field}", "rule": "date_time", "message": "RFC 3339"}],
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


class Me(LazyModel):
    """The principal making the request, and whether access control is on."""

    id: str
    name: str
    kind: str = Field(description="token (API_TOKEN), key, oauth, or local (no access control)")
    scopes: list[str]
    access_control: bool


class KeyView(LazyModel):
    """An API key as listed: never its secret."""

    key_id: str
    name: str
    principal: str
    scopes: list[str]
    created_by: str
    created_at: str
    expires_at: str | None
    revoked_at: str | None
    last_used_at: str | None
    state: str = Field(description="active, revoked or expired")


class KeyList(LazyModel):
    """Every key, newest first."""

    keys: list[KeyView]


class NewKey(LazyModel):
    """What a key is for."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,127}$", examples=["ci"])
    scopes: list[Literal["read", "run", "author", "admin"]] = Field(
        min_length=1, examples=[["read", "run"]]
    )
    expires: str | None = Field(
        default=None,
        pattern=r"^[0-9]{1,6}[mhdw]$",
        description="30d, 12h, 90m, 2w; none: no expiry",
    )


class CreatedKey(KeyView):
    """A new key, with its text: shown this once, never again."""

    key: str


class AuditEntryView(LazyModel):
    """One audit entry."""

    entry_id: int
    at: str
    principal: str
    action: str
    target: str
    outcome: str
    correlation_id: str | None
    detail: dict[str, object] | None


class AuditPage(LazyModel):
    """A page of the audit log, newest first."""

    entries: list[AuditEntryView]
    total: int
    limit: int
    offset: int


@router.get("/me", summary="Who am I", response_model=Me)
async def me(principal: PrincipalDep, services: ServicesDep) -> Me:
    """The principal of this request: id, name, how it proved itself, its scopes."""
    return Me(
        id=principal.id,
        name=principal.name,
        kind=principal.kind,
        scopes=sorted(s.value for s in principal.scopes),
        access_control=await services.authenticator.enabled(),
    )


@router.get("/keys", summary="List API keys", response_model=KeyList)
async def list_keys(services: ServicesDep) -> KeyList:
    """Every key with its state (never the key itself)."""
    return KeyList(keys=[KeyView(**k.to_dict()) for k in await services.keys.list()])


@router.post(
    "/keys",
    summary="Create an API key",
    status_code=201,
    response_model=CreatedKey,
    responses=errors(422),
)
async def create_key(
    request: Request, body: NewKey, principal: PrincipalDep, services: ServicesDep
) -> CreatedKey:
    """A new key; its text is in this answer only (store it now)."""
    try:
        scopes = parse_scopes(body.scopes)
    except ValueError as exc:
        raise InvalidInputError(
            str(exc), violations=[{"path": "scopes", "rule": "enum", "message": str(exc)}]
        ) from None
    key, text = await services.keys.create(
        name=body.name,
        scopes=scopes,
        created_by=principal.id,
        expires_at=parse_expiry(body.expires),
    )
    note_audit_target(request, f"key_id={key.key_id}")
    return CreatedKey(**key.to_dict(), key=text)


@router.delete(
    "/keys/{key_id}", summary="Revoke an API key", response_model=KeyView, responses=errors(404)
)
async def revoke_key(key_id: str, services: ServicesDep) -> KeyView:
    """Revoke a key (by id, or the newest active one of a name); refused at once everywhere."""
    return KeyView(**(await services.keys.revoke(key_id)).to_dict())


@router.get("/audit", summary="The audit log", response_model=AuditPage)
async def audit(
    services: ServicesDep,
    principal: Annotated[str | None, Query(max_length=255)] = None,
    action: Annotated[
        str | None, Query(max_length=255, examples=["DELETE /workflows/{workflow_id}"])
    ] = None,
    target: Annotated[str | None, Query(max_length=1024)] = None,
    outcome: Annotated[str | None, Query(max_length=32)] = None,
    since: Annotated[str | None, Query(json_schema_extra=_DATE_TIME)] = None,
    until: Annotated[str | None, Query(json_schema_extra=_DATE_TIME)] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: Annotated[int, Query(ge=0, le=2**53 - 1)] = 0,
) -> AuditPage:
    """Who did what to what and how it ended, newest first, filtered and paged."""
    query = AuditQuery(
        principal=principal,
        action=action,
        target=target,
        outcome=outcome,
        since=_time("since", since),
        until=_time("until", until),
        limit=limit,
        offset=offset,
    )
    entries, total = await services.audit.page(query)
    return AuditPage(
        entries=[AuditEntryView(**e.to_dict()) for e in entries],
        total=total,
        limit=limit,
        offset=offset,
    )
