"""POST /workflows/{id}/dry-run: mocks instead of calls, nothing recorded."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from dynamic_tools.api.app import create_app
from dynamic_tools.settings import Settings
from tests.conftest import EXAMPLES
from tests.support.app_client import app_client

FLIGHTS = [
    {"id": "FL-1", "airline": "KLM", "departure_time": "07:10", "price": 99.0},
    {"id": "FL-2", "airline": "KLM", "departure_time": "12:40", "price": 120.0},
]
PARAMS = {"origin": "AMS", "destination": "BCN", "date": "2026-12-01", "passenger": "Ada"}


async def test_dry_runs_use_mocks_answer_yields_and_record_nothing(
    tmp_path: Path, make_settings: Callable[..., Settings]
) -> None:
    settings = make_settings(
        registry_config_path=tmp_path / "reg" / "config.yaml", seed_examples_from=EXAMPLES
    )
    async with app_client(create_app(settings)) as client:
        mocks = {
            "search_flights": FLIGHTS,
            "check_availability": {"seats_available": 0},
            "add_to_waitlist": {"id": "WL-1", "position": 3},
        }
        waitlisted = await client.post(
            "/workflows/book_flight/dry-run", json={"params": PARAMS, "mocks": mocks}
        )
        assert waitlisted.status_code == 200, waitlisted.text
        body = waitlisted.json()
        assert body["status"] == "succeeded" and body["result"] == {"id": "WL-1", "position": 3}
        assert [c["tool"] for c in body["calls"]] == [
            "search_flights",
            "check_availability",
            "add_to_waitlist",
        ]
        assert body["nodes"]["reserve"]["status"] == "skipped"

        retried = await client.post(
            "/workflows/book_flight/dry-run",
            json={
                "params": PARAMS,
                "mocks": {
                    **mocks,
                    "check_availability": {"seats_available": 2},
                    "create_booking": {
                        "responses": [{"status_code": 503, "body": {}}, {"id": "BK-1"}]
                    },
                },
            },
        )
        assert retried.json()["result"] == {"id": "BK-1"}
        assert retried.json()["nodes"]["reserve"]["attempts"] == 2

        approval = {
            "params": PARAMS,
            "mocks": {
                **mocks,
                "create_booking": {"id": "BK-2"},
                "process_payment": {"id": "PAY-1"},
            },
        }
        waiting = await client.post("/workflows/book_with_approval/dry-run", json=approval)
        assert waiting.json()["status"] == "waiting_input"
        answered = await client.post(
            "/workflows/book_with_approval/dry-run",
            json={**approval, "answers": {"present_options": {"selected_flight_id": "FL-2"}}},
        )
        assert answered.json()["status"] == "succeeded"
        assert answered.json()["calls"][1]["args"]["flight_id"] == "FL-2"

        bad = await client.post("/workflows/book_flight/dry-run", json={"params": {}})
        assert bad.status_code == 422
        assert (await client.get("/runs")).json()["runs"] == []
