"""A real GraphQL server on loopback (ariadne over uvicorn), for GraphQL targets (test code).

A small flights API: queries ``flights``, ``flight`` (an unknown id answers a GraphQL error at
path ``flight``) and ``flightStatus``; the mutation ``createBooking``. Every request needs
``Authorization: Bearer <TOKEN>`` (introspection too), unless it is served without a token (a
public API); ``seen`` records each request's operation text and the header, ``query_strings``
its query string, ``bookings`` what the mutation created.

Broken introspection answers, chosen by the endpoint's query string (``?shape=…``) or served as
a file (``/introspection.json?shape=…``): ``deep`` wraps ``Query.flight``'s type in
:data:`DEEP_WRAPPERS` lists and non-nulls (the JSON nests past 100 levels), ``wrapped`` in
:data:`WRAPPERS` (valid JSON, 30 wrappers).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ariadne import MutationType, QueryType, make_executable_schema
from ariadne.asgi import GraphQL
from graphql import GraphQLSchema, introspection_from_schema
from starlette.applications import Starlette
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from tests.support.servers import serve

TOKEN = "Bearer graph-secret-7d21aa"
SDL = """
type Query {
  "Flights between two airports on a day (YYYY-MM-DD)"
  flights(origin: String!, destination: String!, date: String!): [Flight!]!
  "One flight by id"
  flight(id: ID!): Flight
  "The live status of a flight number"
  flightStatus(number: String!): FlightStatus
}

type Mutation {
  "Book a seat on a flight"
  createBooking(flightId: ID!, passenger: String!): Booking!
}

type Flight {
  id: ID!
  airline: String!
  price: Float!
  seatsAvailable: Int!
}

type FlightStatus {
  number: String!
  status: String!
}

type Booking {
  id: ID!
  passenger: String!
  flight: Flight!
}
"""
WRAPPERS = 30
DEEP_WRAPPERS = 120
FLIGHTS = [
    {"id": "FL-1", "airline": "KLM", "price": 120.0, "seatsAvailable": 3},
    {"id": "FL-2", "airline": "Vueling", "price": 89.5, "seatsAvailable": 0},
]


@dataclass
class GraphQLApi:
    """The running server: its endpoint and what it saw."""

    url: str = ""
    token: str | None = TOKEN  # None: a public API, no credential needed
    seen: list[tuple[str, str | None]] = field(default_factory=list)
    query_strings: list[str] = field(default_factory=list)
    bookings: list[dict[str, Any]] = field(default_factory=list)

    @property
    def endpoint(self) -> str:
        """The GraphQL endpoint (X-Target-URL)."""
        return f"{self.url}/graphql"

    @property
    def schema_url(self) -> str:
        """The schema as SDL (X-Schema-URL)."""
        return f"{self.url}/schema.graphql"

    @property
    def host(self) -> str:
        """host:port, for ALLOWED_TARGET_HOSTS."""
        return self.url.removeprefix("http://")


def graphql_app(api: GraphQLApi) -> Starlette:
    """The flights schema behind a bearer token."""
    query, mutation = QueryType(), MutationType()

    @query.field("flights")
    def flights(*_: Any, origin: str, destination: str, date: str) -> list[dict[str, Any]]:
        return FLIGHTS

    @query.field("flight")
    def flight(*_: Any, id: str) -> dict[str, Any]:
        for found in FLIGHTS:
            if found["id"] == id:
                return found
        raise ValueError(f"Flight {id} not found")

    @query.field("flightStatus")
    def flight_status(*_: Any, number: str) -> dict[str, Any]:
        return {"number": number, "status": "ON_TIME"}

    @mutation.field("createBooking")
    def create_booking(*_: Any, flightId: str, passenger: str) -> dict[str, Any]:
        booking = {"id": f"BK-{len(api.bookings) + 1}", "passenger": passenger}
        booking["flight"] = next(f for f in FLIGHTS if f["id"] == flightId)
        api.bookings.append(booking)
        return booking

    schema = make_executable_schema(SDL, query, mutation)

    class Bearer(BaseHTTPMiddleware):
        async def dispatch(self, request: Request, call_next: Any) -> Response:
            if request.url.path != "/graphql":
                answered: Response = await call_next(request)
                return answered
            body = await request.json()
            given = request.headers.get("authorization")
            operation = str(body.get("query", ""))
            api.seen.append((operation[:200], given))
            api.query_strings.append(request.url.query)
            if api.token is not None and given != api.token:
                return JSONResponse({"errors": [{"message": "unauthorized"}]}, status_code=401)
            shape = request.query_params.get("shape")
            if shape and "__schema" in operation:
                return JSONResponse({"data": broken_introspection(schema, shape)})
            response: Response = await call_next(request)
            return response

    async def sdl(_: Request) -> PlainTextResponse:
        return PlainTextResponse(SDL)

    async def introspection_file(request: Request) -> JSONResponse:
        return JSONResponse(broken_introspection(schema, request.query_params.get("shape", "")))

    app = Starlette(
        routes=[
            Route("/schema.graphql", sdl),
            Route("/introspection.json", introspection_file),
            Route("/graphql", GraphQL(schema), methods=["GET", "POST"]),
        ]
    )
    app.add_middleware(Bearer)
    return app


def broken_introspection(schema: GraphQLSchema, shape: str) -> dict[str, Any]:
    """The schema's introspection answer with ``Query.flight``'s type wrapped ``shape`` deep."""
    answer: dict[str, Any] = copy.deepcopy(dict(introspection_from_schema(schema)))
    wrappers = {"deep": DEEP_WRAPPERS, "wrapped": WRAPPERS}.get(shape, 0)
    kind: dict[str, Any] = {"kind": "OBJECT", "name": "Flight", "ofType": None}
    for level in range(wrappers):
        kind = {"kind": "LIST" if level % 2 else "NON_NULL", "name": None, "ofType": kind}
    query = next(t for t in answer["__schema"]["types"] if t["name"] == "Query")
    next(f for f in query["fields"] if f["name"] == "flight")["type"] = kind
    return answer


@contextmanager
def running_graphql_api(token: str | None = TOKEN) -> Iterator[GraphQLApi]:
    """Serve the GraphQL API on loopback until the block ends (``token=None``: public)."""
    api = GraphQLApi(token=token)
    with serve(graphql_app(api)) as url:
        api.url = url
        yield api
