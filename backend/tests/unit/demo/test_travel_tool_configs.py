"""The travel example's tool configs: valid ToolConfigs that match the demo API they call."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from fastapi import FastAPI
from fastapi.routing import APIRoute
from jsonschema import Draft202012Validator

from dynamic_tools.demo import OPERATIONS, create_travel_router
from dynamic_tools.tools.models import ToolConfig

TOOLS_DIR = Path(__file__).resolve().parents[4] / "examples" / "travel" / "tools"
BASE_URL = "${PUBLIC_BASE_URL}/demo/travel"


def _load_all() -> dict[str, ToolConfig]:
    configs = {}
    for path in sorted(TOOLS_DIR.glob("*.yaml")):
        config = ToolConfig.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
        assert path.stem == config.name, f"{path.name} should be named after its tool"
        configs[config.name] = config
    return configs


CONFIGS = _load_all()


def test_every_file_loads_and_the_names_are_the_ten_operations() -> None:
    assert len(list(TOOLS_DIR.glob("*.yaml"))) == 10
    assert sorted(CONFIGS) == sorted(OPERATIONS)


@pytest.mark.parametrize("name", OPERATIONS)
def test_config_is_documented_and_points_at_the_demo(name: str) -> None:
    config = CONFIGS[name]
    assert config.api.base_url == BASE_URL
    assert config.template_variables() == ["PUBLIC_BASE_URL"]
    assert len(config.description) >= 40
    assert config.output_schema is not None
    assert config.hints.category and config.hints.hint and config.hints.outputs
    for param_name, param in config.parameters.items():
        assert param.schema_.get("description"), f"{name}.{param_name} has no description"


def test_hints_follow_the_booking_order() -> None:
    hints = {name: config.hints for name, config in CONFIGS.items()}
    assert (hints["search_flights"].category, hints["search_flights"].next) == (
        "search",
        ["check_availability"],
    )
    assert hints["check_availability"].category == "validation"
    assert hints["check_availability"].requires == ["search_flights"]
    assert hints["check_availability"].next == ["create_booking", "add_to_waitlist"]
    assert hints["create_booking"].category == "action"
    assert hints["create_booking"].requires == ["check_availability"]
    assert hints["create_booking"].next == ["process_payment"]
    assert hints["process_payment"].category == "finalization"
    assert hints["process_payment"].requires == ["create_booking"]
    for hint in hints.values():
        assert set(hint.requires) | set(hint.next) <= set(OPERATIONS)


def test_every_config_matches_a_route_of_the_demo_router() -> None:
    routes = {
        route.name: route for route in create_travel_router().routes if isinstance(route, APIRoute)
    }
    for name, config in CONFIGS.items():
        route = routes[name]
        assert route.path == config.api.path
        assert route.methods == {config.api.method}


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    app = FastAPI()
    app.include_router(create_travel_router(), prefix="/demo/travel")
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://demo") as http:
        yield http


async def _call(client: httpx.AsyncClient, name: str, args: dict[str, Any]) -> Any:
    """Call the demo the way a tool config says: path, query and body from the parameters."""
    config = CONFIGS[name]
    path = config.api.path
    query, body = {}, {}
    for key, value in args.items():
        where = config.parameters[key].location
        if where == "path":
            path = path.replace("{" + key + "}", str(value))
        elif where == "query":
            query[key] = value
        else:
            body[key] = value
    url = "/demo/travel" + path
    response = await client.request(
        config.api.method, url, params=query, json=body if body else None
    )
    assert response.status_code < 300, response.text
    data = response.json()
    assert config.output_schema is not None
    Draft202012Validator(config.output_schema).validate(data)
    Draft202012Validator(config.input_schema()).validate(args)
    return data


async def test_answers_match_the_output_schemas(client: httpx.AsyncClient) -> None:
    flights = await _call(
        client,
        "search_flights",
        {"origin": "AMS", "destination": "BCN", "date": "2025-06-01", "passengers": 1},
    )
    availability = await _call(client, "check_availability", {"flight_id": flights[0]["id"]})
    assert availability["available"] is True
    booking = await _call(
        client, "create_booking", {"flight_id": flights[0]["id"], "passenger": "Ada"}
    )
    await _call(client, "process_payment", {"booking_id": booking["id"]})
    stay = {"checkin": "2025-06-01", "checkout": "2025-06-04"}
    hotels = await _call(client, "search_hotels", {"city": "Barcelona", **stay, "guests": 1})
    hotel = await _call(client, "book_hotel", {"hotel_id": hotels[0]["id"], **stay, "guest": "Ada"})
    await _call(
        client,
        "confirm_trip",
        {"flight_booking_id": booking["id"], "hotel_booking_id": hotel["id"]},
    )
    await _call(client, "add_to_waitlist", {"flight_id": flights[2]["id"], "passenger": "Bob"})
    await _call(client, "cancel_booking", {"booking_id": booking["id"]})
    await _call(client, "cancel_hotel", {"booking_id": hotel["id"]})
    stats = (await client.get("/demo/travel/_stats")).json()["operations"]
    assert all(stats[name]["executed"] == 1 for name in OPERATIONS)
