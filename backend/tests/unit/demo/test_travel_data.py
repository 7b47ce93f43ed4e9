"""Unit tests of the travel demo's data: generators, the sold-out rule and TravelState."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import date

import pytest

from dynamic_tools.demo import travel_data
from dynamic_tools.demo.travel_data import (
    TravelConflictError,
    TravelInputError,
    TravelNotFoundError,
    TravelState,
)

FLIGHT_1 = "FL-AMSBCN-20250601-1"
FLIGHT_3 = "FL-AMSBCN-20250601-3"


# --- generators ----------------------------------------------------------------------------
def test_search_flights_returns_three_normalised_flights_earliest_first() -> None:
    flights = travel_data.search_flights("ams", " bcn ", "2025-06-01")
    assert [f.id for f in flights] == [
        "FL-AMSBCN-20250601-1",
        "FL-AMSBCN-20250601-2",
        "FL-AMSBCN-20250601-3",
    ]
    times = [f.departure_time for f in flights]
    assert times == sorted(times)
    first = flights[0].to_dict()
    assert set(first) == {
        "id",
        "origin",
        "destination",
        "date",
        "departure_time",
        "airline",
        "price",
        "currency",
    }
    assert (first["origin"], first["destination"], first["date"]) == ("AMS", "BCN", "2025-06-01")
    assert first["currency"] == "EUR"
    assert 49 <= first["price"] < 450


def test_search_is_deterministic_and_depends_on_the_inputs() -> None:
    one = [f.to_dict() for f in travel_data.search_flights("AMS", "BCN", "2025-06-01")]
    again = [f.to_dict() for f in travel_data.search_flights("AMS", "BCN", "2025-06-01")]
    other_day = [f.to_dict() for f in travel_data.search_flights("AMS", "BCN", "2025-06-02")]
    assert one == again
    assert [f["price"] for f in one] != [f["price"] for f in other_day]


def test_offers_do_not_depend_on_the_process_hash_seed() -> None:
    code = (
        "import json; from dynamic_tools.demo import travel_data as t;"
        "print(json.dumps([f.to_dict() for f in t.search_flights('AMS','BCN','2025-06-01')]"
        "+[h.to_dict() for h in t.search_hotels('Paris','2025-06-01','2025-06-03')]))"
    )
    outputs = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        )
        outputs.add(done.stdout)
    assert len(outputs) == 1
    flights = [f.to_dict() for f in travel_data.search_flights("AMS", "BCN", "2025-06-01")]
    hotels = [h.to_dict() for h in travel_data.search_hotels("Paris", "2025-06-01", "2025-06-03")]
    assert json.loads(outputs.pop()) == flights + hotels


def test_price_covers_all_passengers() -> None:
    single = travel_data.search_flights("AMS", "BCN", "2025-06-01")[0]
    assert single.to_dict(passengers=3)["price"] == pytest.approx(single.to_dict()["price"] * 3)


@pytest.mark.parametrize(
    ("origin", "destination", "day", "passengers", "field"),
    [
        ("AM", "BCN", "2025-06-01", 1, "origin"),
        ("AMS", "B1N", "2025-06-01", 1, "destination"),
        ("AMS", "ams", "2025-06-01", 1, "destination"),
        ("AMS", "BCN", "2025-02-30", 1, "date"),
        ("AMS", "BCN", "20250601", 1, "date"),
        ("AMS", "BCN", "2025-06-01", 0, "passengers"),
        ("AMS", "BCN", "2025-06-01", 10, "passengers"),
    ],
)
def test_search_flights_names_the_bad_field(
    origin: str, destination: str, day: str, passengers: int, field: str
) -> None:
    with pytest.raises(TravelInputError) as caught:
        travel_data.search_flights(origin, destination, day, passengers)
    assert caught.value.field == field
    assert caught.value.code == "invalid_input"


def test_sold_out_rule_flight_three_and_the_13th() -> None:
    for origin, destination in [("AMS", "BCN"), ("LHR", "JFK"), ("CDG", "FCO"), ("MUC", "OSL")]:
        for day in (date(2025, 6, 1), date(2025, 7, 20), date(2026, 1, 5)):
            flights = [travel_data.make_flight(origin, destination, day, n) for n in (1, 2, 3)]
            assert [travel_data.initial_seats(f) > 0 for f in flights] == [True, True, False]
            assert all(1 <= travel_data.initial_seats(f) <= 9 for f in flights[:2])
        on_13th = [
            travel_data.make_flight(origin, destination, date(2025, 6, 13), n) for n in (1, 2)
        ]
        assert [travel_data.initial_seats(f) for f in on_13th] == [0, 0]


@pytest.mark.parametrize(
    "flight_id",
    ["", "nope", "FL-AMSBCN-20250601-4", "FL-AMSBCN-20250230-1", "FL-AMSAMS-20250601-1"],
)
def test_malformed_flight_ids_are_not_found(flight_id: str) -> None:
    with pytest.raises(TravelNotFoundError) as caught:
        travel_data.parse_flight_id(flight_id)
    assert caught.value.field == "flight_id"


def test_flight_ids_are_case_insensitive() -> None:
    assert travel_data.parse_flight_id(FLIGHT_1.lower()).id == FLIGHT_1


def test_hotels_are_three_distinct_offers_of_the_city() -> None:
    hotels = travel_data.search_hotels("St. Gallen", "2025-06-01", "2025-06-03", guests=2)
    assert [h.id for h in hotels] == ["HT-STGALLEN-1", "HT-STGALLEN-2", "HT-STGALLEN-3"]
    assert len({h.name for h in hotels}) == 3
    assert all(h.city == "St. Gallen" and h.name.endswith("St. Gallen") for h in hotels)
    assert travel_data.parse_hotel_id("ht-stgallen-2").price_per_night_cents == (
        hotels[1].price_per_night_cents
    )


@pytest.mark.parametrize(
    ("city", "checkin", "checkout", "guests", "field"),
    [
        ("!!", "2025-06-01", "2025-06-03", 1, "city"),
        ("Paris", "06/01/2025", "2025-06-03", 1, "checkin"),
        ("Paris", "2025-06-03", "2025-06-03", 1, "checkout"),
        ("Paris", "2025-06-03", "2025-06-01", 1, "checkout"),
        ("Paris", "2025-06-01", "2025-08-01", 1, "checkout"),
        ("Paris", "2025-06-01", "2025-06-03", 0, "guests"),
    ],
)
def test_search_hotels_names_the_bad_field(
    city: str, checkin: str, checkout: str, guests: int, field: str
) -> None:
    with pytest.raises(TravelInputError) as caught:
        travel_data.search_hotels(city, checkin, checkout, guests)
    assert caught.value.field == field


# --- state ---------------------------------------------------------------------------------
def test_booking_takes_a_seat_and_cancelling_gives_it_back_once() -> None:
    state = TravelState()
    before = state.check_availability(FLIGHT_1)["seats_available"]
    booking = state.create_booking(FLIGHT_1, "Ada Lovelace")
    assert booking == {
        "id": "BK-000001",
        "flight_id": FLIGHT_1,
        "passenger": "Ada Lovelace",
        "price": travel_data.parse_flight_id(FLIGHT_1).fare_cents / 100,
        "currency": "EUR",
        "status": "reserved",
    }
    assert state.check_availability(FLIGHT_1)["seats_available"] == before - 1
    assert state.cancel_booking("BK-000001") == {"id": "BK-000001", "status": "cancelled"}
    assert state.cancel_booking("bk-000001") == {"id": "BK-000001", "status": "cancelled"}
    assert state.check_availability(FLIGHT_1)["seats_available"] == before


def test_the_last_seat_goes_then_conflict() -> None:
    state = TravelState()
    seats = state.check_availability(FLIGHT_1)["seats_available"]
    ids = [state.create_booking(FLIGHT_1, f"P{n}")["id"] for n in range(seats)]
    assert ids[-1] == f"BK-{seats:06d}"
    assert state.check_availability(FLIGHT_1) == {
        "flight_id": FLIGHT_1,
        "seats_available": 0,
        "available": False,
    }
    with pytest.raises(TravelConflictError) as caught:
        state.create_booking(FLIGHT_1, "Late")
    assert caught.value.field == "flight_id"


def test_sold_out_flight_refuses_bookings_but_takes_waitlist() -> None:
    state = TravelState()
    with pytest.raises(TravelConflictError):
        state.create_booking(FLIGHT_3, "Ada")
    first = state.add_to_waitlist(FLIGHT_3, "Ada")
    second = state.add_to_waitlist(FLIGHT_3, "Bob")
    other = state.add_to_waitlist(FLIGHT_1, "Cy")
    assert (first["id"], first["position"]) == ("WL-000001", 1)
    assert (second["id"], second["position"]) == ("WL-000002", 2)
    assert (other["id"], other["position"]) == ("WL-000003", 1)
    assert state.record_counts()["bookings"] == 0


def test_payment_rules() -> None:
    state = TravelState()
    booking = state.create_booking(FLIGHT_1, "Ada")
    with pytest.raises(TravelInputError) as wrong:
        state.process_payment(booking["id"], amount=booking["price"] + 1)
    assert wrong.value.field == "amount"
    payment = state.process_payment(booking["id"], amount=booking["price"])
    assert payment == {
        "id": "PAY-000001",
        "booking_id": "BK-000001",
        "amount": booking["price"],
        "currency": "EUR",
        "status": "captured",
    }
    with pytest.raises(TravelConflictError):
        state.process_payment(booking["id"])
    with pytest.raises(TravelNotFoundError) as unknown:
        state.process_payment("BK-999999")
    assert unknown.value.field == "booking_id"
    cancelled = state.create_booking(FLIGHT_1, "Bob")
    state.cancel_booking(cancelled["id"])
    with pytest.raises(TravelConflictError):
        state.process_payment(cancelled["id"])


def test_hotel_booking_and_trip() -> None:
    state = TravelState()
    hotel = travel_data.search_hotels("Barcelona", "2025-06-01", "2025-06-04")[0]
    stay = state.book_hotel(hotel.id, "2025-06-01", "2025-06-04", "Ada")
    assert stay["id"] == "HB-000001"
    assert stay["nights"] == 3
    assert stay["total_price"] == pytest.approx(hotel.price_per_night_cents * 3 / 100)
    flight = state.create_booking(FLIGHT_1, "Ada")
    trip = state.confirm_trip(flight["id"], stay["id"])
    assert trip == {
        "id": "TRIP-000001",
        "flight_booking_id": "BK-000001",
        "hotel_booking_id": "HB-000001",
        "status": "confirmed",
    }
    with pytest.raises(TravelNotFoundError) as missing:
        state.confirm_trip(flight["id"], "HB-000404")
    assert missing.value.field == "hotel_booking_id"
    assert state.cancel_hotel(stay["id"]) == {"id": "HB-000001", "status": "cancelled"}
    with pytest.raises(TravelConflictError) as conflict:
        state.confirm_trip(flight["id"], stay["id"])
    assert conflict.value.field == "hotel_booking_id"


def test_returned_records_are_copies_and_reset_forgets_everything() -> None:
    state = TravelState()
    booking = state.create_booking(FLIGHT_1, "Ada")
    booking["status"] = "paid"
    assert state.process_payment("BK-000001")["status"] == "captured"
    state.reset()
    assert state.record_counts() == {
        "bookings": 0,
        "payments": 0,
        "hotel_bookings": 0,
        "trips": 0,
        "waitlist": 0,
    }
    assert state.create_booking(FLIGHT_1, "Ada")["id"] == "BK-000001"
