"""An Arazzo export, imported again, makes the same calls: same method, URL (path and query),
headers and body, auth included (docs/arazzo.md, "Export").

Each case runs a workflow in one registry, exports it (``GET /workflows/{id}?format=arazzo``),
writes the two exported files into a second, empty registry, imports them there
(``POST /catalogs``, no ``base_url``: the export's servers are used) and runs the imported
workflow. Both registries send to ONE loopback recording server and read the same tool secrets
(``SECRETS_DIR``); the recorder masks the secrets' values as ``***`` and the test checks they
were sent. The cases: the travel example's ``book_flight`` (both branches) and ``book_hotel``;
an imported Arazzo document whose OpenAPI source has a bearer scheme and an api key in the
query; the runner fixture ``pet_coupons`` (oauth2 and an api key header, a sub-workflow);
hand-written tools with static query, header and body values, a bearer, an api key and a
basic auth secret of their own, on two base URLs.
"""

from __future__ import annotations

import base64
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from dynamic_tools.api.app import create_app
from dynamic_tools.settings import Settings
from tests.conftest import EXAMPLES
from tests.support.app_client import app_client
from tests.support.arazzo_conformance import RUNNER_FIXTURES, MockApi, case_mocks
from tests.support.mocked_runs import wait_for
from tests.support.servers import serve

SECRETS = {
    "PETS_TOKEN": "pets-token-5f1c",
    "PET_COUPONS_TOKEN": "coupons-token-77ab",
    "VET_TOKEN": "vet-token-19de",
    "WEATHER_KEY": "weather-key-3c08",
    "DB_PASS": "db-pass-a41e",
}
MASKED = (*SECRETS.values(), base64.b64encode(f"ada:{SECRETS['DB_PASS']}".encode()).decode())
PER_RUN_HEADERS = frozenset({"idempotency-key", "traceparent", "tracestate"})
"""Headers that differ on every run by design (the engine's step key, the trace context)."""


@dataclass
class Recorder(MockApi):
    """The conformance harness's mock API, recording each request with its secrets masked."""

    seen: list[dict[str, Any]] = field(default_factory=list)
    secrets_sent: int = 0

    def reset(self, mocks: list[dict[str, Any]]) -> None:
        super().reset(mocks)
        self.seen, self.secrets_sent = [], 0

    async def answer(self, request: Request) -> Response:
        body = (await request.body()).decode()
        headers = {
            k.lower(): v for k, v in request.headers.items() if k.lower() not in PER_RUN_HEADERS
        }
        call = {
            "method": request.method,
            "path": request.url.path,
            "query": request.url.query,
            "headers": headers,
            "body": body,
        }
        self.seen.append(self._masked(call))
        return await super().answer(request)

    def _masked(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: self._masked(v) for k, v in value.items()}
        for secret in MASKED:
            self.secrets_sent += value.count(secret)
            value = value.replace(secret, "***")
        return value


@pytest.fixture(scope="module")
def recorder() -> Iterator[tuple[Recorder, str]]:
    api = Recorder()
    methods = ["GET", "POST", "PUT", "PATCH", "DELETE"]
    with serve(Starlette(routes=[Route("/{path:path}", api.answer, methods=methods)])) as url:
        yield api, url


@pytest.fixture
def secrets_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "secrets"
    folder.mkdir()
    for name, value in SECRETS.items():
        (folder / name).write_text(value, encoding="utf-8")
    return folder


@dataclass
class Case:
    """Two registries sharing the recorder and the secrets."""

    recorder: Recorder
    url: str
    tmp: Path
    make_settings: Any
    secrets_dir: Path

    def settings(self, name: str, **extra: Any) -> Settings:
        settings: Settings = self.make_settings(
            registry_config_path=self.tmp / name / "config.yaml",
            allowed_target_hosts=[self.url.split("://")[1]],
            secrets_dir=self.secrets_dir,
            public_base_url=self.url,
            **extra,
        )
        return settings

    async def run(self, client: Any, workflow: str, params: dict[str, Any], mocks: list) -> Any:
        self.recorder.reset(mocks)
        started = await client.post(f"/workflows/{workflow}/runs", json={"params": params})
        assert started.status_code == 202, started.text
        run = await wait_for(client, started.json()["run_id"], timeout_s=20)
        assert not self.recorder.unmatched, self.recorder.unmatched
        return run, list(self.recorder.seen), self.recorder.secrets_sent

    async def round_trip(
        self,
        original: Settings,
        workflow: str,
        params: dict[str, Any],
        mocks: list[dict[str, Any]],
        *,
        prepare: Any = None,
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """The calls of ``workflow`` in ``original``; the same run of its export, compared."""
        async with app_client(create_app(original)) as client:
            if prepare is not None:
                await prepare(client)
            first, calls, secrets = await self.run(client, workflow, params, mocks)
            answer = await client.get(f"/workflows/{workflow}", params={"format": "arazzo"})
            assert answer.status_code == 200, answer.text
            export = answer.json()
            tools = {t["name"]: t for t in (await client.get("/tools")).json()["tools"]}
        again = self.settings("again")
        folder = again.registry_root / "exports"
        folder.mkdir(parents=True)
        document = folder / f"{workflow}.arazzo.yaml"
        document.write_text(yaml.safe_dump(export["arazzo"], sort_keys=False), encoding="utf-8")
        (folder / export["openapi_file"]).write_text(
            yaml.safe_dump(export["openapi"], sort_keys=False), encoding="utf-8"
        )
        async with app_client(create_app(again)) as client:
            imported = await client.post("/catalogs", json={"source": str(document), "name": "rt"})
            assert imported.status_code == 201, imported.text
            assert workflow in imported.json()["workflows"]
            # the tool secrets the export names, set here too; the import says who chose them
            named = {s["x-dynamic-tools-secret"] for s in _schemes(export["openapi"])}
            assert {s["secret"] for s in imported.json()["secrets"]} == {
                f"secret:{n}" for n in named
            }
            assert all(s["set"] for s in imported.json()["secrets"]), imported.json()["secrets"]
            messages = " ".join(w["message"] for w in imported.json()["warnings"])
            assert all(f"names the tool secret secret:{n}" in messages for n in named)
            second, calls_again, secrets_again = await self.run(client, workflow, params, mocks)
            tools_again = {t["name"]: t for t in (await client.get("/tools")).json()["tools"]}
        assert first["status"] == second["status"] == "succeeded", (first, second)
        assert calls_again == calls  # method, path, query, headers and body, in order
        assert secrets_again == secrets
        # the same tool secrets, by reference (only the catalog's prefix differs)
        auth = {n.removeprefix("rt_"): t.get("auth") for n, t in tools_again.items()}
        assert auth == {n: tools[n].get("auth") for n in auth}, export["openapi"]
        return calls, export


def _schemes(openapi: dict[str, Any]) -> list[dict[str, Any]]:
    return list(openapi.get("components", {}).get("securitySchemes", {}).values())


@pytest.fixture
def case(
    recorder: tuple[Recorder, str], tmp_path: Path, make_settings: Any, secrets_dir: Path
) -> Case:
    api, url = recorder
    return Case(api, url, tmp_path, make_settings, secrets_dir)


# --- the travel example ----------------------------------------------------------------------
def _travel_mocks(seats: int) -> list[dict[str, Any]]:
    flight = {
        "id": "FL-AMSBCN-20261201-1",
        "origin": "AMS",
        "destination": "BCN",
        "date": "2026-12-01",
        "departure_time": "09:00",
        "airline": "KL",
        "price": 99.0,
        "currency": "EUR",
    }
    hotel = {
        "id": "HT-LIS-1",
        "name": "Sol",
        "city": "LIS",
        "price_per_night": 80,
        "currency": "EUR",
    }
    booking = {"flight_id": flight["id"], "passenger": "Ada", "price": 99.0, "currency": "EUR"}
    return [
        {"path": "/demo/travel/flights", "method": "get", "response": [flight]},
        {
            "path": "/demo/travel/flights/{id}/availability",
            "response": {
                "flight_id": flight["id"],
                "seats_available": seats,
                "available": seats > 0,
            },
        },
        {
            "path": "/demo/travel/bookings",
            "method": "post",
            "response": {"id": "BK-1", **booking, "status": "reserved"},
        },
        {
            "path": "/demo/travel/waitlist",
            "method": "post",
            "response": {
                "id": "WL-1",
                "flight_id": flight["id"],
                "passenger": "Ada",
                "position": 1,
            },
        },
        {"path": "/demo/travel/hotels", "method": "get", "response": [hotel]},
        {
            "path": "/demo/travel/hotel-bookings",
            "method": "post",
            "response": {
                "id": "HB-1",
                "hotel_id": "HT-LIS-1",
                "checkin": "2026-12-01",
                "checkout": "2026-12-03",
                "guest": "Ada",
                "nights": 2,
                "total_price": 160,
                "currency": "EUR",
                "status": "reserved",
            },
        },
    ]


@pytest.mark.parametrize(
    ("workflow", "seats", "paths"),
    [
        ("book_flight", 3, ["/flights", "/flights/FL-AMSBCN-20261201-1/availability", "/bookings"]),
        ("book_flight", 0, ["/flights", "/flights/FL-AMSBCN-20261201-1/availability", "/waitlist"]),
        ("book_hotel", 3, ["/hotels", "/hotel-bookings"]),
    ],
)
async def test_the_travel_workflows_export_makes_the_same_calls(
    case: Case, workflow: str, seats: int, paths: list[str]
) -> None:
    params = {
        "book_flight": {
            "origin": "AMS",
            "destination": "BCN",
            "date": "2026-12-01",
            "passenger": "Ada",
        },
        "book_hotel": {
            "city": "LIS",
            "checkin": "2026-12-01",
            "checkout": "2026-12-03",
            "guest": "Ada",
        },
    }[workflow]
    original = case.settings("travel", seed_examples_from=EXAMPLES)
    calls, export = await case.round_trip(original, workflow, params, _travel_mocks(seats))
    assert [c["path"].removeprefix("/demo/travel") for c in calls] == paths
    assert calls[0]["query"]  # the search's arguments, in the query
    assert calls[-1]["body"].startswith("{") and "Ada" in calls[-1]["body"]
    assert export["openapi"]["servers"] == [{"url": f"{case.url}/demo/travel"}]


# --- an imported Arazzo document: bearer and an api key in the query --------------------------
PETS_OPENAPI = {
    "openapi": "3.1.0",
    "info": {"title": "Pets", "version": "1"},
    "servers": [{"url": "https://pets.example.com/v1"}],
    "security": [{"bearer": []}],
    "components": {
        "securitySchemes": {
            "bearer": {"type": "http", "scheme": "bearer"},
            "key": {"type": "apiKey", "in": "query", "name": "api_key"},
        }
    },
    "paths": {
        "/pets": {
            "get": {
                "operationId": "listPets",
                "parameters": [{"name": "kind", "in": "query", "schema": {"type": "string"}}],
                "responses": {"200": {"description": "ok"}},
            }
        },
        "/pets/{petId}": {
            "get": {
                "operationId": "getPet",
                "security": [{"key": []}],
                "parameters": [
                    {"name": "petId", "in": "path", "required": True, "schema": {"type": "string"}},
                    {"name": "X-Trace", "in": "header", "schema": {"type": "string"}},
                ],
                "responses": {"200": {"description": "ok"}},
            }
        },
        "/pets/{petId}/visits": {
            "post": {
                "operationId": "addVisit",
                "parameters": [
                    {"name": "petId", "in": "path", "required": True, "schema": {"type": "string"}}
                ],
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "required": ["note"],
                                "properties": {
                                    "note": {"type": "string"},
                                    "urgent": {"type": "boolean"},
                                },
                            }
                        }
                    },
                },
                "responses": {"200": {"description": "ok"}},
            }
        },
    },
}
PETS_ARAZZO = {
    "arazzo": "1.0.1",
    "info": {"title": "Pet visits", "version": "1"},
    "sourceDescriptions": [{"name": "pets", "url": "./pets.openapi.yaml", "type": "openapi"}],
    "workflows": [
        {
            "workflowId": "visit_pet",
            "inputs": {
                "type": "object",
                "properties": {"kind": {"type": "string"}, "note": {"type": "string"}},
            },
            "steps": [
                {
                    "stepId": "find",
                    "operationId": "listPets",
                    "parameters": [{"name": "kind", "in": "query", "value": "$inputs.kind"}],
                    "outputs": {"petId": "$response.body#/0/id"},
                },
                {
                    "stepId": "look",
                    "operationId": "getPet",
                    "parameters": [
                        {"name": "petId", "in": "path", "value": "$steps.find.outputs.petId"},
                        {"name": "X-Trace", "in": "header", "value": "t-1"},
                    ],
                },
                {
                    "stepId": "visit",
                    "operationId": "addVisit",
                    "parameters": [
                        {"name": "petId", "in": "path", "value": "$steps.find.outputs.petId"}
                    ],
                    "requestBody": {
                        "contentType": "application/json",
                        "payload": {"note": "$inputs.note", "urgent": True},
                    },
                },
            ],
            "outputs": {"petId": "$steps.find.outputs.petId"},
        }
    ],
}
PETS_MOCKS = [
    {"path": "/v1/pets", "method": "get", "response": [{"id": "P7"}]},
    {"path": "/v1/pets/{id}", "method": "get", "response": {"id": "P7", "name": "Rex"}},
    {"path": "/v1/pets/{id}/visits", "method": "post", "response": {"ok": True}},
]


async def test_an_imported_documents_export_keeps_its_bearer_and_query_key(case: Case) -> None:
    original = case.settings("pets")
    folder = original.registry_root / "pets"
    folder.mkdir(parents=True)
    (folder / "pets.openapi.yaml").write_text(yaml.safe_dump(PETS_OPENAPI), encoding="utf-8")
    (folder / "pets.arazzo.yaml").write_text(yaml.safe_dump(PETS_ARAZZO), encoding="utf-8")

    async def load(client: Any) -> None:
        imported = await client.post(
            "/catalogs",
            json={
                "source": str(folder / "pets.arazzo.yaml"),
                "name": "pets",
                "base_url": f"{case.url}/v1",
            },
        )
        assert imported.status_code == 201, imported.text

    params = {"kind": "dog", "note": "check-up"}
    calls, export = await case.round_trip(original, "visit_pet", params, PETS_MOCKS, prepare=load)
    assert [(c["method"], c["path"], c["query"]) for c in calls] == [
        ("GET", "/v1/pets", "kind=dog"),
        ("GET", "/v1/pets/P7", "api_key=***"),
        ("POST", "/v1/pets/P7/visits", ""),
    ]
    assert calls[0]["headers"]["authorization"] == "Bearer ***"
    assert "authorization" not in calls[1]["headers"] and calls[1]["headers"]["x-trace"] == "t-1"
    assert calls[2]["body"] == '{"note":"check-up","urgent":true}'
    schemes = export["openapi"]["components"]["securitySchemes"]
    assert {s["x-dynamic-tools-secret"] for s in schemes.values()} == {"PETS_TOKEN"}
    assert "x-dynamic-tools-secret" in str(export["openapi"]) and "pets-token" not in str(export)


# --- a runner fixture: oauth2 and an api key header, a sub-workflow ---------------------------
async def test_the_pet_coupons_fixtures_export_makes_the_same_calls(case: Case) -> None:
    fixture = RUNNER_FIXTURES / "pet_coupons"
    config = yaml.safe_load((fixture / "test_config.yaml").read_text(encoding="utf-8"))
    wanted = next(c for c in config["workflows"] if c["id"] == "apply-coupon")
    original = case.settings("coupons")
    shutil.copytree(fixture, original.registry_root / "pet_coupons")

    async def load(client: Any) -> None:
        imported = await client.post(
            "/catalogs",
            json={
                "source": str(original.registry_root / "pet_coupons" / "pet-coupons.arazzo.yaml"),
                "name": "pet-coupons",
                "lenient": True,
                "base_url": case.url,
            },
        )
        assert imported.status_code == 201, imported.text

    calls, export = await case.round_trip(
        original, "apply_coupon", wanted["inputs"], case_mocks(config, wanted), prepare=load
    )
    assert [(c["method"], c["path"]) for c in calls] == [
        ("GET", "/pet/findByTags"),
        ("GET", "/pet/123/coupons"),
        ("POST", "/store/order"),
    ]
    assert [w["workflowId"] for w in export["arazzo"]["workflows"]] == [
        "apply_coupon",
        "place_order",
    ]
    # findPetsByTags: oauth2 (a bearer token); getPetCoupons: its api_key header first;
    # placeOrder: no security
    sent = [(c["headers"].get("authorization"), c["headers"].get("api_key")) for c in calls]
    assert sent == [("Bearer ***", None), (None, "***"), (None, None)]


# --- hand-written tools: static params, secrets of their own, two base URLs ------------------
def _tools(url: str) -> dict[str, dict[str, Any]]:
    return {
        "vet_list": {
            "description": "List the pets of a vet",
            "api": {"method": "GET", "base_url": f"{url}/vet", "path": "/pets"},
            "parameters": {"kind": {"type": "string", "in": "query", "required": True}},
            "static_params": {"query": {"page_size": 50, "lang": "en"}, "header": {"X-Mode": "a"}},
            "auth": {"type": "bearer", "secret": "secret:VET_TOKEN"},
        },
        "vet_visit": {
            "description": "Add a visit",
            "api": {"method": "POST", "base_url": f"{url}/vet", "path": "/pets/{id}/visits"},
            "parameters": {
                "id": {"type": "string", "in": "path", "required": True},
                "note": {"type": "string", "in": "body", "required": True},
            },
            "static_params": {"body": {"source": "export", "level": 2}},
            "auth": {
                "type": "api_key",
                "in": "header",
                "name": "X-Vet-Key",
                "secret": "secret:VET_TOKEN",
            },
        },
        "weather": {
            "description": "The forecast of a city",
            "api": {"method": "GET", "base_url": f"{url}/weather", "path": "/f"},
            "parameters": {"city": {"type": "string", "in": "query", "required": True}},
            "auth": {
                "type": "api_key",
                "in": "query",
                "name": "appid",
                "secret": "secret:WEATHER_KEY",
            },
        },
        "report": {
            "description": "Write a report",
            "api": {
                "method": "PUT",
                "base_url": f"{url}/weather",
                "path": "/r",
                "content_type": "application/x-www-form-urlencoded",
            },
            "parameters": {"text": {"type": "string", "in": "body"}},
            "static_params": {"body": {"client_secret": "secret:WEATHER_KEY"}},
            "auth": {"type": "basic", "username": "ada", "secret": "secret:DB_PASS"},
        },
    }


VISIT_WORKFLOW = """
workflows:
  vet_round:
    description: A vet's round
    params:
      kind: { type: str, required: true }
      city: { type: str, required: true }
    graph:
      pets:
        call: vet_list
        args: { kind: $kind }
        output: pets
      visit:
        call: vet_visit
        depends_on: [pets]
        args: { id: $pets.0.id, note: "visit of $kind" }
      forecast:
        call: weather
        depends_on: [visit]
        args: { city: $city }
      write:
        call: report
        depends_on: [forecast]
        args: { text: done }
"""
VET_MOCKS = [
    {"path": "/vet/pets", "method": "get", "response": [{"id": "P1"}]},
    {"path": "/vet/pets/{id}/visits", "method": "post", "response": {"ok": True}},
    {"path": "/weather/f", "method": "get", "response": {"sky": "clear"}},
    {"path": "/weather/r", "method": "put", "response": {"ok": True}},
]


async def test_static_params_and_secrets_of_their_own_survive_the_round_trip(case: Case) -> None:
    original = case.settings("vet")
    (original.registry_root / "tools").mkdir(parents=True)
    for name, tool in _tools(case.url).items():
        text = yaml.safe_dump({"name": name, **tool}, sort_keys=False)
        (original.registry_root / "tools" / f"{name}.yaml").write_text(text, encoding="utf-8")
    original.workflows_dir.mkdir(parents=True, exist_ok=True)
    (original.workflows_dir / "vet.yaml").write_text(VISIT_WORKFLOW, encoding="utf-8")

    params = {"kind": "cat", "city": "Lisbon"}
    calls, export = await case.round_trip(original, "vet_round", params, VET_MOCKS)
    assert [(c["method"], c["path"], c["query"]) for c in calls] == [
        ("GET", "/vet/pets", "page_size=50&lang=en&kind=cat"),
        ("POST", "/vet/pets/P1/visits", ""),
        ("GET", "/weather/f", "city=Lisbon&appid=***"),
        ("PUT", "/weather/r", ""),
    ]
    assert calls[0]["headers"]["x-mode"] == "a"
    assert calls[0]["headers"]["authorization"] == "Bearer ***"
    assert calls[1]["headers"]["x-vet-key"] == "***"
    assert calls[1]["body"] == '{"source":"export","level":2,"note":"visit of cat"}'
    assert calls[3]["headers"]["authorization"] == "Basic ***"
    # a form body whose secret field travels by reference (x-dynamic-tools-secret), both ways
    assert calls[3]["headers"]["content-type"] == "application/x-www-form-urlencoded"
    assert calls[3]["body"] == "client_secret=***&text=done"
    paths = {w["path"] for w in export["warnings"]}
    assert "tools.report.auth.username" in paths  # kept only in x-dynamic-tools-username
    assert "servers" not in export["openapi"]  # two base URLs: one per operation
