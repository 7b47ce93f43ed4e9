"""The markdown workflow service with its real parts, and a scripted model that plays the LLM.

- The service runs on a real database (SQLite file; PostgreSQL where a test asks for it) with
  the registry root holding the travel tools and ``examples/travel/markdown``.
- :class:`Model` is the client LLM: it calls the five tools through
  :func:`~dynamic_tools.markdown.tool_specs.call_tool` (as the MCP adapter will), checks each
  answer against the tool's ``outputSchema``, and calls the travel tools for real: requests
  built by the project's request builder from the registry's tool configs, sent to the travel
  demo API in process.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest
from fastapi import FastAPI
from sqlalchemy import Engine

from dynamic_tools.demo.travel_api import create_travel_router
from dynamic_tools.http.request_builder import build_request
from dynamic_tools.markdown.service import MarkdownWorkflowService
from dynamic_tools.markdown.tool_specs import TOOL_SPECS, call_tool
from dynamic_tools.persistence.db import make_engine, migrate
from dynamic_tools.persistence.markdown_store import MarkdownSessionStore
from dynamic_tools.tools.registry import ToolRegistry
from tests.conftest import EXAMPLES
from tests.support.postgres import fresh_schema

TRAVEL_BASE = "http://travel.test"
OUTPUT_SCHEMAS = {spec["name"]: spec["outputSchema"] for spec in TOOL_SPECS}
FLIGHT_INPUTS = {"ORIGIN": "AMS", "DESTINATION": "BCN", "DATE": "2026-12-01", "PASSENGER": "Ada"}


@pytest.fixture
def markdown_root(registry_root: Path) -> Path:
    """The registry root: travel tools and the markdown examples."""
    shutil.copytree(EXAMPLES / "markdown", registry_root / "markdown")
    return registry_root


@pytest.fixture
def tools(markdown_root: Path) -> ToolRegistry:
    registry = ToolRegistry(markdown_root / "tools", variables={"PUBLIC_BASE_URL": TRAVEL_BASE})
    assert registry.reload() == []
    return registry


@pytest.fixture
async def travel() -> AsyncIterator[httpx.AsyncClient]:
    """The travel demo API, in process, with fresh state."""
    app = FastAPI()
    app.include_router(create_travel_router(), prefix="/demo/travel")
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url=TRAVEL_BASE) as client:
        yield client


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'markdown.sqlite'}"


@pytest.fixture
def pg_schema() -> Iterator[tuple[str, str]]:
    """``(url, schema)`` of a fresh PostgreSQL schema; fails if PostgreSQL does not answer."""
    with fresh_schema("dt_mdflow") as found:
        yield found


def open_service(
    url: str, root: Path, schema: str | None = None
) -> tuple[Engine, MarkdownWorkflowService]:
    """A service as a server builds it: an engine, migrations, the store."""
    engine = make_engine(url, schema=schema)
    migrate(engine)
    return engine, MarkdownWorkflowService(MarkdownSessionStore(engine), root)


@pytest.fixture
def service(sqlite_url: str, markdown_root: Path) -> Iterator[MarkdownWorkflowService]:
    engine, service = open_service(sqlite_url, markdown_root)
    yield service
    engine.dispose()


@dataclass
class Model:
    """The client LLM of one MCP session, scripted by the test."""

    service: MarkdownWorkflowService
    tools: ToolRegistry
    travel: httpx.AsyncClient
    transport_session_id: str | None = field(default_factory=lambda: uuid.uuid4().hex)
    callable_tools: set[str] | None = None
    calls: list[str] = field(default_factory=list)

    async def mcp(self, name: str, **arguments: Any) -> dict[str, Any]:
        """Call one of the five tools; the answer must fit the tool's output schema."""
        allowed = (
            self.callable_tools if self.callable_tools is not None else set(self.tools.names())
        )
        answer = await call_tool(
            self.service,
            name,
            arguments,
            transport_session_id=self.transport_session_id,
            callable_tools=allowed,
        )
        jsonschema.validate(answer, OUTPUT_SCHEMAS[name])
        return answer

    async def use(self, tool: str, **arguments: Any) -> tuple[int, Any]:
        """Call a travel tool for real: ``(HTTP status, JSON body)``."""
        self.calls.append(tool)
        request = build_request(self.tools.get(tool), arguments, secret=lambda _: None)
        response = await self.travel.request(
            request.method, request.url, params=request.query, json=request.body
        )
        return response.status_code, response.json()


@pytest.fixture
def model(
    service: MarkdownWorkflowService, tools: ToolRegistry, travel: httpx.AsyncClient
) -> Model:
    return Model(service, tools, travel)


async def play_book_flight_step(model: Model, step: dict[str, Any]) -> dict[str, Any]:
    """Carry out one step of ``book_flight.md`` as a model would; the report's arguments."""
    inputs = step["inputs"]
    number = step["step_number"]
    if number == 0:
        status, flights = await model.use(
            "search_flights",
            origin=inputs["ORIGIN"],
            destination=inputs["DESTINATION"],
            date=inputs["DATE"],
        )
        ok = status == 200 and len(flights) > 0
        same_route = ok and all(
            f["origin"] == inputs["ORIGIN"] and f["destination"] == inputs["DESTINATION"]
            for f in flights
        )
        return report(
            step,
            ok and same_route,
            [ok, same_route],
            {"FLIGHT_ID": flights[0]["id"], "PRICE": flights[0]["price"]} if ok else {},
        )
    if number == 1:
        status, seats = await model.use("check_availability", flight_id=inputs["FLIGHT_ID"])
        checks = [
            status == 200 and seats["available"] is True,
            status == 200 and seats["seats_available"] >= 1,
        ]
        outputs = {"SEATS_AVAILABLE": seats["seats_available"]} if status == 200 else {}
        return report(
            step,
            all(checks),
            checks,
            outputs,
            error="" if status == 200 else f"HTTP {status}: {seats}",
        )
    status, booking = await model.use(
        "create_booking", flight_id=inputs["FLIGHT_ID"], passenger=inputs["PASSENGER"]
    )
    checks = [
        status == 201 and booking["status"] == "reserved",
        status == 201 and booking["flight_id"] == inputs["FLIGHT_ID"],
    ]
    outputs = (
        {"BOOKING_ID": booking["id"], "BOOKING_STATUS": booking["status"]} if status == 201 else {}
    )
    return report(step, all(checks), checks, outputs)


def report(
    step: dict[str, Any], passed: bool, checks: list[bool], outputs: dict[str, Any], error: str = ""
) -> dict[str, Any]:
    """``report_step_result`` arguments for ``step``: one result per assertion, in order."""
    return {
        "step_number": step["step_number"],
        "status": "passed" if passed else "failed",
        "assertion_results": [
            {"assertion": text, "passed": ok, "detail": "checked against the tool result"}
            for text, ok in zip(step["assertions"], checks, strict=True)
        ],
        "output_variables": outputs,
        "error_message": error if not passed else "",
    }
