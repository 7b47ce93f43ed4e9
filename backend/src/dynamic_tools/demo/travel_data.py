"""Deterministic data and in-memory state behind the travel demo API.

Nothing here knows about HTTP. Offers are computed from stable SHA-256 hashes of their inputs
(never ``hash()``, the clock or a random source), and record ids are sequential per kind
(``BK-000001``, ``PAY-000001``, ...), so the same calls always give the same answers.

Sold-out rule: a flight has no seats when its number is 3 (ids ending in ``-3``) or when it
departs on the 13th day of a month; every other flight starts with 1 to 9 seats.

Errors carry a ``code`` and the ``field`` at fault; ``travel_api`` assigns the statuses:

```
TravelError               root; carries ``code``, ``message``, ``field``
├── TravelInputError      a value is malformed or inconsistent             → 422
├── TravelNotFoundError   an id that names nothing                         → 404
└── TravelConflictError   the state forbids it (sold out, cancelled, paid) → 409
```
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from datetime import date
from typing import Any

OPERATIONS: tuple[str, ...] = (
    "search_flights",
    "check_availability",
    "create_booking",
    "process_payment",
    "search_hotels",
    "book_hotel",
    "confirm_trip",
    "cancel_booking",
    "cancel_hotel",
    "add_to_waitlist",
)
STATE_CHANGING_OPERATIONS = frozenset(OPERATIONS) - {
    "search_flights",
    "check_availability",
    "search_hotels",
}
CURRENCY = "EUR"
SOLD_OUT_FLIGHT_NUMBER = 3
SOLD_OUT_DAY_OF_MONTH = 13
MAX_PARTY = 9
MAX_NIGHTS = 30

_IATA = re.compile(r"^[A-Za-z]{3}$")
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_FLIGHT_ID = re.compile(r"^FL-([A-Z]{3})([A-Z]{3})-(\d{8})-([1-3])$")
_HOTEL_ID = re.compile(r"^HT-([A-Z0-9]{1,24})-([1-3])$")
_AIRLINES = ("SkyJet", "AeroNova", "BlueWing", "Polar Air", "Sunline")
_HOTEL_NAMES = ("Grand Hotel", "City Inn", "Harbour Lodge", "Residence Park", "Hotel Aurora")


class TravelError(Exception):
    """Root of the travel demo's errors; ``field`` names the offending input, if any."""

    code = "travel_error"

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class TravelInputError(TravelError):
    """A value is malformed or inconsistent with another (e.g. checkout before checkin)."""

    code = "invalid_input"


class TravelNotFoundError(TravelError):
    """An id (flight, hotel, booking) that names nothing."""

    code = "not_found"


class TravelConflictError(TravelError):
    """The current state forbids the operation (no seats, cancelled, already paid)."""

    code = "conflict"


# --- deterministic generators ----------------------------------------------------------------
def stable_hash(*parts: str) -> int:
    """A 64-bit SHA-256 digest of the parts, the same in every process (unlike ``hash()``)."""
    digest = hashlib.sha256("|".join(parts).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big")


def _euros(cents: int) -> float:
    return cents / 100


def _iata(value: str, field_name: str) -> str:
    if not _IATA.match(value.strip()):
        raise TravelInputError(
            f"'{field_name}' must be a 3-letter IATA code, got {value!r}", field=field_name
        )
    return value.strip().upper()


def parse_date(value: str, field_name: str) -> date:
    """Parse a strict ``YYYY-MM-DD`` date; anything else raises TravelInputError."""
    try:
        if not _ISO_DATE.match(value):
            raise ValueError
        return date.fromisoformat(value)
    except ValueError:
        raise TravelInputError(
            f"'{field_name}' must be a date as YYYY-MM-DD, got {value!r}", field=field_name
        ) from None


def _party(value: int, field_name: str) -> int:
    if not 1 <= value <= MAX_PARTY:
        raise TravelInputError(
            f"'{field_name}' must be between 1 and {MAX_PARTY}, got {value}", field=field_name
        )
    return value


@dataclass(frozen=True)
class Flight:
    """One flight offer; ``fare_cents`` is the price for one passenger."""

    id: str
    origin: str
    destination: str
    day: date
    number: int
    departure_time: str
    airline: str
    fare_cents: int

    def to_dict(self, passengers: int = 1) -> dict[str, Any]:
        """JSON form; ``price`` is the fare for ``passengers`` passengers."""
        return {
            "id": self.id,
            "origin": self.origin,
            "destination": self.destination,
            "date": self.day.isoformat(),
            "departure_time": self.departure_time,
            "airline": self.airline,
            "price": _euros(self.fare_cents * passengers),
            "currency": CURRENCY,
        }


def make_flight(origin: str, destination: str, day: date, number: int) -> Flight:
    """The ``number``-th (1..3) flight of a route on a day; departures grow with the number."""
    h = stable_hash("flight", origin, destination, day.isoformat(), str(number))
    hour = 6 + (number - 1) * 5 + h % 5
    minute = (h >> 8) % 12 * 5
    return Flight(
        id=f"FL-{origin}{destination}-{day:%Y%m%d}-{number}",
        origin=origin,
        destination=destination,
        day=day,
        number=number,
        departure_time=f"{hour:02d}:{minute:02d}",
        airline=_AIRLINES[(h >> 16) % len(_AIRLINES)],
        fare_cents=4_900 + (h >> 4) % 40_000,
    )


def parse_flight_id(flight_id: str) -> Flight:
    """The flight an id names; malformed ids and impossible dates raise TravelNotFoundError."""
    match = _FLIGHT_ID.match(flight_id.strip().upper())
    try:
        if match is None:
            raise ValueError
        day = date(int(match[3][:4]), int(match[3][4:6]), int(match[3][6:]))
    except ValueError:
        raise TravelNotFoundError(f"no flight {flight_id!r}", field="flight_id") from None
    if match[1] == match[2]:
        raise TravelNotFoundError(f"no flight {flight_id!r}", field="flight_id")
    return make_flight(match[1], match[2], day, int(match[4]))


def initial_seats(flight: Flight) -> int:
    """Seats before any booking: 0 for sold-out flights (module docstring), else 1..9."""
    if flight.number == SOLD_OUT_FLIGHT_NUMBER or flight.day.day == SOLD_OUT_DAY_OF_MONTH:
        return 0
    return 1 + stable_hash("seats", flight.id) % 9


def search_flights(
    origin: str, destination: str, departure_date: str, passengers: int = 1
) -> list[Flight]:
    """The three flights of a route on a day, earliest first (inputs validated).

    ``departure_date`` is the API's ``date`` field (and is reported under that name).
    """
    orig, dest = _iata(origin, "origin"), _iata(destination, "destination")
    if orig == dest:
        raise TravelInputError("'destination' must differ from 'origin'", field="destination")
    day = parse_date(departure_date, "date")
    _party(passengers, "passengers")
    return [make_flight(orig, dest, day, n) for n in (1, 2, 3)]


def city_code(city: str) -> str:
    """The ASCII letters and digits of a city name, upper case (``"St. Gallen"`` → ``STGALLEN``)."""
    code = "".join(ch for ch in city.upper() if ch.isascii() and ch.isalnum())[:24]
    if not code:
        raise TravelInputError(f"'city' needs at least one letter, got {city!r}", field="city")
    return code


@dataclass(frozen=True)
class Hotel:
    """One hotel offer; the nightly price does not depend on dates or guests."""

    id: str
    name: str
    city: str
    price_per_night_cents: int

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "id": self.id,
            "name": self.name,
            "city": self.city,
            "price_per_night": _euros(self.price_per_night_cents),
            "currency": CURRENCY,
        }


def make_hotel(code: str, number: int, city: str | None = None) -> Hotel:
    """The ``number``-th (1..3) hotel of a city code; ``city`` is the name to show."""
    h = stable_hash("hotel", code, str(number))
    shown = city.strip() if city else code.title()
    # Offset by the number so the three hotels of a city never share a name.
    brand = _HOTEL_NAMES[(stable_hash("brand", code) + number) % len(_HOTEL_NAMES)]
    return Hotel(
        id=f"HT-{code}-{number}",
        name=f"{brand} {shown}",
        city=shown,
        price_per_night_cents=6_000 + (h >> 4) % 24_000,
    )


def parse_hotel_id(hotel_id: str) -> Hotel:
    """The hotel an id names; malformed ids raise TravelNotFoundError."""
    match = _HOTEL_ID.match(hotel_id.strip().upper())
    if match is None:
        raise TravelNotFoundError(f"no hotel {hotel_id!r}", field="hotel_id")
    return make_hotel(match[1], int(match[2]))


def stay_nights(checkin: str, checkout: str) -> int:
    """Nights between two ISO dates; checkout must be 1..30 nights after checkin."""
    start, end = parse_date(checkin, "checkin"), parse_date(checkout, "checkout")
    nights = (end - start).days
    if not 1 <= nights <= MAX_NIGHTS:
        raise TravelInputError(
            f"'checkout' must be 1 to {MAX_NIGHTS} nights after 'checkin'", field="checkout"
        )
    return nights


def search_hotels(city: str, checkin: str, checkout: str, guests: int = 1) -> list[Hotel]:
    """The three hotels of a city for a stay (inputs validated)."""
    code = city_code(city)
    stay_nights(checkin, checkout)
    _party(guests, "guests")
    return [make_hotel(code, n, city) for n in (1, 2, 3)]


# --- the stateful store ------------------------------------------------------------------------
@dataclass
class _Records:
    seats: dict[str, int] = field(default_factory=dict)
    bookings: dict[str, dict[str, Any]] = field(default_factory=dict)
    payments: dict[str, dict[str, Any]] = field(default_factory=dict)
    hotel_bookings: dict[str, dict[str, Any]] = field(default_factory=dict)
    trips: dict[str, dict[str, Any]] = field(default_factory=dict)
    waitlist: dict[str, dict[str, Any]] = field(default_factory=dict)
    counters: dict[str, int] = field(default_factory=dict)
    booking_cents: dict[str, int] = field(default_factory=dict)

    def next_id(self, prefix: str) -> str:
        self.counters[prefix] = self.counters.get(prefix, 0) + 1
        return f"{prefix}-{self.counters[prefix]:06d}"


class TravelState:
    """Every record the demo API keeps: bookings, payments, trips, waitlist and seat counts.

    Records are returned as fresh dicts, so callers can never change the state by accident.
    """

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Forget every record, seat count and id counter."""
        self._records = _Records()

    def record_counts(self) -> dict[str, int]:
        """How many records of each kind exist."""
        r = self._records
        return {
            "bookings": len(r.bookings),
            "payments": len(r.payments),
            "hotel_bookings": len(r.hotel_bookings),
            "trips": len(r.trips),
            "waitlist": len(r.waitlist),
        }

    # --- flights --------------------------------------------------------------------------
    def seats_available(self, flight: Flight) -> int:
        """Seats left on a flight (initial seats minus live bookings)."""
        return self._records.seats.setdefault(flight.id, initial_seats(flight))

    def check_availability(self, flight_id: str) -> dict[str, Any]:
        """``{flight_id, seats_available, available}`` for a flight id."""
        flight = parse_flight_id(flight_id)
        seats = self.seats_available(flight)
        return {"flight_id": flight.id, "seats_available": seats, "available": seats > 0}

    def create_booking(self, flight_id: str, passenger: str) -> dict[str, Any]:
        """Reserve one seat; raises TravelConflictError when the flight is sold out."""
        flight = parse_flight_id(flight_id)
        if self.seats_available(flight) <= 0:
            raise TravelConflictError(f"flight {flight.id} is sold out", field="flight_id")
        self._records.seats[flight.id] -= 1
        booking_id = self._records.next_id("BK")
        self._records.booking_cents[booking_id] = flight.fare_cents
        booking: dict[str, Any] = {
            "id": booking_id,
            "flight_id": flight.id,
            "passenger": passenger,
            "price": _euros(flight.fare_cents),
            "currency": CURRENCY,
            "status": "reserved",
        }
        self._records.bookings[booking_id] = booking
        return dict(booking)

    def process_payment(self, booking_id: str, amount: float | None = None) -> dict[str, Any]:
        """Capture a booking's price (``amount`` must equal it when given); booking → paid."""
        booking = self._booking(booking_id)
        if booking["status"] != "reserved":
            raise TravelConflictError(
                f"booking {booking_id} is {booking['status']}", field="booking_id"
            )
        cents = self._records.booking_cents[booking["id"]]
        if amount is not None and round(amount * 100) != cents:
            raise TravelInputError(
                f"'amount' must be the booking price {_euros(cents)}, got {amount}",
                field="amount",
            )
        payment: dict[str, Any] = {
            "id": self._records.next_id("PAY"),
            "booking_id": booking["id"],
            "amount": _euros(cents),
            "currency": CURRENCY,
            "status": "captured",
        }
        self._records.payments[payment["id"]] = payment
        booking["status"] = "paid"
        return dict(payment)

    def cancel_booking(self, booking_id: str) -> dict[str, Any]:
        """Cancel a flight booking and release its seat; cancelling again changes nothing."""
        booking = self._booking(booking_id)
        if booking["status"] != "cancelled":
            booking["status"] = "cancelled"
            self._records.seats[booking["flight_id"]] += 1
        return {"id": booking["id"], "status": "cancelled"}

    def add_to_waitlist(self, flight_id: str, passenger: str) -> dict[str, Any]:
        """Queue a passenger for a flight; ``position`` counts from 1 per flight."""
        flight = parse_flight_id(flight_id)
        position = 1 + sum(e["flight_id"] == flight.id for e in self._records.waitlist.values())
        entry: dict[str, Any] = {
            "id": self._records.next_id("WL"),
            "flight_id": flight.id,
            "passenger": passenger,
            "position": position,
        }
        self._records.waitlist[entry["id"]] = entry
        return dict(entry)

    # --- hotels and trips -----------------------------------------------------------------
    def book_hotel(self, hotel_id: str, checkin: str, checkout: str, guest: str) -> dict[str, Any]:
        """Reserve a hotel stay; hotels never run out of rooms."""
        hotel = parse_hotel_id(hotel_id)
        nights = stay_nights(checkin, checkout)
        booking: dict[str, Any] = {
            "id": self._records.next_id("HB"),
            "hotel_id": hotel.id,
            "checkin": checkin,
            "checkout": checkout,
            "guest": guest,
            "nights": nights,
            "total_price": _euros(hotel.price_per_night_cents * nights),
            "currency": CURRENCY,
            "status": "reserved",
        }
        self._records.hotel_bookings[booking["id"]] = booking
        return dict(booking)

    def cancel_hotel(self, booking_id: str) -> dict[str, Any]:
        """Cancel a hotel booking; cancelling again changes nothing."""
        booking = self._records.hotel_bookings.get(booking_id.strip().upper())
        if booking is None:
            raise TravelNotFoundError(f"no hotel booking {booking_id!r}", field="booking_id")
        booking["status"] = "cancelled"
        return {"id": booking["id"], "status": "cancelled"}

    def confirm_trip(self, flight_booking_id: str, hotel_booking_id: str) -> dict[str, Any]:
        """Tie a live flight booking and a live hotel booking into a confirmed trip."""
        flight = self._records.bookings.get(flight_booking_id.strip().upper())
        if flight is None:
            raise TravelNotFoundError(
                f"no flight booking {flight_booking_id!r}", field="flight_booking_id"
            )
        hotel = self._records.hotel_bookings.get(hotel_booking_id.strip().upper())
        if hotel is None:
            raise TravelNotFoundError(
                f"no hotel booking {hotel_booking_id!r}", field="hotel_booking_id"
            )
        for name, record in (("flight_booking_id", flight), ("hotel_booking_id", hotel)):
            if record["status"] == "cancelled":
                raise TravelConflictError(f"booking {record['id']} is cancelled", field=name)
        trip: dict[str, Any] = {
            "id": self._records.next_id("TRIP"),
            "flight_booking_id": flight["id"],
            "hotel_booking_id": hotel["id"],
            "status": "confirmed",
        }
        self._records.trips[trip["id"]] = trip
        return dict(trip)

    def _booking(self, booking_id: str) -> dict[str, Any]:
        booking = self._records.bookings.get(booking_id.strip().upper())
        if booking is None:
            raise TravelNotFoundError(f"no booking {booking_id!r}", field="booking_id")
        return booking
