"""/workflows over the API, on a registry seeded from the travel example (left untouched)."""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import httpx
import pytest
import yaml

from dynamic_tools.api.app import create_app
from dynamic_tools.atomic_files import content_version
from dynamic_tools.settings import Settings
from tests.conftest import EXAMPLES, FIXTURES
from tests.support.app_client import app_client

VIOLATION_KEYS = {"path", "rule", "message", "line", "expected", "actual", "severity"}


def tree_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.is_file():
            digest.update(str(path.relative_to(root)).encode() + path.read_bytes())
    return digest.hexdigest()


@pytest.fixture(autouse=True)
def examples_untouched() -> Iterator[None]:
    before = tree_digest(EXAMPLES)
    yield
    assert tree_digest(EXAMPLES) == before


@pytest.fixture
def settings(tmp_path: Path, make_settings: Callable[..., Settings]) -> Settings:
    root = tmp_path / "fresh-registry"
    return make_settings(registry_config_path=root / "config.yaml", seed_examples_from=EXAMPLES)


@pytest.fixture
async def client(settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    async with app_client(create_app(settings)) as api:
        yield api


def example(name: str) -> str:
    return (EXAMPLES / "workflows" / name).read_text()


async def test_list_and_get(client: httpx.AsyncClient, settings: Settings) -> None:
    listed = (await client.get("/workflows")).json()
    assert listed["problems"] == []
    by_id = {w["id"]: w for w in listed["workflows"]}
    assert set(by_id) == {
        "book_flight",
        "book_hotel",
        "book_trip",
        "find_cheapest_across_dates",
        "book_with_approval",
        "join_waitlist_if_full",
        "cancel_trip",
    }
    flight = by_id["book_flight"]
    assert flight["file"] == "travel.yaml" and flight["format"] == "yaml" and flight["valid"]
    assert flight["version"] == content_version(example("travel.yaml"))
    assert flight["params"]["origin"] == {"type": "str", "required": True, "example": "AMS"}
    assert flight["title"].startswith("Search, check availability")
    assert by_id["cancel_trip"]["format"] == "xml"
    assert by_id["join_waitlist_if_full"]["format"] == "json"

    got = (await client.get("/workflows/book_flight")).json()
    assert got["content"] == (settings.workflows_dir / "travel.yaml").read_text()
    assert got["version"] == flight["version"] and got["violations"] == []
    assert list(got["parsed"]["graph"]) == [
        "search",
        "check",
        "decide",
        "reserve",
        "waitlist",
        "fail_booking",
    ]
    assert got["parsed"]["graph"]["decide"]["type"] == "branch"
    # The graph as the UI draws it: each node's kind and label come from its node kind.
    drawn = {node["id"]: node for node in got["nodes"]}
    assert list(drawn) == list(got["parsed"]["graph"])
    assert (drawn["check"]["kind"], drawn["check"]["label"]) == ("call", "check_availability")
    assert (drawn["decide"]["kind"], drawn["decide"]["label"]) == ("branch", "branch decide")
    assert drawn["check"]["depends_on"] == ["search"]
    assert drawn["decide"]["activates"] == [
        {"target": "reserve", "via": "branch", "when": "$availability.seats_available > 0"},
        {"target": "waitlist", "via": "branch_default", "when": None},
    ]
    assert drawn["reserve"]["activates"] == [
        {"target": "fail_booking", "via": "fallback", "when": "the call gave up"}
    ]
    missing = await client.get("/workflows/nope")
    assert missing.status_code == 404 and missing.json()["error_code"] == "not_found"


async def test_validate_reports_every_violation(client: httpx.AsyncClient) -> None:
    ok = await client.post("/workflows/validate", json={"content": example("travel.yaml")})
    assert ok.json()["valid"] is True and ok.json()["violations"] == []
    # each workflow of the document as drawn, for the editor's preview
    trip = {node["id"]: node for node in ok.json()["graphs"]["book_trip"]}
    fan_out = trip["flight_and_hotel"]
    assert (fan_out["kind"], fan_out["label"]) == (
        "parallel",
        "parallel(w_book_flight + w_book_hotel)",
    )
    assert fan_out["activates"][0]["target"] == "rollback_all"
    xml = await client.post(
        "/workflows/validate", json={"content": example("cancel_trip.xml"), "format": "xml"}
    )
    assert xml.json()["valid"] is True and list(xml.json()["graphs"]) == ["cancel_trip"]
    many = (FIXTURES / "workflows" / "invalid" / "many_violations.yaml").read_text()
    bad = (await client.post("/workflows/validate", json={"content": many})).json()
    assert bad["valid"] is False and len(bad["violations"]) >= 5
    assert all(set(v) == VIOLATION_KEYS for v in bad["violations"])
    assert {"unknown_dependency", "cycle", "invalid_expression"} <= {
        v["rule"] for v in bad["violations"]
    }
    assert all(v["line"] for v in bad["violations"] if v["severity"] == "error")
    broken = await client.post("/workflows/validate", json={"content": "workflows: [\n  x: 1"})
    assert broken.json()["valid"] is False and broken.json()["graphs"] == {}
    assert broken.json()["violations"][0]["rule"] == "syntax"
    assert (await client.post("/workflows/validate", json={"format": "yaml"})).status_code == 422
    wrong = await client.post("/workflows/validate", json={"content": "x", "format": "toml"})
    assert wrong.status_code == 422


async def test_save_with_versions(client: httpx.AsyncClient, settings: Settings) -> None:
    copy = example("waitlist_check.json").replace("join_waitlist_if_full", "join_waitlist_copy")
    created = await client.post("/workflows", json={"content": copy, "file": "copy.json"})
    assert created.status_code == 201, created.text
    version = created.json()["version"]
    assert created.json()["workflows"] == ["join_waitlist_copy"]
    assert (settings.workflows_dir / "copy.json").read_text() == copy
    assert (await client.get("/workflows/join_waitlist_copy")).json()["version"] == version

    again = await client.post("/workflows", json={"content": copy, "file": "copy.json"})
    assert again.status_code == 409 and again.json()["context"]["current_version"] == version

    edited = copy.replace("Check one flight's seats", "Check seats")
    body = {"content": edited, "expected_version": version}
    saved = await client.put("/workflows/join_waitlist_copy", json=body)
    assert saved.status_code == 200 and saved.json()["version"] == content_version(edited)
    stale = await client.put("/workflows/join_waitlist_copy", json=body)
    assert stale.status_code == 409 and stale.json()["error_code"] == "conflict"
    assert stale.json()["context"]["expected_version"] == version
    assert (settings.workflows_dir / "copy.json").read_text() == edited
    forced = await client.put(
        "/workflows/join_waitlist_copy", json={"content": copy, "overwrite": True}
    )
    assert forced.status_code == 200

    taken = await client.post("/workflows", json={"content": copy, "file": "other.json"})
    assert taken.status_code == 409 and "copy.json" in taken.json()["message"]
    assert not (settings.workflows_dir / "other.json").exists()


async def test_an_invalid_save_writes_nothing(
    client: httpx.AsyncClient, settings: Settings
) -> None:
    path = settings.workflows_dir / "travel.yaml"
    before = path.read_text()
    version = content_version(before)
    broken = before.replace("call: check_availability", "call: check_availabilty")
    answer = await client.put(
        "/workflows/book_flight", json={"content": broken, "expected_version": version}
    )
    assert answer.status_code == 422 and answer.json()["error_code"] == "workflow_invalid"
    (violation,) = [v for v in answer.json()["violations"] if v["rule"] == "unknown_tool"]
    assert violation["path"] == "workflows.book_flight.graph.check.call"
    assert violation["line"] == before.splitlines().index("        call: check_availability") + 1
    syntax = await client.put(
        "/workflows/book_flight", json={"content": before + "\n  : :\n", "overwrite": True}
    )
    assert syntax.status_code == 422
    elsewhere = await client.put(
        "/workflows/book_flight", json={"content": example("waitlist_check.json")}
    )
    assert elsewhere.status_code == 422
    assert path.read_text() == before
    assert sorted(p.name for p in settings.workflows_dir.iterdir()) == [
        "cancel_trip.xml",
        "travel.yaml",
        "waitlist_check.json",
    ]


async def test_rename_keeps_the_layout(client: httpx.AsyncClient, settings: Settings) -> None:
    travel = settings.workflows_dir / "travel.yaml"
    version = content_version(travel.read_text())
    renamed = await client.post(
        "/workflows/book_flight/rename",
        json={"new_id": "reserve_flight", "expected_version": version},
    )
    assert renamed.status_code == 200, renamed.text
    assert renamed.json()["updated_files"] == ["travel.yaml"]
    text = travel.read_text()
    assert "  reserve_flight:\n" in text and "workflow: reserve_flight\n" in text
    assert "book_flight" not in text and "# ─── Conditional branching" in text
    assert (await client.get("/workflows/book_flight")).status_code == 404
    assert (await client.get("/workflows/reserve_flight")).json()["valid"] is True
    assert (await client.get("/workflows/book_trip")).json()["violations"] == []

    stale = {"new_id": "other", "expected_version": version}
    assert (await client.post("/workflows/reserve_flight/rename", json=stale)).status_code == 409
    clash = {"new_id": "book_hotel"}
    assert (await client.post("/workflows/reserve_flight/rename", json=clash)).status_code == 409
    bad = await client.post("/workflows/reserve_flight/rename", json={"new_id": "no spaces"})
    assert bad.status_code == 422
    xml = await client.post("/workflows/cancel_trip/rename", json={"new_id": "cancel_all"})
    assert xml.status_code == 200
    assert '<workflow id="cancel_all"' in (settings.workflows_dir / "cancel_trip.xml").read_text()
    assert "<!-- The XML form" in (settings.workflows_dir / "cancel_trip.xml").read_text()


async def test_delete(client: httpx.AsyncClient, settings: Settings) -> None:
    used = await client.delete("/workflows/book_flight")
    assert used.status_code == 409 and used.json()["context"]["used_by"] == ["book_trip"]
    assert (await client.delete("/workflows/book_with_approval")).status_code == 204
    assert (await client.get("/workflows/book_with_approval")).status_code == 404
    text = (settings.workflows_dir / "travel.yaml").read_text()
    assert "Human in the loop" not in text and "# ─── Loop / fan-out" in text
    assert (await client.get("/workflows/find_cheapest_across_dates")).json()["valid"] is True
    assert (await client.delete("/workflows/join_waitlist_if_full")).status_code == 204
    assert not (settings.workflows_dir / "waitlist_check.json").exists()
    assert (await client.delete("/workflows/nope")).status_code == 404
    stale = await client.delete("/workflows/book_hotel", params={"expected_version": "0" * 16})
    assert stale.status_code == 409


async def test_plan_and_inputs(client: httpx.AsyncClient) -> None:
    plan = (await client.get("/workflows/book_flight/plan")).json()["steps"]
    # A failure path is listed right after the node whose failure takes it (reserve's
    # fallback before the waitlist branch), marked "on failure".
    assert [s["node_id"] for s in plan] == [
        "search",
        "check",
        "decide",
        "reserve",
        "fail_booking",
        "waitlist",
    ]
    assert [s["on_failure"] for s in plan] == [False, False, False, False, True, False]
    assert plan[0]["runs"] == "always" and plan[0]["tool"] == "search_flights"
    assert plan[1]["runs"] == "after dependencies" and plan[1]["depends_on"] == ["search"]
    assert plan[2]["condition"]["cases"] == [
        {"when": "$availability.seats_available > 0", "goto": "reserve"}
    ]
    assert plan[3]["activated_by"] == [
        {"node": "decide", "via": "branch", "when": "$availability.seats_available > 0"}
    ]
    assert plan[3]["retries"] == 2 and plan[3]["compensate_with"] == "cancel_booking"
    assert plan[3]["compensation"]["call"] == "cancel_booking"
    assert "fails, times out or is cancelled" in plan[3]["compensation"]["when"]
    assert plan[0]["compensation"] is None
    assert plan[4]["runs"] == "on failure"
    assert plan[4]["activated_by"][0] == {
        "node": "reserve",
        "via": "fallback",
        "when": "the call gave up",
    }
    assert plan[5]["runs"] == "when activated"
    assert plan[5]["activated_by"][0]["via"] == "branch_default"
    trip = (await client.get("/workflows/book_trip/plan")).json()["steps"]
    # The rollback runs when a branch fails, before confirm would: it is listed there.
    assert [s["node_id"] for s in trip] == ["flight_and_hotel", "rollback_all", "confirm"]
    assert [s["runs"] for s in trip] == ["always", "on failure", "after dependencies"]
    assert trip[0]["branches"]["flight"] == {"workflow": "book_flight", "output": "flight_booking"}
    assert trip[1]["activated_by"][0]["via"] == "on_partial_failure"
    assert trip[1]["steps"] == ["cancel_booking", "cancel_hotel"]

    inputs = (await client.get("/workflows/find_cheapest_across_dates/inputs")).json()
    by_name = {p["name"]: p for p in inputs["params"]}
    assert by_name["num_days"]["required"] is False and by_name["num_days"]["default"] == 7
    assert by_name["start_date"]["format"] == "date"
    assert inputs["schema"]["required"] == ["origin", "destination", "start_date"]
    assert inputs["schema"]["properties"]["num_days"] == {"type": "integer", "default": 7}
    assert inputs["schema"]["additionalProperties"] is False
    flight = (await client.get("/workflows/book_flight/inputs")).json()
    assert flight["example"] == {"origin": "AMS", "destination": "BCN"}
    assert (await client.get("/workflows/nope/plan")).status_code == 404


async def test_bad_and_duplicate_files_are_problems(
    client: httpx.AsyncClient, settings: Settings
) -> None:
    directory = settings.workflows_dir
    shutil.copy(FIXTURES / "workflows" / "invalid" / "bad_model.yaml", directory / "broken.yaml")
    shutil.copy(directory / "waitlist_check.json", directory / "zz_copy.json")
    (directory / ".travel.yaml.tmp").write_text("not: [a workflow")
    reloaded = (await client.post("/workflows/_reload")).json()
    problems = {p["file"]: p for p in reloaded["problems"]}
    assert set(problems) == {"broken.yaml", "zz_copy.json"}
    assert problems["broken.yaml"]["line"] and problems["broken.yaml"]["violations"]
    duplicate = problems["zz_copy.json"]
    assert duplicate["rule"] == "duplicate_workflow"
    assert "waitlist_check.json" in duplicate["message"] and "zz_copy.json" in duplicate["message"]
    listed = (await client.get("/workflows")).json()
    assert len(listed["workflows"]) == 7 and len(listed["problems"]) == 2
    owner = (await client.get("/workflows/join_waitlist_if_full")).json()["file"]
    assert owner == "waitlist_check.json"


ALONE = """  <workflow id="alone">
    <graph><step id="look"><call tool="check_availability"/>
      <args><arg name="flight_id" value="FL-AMSBCN-20261201-1"/></args></step></graph>
  </workflow>
"""
XML_TWO_CALLERS = """<?xml version="1.0" encoding="UTF-8"?>
<!-- Three workflows; the layout and every comment must survive a rename or a delete. -->
<workflows domain="travel_booking" version="1.0">
  <!-- Books one flight; called by fan_out. -->
  <workflow description="books &lt;workflow id='reserve'&gt; &amp; more, a > b" id='reserve'>
    <params><param name="flight" type="str" required="true"/></params>
    <graph>
      <step id="book"><call tool="create_booking"/>
        <args><arg name="flight_id" value="$flight"/><arg name="passenger" value="Zoë"/></args>
      </step>
    </graph>
  </workflow>
  <!-- <workflow id="reserve"> inside a comment is left alone -->

  <!-- Two bookings at once, then one per item. -->
  <workflow id="fan_out"
            description="fan out">
    <graph>
      <parallel id="both">
        <subworkflow id="a" workflow="reserve"><args><arg name="flight" value="F1"/></args>
        </subworkflow>
        <subworkflow id="b" workflow = "reserve" ><args><arg name="flight" value="F2"/></args>
        </subworkflow>
      </parallel>
      <foreach id="loop" items="range(1, 3)" as="f" max_iterations="3" depends_on="both">
        <subworkflow id="each" workflow="reserve"><args><arg name="flight" value="$f"/></args>
        </subworkflow>
      </foreach>
    </graph>
  </workflow>
{ALONE}</workflows>
""".replace("{ALONE}", ALONE)


async def test_xml_rename_and_delete_edit_only_what_they_must(
    client: httpx.AsyncClient, settings: Settings
) -> None:
    saved = await client.post(
        "/workflows", json={"content": XML_TWO_CALLERS, "format": "xml", "file": "fan.xml"}
    )
    assert saved.status_code == 201, saved.text
    path = settings.workflows_dir / "fan.xml"

    renamed = await client.post(
        "/workflows/reserve/rename",
        json={"new_id": "reserve_one", "expected_version": saved.json()["version"]},
    )

    assert renamed.status_code == 200, renamed.text
    assert renamed.json()["updated_files"] == ["fan.xml"]
    text = path.read_text()
    # Exactly four attribute values changed: the id and the three sub-workflow calls.
    expected = (
        XML_TWO_CALLERS.replace("id='reserve'>", "id='reserve_one'>")
        .replace('workflow="reserve"', 'workflow="reserve_one"')
        .replace('workflow = "reserve"', 'workflow = "reserve_one"')
    )
    assert text == expected
    assert "&lt;workflow id='reserve'&gt;" in text  # inside a value: untouched
    assert '<!-- <workflow id="reserve"> inside a comment is left alone -->' in text
    fan_out = (await client.get("/workflows/fan_out")).json()
    assert fan_out["valid"] is True, fan_out["violations"]
    assert fan_out["parsed"]["graph"]["both"]["branches"]["b"]["workflow"] == "reserve_one"
    assert fan_out["parsed"]["graph"]["loop"]["step"]["workflow"] == "reserve_one"
    assert (await client.get("/workflows/reserve")).status_code == 404

    used = await client.delete("/workflows/reserve_one")
    assert used.status_code == 409 and used.json()["context"]["used_by"] == ["fan_out"]
    assert (await client.delete("/workflows/alone")).status_code == 204
    assert path.read_text() == expected.replace(ALONE, "")
    assert (await client.delete("/workflows/fan_out")).status_code == 204
    text = path.read_text()
    assert 'id="fan_out"' not in text and "Two bookings at once" not in text  # + its comment
    assert '<!-- <workflow id="reserve"> inside a comment is left alone -->' in text
    assert "<!-- Books one flight; called by fan_out. -->" in text
    assert (await client.get("/workflows/reserve_one")).json()["valid"] is True
    last = await client.delete("/workflows/reserve_one")
    assert last.status_code == 204
    assert not path.exists()  # it held only that workflow


async def test_a_workflow_exports_as_arazzo_with_what_has_no_equivalent_listed(
    client: httpx.AsyncClient, settings: Settings
) -> None:
    from dynamic_tools.definitions.arazzo.validation import check_arazzo

    answer = await client.get("/workflows/book_trip", params={"format": "arazzo"})
    assert answer.status_code == 200, answer.text
    export = answer.json()
    assert export["workflow_id"] == "book_trip" and export["openapi_file"] == "tools.openapi.yaml"
    ids = [w["workflowId"] for w in export["arazzo"]["workflows"]]
    # the sub-workflows its parallel node calls come along (the parallel itself is left out)
    assert ids == ["book_trip", "book_flight", "book_hotel"]
    messages = " ".join(w["message"] for w in export["warnings"])
    assert "a parallel node has no Arazzo equivalent" in messages
    assert "a compensate node has no Arazzo equivalent" in messages
    text = yaml.safe_dump(export["arazzo"], sort_keys=False)
    assert check_arazzo(text, name="x.yaml", sources={"tools": export["openapi"]}).valid

    hotel = (await client.get("/workflows/book_hotel?format=arazzo")).json()
    assert [s["operationId"] for s in hotel["arazzo"]["workflows"][0]["steps"]] == [
        "search_hotels",
        "book_hotel",
    ]
    # the server URL is ${PUBLIC_BASE_URL}'s value here: said, per tool, with its path
    assert [(w["path"], w["rule"]) for w in hotel["warnings"]] == [
        ("tools.search_hotels.api.base_url", "base_url_variable"),
        ("tools.book_hotel.api.base_url", "base_url_variable"),
    ]
    assert hotel["openapi"]["servers"] == [{"url": f"{settings.base_url}/demo/travel"}]
    assert (await client.get("/workflows/nope?format=arazzo")).status_code == 404
    bad = await client.get("/workflows/book_hotel?format=bpmn")
    assert bad.status_code == 422 and "format" in bad.text


MIXED = """domain: travel_booking
workflows:
  look:
    description: Check one flight's seats
    graph:
      seats:
        call: check_availability
        args: { flight_id: FL-AMSBCN-20261201-1 }
  trip:
    description: Calls a sub-workflow nobody defined
    graph:
      hotel: { workflow: no_such_workflow }
  caller:
    description: Calls the broken one
    graph:
      again: { workflow: trip }
"""


async def test_a_registry_workflow_runs_though_a_sibling_in_its_file_is_invalid(
    client: httpx.AsyncClient, settings: Settings
) -> None:
    """A file edited on disk so that one workflow is invalid: the others of the file still
    run; the invalid one and its callers are refused with only the errors that stop them."""
    (settings.workflows_dir / "mixed.yaml").write_text(MIXED)
    await client.post("/workflows/_reload")
    started = await client.post("/workflows/look/runs", json={"params": {}})
    assert started.status_code == 202, started.text
    for refused_id in ("trip", "caller"):
        refused = await client.post(f"/workflows/{refused_id}/runs", json={"params": {}})
        assert refused.status_code == 422, refused.text
        paths = {v["path"] for v in refused.json()["violations"]}
        assert paths and all(p.startswith("workflows.trip") for p in paths), paths
