"""docs/seed-names.md, row by row, against a live server: every design name works.

The tables are parsed; each row is checked by its kind: tools are in ``tools/list``,
parameters in the tool's ``inputSchema``, result fields in a real call's result, resources
read, prompts and their arguments listed, error codes and fields produced by real failures,
task fields in ``tasks/get``. Then the alias rules: both names work, disagreeing ones fail.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from dynamic_tools.errors import ConfigurationError
from dynamic_tools.mcp.errors import category_of
from dynamic_tools.settings import Settings
from tests.conftest import FIXTURES
from tests.support.documents import draft
from tests.support.mcp_client import call, confirmed_call, mcp_client
from tests.support.mcp_raw import RawMcp

TABLE = Path(__file__).resolve().parents[4] / "docs" / "seed-names.md"
MARKDOWN_FIXTURES = Path(__file__).resolve().parents[2] / "unit" / "markdown" / "fixtures"
BOOK = {"origin": "AMS", "destination": "BCN", "date": "2026-12-01", "passenger": "Ada"}
MD_INPUTS = {"ORIGIN": "AMS", "DESTINATION": "BCN", "DATE": "2026-12-01", "PASSENGER": "Ada"}
DRAFT = draft("seat_check")
KINDS = {
    "tool",
    "parameter",
    "result",
    "meta",
    "resource",
    "prompt",
    "prompt argument",
    "setting",
    "method",
    "task field",
    "progress state",
    "error field",
    "category",
    "error code",
    "error type",
    "step status",
    "value",
}


@dataclass(frozen=True)
class Row:
    """One row of the table."""

    seed: str
    described: bool  # the design describes it (italics) instead of naming it
    kind: str
    where: str
    product: str | None  # None: the product has no such thing

    def __str__(self) -> str:
        return f"{self.kind} {self.seed!r} ({self.where}) -> {self.product}"


def _cell(text: str) -> str:
    return text.strip().strip("`").strip()


def parse(path: Path = TABLE) -> list[Row]:
    """The rows of every table with the Seed name | Kind | Where | Product name | Note header."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 5 or cells[0] in ("Seed name", "---"):
            continue
        seed, kind, where, product, _ = cells
        described = seed.startswith("*") and seed.endswith("*")
        rows.append(
            Row(
                seed=seed.strip("*") if described else _cell(seed),
                described=described,
                kind=kind,
                where=_cell(where),
                product=None if product == "—" else _cell(product),
            )
        )
    return rows


ROWS = parse()


def of(kind: str) -> list[Row]:
    return [r for r in ROWS if r.kind == kind]


async def all_tools(client: Client) -> dict[str, Any]:
    tools: dict[str, Any] = {}
    cursor = None
    while True:
        page = await client.list_tools(cursor=cursor)
        tools.update({t.name: t for t in page.tools})
        cursor = page.next_cursor
        if cursor is None:
            return tools


def test_the_table_has_every_kind_and_no_other() -> None:
    kinds = {r.kind for r in ROWS}
    assert kinds == KINDS, kinds ^ KINDS
    assert len(of("tool")) == 28 and len(of("parameter")) >= 40 and len(of("result")) >= 40
    assert all(r.seed for r in ROWS)


async def test_tools_parameters_and_routing_meta(server: str) -> None:
    async with mcp_client(server) as client:
        tools = await all_tools(client)
    problems = []
    for row in of("tool"):
        for name in {row.seed, row.product} - {None}:
            if name not in tools:
                problems.append(f"{row}: '{name}' is not in tools/list")
    for row in of("parameter"):
        properties = tools[row.where].input_schema.get("properties", {})
        if row.product is None:
            if not row.described and row.seed in properties:
                problems.append(f"{row}: said to be missing, but is in the inputSchema")
            continue
        wanted = [row.product] if row.described else [row.seed, row.product]
        problems += [f"{row}: '{n}' not in the inputSchema" for n in wanted if n not in properties]
    for row in of("meta"):
        problems += [
            f"{name}: no {row.seed} in _meta"
            for name, t in tools.items()
            if row.seed not in (t.meta or {})
        ]
    assert not problems, "\n".join(problems)
    meta = {name: tool.meta for name, tool in tools.items()}
    assert meta["search_flights"]["execution_type"] == "http"
    assert meta["search_flights"]["http_method"] == "GET"
    assert meta["create_booking"]["http_method"] == "POST"
    assert meta["api_query"] == {"execution_type": "llm", "http_method": None}
    assert meta["w_book_flight"]["execution_type"] == "workflow"
    assert meta["workflow.execute"]["execution_type"] == "task"
    assert meta["command.list"]["execution_type"] == "local"


async def test_resources_read_and_prompts_are_listed(server: str) -> None:
    problems = []
    async with mcp_client(server) as client:
        for row in of("resource"):
            for uri in {row.seed, row.product} - {None}:
                uri = uri.replace("{workflow_id}", "book_flight")
                try:
                    read = await client.read_resource(uri)
                except MCPError as exc:
                    if uri == row.seed and row.product is None:
                        continue  # not provided (the note says why)
                    problems.append(f"{row}: {uri} does not read: {exc}")
                    continue
                if row.product is None:
                    problems.append(f"{row}: said not to exist, but {uri} reads")
                elif not read.contents[0].text:  # type: ignore[union-attr]
                    problems.append(f"{row}: {uri} is empty")
        same = await client.read_resource("workflow.manifest:book_flight")
        canonical = await client.read_resource("dynamic-tools://workflow.manifest/book_flight")
        assert same.contents[0].text == canonical.contents[0].text  # type: ignore[union-attr]
        templates = {
            t.uri_template for t in (await client.list_resource_templates()).resource_templates
        }
        assert {
            "workflow.manifest:{workflow_id}",
            "dynamic-tools://workflow.manifest/{workflow_id}",
        } <= templates
        manifests = json.loads(
            (await client.read_resource("workflow.manifests")).contents[0].text  # type: ignore[union-attr]
        )["workflows"]
        prompts = {p.name: p for p in (await client.list_prompts()).prompts}
    for row in of("result"):
        if row.where == "workflow.manifests":
            problems += [
                f"{row}: item without {row.product}" for m in manifests if row.product not in m
            ]
    for row in of("prompt"):
        if row.seed not in prompts or row.product not in prompts:
            problems.append(f"{row}: not in prompts/list")
    for row in of("prompt argument"):
        arguments = {a.name for a in prompts[row.where].arguments or []}
        if row.product not in arguments:
            problems.append(f"{row}: not an argument of {row.where}")
    assert not problems, "\n".join(problems)


async def _sample_results(client: Client, root: Path, server: str) -> dict[str, dict[str, Any]]:
    """One real answer of every tool the result rows name."""
    results: dict[str, dict[str, Any]] = {}

    async def sample(name: str, **arguments: Any) -> dict[str, Any]:
        answer = await confirmed_call(client, name, **arguments)  # destructive: two steps
        assert not answer.pop("is_error"), (name, answer)
        results[name] = answer
        return answer

    await sample("workflow.list")
    await sample("workflow.get", workflow_id="book_flight")
    await sample("workflow.validate", manifest=DRAFT)
    await sample("workflow.preview_inputs", workflow_id="book_flight")
    await sample("workflow.resolve_inputs", workflow_id="book_flight", inputs={})
    await sample("command.list")
    await sample("provider.list")
    saved = await sample("workflow.save", manifest=DRAFT)
    await sample(
        "workflow.rename",
        workflow_id="seat_check",
        new_id="seat_check_2",
        expected_version=saved["version"],
    )
    await sample("workflow.delete", workflow_id="seat_check_2")
    run = await sample("workflow.run", workflow_id="book_with_approval", inputs=BOOK)
    await wait_for(server, run["run_id"], "waiting_input")
    await sample("workflow.cancel", operation_id=run["run_id"])
    await sample("workflow.purge_history", workflow_id="book_with_approval")
    (root / "imports").mkdir()
    shutil.copy(FIXTURES / "openapi" / "petstore-3.0.json", root / "imports" / "pets.json")
    source = "imports/pets.json"
    await sample("catalog.validate_openapi", source=source, source_type="path")
    await sample(
        "catalog.preview_import",
        source=source,
        catalog_title="Pet Store",
        vendor="Swagger",
        base_url="https://petstore.example/v1",
        include_command_preview=True,
    )
    await sample(
        "catalog.import_openapi",
        source=source,
        catalog_title="Pet Store",
        vendor="Swagger",
        overwrite=False,
        enabled=True,
    )
    await sample("catalog.set_enabled", catalog_title="Pet Store", enabled=False)
    await sample("catalog.remove", catalog_id="pet-store", remove_manifest=True)
    return results


async def wait_for(server: str, run_id: str, status: str) -> dict[str, Any]:
    """The run once it has ``status`` (polled, at most 30 s)."""
    async with httpx.AsyncClient() as http:
        for _ in range(300):
            run: dict[str, Any] = (await http.get(f"{server}/runs/{run_id}")).json()
            if run["status"] == status:
                return run
            await asyncio.sleep(0.1)
    raise AssertionError(f"run {run_id} is {run['status']}, never {status}")


async def test_result_fields_are_in_real_answers(server: str, travel_root: Path) -> None:
    async with mcp_client(server) as client:
        results = await _sample_results(client, travel_root, server)
    problems = []
    for row in of("result"):
        if row.where == "workflow.manifests":
            continue  # a resource: checked with the resources
        answer = results.get(row.where)
        if answer is None:
            problems.append(f"{row}: no sample call of {row.where}")
        elif row.product not in answer:
            problems.append(f"{row}: '{row.product}' not in {sorted(answer)}")
        elif not row.described and row.seed not in answer:
            problems.append(f"{row}: '{row.seed}' not in {sorted(answer)}")
    assert not problems, "\n".join(problems)
    assert all("path" in w for w in results["workflow.list"]["workflows"])
    assert results["workflow.save"]["workflow_id"] == "seat_check"
    assert results["workflow.save"]["path"].endswith("seat_check.yaml")
    preview = results["catalog.preview_import"]
    assert preview["catalog"]["name"] == "pet-store" and preview["catalog"]["title"] == "Pet Store"
    assert preview["catalog"]["vendor"] == "Swagger" and preview["command_preview"]
    assert results["catalog.import_openapi"]["catalog_id"] == "pet-store"
    assert results["workflow.cancel"]["status"] == "cancelled"


def test_settings_are_read_under_their_names(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for row in of("setting"):
        assert row.product is not None
        monkeypatch.setenv(row.product, str(tmp_path / row.product / "config.yaml"))
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert settings.workflows_dir == tmp_path / "REGISTRY_WORKFLOWS_PATH" / "config.yaml"
    assert settings.registry_root == tmp_path / "REGISTRY_CONFIG_PATH"


async def test_task_methods_and_fields(server: str) -> None:
    async with RawMcp(server) as raw:
        assert raw.server_capabilities["tasks"]["requests"]["tools"]["call"] == {}
        created = await raw.request(
            "tools/call",
            {
                "name": "workflow.run",
                "arguments": {"workflow_id": "book_with_approval", "inputs": BOOK},
                "task": {},
            },
        )
        task_id = created["result"]["task"]["taskId"]
        for row in of("method"):
            if row.product is None:
                assert (await raw.request(row.seed, {}))["error"]["code"] == -32601, row
        got = (await raw.request("tasks/get", {"taskId": task_id}))["result"]
        details = got["_meta"]["dynamic-tools/run"]
        for row in of("task field"):
            assert row.product in details, row
        assert details["progress_state"] in {r.product for r in of("progress state")}
        assert details["run_id"] == task_id
        preview = await call_raw(raw, "workflow.cancel", operation_id=task_id)
        token = preview["confirmation_token"]
        cancelled = await call_raw(
            raw, "workflow.cancel", operation_id=task_id, confirmation_token=token
        )
        assert cancelled["status"] == "cancelled"
        result = (await raw.request("tasks/result", {"taskId": task_id}))["result"]
        assert result["isError"] is True
        final = (await raw.request("tasks/get", {"taskId": task_id}))["result"]
    assert final["_meta"]["dynamic-tools/run"]["progress_state"] == "canceled"


async def call_raw(raw: RawMcp, name: str, **arguments: Any) -> dict[str, Any]:
    answer = await raw.request("tools/call", {"name": name, "arguments": arguments})
    result: dict[str, Any] = answer["result"]
    return dict(result.get("structuredContent") or json.loads(result["content"][0]["text"]))


async def test_error_fields_categories_and_codes(server: str, travel_root: Path) -> None:
    httpx.post(
        f"{server}/demo/travel/_faults",
        json={"operation": "check_availability", "fail_next": 5, "status": 503},
    )
    (travel_root / "imports").mkdir()
    shutil.copy(FIXTURES / "openapi" / "petstore-3.0.json", travel_root / "imports" / "pets.json")
    async with mcp_client(server) as client:
        invalid = await call(client, "workflow.save", manifest=DRAFT.replace("check_", "chek_"))
        missing = await call(client, "workflow.get", workflow_id="nope")
        await call(client, "catalog.import_openapi", source="imports/pets.json", catalog="pets")
        exists = await call(
            client, "catalog.import_openapi", source="imports/pets.json", catalog="pets"
        )
        assert not (await call(client, "workflow.save", manifest=DRAFT))["is_error"]
        failed = await call(client, "w_seat_check", flight_id="FL-AMSBCN-20261201-1")
        task_only = await call(client, "workflow.execute", workflow_id="book_flight")
    by_code = {
        "WORKFLOW_INVALID": invalid,
        "CONFLICT": exists,
        "TASK_CAPABILITY_REQUIRED": task_only,
    }
    for error in (invalid, missing, exists, failed, task_only):
        assert error["is_error"], error
    problems = []
    for row in of("error code"):
        error = by_code.get(str(row.product))
        if error is None or error["error_code"] != row.product:
            problems.append(f"{row}: not produced ({error and error['error_code']})")
    for row in of("error field"):
        where, name = row.where, str(row.product)
        if row.product is None:
            continue
        if where == "every error":
            found = all(name in e for e in (invalid, missing, exists, failed, task_only))
        elif where == "validation errors":
            found = name in invalid
        elif where == "violations[]":
            found = any(name in v for v in invalid["violations"])
        elif where == "context":
            found = name in failed["context"]
        elif where == "execution errors":
            found = failed.get(name) is not None
        elif where == "markdown errors":
            continue  # with the markdown rows
        else:
            found = False
        if not found:
            problems.append(f"{row}: not in the errors")
    categories = {e["category"] for e in (invalid, missing, exists, failed)}
    for row in of("category"):
        if row.product == "internal":
            assert category_of(ConfigurationError("no LLM")) == "internal"
        elif row.product not in categories:
            problems.append(f"{row}: not produced")
    assert not problems, "\n".join(problems)
    assert failed["command"] == "check_availability" and failed["step_id"]
    assert exists["suggested_action"] != invalid["suggested_action"]
    assert "overwrite" in exists["suggested_action"]  # its own next action (catalog exists)


async def test_markdown_tools_statuses_and_error_types(server: str) -> None:
    async with mcp_client(server) as client:
        errors = {
            "no_workflow_loaded": await call(client, "execute_workflow_step"),
            "file_not_found": await call(client, "load_workflow", path="markdown/nope.md"),
            "variable_missing": await call(
                client, "load_workflow", path="markdown/book_flight.md", variables={"ORIGIN": "AMS"}
            ),
        }
        for fixture, error_type in (
            ("empty_workflow.md", "empty_workflow"),
            ("missing_tool_spec.md", "missing_tool_spec"),
            ("unclosed_fence.md", "invalid_format"),
        ):
            content = (MARKDOWN_FIXTURES / "invalid" / fixture).read_text()
            errors[error_type] = await call(client, "load_workflow", content=content)
        await call(client, "load_workflow", path="markdown/book_flight.md", variables=MD_INPUTS)
        started = await call(client, "get_workflow_state")
        step = await call(client, "execute_workflow_step")
        passed = [{"assertion": a, "passed": True} for a in step["assertions"]]
        first = await call(
            client,
            "report_step_result",
            step_number=0,
            status="passed",
            assertion_results=passed,
            output_variables={"FLIGHT_ID": "FL-AMSBCN-20261201-1", "PRICE": 120},
        )
        assert not first["is_error"], first
        errors["step_out_of_order"] = await call(
            client, "report_step_result", step_number=2, status="passed", assertion_results=[]
        )
        running = await call(client, "get_workflow_state")
        failing = [{"assertion": a, "passed": False} for a in first["next_step"]["assertions"]]
        second = await call(
            client,
            "report_step_result",
            step_number=1,
            status="failed",
            assertion_results=failing,
            error_message="no seats",
        )
        assert not second["is_error"], second
        stopped = await call(client, "get_workflow_state")
    for row in of("error type"):
        error = errors[row.seed]
        assert error["is_error"] and error["error_code"] == row.product, (row, error)
        assert error["error_type"] == row.seed and error["suggestion"], row
    seen = {s["status"] for state in (started, running, stopped) for s in state["steps"]}
    expected = {str(r.product) for r in of("step status")}
    assert expected <= seen, seen


async def test_aliases_work_and_disagreeing_ones_fail(server: str, travel_root: Path) -> None:
    (travel_root / "imports").mkdir()
    shutil.copy(FIXTURES / "openapi" / "petstore-3.0.json", travel_root / "imports" / "pets.json")
    async with mcp_client(server) as client:
        saved = await call(client, "workflow.save", manifest=DRAFT)
        both = await call(
            client,
            "workflow.save",
            manifest=DRAFT,
            content=DRAFT,
            version=saved["version"],
            expected_version=saved["version"],
        )
        clash = await call(
            client, "workflow.save", manifest=DRAFT, content=DRAFT + "\n", version=saved["version"]
        )
        stale = await call(client, "workflow.save", manifest=DRAFT, version="0" * 16)
        neither = await call(client, "workflow.save", version=saved["version"])
        preview = await call(
            client,
            "catalog.preview_import",
            source="imports/pets.json",
            catalog_title="Pets",
            include_command_preview=False,
            max_preview_tokens=100,
        )
        await call(
            client,
            "catalog.import_openapi",
            source="imports/pets.json",
            catalog="pets",
            catalog_title="Pets Inc API",
        )
        named = await call(
            client,
            "catalog.set_enabled",
            catalog="pets",
            catalog_id="pets",
            catalog_title="Pets Inc API",
            enabled=False,
        )
        wrong = await call(client, "catalog.remove", catalog="pets", catalog_id="cats")
        unknown = await call(client, "catalog.remove", catalog_title="Cats Inc")
        removed = await confirmed_call(client, "catalog.remove", catalog_title="pets inc api")
        cancel = await call(client, "workflow.cancel")
    assert not both["is_error"], both
    assert clash["is_error"] and clash["error_code"] == "INVALID_INPUT"
    assert (
        clash["violations"][0]["rule"] == "alias" and clash["violations"][0]["path"] == "manifest"
    )
    assert "content" in clash["message"]
    assert stale["is_error"] and stale["category"] == "conflict"
    assert "workflow.get" in stale["suggested_action"]  # a version conflict: read and retry
    assert neither["is_error"] and neither["violations"][0]["expected"] == ["content", "manifest"]
    assert preview["is_error"] and preview["violations"][0]["path"] == "include_command_preview"
    assert not named["is_error"] and named["catalog_id"] == "pets"
    assert wrong["is_error"] and wrong["violations"][0]["rule"] == "alias"
    assert unknown["is_error"] and unknown["category"] == "not_found"
    assert "Pets Inc API" in unknown["message"]  # the titles there are
    assert removed["removed_catalog_id"] == "pets"
    assert cancel["is_error"] and cancel["violations"][0]["expected"] == ["run_id", "operation_id"]


async def test_values_are_the_product_s(server: str, travel_root: Path) -> None:
    (travel_root / "imports").mkdir()
    for name in ("petstore-2.0.json", "petstore-3.0.json", "README.md"):
        shutil.copy(FIXTURES / "openapi" / name, travel_root / "imports" / name)
    async with mcp_client(server) as client:
        tools = await all_tools(client)
        kinds = {
            (await call(client, "catalog.validate_openapi", source=f"imports/{name}"))[
                "document_kind"
            ]
            for name in ("petstore-2.0.json", "petstore-3.0.json", "README.md")
        }
        missing = await call(client, "workflow.resolve_inputs", workflow_id="book_flight")
        invalid = await call(
            client, "workflow.resolve_inputs", workflow_id="book_flight", inputs={"origin": 5}
        )
    outcomes = {i["outcome"] for r in (missing, invalid) for i in r["inputs"].values()}
    seen = {
        "document_kind": kinds,
        "inputs[].outcome": outcomes,
        "source_type": set(
            tools["catalog.validate_openapi"].input_schema["properties"]["source_type"]["enum"]
        ),
        "format": set(tools["workflow.save"].input_schema["properties"]["format"]["enum"]),
    }
    problems = [
        f"{row}: not among {seen[row.where]}"
        for row in of("value")
        if row.product not in seen[row.where]
    ]
    assert not problems, "\n".join(problems)
