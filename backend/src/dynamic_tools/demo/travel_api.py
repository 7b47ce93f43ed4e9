"""The travel demo API over HTTP: ten operations, plus controls for tests and demos.

Routes are thin: they read the request and call :class:`TravelState`. Every route is served
through a route class that, for the ten operations and in this order, adds injected latency,
answers an injected failure (no side effect), runs the route, and counts the outcome. It also
gives every error one shape, ``{"error": {"code", "message", "field"}}``: bad input → 422,
unknown id → 404, state conflict → 409 (statuses are assigned only here).

State-changing operations honour ``Idempotency-Key``: the first successful answer is stored
per (operation, key) and replayed with ``Idempotent-Replayed: true``; the same key with a
different request → 422. Failed answers are not stored, so a retry with the key runs again.

Controls: ``GET /_stats``, ``POST /_faults``, ``DELETE /_faults``, ``POST /_reset``. The ones
that change the demo's behaviour (``_faults``, ``_reset``) answer only loopback callers (403
``forbidden`` otherwise, whatever the access control): they are for tests and demos run on the
same machine.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import json
from collections.abc import Callable, Coroutine
from dataclasses import asdict, dataclass
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Header, Query, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from pydantic import ConfigDict, Field
from pydantic.config import JsonDict
from starlette.exceptions import HTTPException

from dynamic_tools.demo import travel_data
from dynamic_tools.demo.access import from_loopback
from dynamic_tools.demo.travel_data import (
    MAX_PARTY,
    OPERATIONS,
    TravelConflictError,
    TravelError,
    TravelInputError,
    TravelNotFoundError,
    TravelState,
)
from dynamic_tools.lazy_model import LazyModel

IDEMPOTENCY_HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
Outcome = Literal["executed", "replayed", "failed"]
IdempotencyKey = Annotated[
    str | None,
    Header(
        alias=IDEMPOTENCY_HEADER,
        min_length=1,
        max_length=255,
        description="Same key and same request: the first answer again, no second effect.",
    ),
]
_LOCATIONS = {"body", "query", "path", "header", "cookie"}


# --- controls: counters, faults, stored idempotent answers -----------------------------------
@dataclass
class OperationStats:
    """Counters of one operation: ``calls`` = ``executed`` + ``replayed`` + ``failed``."""

    calls: int = 0
    executed: int = 0
    replayed: int = 0
    failed: int = 0


@dataclass
class Fault:
    """An injected fault: the next ``fail_next`` calls answer ``status``; latency stays."""

    fail_next: int = 0
    status: int = 503
    latency_ms: int = 0
    retry_after: int | None = None


@dataclass(frozen=True)
class StoredResponse:
    """The first successful answer under an idempotency key, and the request it answered."""

    status: int
    body: Any
    fingerprint: str


def _check_operation(operation: str) -> str:
    if operation not in OPERATIONS:
        raise TravelInputError(
            f"unknown operation {operation!r}; expected one of {', '.join(OPERATIONS)}",
            field="operation",
        )
    return operation


def _fingerprint(request: Any) -> str:
    return json.dumps(request, sort_keys=True, separators=(",", ":"), default=str)


class OperationControls:
    """Per-operation counters, injected faults and stored idempotent answers."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Zero every counter, clear every fault, forget every idempotency key."""
        self._stats = {op: OperationStats() for op in OPERATIONS}
        self._faults: dict[str, Fault] = {}
        self._stored: dict[tuple[str, str], StoredResponse] = {}

    def record_call(self, operation: str, outcome: Outcome) -> None:
        """Count one call of an operation and how it ended."""
        stats = self._stats[_check_operation(operation)]
        stats.calls += 1
        setattr(stats, outcome, getattr(stats, outcome) + 1)

    def stats(self) -> dict[str, Any]:
        """Counters of all ten operations (zeros included) and the armed faults."""
        return {
            "operations": {op: asdict(s) for op, s in self._stats.items()},
            "faults": {op: asdict(f) for op, f in self._faults.items()},
        }

    def set_fault(
        self,
        operation: str,
        *,
        fail_next: int = 0,
        status: int = 503,
        latency_ms: int = 0,
        retry_after: int | None = None,
    ) -> Fault:
        """Arm a fault for an operation, replacing any previous one (ranges: FaultRequest)."""
        _check_operation(operation)
        self._faults[operation] = Fault(fail_next, status, latency_ms, retry_after)
        return copy.copy(self._faults[operation])

    def clear_faults(self, operation: str | None = None) -> list[str]:
        """Clear one operation's fault, or all; returns the operations that had one."""
        if operation is not None:
            _check_operation(operation)
            return [operation] if self._faults.pop(operation, None) else []
        cleared = sorted(self._faults)
        self._faults.clear()
        return cleared

    def latency_ms(self, operation: str) -> int:
        """Latency added to every call of the operation (0 when no fault is armed)."""
        fault = self._faults.get(operation)
        return fault.latency_ms if fault else 0

    def take_fault(self, operation: str) -> Fault | None:
        """Use up one injected failure of the operation; None when none is left."""
        fault = self._faults.get(operation)
        if fault is None or fault.fail_next <= 0:
            return None
        fault.fail_next -= 1
        return copy.copy(fault)

    def replay(self, operation: str, key: str, request: Any) -> StoredResponse | None:
        """The stored answer for ``(operation, key)``; a different request raises."""
        stored = self._stored.get((operation, key))
        if stored is not None and stored.fingerprint != _fingerprint(request):
            raise TravelInputError(
                f"{IDEMPOTENCY_HEADER} {key!r} was already used with a different "
                f"{operation} request",
                field=IDEMPOTENCY_HEADER,
            )
        return copy.deepcopy(stored)

    def remember(self, operation: str, key: str, request: Any, status: int, body: Any) -> None:
        """Store the first successful answer under ``(operation, key)``."""
        self._stored[(operation, key)] = StoredResponse(
            status, copy.deepcopy(body), _fingerprint(request)
        )


# --- error shape ---------------------------------------------------------------------------
class TravelErrorDetail(LazyModel):
    """What went wrong: a code, a message and the field concerned."""

    code: str
    message: str
    field: str | None
    details: list[dict[str, Any]] | None = None


class TravelErrorBody(LazyModel):
    """The body of every error answer of the demo."""

    error: TravelErrorDetail


_ERROR_TEXT = {
    400: "The body is not UTF-8 JSON text",
    403: "Only loopback callers may use this control",
    404: "Unknown id",
    409: "State conflict",
    422: "Invalid input",
}


def _errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """A ``responses=`` mapping documenting ``statuses`` with the demo's error body."""
    return {s: {"model": TravelErrorBody, "description": _ERROR_TEXT[s]} for s in statuses}


def _error(
    status: int,
    code: str,
    message: str,
    field: str | None,
    *,
    details: list[dict[str, Any]] | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    error: dict[str, Any] = {"code": code, "message": message, "field": field}
    if details is not None:
        error["details"] = details
    return JSONResponse({"error": error}, status_code=status, headers=headers)


# The only place the demo's error codes become HTTP statuses.
_STATUS = {TravelInputError.code: 422, TravelNotFoundError.code: 404, TravelConflictError.code: 409}


def _field_of(error: dict[str, Any]) -> str:
    loc = [str(part) for part in error.get("loc", ())]
    if error.get("type") == "json_invalid":
        return "body"
    if loc and loc[0] in _LOCATIONS:
        loc = loc[1:]
    return ".".join(loc) or "body"


def _validation_error(exc: RequestValidationError) -> JSONResponse:
    details = [{"field": _field_of(e), "message": str(e.get("msg"))} for e in exc.errors()]
    first = details[0] if details else {"field": "body", "message": "invalid request"}
    return _error(
        422,
        "invalid_input",
        f"{first['field']}: {first['message']}",
        first["field"],
        details=details,
    )


Handler = Callable[[Request], Coroutine[Any, Any, Response]]


async def _answer(handler: Handler, request: Request) -> Response:
    try:
        return await handler(request)
    except RequestValidationError as exc:
        return _validation_error(exc)
    except HTTPException as exc:
        # FastAPI's 400 when the body cannot be read: bytes that are not UTF-8 JSON text, or a
        # client gone mid-request (nothing to answer then, and not a call to count).
        if exc.status_code != 400 or await request.is_disconnected():
            raise
        return _error(400, "invalid_input", "the body is not UTF-8 JSON text", "body")
    except TravelError as exc:
        return _error(_STATUS.get(exc.code, 422), exc.code, exc.message, exc.field)


LOOPBACK_CONTROLS = frozenset({"travel_set_fault", "travel_clear_faults", "travel_reset"})
"""Routes (by name) that change how the demo behaves: loopback callers only."""


def _outcome(response: Response) -> Outcome:
    if response.status_code >= 400:
        return "failed"
    return "replayed" if response.headers.get(REPLAYED_HEADER) == "true" else "executed"


def _route_class(controls: OperationControls) -> type[APIRoute]:
    """A route class bound to one router's controls (so every router is isolated)."""

    class TravelRoute(APIRoute):
        """Serves one travel route: latency, faults, counting and the error shape."""

        def get_route_handler(self) -> Handler:
            """The route's handler wrapped with the demo's controls."""
            handler = super().get_route_handler()
            operation = self.name if self.name in OPERATIONS else None

            async def serve(request: Request) -> Response:
                if self.name in LOOPBACK_CONTROLS and not from_loopback(
                    request.client.host if request.client else None
                ):
                    return _error(
                        403,
                        "forbidden",
                        "the demo's fault and reset controls answer only callers on this "
                        "machine (a loopback address)",
                        None,
                    )
                if operation is None:
                    return await _answer(handler, request)
                if latency := controls.latency_ms(operation):
                    await asyncio.sleep(latency / 1000)
                fault = controls.take_fault(operation)
                if fault is None:
                    response = await _answer(handler, request)
                else:
                    retry = fault.retry_after
                    response = _error(
                        fault.status,
                        "injected_fault",
                        f"injected failure of {operation} ({fault.fail_next} more armed)",
                        None,
                        headers=None if retry is None else {"Retry-After": str(retry)},
                    )
                controls.record_call(operation, _outcome(response))
                return response

            return serve

    return TravelRoute


def _run_once(
    controls: OperationControls,
    key: str | None,
    request: dict[str, Any],
    action: Callable[..., dict[str, Any]],
    status: int = 201,
) -> JSONResponse:
    """Call ``action(**request)`` once per key; ``action`` is the same-named state method."""
    operation = action.__name__
    if key is not None:
        stored = controls.replay(operation, key, request)
        if stored is not None:
            headers = {REPLAYED_HEADER: "true"}
            return JSONResponse(stored.body, status_code=stored.status, headers=headers)
    body = action(**request)
    if key is not None:
        controls.remember(operation, key, request, status, body)
    return JSONResponse(body, status_code=status)


# --- request bodies ------------------------------------------------------------------------
class _Body(LazyModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, strict=True)


# Values are stripped, so a value of blanks is empty: the pattern says "not only blanks".
_Id = Annotated[str, Field(min_length=1, max_length=64, pattern=r"\S")]
_Name = Annotated[str, Field(min_length=1, max_length=100, pattern=r"\S")]
# Checked by the demo itself (with its own messages); documented here.
_DATE: JsonDict = {"format": "date", "pattern": r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"}
_IATA: JsonDict = {"pattern": r"^\s*[A-Za-z]{3}\s*$"}
_PARTY: JsonDict = {"minimum": 1, "maximum": MAX_PARTY}
_OPERATION: JsonDict = {"enum": list(OPERATIONS)}


class BookingRequest(_Body):
    """Body of ``create_booking`` and ``add_to_waitlist``."""

    flight_id: _Id
    passenger: _Name


class PaymentRequest(_Body):
    """Body of ``process_payment``; ``amount`` defaults to the booking price."""

    booking_id: _Id
    amount: float | None = None


class HotelBookingRequest(_Body):
    """Body of ``book_hotel``; dates are YYYY-MM-DD."""

    hotel_id: _Id
    checkin: str = Field(json_schema_extra=_DATE)
    checkout: str = Field(json_schema_extra=_DATE)
    guest: _Name


class TripRequest(_Body):
    """Body of ``confirm_trip``."""

    flight_booking_id: _Id
    hotel_booking_id: _Id


class FaultRequest(_Body):
    """Body of ``POST /_faults``."""

    operation: str = Field(json_schema_extra=_OPERATION)
    fail_next: int = Field(default=0, ge=0)
    status: int = Field(default=503, ge=400, le=599)
    latency_ms: int = Field(default=0, ge=0, le=30_000)
    retry_after: int | None = Field(default=None, ge=0)


# --- the router ----------------------------------------------------------------------------
def create_travel_router() -> APIRouter:
    """A router serving the travel demo, with its own fresh state, counters and faults."""
    state = TravelState()
    controls = OperationControls()
    router = APIRouter(route_class=_route_class(controls), tags=["travel demo"])
    once = functools.partial(_run_once, controls)

    @router.get("/flights", name="search_flights", responses=_errors(422))
    async def search_flights(
        origin: Annotated[
            str, Query(description="IATA code of the departure airport.", json_schema_extra=_IATA)
        ],
        destination: Annotated[
            str, Query(description="IATA code of the arrival airport.", json_schema_extra=_IATA)
        ],
        departure_date: Annotated[
            str, Query(alias="date", description="YYYY-MM-DD.", json_schema_extra=_DATE)
        ],
        passengers: Annotated[
            int,
            Query(description="Travellers; price covers all of them.", json_schema_extra=_PARTY),
        ] = 1,
    ) -> list[dict[str, Any]]:
        found = travel_data.search_flights(origin, destination, departure_date, passengers)
        return [flight.to_dict(passengers) for flight in found]

    @router.get(
        "/flights/{flight_id}/availability", name="check_availability", responses=_errors(404)
    )
    async def check_availability(flight_id: str) -> dict[str, Any]:
        return state.check_availability(flight_id)

    @router.post(
        "/bookings", name="create_booking", status_code=201, responses=_errors(400, 404, 409, 422)
    )
    async def create_booking(body: BookingRequest, key: IdempotencyKey = None) -> JSONResponse:
        return once(key, body.model_dump(), state.create_booking)

    @router.post(
        "/payments", name="process_payment", status_code=201, responses=_errors(400, 404, 409, 422)
    )
    async def process_payment(body: PaymentRequest, key: IdempotencyKey = None) -> JSONResponse:
        return once(key, body.model_dump(), state.process_payment)

    @router.get("/hotels", name="search_hotels", responses=_errors(422))
    async def search_hotels(
        city: Annotated[
            str,
            Query(description="City name.", json_schema_extra={"pattern": "[A-Za-z0-9]"}),
        ],
        checkin: Annotated[
            str, Query(description="First night, YYYY-MM-DD.", json_schema_extra=_DATE)
        ],
        checkout: Annotated[
            str,
            Query(description="Departure day, YYYY-MM-DD, after checkin.", json_schema_extra=_DATE),
        ],
        guests: Annotated[
            int, Query(description="Guests in the room.", json_schema_extra=_PARTY)
        ] = 1,
    ) -> list[dict[str, Any]]:
        return [h.to_dict() for h in travel_data.search_hotels(city, checkin, checkout, guests)]

    @router.post(
        "/hotel-bookings", name="book_hotel", status_code=201, responses=_errors(400, 404, 422)
    )
    async def book_hotel(body: HotelBookingRequest, key: IdempotencyKey = None) -> JSONResponse:
        return once(key, body.model_dump(), state.book_hotel)

    @router.post(
        "/trips", name="confirm_trip", status_code=201, responses=_errors(400, 404, 409, 422)
    )
    async def confirm_trip(body: TripRequest, key: IdempotencyKey = None) -> JSONResponse:
        return once(key, body.model_dump(), state.confirm_trip)

    @router.post(
        "/bookings/{booking_id}/cancel", name="cancel_booking", responses=_errors(404, 422)
    )
    async def cancel_booking(booking_id: str, key: IdempotencyKey = None) -> JSONResponse:
        return once(key, {"booking_id": booking_id}, state.cancel_booking, 200)

    @router.post(
        "/hotel-bookings/{booking_id}/cancel", name="cancel_hotel", responses=_errors(404, 422)
    )
    async def cancel_hotel(booking_id: str, key: IdempotencyKey = None) -> JSONResponse:
        return once(key, {"booking_id": booking_id}, state.cancel_hotel, 200)

    @router.post(
        "/waitlist", name="add_to_waitlist", status_code=201, responses=_errors(400, 404, 409, 422)
    )
    async def add_to_waitlist(body: BookingRequest, key: IdempotencyKey = None) -> JSONResponse:
        return once(key, body.model_dump(), state.add_to_waitlist)

    # --- controls -----------------------------------------------------------------------
    @router.get("/_stats", name="travel_stats")
    async def stats() -> dict[str, Any]:
        return {**controls.stats(), "records": state.record_counts()}

    @router.post("/_faults", name="travel_set_fault", responses=_errors(400, 403, 422))
    async def set_fault(body: FaultRequest) -> dict[str, Any]:
        fault = controls.set_fault(
            body.operation,
            fail_next=body.fail_next,
            status=body.status,
            latency_ms=body.latency_ms,
            retry_after=body.retry_after,
        )
        return {"operation": body.operation, **asdict(fault)}

    @router.delete("/_faults", name="travel_clear_faults", responses=_errors(403, 422))
    async def clear_faults(
        operation: Annotated[
            str | None,
            Query(description="Clear only this operation.", json_schema_extra=_OPERATION),
        ] = None,
    ) -> dict[str, Any]:
        return {"cleared": controls.clear_faults(operation)}

    @router.post("/_reset", name="travel_reset", responses=_errors(403))
    async def reset() -> dict[str, Any]:
        state.reset()
        controls.reset()
        return {"reset": True}

    return router
