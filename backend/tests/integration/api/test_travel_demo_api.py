"""The travel demo API over HTTP: operations, errors, idempotency, faults, stats and reset."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from dynamic_tools.demo import OPERATIONS, create_travel_router

FLIGHT_1 = "FL-AMSBCN-20250601-1"
FLIGHT_3 = "FL-AMSBCN-20250601-3"
STAY = {"checkin": "2025-06-01", "checkout": "2025-06-04"}
SEARCH = {"origin": "AMS", "destination": "BCN", "date": "2025-06-01"}
HOTEL_STAY = {"hotel_id": "HT-PARIS-1", **STAY, "guest": "Ada"}


def _app() -> FastAPI:
    app = FastAPI()
    app.include_router(create_travel_router(), prefix="/demo/travel")
    return app


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=_app())
    async with httpx.AsyncClient(transport=transport, base_url="http://demo/demo/travel") as http:
        yield http


async def _stats(client: httpx.AsyncClient) -> dict[str, Any]:
    response = await client.get("/_stats")
    assert response.status_code == 200
    data: dict[str, Any] = response.json()
    return data


async def _seats(client: httpx.AsyncClient, flight_id: str = FLIGHT_1) -> int:
    response = await client.get(f"/flights/{flight_id}/availability")
    assert response.status_code == 200
    seats: int = response.json()["seats_available"]
    return seats


def _book(client: httpx.AsyncClient, flight_id: str = FLIGHT_1, **headers: str) -> Any:
    return client.post(
        "/bookings", json={"flight_id": flight_id, "passenger": "Ada"}, headers=headers
    )


def _error_field(response: httpx.Response) -> Any:
    return response.json()["error"]["field"]


# --- the happy path ------------------------------------------------------------------------
async def test_full_trip(client: httpx.AsyncClient) -> None:
    search = await client.get(
        "/flights", params={"origin": "ams", "destination": "bcn", "date": "2025-06-01"}
    )
    assert search.status_code == 200
    flights = search.json()
    assert [f["id"] for f in flights] == [FLIGHT_1, "FL-AMSBCN-20250601-2", FLIGHT_3]
    seats = await _seats(client)
    assert 1 <= seats <= 9

    booking = await _book(client)
    assert booking.status_code == 201
    assert booking.json() == {
        "id": "BK-000001",
        "flight_id": FLIGHT_1,
        "passenger": "Ada",
        "price": flights[0]["price"],
        "currency": "EUR",
        "status": "reserved",
    }
    assert await _seats(client) == seats - 1

    payment = await client.post("/payments", json={"booking_id": "BK-000001"})
    assert payment.status_code == 201
    assert payment.json() == {
        "id": "PAY-000001",
        "booking_id": "BK-000001",
        "amount": flights[0]["price"],
        "currency": "EUR",
        "status": "captured",
    }

    hotels = (await client.get("/hotels", params={"city": "Barcelona", **STAY})).json()
    assert [h["id"] for h in hotels] == ["HT-BARCELONA-1", "HT-BARCELONA-2", "HT-BARCELONA-3"]
    stay = await client.post(
        "/hotel-bookings", json={"hotel_id": hotels[1]["id"], **STAY, "guest": "Ada"}
    )
    assert stay.status_code == 201
    assert stay.json()["id"] == "HB-000001"
    assert stay.json()["nights"] == 3
    assert stay.json()["total_price"] == pytest.approx(hotels[1]["price_per_night"] * 3)
    assert stay.json()["status"] == "reserved"

    trip = await client.post(
        "/trips", json={"flight_booking_id": "BK-000001", "hotel_booking_id": "HB-000001"}
    )
    assert trip.status_code == 201
    assert trip.json() == {
        "id": "TRIP-000001",
        "flight_booking_id": "BK-000001",
        "hotel_booking_id": "HB-000001",
        "status": "confirmed",
    }
    assert (await _stats(client))["records"] == {
        "bookings": 1,
        "payments": 1,
        "hotel_bookings": 1,
        "trips": 1,
        "waitlist": 0,
    }


async def test_two_routers_are_isolated_and_give_the_same_offers() -> None:
    query = {"origin": "LHR", "destination": "JFK", "date": "2025-09-09"}
    transports = [httpx.ASGITransport(app=_app()) for _ in range(2)]
    answers = []
    for transport in transports:
        async with httpx.AsyncClient(transport=transport, base_url="http://d/demo/travel") as c:
            answers.append((await c.get("/flights", params=query)).json())
            assert (await _book(c, "FL-LHRJFK-20250909-1")).json()["id"] == "BK-000001"
    assert answers[0] == answers[1]


# --- errors --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"origin": "AM", "destination": "BCN", "date": "2025-06-01"}, "origin"),
        ({"origin": "AMS", "destination": "BCN", "date": "2025-13-01"}, "date"),
        ({"origin": "AMS", "destination": "BCN"}, "date"),
        ({"origin": "AMS", "date": "2025-06-01"}, "destination"),
        ({"origin": "AMS", "destination": "AMS", "date": "2025-06-01"}, "destination"),
        ({**SEARCH, "passengers": 0}, "passengers"),
        ({**SEARCH, "passengers": "x"}, "passengers"),
    ],
)
async def test_bad_flight_search_is_422_naming_the_field(
    client: httpx.AsyncClient, params: dict[str, Any], field: str
) -> None:
    response = await client.get("/flights", params=params)
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_input"
    assert _error_field(response) == field


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/bookings", {"flight_id": FLIGHT_1}, "passenger"),
        ("/bookings", {"flight_id": FLIGHT_1, "passenger": ""}, "passenger"),
        ("/bookings", {"flight_id": FLIGHT_1, "passenger": "Ada", "seat": "1A"}, "seat"),
        ("/payments", {"booking_id": "BK-000001", "amount": "lots"}, "amount"),
        ("/hotel-bookings", {**HOTEL_STAY, "checkout": "2025-06-01"}, "checkout"),
        ("/hotel-bookings", {**HOTEL_STAY, "checkin": "June 1"}, "checkin"),
        ("/trips", {"flight_booking_id": "BK-000001"}, "hotel_booking_id"),
        ("/waitlist", [FLIGHT_1, "Ada"], "body"),
        ("/_faults", {"operation": "teleport", "fail_next": 1}, "operation"),
        ("/_faults", {"operation": "create_booking", "status": 200}, "status"),
    ],
)
async def test_bad_body_is_422_naming_the_field(
    client: httpx.AsyncClient, path: str, body: Any, field: str
) -> None:
    response = await client.post(path, json=body)
    assert response.status_code == 422, response.text
    assert _error_field(response) == field


async def test_bad_hotel_search_and_broken_json(client: httpx.AsyncClient) -> None:
    bad_stay = {"city": "Paris", "checkin": "2025-06-04", "checkout": "2025-06-01"}
    response = await client.get("/hotels", params=bad_stay)
    assert (response.status_code, _error_field(response)) == (422, "checkout")
    broken = await client.post(
        "/bookings", content=b'{"flight_id": ', headers={"Content-Type": "application/json"}
    )
    assert (broken.status_code, _error_field(broken)) == (422, "body")


@pytest.mark.parametrize(
    ("method", "path", "body", "field"),
    [
        ("GET", "/flights/FL-NOPE/availability", None, "flight_id"),
        ("GET", "/flights/FL-AMSBCN-20250231-1/availability", None, "flight_id"),
        ("POST", "/bookings", {"flight_id": "FL-XXX", "passenger": "Ada"}, "flight_id"),
        ("POST", "/payments", {"booking_id": "BK-000404"}, "booking_id"),
        ("POST", "/hotel-bookings", {"hotel_id": "HOTEL", **STAY, "guest": "Ada"}, "hotel_id"),
        (
            "POST",
            "/trips",
            {"flight_booking_id": "BK-1", "hotel_booking_id": "HB-1"},
            "flight_booking_id",
        ),
        ("POST", "/bookings/BK-000404/cancel", None, "booking_id"),
        ("POST", "/hotel-bookings/HB-000404/cancel", None, "booking_id"),
        ("POST", "/waitlist", {"flight_id": "nope", "passenger": "Ada"}, "flight_id"),
    ],
)
async def test_unknown_ids_are_404(
    client: httpx.AsyncClient, method: str, path: str, body: Any, field: str
) -> None:
    response = await client.request(method, path, json=body)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    assert _error_field(response) == field


# --- sold out, waitlist, cancellation ------------------------------------------------------
async def test_sold_out_flight_gives_409_and_the_waitlist_takes_over(
    client: httpx.AsyncClient,
) -> None:
    availability = await client.get(f"/flights/{FLIGHT_3}/availability")
    assert availability.json() == {"flight_id": FLIGHT_3, "seats_available": 0, "available": False}
    refused = await _book(client, FLIGHT_3)
    assert refused.status_code == 409
    assert refused.json()["error"] == {
        "code": "conflict",
        "message": f"flight {FLIGHT_3} is sold out",
        "field": "flight_id",
    }
    on_13th = await _book(client, "FL-AMSBCN-20250613-1")
    assert on_13th.status_code == 409
    for position in (1, 2):
        entry = await client.post("/waitlist", json={"flight_id": FLIGHT_3, "passenger": "Ada"})
        assert entry.status_code == 201
        assert entry.json() == {
            "id": f"WL-{position:06d}",
            "flight_id": FLIGHT_3,
            "passenger": "Ada",
            "position": position,
        }


async def test_cancel_releases_the_seat_once_and_blocks_payment(client: httpx.AsyncClient) -> None:
    seats = await _seats(client)
    await _book(client)
    for _ in range(2):
        cancelled = await client.post("/bookings/BK-000001/cancel")
        assert cancelled.status_code == 200
        assert cancelled.json() == {"id": "BK-000001", "status": "cancelled"}
    assert await _seats(client) == seats
    payment = await client.post("/payments", json={"booking_id": "BK-000001"})
    assert payment.status_code == 409
    wrong = await client.post("/payments", json={"booking_id": "BK-000404", "amount": 1})
    assert wrong.status_code == 404


async def test_wrong_amount_is_422_and_paying_twice_is_409(client: httpx.AsyncClient) -> None:
    price = (await _book(client)).json()["price"]
    wrong = await client.post("/payments", json={"booking_id": "BK-000001", "amount": price + 5})
    assert (wrong.status_code, _error_field(wrong)) == (422, "amount")
    paid = await client.post("/payments", json={"booking_id": "BK-000001", "amount": price})
    assert paid.status_code == 201
    again = await client.post("/payments", json={"booking_id": "BK-000001"})
    assert again.status_code == 409


async def test_trip_with_a_cancelled_hotel_is_409(client: httpx.AsyncClient) -> None:
    await _book(client)
    await client.post("/hotel-bookings", json={"hotel_id": "HT-PARIS-1", **STAY, "guest": "A"})
    cancelled = await client.post("/hotel-bookings/HB-000001/cancel")
    assert cancelled.json() == {"id": "HB-000001", "status": "cancelled"}
    trip = await client.post(
        "/trips", json={"flight_booking_id": "BK-000001", "hotel_booking_id": "HB-000001"}
    )
    assert (trip.status_code, _error_field(trip)) == (409, "hotel_booking_id")


# --- idempotency ---------------------------------------------------------------------------
async def test_replay_returns_the_first_answer_with_one_side_effect(
    client: httpx.AsyncClient,
) -> None:
    seats = await _seats(client)
    first = await _book(client, **{"Idempotency-Key": "trip-42"})
    second = await _book(client, **{"Idempotency-Key": "trip-42"})
    assert first.status_code == second.status_code == 201
    assert first.json() == second.json()
    assert "idempotent-replayed" not in first.headers
    assert second.headers["Idempotent-Replayed"] == "true"
    assert await _seats(client) == seats - 1
    stats = await _stats(client)
    assert stats["records"]["bookings"] == 1
    assert stats["operations"]["create_booking"] == {
        "calls": 2,
        "executed": 1,
        "replayed": 1,
        "failed": 0,
    }
    unkeyed = await _book(client)
    assert unkeyed.json()["id"] == "BK-000002"


async def test_key_reused_with_another_body_is_422(client: httpx.AsyncClient) -> None:
    await _book(client, **{"Idempotency-Key": "k"})
    other = await client.post(
        "/bookings",
        json={"flight_id": FLIGHT_1, "passenger": "Bob"},
        headers={"Idempotency-Key": "k"},
    )
    assert other.status_code == 422
    assert _error_field(other) == "Idempotency-Key"
    assert "'k'" in other.json()["error"]["message"]
    assert (await _stats(client))["records"]["bookings"] == 1
    waitlisted = await client.post(
        "/waitlist",
        json={"flight_id": FLIGHT_3, "passenger": "Bob"},
        headers={"Idempotency-Key": "k"},
    )
    assert waitlisted.status_code == 201, "keys are scoped per operation"


@pytest.mark.parametrize(
    ("path", "body", "status", "record"),
    [
        ("/payments", {"booking_id": "BK-000001"}, 201, "payments"),
        ("/hotel-bookings", HOTEL_STAY, 201, "hotel_bookings"),
        ("/waitlist", {"flight_id": FLIGHT_3, "passenger": "Ada"}, 201, "waitlist"),
        ("/bookings/BK-000001/cancel", None, 200, None),
    ],
)
async def test_every_state_change_honours_the_key(
    client: httpx.AsyncClient, path: str, body: Any, status: int, record: str | None
) -> None:
    await _book(client)
    headers = {"Idempotency-Key": "same"}
    first = await client.post(path, json=body, headers=headers)
    second = await client.post(path, json=body, headers=headers)
    assert first.status_code == second.status_code == status
    assert first.json() == second.json()
    assert second.headers["Idempotent-Replayed"] == "true"
    stats = await _stats(client)
    if record is not None:
        assert stats["records"][record] == 1
    executed = [name for name, c in stats["operations"].items() if c["replayed"]]
    assert len(executed) == 1
    assert stats["operations"][executed[0]] == {
        "calls": 2,
        "executed": 1,
        "replayed": 1,
        "failed": 0,
    }


async def test_failed_calls_are_not_stored_so_a_keyed_retry_runs(
    client: httpx.AsyncClient,
) -> None:
    await client.post("/_faults", json={"operation": "create_booking", "fail_next": 1})
    failed = await _book(client, **{"Idempotency-Key": "retry-me"})
    assert failed.status_code == 503
    retried = await _book(client, **{"Idempotency-Key": "retry-me"})
    assert retried.status_code == 201
    assert "idempotent-replayed" not in retried.headers
    assert (await _stats(client))["operations"]["create_booking"]["executed"] == 1


# --- faults, stats, reset ------------------------------------------------------------------
async def test_fault_fails_exactly_n_calls_then_recovers(client: httpx.AsyncClient) -> None:
    armed = await client.post(
        "/_faults", json={"operation": "create_booking", "fail_next": 2, "retry_after": 7}
    )
    assert armed.status_code == 200
    assert armed.json() == {
        "operation": "create_booking",
        "fail_next": 2,
        "status": 503,
        "latency_ms": 0,
        "retry_after": 7,
    }
    seats = await _seats(client)
    answers = [await _book(client) for _ in range(3)]
    assert [a.status_code for a in answers] == [503, 503, 201]
    assert answers[0].headers["Retry-After"] == "7"
    assert answers[0].json()["error"]["code"] == "injected_fault"
    assert answers[2].json()["id"] == "BK-000001", "injected failures have no side effect"
    assert await _seats(client) == seats - 1
    stats = await _stats(client)
    assert stats["operations"]["create_booking"] == {
        "calls": 3,
        "executed": 1,
        "replayed": 0,
        "failed": 2,
    }
    assert stats["faults"]["create_booking"]["fail_next"] == 0


async def test_custom_status_latency_and_clearing(client: httpx.AsyncClient) -> None:
    await client.post(
        "/_faults", json={"operation": "search_hotels", "fail_next": 1, "status": 429}
    )
    await client.post("/_faults", json={"operation": "check_availability", "latency_ms": 60})
    limited = await client.get("/hotels", params={"city": "Rome", **STAY})
    assert limited.status_code == 429
    assert "retry-after" not in limited.headers
    assert (await client.get("/hotels", params={"city": "Rome", **STAY})).status_code == 200
    started = time.perf_counter()
    await _seats(client)
    assert time.perf_counter() - started >= 0.05
    cleared = await client.delete("/_faults")
    assert cleared.json() == {"cleared": ["check_availability", "search_hotels"]}
    assert (await _stats(client))["faults"] == {}
    one = await client.delete("/_faults", params={"operation": "nope"})
    assert (one.status_code, _error_field(one)) == (422, "operation")


async def test_stats_count_every_call_of_every_operation(client: httpx.AsyncClient) -> None:
    stats = await _stats(client)
    assert list(stats["operations"]) == list(OPERATIONS)
    assert all(sum(counters.values()) == 0 for counters in stats["operations"].values())
    await client.get("/flights", params={"origin": "AMS", "destination": "BCN", "date": "x"})
    await client.get("/flights", params={"origin": "AMS", "destination": "BCN"})
    await client.get("/flights", params=SEARCH)
    await client.post("/bookings", json={})
    await _book(client, FLIGHT_3)
    operations = (await _stats(client))["operations"]
    assert operations["search_flights"] == {"calls": 3, "executed": 1, "replayed": 0, "failed": 2}
    assert operations["create_booking"] == {"calls": 2, "executed": 0, "replayed": 0, "failed": 2}
    for name in OPERATIONS:
        counters = operations[name]
        assert counters["calls"] == counters["executed"] + counters["replayed"] + counters["failed"]


async def test_reset_forgets_records_counters_and_faults(client: httpx.AsyncClient) -> None:
    await _book(client, **{"Idempotency-Key": "k"})
    await client.post("/_faults", json={"operation": "create_booking", "fail_next": 5})
    reset = await client.post("/_reset")
    assert reset.json() == {"reset": True}
    stats = await _stats(client)
    assert stats["faults"] == {}
    assert stats["records"]["bookings"] == 0
    assert stats["operations"]["create_booking"]["calls"] == 0
    again = await _book(client, **{"Idempotency-Key": "k"})
    assert again.status_code == 201
    assert again.json()["id"] == "BK-000001"
    assert "idempotent-replayed" not in again.headers
