"""The registry of ``bench.mcp_bench``: 1,000 tool configs derived from the travel example.

Each of the ten travel tools (``examples/travel/tools``) is cloned for 5 regions x 20 brands:
``{region}_{brand}_{tool}``, e.g. ``eu_aurora_search_flights``. A clone keeps the original's
method, path, parameters and output schema, points at ``{api_url}/{region}/{brand}``, adds a
sentence to the description and, depending on its index, one or two optional parameters (a
currency enum, a locale pattern, a page size, a loyalty number, a list of tags), so the
schemas vary as a real catalogue's do. One workflow, ``find_flights``, has a single step calling
:data:`CALLED_TOOL`.

The fake target API (:class:`FakeApi`) answers ``GET .../flights`` with three flights that
conform to ``search_flights``' output schema, counts the calls, and answers anything else 404.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import yaml

TRAVEL_TOOLS = Path(__file__).resolve().parents[2] / "examples" / "travel" / "tools"
REGIONS = ("eu", "us", "apac", "latam", "mea")
REGION_LABELS = {
    "eu": "Europe",
    "us": "United States",
    "apac": "Asia-Pacific",
    "latam": "Latin America",
    "mea": "Middle East and Africa",
}
BRANDS = (
    "aurora", "boreal", "cirrus", "delta9", "equinox", "fjord", "gale", "harbor", "isle",
    "juniper", "kestrel", "lumen", "meridian", "nimbus", "orchid", "pioneer", "quartz",
    "riviera", "sierra", "tundra",
)  # fmt: skip
CALLED_TOOL = "eu_aurora_search_flights"
CALL_ARGUMENTS = {"origin": "AMS", "destination": "BCN", "date": "2026-12-01"}
WORKFLOW_ID = "find_flights"
FLIGHTS = [
    {
        "id": f"FL-AMSBCN-20261201-{n}",
        "origin": "AMS",
        "destination": "BCN",
        "date": "2026-12-01",
        "departure_time": time,
        "airline": airline,
        "price": price,
        "currency": "EUR",
    }
    for n, (time, airline, price) in enumerate(
        (("07:10", "Aurora Air", 89.0), ("12:45", "Boreal", 112.5), ("19:30", "Cirrus", 74.9)),
        start=1,
    )
]

EXTRA_PARAMETERS: tuple[dict[str, dict[str, Any]], ...] = (
    {},
    {
        "currency": {
            "in": "query",
            "type": "string",
            "enum": ["EUR", "USD", "GBP", "JPY"],
            "description": "Currency of the prices in the answer; default the brand's own.",
        }
    },
    {
        "locale": {
            "in": "header",
            "type": "string",
            "pattern": "^[a-z]{2}-[A-Z]{2}$",
            "description": "Language of the texts in the answer, e.g. en-GB.",
        }
    },
    {
        "page_size": {
            "in": "query",
            "type": "integer",
            "minimum": 1,
            "maximum": 50,
            "default": 10,
            "description": "How many items one answer holds at most.",
        },
        "loyalty_id": {
            "in": "query",
            "type": "string",
            "minLength": 6,
            "maxLength": 16,
            "description": "The traveller's loyalty programme number, when they have one.",
        },
    },
    {
        "tags": {
            "in": "query",
            "type": "array",
            "items": {"type": "string", "maxLength": 32},
            "maxItems": 5,
            "description": "Free labels for the brand's reporting, at most five.",
        }
    },
)


def base_tools() -> list[dict[str, Any]]:
    """The travel example's tool configs (plain dicts), sorted by name."""
    return [
        yaml.safe_load(path.read_text(encoding="utf-8"))
        for path in sorted(TRAVEL_TOOLS.glob("*.yaml"))
    ]


def tool_configs(api_url: str, count: int = 1000) -> list[dict[str, Any]]:
    """``count`` tool configs (at most 1,000), cloned from the travel tools as described above."""
    bases = base_tools()
    configs: list[dict[str, Any]] = []
    for index in range(count):
        base = bases[index % len(bases)]
        variant = index // len(bases)
        region, brand = REGIONS[variant % len(REGIONS)], BRANDS[variant // len(REGIONS)]
        config = copy.deepcopy(base)
        config["name"] = f"{region}_{brand}_{base['name']}"
        config["description"] = (
            f"{base['description'].strip()} Served by {brand.capitalize()} for travellers in "
            f"{REGION_LABELS[region]}."
        )
        config["api"]["base_url"] = f"{api_url}/{region}/{brand}"
        if variant:  # the first clone of each tool keeps the original parameters
            extra = EXTRA_PARAMETERS[variant % len(EXTRA_PARAMETERS)]
            for name, spec in extra.items():
                if name not in config.get("parameters", {}):
                    config.setdefault("parameters", {})[name] = copy.deepcopy(spec)
        hints = config.get("hints") or {}
        for key in ("requires", "next"):  # hints name the sibling clones
            if key in hints:
                hints[key] = [f"{region}_{brand}_{n}" for n in hints[key]]
        configs.append(config)
    return configs


def workflow_document() -> dict[str, Any]:
    """The one-step workflow ``find_flights`` calling :data:`CALLED_TOOL`."""
    return {
        "domain": "bench",
        "version": "1.0",
        "workflows": {
            WORKFLOW_ID: {
                "description": "Search the flights between two airports on one day (one step).",
                "params": {
                    "origin": {"type": "str", "required": True, "example": "AMS"},
                    "destination": {"type": "str", "required": True, "example": "BCN"},
                    "date": {"type": "str", "required": True, "format": "date"},
                },
                "graph": {
                    "search": {
                        "call": CALLED_TOOL,
                        "args": {
                            "origin": "$origin",
                            "destination": "$destination",
                            "date": "$date",
                        },
                        "output": "flights",
                    }
                },
            }
        },
    }


def write_registry(root: Path, api_url: str, count: int = 1000) -> Path:
    """Write the tools and the workflow under ``root``; returns the registry config path."""
    tools_dir, workflows_dir = root / "tools", root / "workflows"
    tools_dir.mkdir(parents=True)
    workflows_dir.mkdir()
    for config in tool_configs(api_url, count):
        text = yaml.safe_dump(config, sort_keys=False, allow_unicode=True)
        (tools_dir / f"{config['name']}.yaml").write_text(text, encoding="utf-8")
    document = yaml.safe_dump(workflow_document(), sort_keys=False)
    (workflows_dir / "bench.yaml").write_text(document, encoding="utf-8")
    return root / "config.yaml"


class FakeApi:
    """The target API as plain ASGI: three flights for ``GET .../flights``, call counts."""

    def __init__(self) -> None:
        self.flights = json.dumps(FLIGHTS, separators=(",", ":")).encode()
        self.calls = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        more = True
        while more:
            more = (await receive()).get("more_body", False)
        path, status = scope["path"], 200
        if scope["method"] == "GET" and path.endswith("/flights"):
            self.calls += 1
            body = self.flights
        elif path == "/stats":
            body = json.dumps({"calls": self.calls}).encode()
        elif path == "/healthz":
            body = b'{"status":"ok"}'
        else:
            status, body = 404, b'{"error":"not found"}'
        headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})
