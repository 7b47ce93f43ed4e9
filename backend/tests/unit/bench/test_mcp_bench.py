"""The helpers of the MCP benchmark: the generated registry, the peer's requests, the checks."""

from __future__ import annotations

from pathlib import Path

import yaml

from bench.mcp_bench import list_differences, ratio, summarize
from bench.mcp_bench_registry import (
    CALL_ARGUMENTS,
    CALLED_TOOL,
    WORKFLOW_ID,
    tool_configs,
    write_registry,
)
from bench.mcp_bench_servers import build_http_request, http_spec
from dynamic_tools.engine.models import WorkflowDocument
from dynamic_tools.tools.models import ToolConfig

API = "http://127.0.0.1:9"


def test_a_thousand_distinct_valid_tools_with_varied_schemas() -> None:
    configs = [ToolConfig.model_validate(c) for c in tool_configs(API)]
    assert len({c.name for c in configs}) == 1000
    assert all(len(c.name) <= 64 for c in configs)
    schemas = {str(sorted(c.input_schema()["properties"])) for c in configs}
    assert len(schemas) > 30  # ten operations, each with several parameter sets
    called = next(c for c in configs if c.name == CALLED_TOOL)
    assert called.api.base_url == f"{API}/eu/aurora" and called.api.method == "GET"
    assert set(CALL_ARGUMENTS) <= set(called.input_schema()["required"])


def test_hints_name_the_sibling_clones() -> None:
    configs = {c["name"]: c for c in tool_configs(API, count=20)}
    hints = configs["us_aurora_book_hotel"]["hints"]
    assert hints["requires"] == ["us_aurora_search_hotels"]
    assert all(n in configs for n in hints["next"])


def test_the_registry_on_disk_has_the_tools_and_the_one_step_workflow(tmp_path: Path) -> None:
    config_path = write_registry(tmp_path / "registry", API, count=10)
    assert config_path.parent == tmp_path / "registry"
    assert len(list((tmp_path / "registry" / "tools").glob("*.yaml"))) == 10
    raw = yaml.safe_load((tmp_path / "registry" / "workflows" / "bench.yaml").read_text())
    workflow = WorkflowDocument.model_validate(raw).workflows[WORKFLOW_ID]
    assert [node.call for node in workflow.graph.values()] == [CALLED_TOOL]  # type: ignore[union-attr]


def test_the_peer_builds_the_request_from_the_tool_config() -> None:
    configs = {c["name"]: c for c in tool_configs(API, count=50)}
    search = http_spec(configs[CALLED_TOOL])
    assert build_http_request(search, {**CALL_ARGUMENTS, "passengers": 2}) == {
        "method": "GET",
        "url": f"{API}/eu/aurora/flights",
        "params": [("origin", "AMS"), ("destination", "BCN"), ("date", "2026-12-01"),
                   ("passengers", "2")],
    }  # fmt: skip
    availability = http_spec(configs["eu_aurora_check_availability"])
    assert build_http_request(availability, {"flight_id": "FL-1"})["url"] == (
        f"{API}/eu/aurora/flights/FL-1/availability"
    )
    booking = http_spec(configs["us_aurora_book_hotel"])
    request = build_http_request(booking, {"hotel_id": "H1", "guest": "Ann"})
    assert request["method"] == "POST" and request["json"] == {"hotel_id": "H1", "guest": "Ann"}
    tagged = http_spec(configs["mea_aurora_search_flights"])  # variant 4: a list of tags
    assert build_http_request(tagged, {"tags": ["a", "b"]})["params"] == [
        ("tags", "a"),
        ("tags", "b"),
    ]


def test_list_differences_names_what_differs() -> None:
    tool = {"name": "a", "description": "d", "inputSchema": {"type": "object"}}
    assert list_differences([tool], [dict(tool, title="A")]) == []  # extra keys do not count
    assert list_differences([tool], [dict(tool, description="e")]) == ["a: description differs"]
    assert list_differences([tool], []) == ["only ours: a"]


def test_summaries_and_ratios() -> None:
    figures = summarize([float(n) for n in range(1, 101)])
    assert figures["median_ms"] == 50.5 and figures["n"] == 100
    assert 95 <= figures["p95_ms"] <= 96
    assert ratio({"median_ms": 5.0}, {"median_ms": 10.0}) == 0.5
