import json
from typing import Any

import pytest

from dynamic_tools.engine.loaders import load_document
from dynamic_tools.errors import InvalidInputError
from dynamic_tools.tools.models import ToolConfig, ToolHints
from dynamic_tools.tools.planning import Plan, WorkflowSummary, plan_goal, summarize_workflow
from dynamic_tools.tools.registry import ToolRegistry
from tests.conftest import EXAMPLES

WORKFLOW_FILES = ["travel.yaml", "cancel_trip.xml", "waitlist_check.json"]


@pytest.fixture(scope="module")
def tools() -> list[ToolConfig]:
    registry = ToolRegistry(EXAMPLES / "tools", variables={"PUBLIC_BASE_URL": "http://127.0.0.1:1"})
    assert registry.reload() == []
    return registry.all()


@pytest.fixture(scope="module")
def workflows() -> list[WorkflowSummary]:
    out = []
    for name in WORKFLOW_FILES:
        text = (EXAMPLES / "workflows" / name).read_text()
        document = load_document(text, name=name).document
        out += [summarize_workflow(wid, wf) for wid, wf in document.workflows.items()]
    return out


def edge(plan: Plan, source: str, target: str) -> list[str]:
    found = [e for e in plan.edges if (e.source, e.target) == (source, target)]
    assert found, f"no edge {source} → {target} in {[(e.source, e.target) for e in plan.edges]}"
    return list(found[0].reasons)


def step(plan: Plan, tool: str) -> dict[str, Any]:
    return next(s.to_dict() for s in plan.steps if s.tool == tool)


def kinds(plan: Plan) -> list[str]:
    return [u.kind for u in plan.undecided]


# --- workflows ----------------------------------------------------------------------------
def test_summaries_come_from_the_engine_model(workflows: list[WorkflowSummary]) -> None:
    by_id = {w.id: w for w in workflows}
    trip = by_id["book_trip"]
    assert trip.tool == "w_book_trip"
    assert trip.node_count == 5  # parallel + its 2 branches + confirm + rollback_all
    assert trip.has_compensation and not trip.has_yield
    assert trip.tools == ("confirm_trip", "cancel_booking", "cancel_hotel")
    assert by_id["book_with_approval"].has_yield
    assert by_id["book_flight"].params["origin"] == {
        "type": "string",
        "required": True,
        "description": None,
        "example": "AMS",
    }
    assert by_id["find_cheapest_across_dates"].params["num_days"]["default"] == 7


def test_book_a_flight_suggests_the_book_flight_workflow(
    tools: list[ToolConfig], workflows: list[WorkflowSummary]
) -> None:
    plan = plan_goal("book a flight from AMS to BCN", tools, workflows)
    data = plan.to_dict()
    assert data["kind"] == "workflow"
    assert data["workflow"]["id"] == "book_flight" and data["workflow"]["tool"] == "w_book_flight"
    assert data["workflow"]["params"]["destination"]["example"] == "BCN"
    assert data["goal_terms"] == ["book", "flight"]  # AMS and BCN are values
    assert "book_flight" not in [a["id"] for a in data["alternatives"]]
    assert {"book_with_approval", "book_trip"} <= {a["id"] for a in data["alternatives"]}
    assert data["steps"] == [] and data["undecided"] == []
    assert plan.summary.startswith("Use workflow w_book_flight: Search, check availability")
    assert "origin (string, required, e.g. AMS)" in plan.summary
    json.dumps(data)


@pytest.mark.parametrize(
    ("goal", "expected"),
    [
        ("book a flight and a hotel in Barcelona", "book_trip"),
        ("cancel my trip", "cancel_trip"),
        ("find the cheapest flight over the next week", "find_cheapest_across_dates"),
        ("join the waitlist for a full flight", "join_waitlist_if_full"),
    ],
)
def test_clear_workflow_matches(
    tools: list[ToolConfig], workflows: list[WorkflowSummary], goal: str, expected: str
) -> None:
    plan = plan_goal(goal, tools, workflows)
    assert plan.kind == "workflow" and plan.workflow is not None
    assert plan.workflow.id == expected


def test_an_unclear_workflow_match_falls_back_to_a_tool_order(
    tools: list[ToolConfig], workflows: list[WorkflowSummary]
) -> None:
    plan = plan_goal("search flights", tools, workflows)
    assert plan.kind == "tool_order"
    assert plan.order == ["search_flights"]
    assert "book_flight" in [c.workflow.id for c in plan.alternatives]
    assert "Other matching workflows: w_book_flight" in plan.summary


# --- inferred order on the travel tools -------------------------------------------------------
def test_flight_booking_order_with_reasons(tools: list[ToolConfig]) -> None:
    plan = plan_goal("book a flight from AMS to BCN", tools, [])
    assert plan.kind == "tool_order"
    assert plan.order == [
        "search_flights",
        "check_availability",
        "create_booking",
        "process_payment",
    ]
    reasons = edge(plan, "search_flights", "check_availability")
    assert reasons[:3] == [
        "hints: check_availability requires search_flights",
        "hints: search_flights next check_availability",
        "data: flight_id ← search_flights.id",
    ]
    assert 'description: check_availability says "after search_flights"' in reasons
    assert reasons[-1] == "lifecycle: search before validation"
    assert "data: booking_id ← create_booking.id" in edge(plan, "create_booking", "process_payment")
    check = step(plan, "check_availability")
    assert check["inputs_from_steps"] == [
        {"input": "flight_id", "from": "search_flights", "field": "id", "pick_one": True}
    ]
    assert check["inputs_from_user"] == [] and check["depends_on"] == ["search_flights"]
    search = step(plan, "search_flights")
    assert [(i["name"], i["required"]) for i in search["inputs_from_user"]] == [
        ("origin", True),
        ("destination", True),
        ("date", True),
        ("passengers", False),
    ]
    booking = step(plan, "create_booking")
    assert booking["inputs_from_user"] == [{"name": "passenger", "required": True}]
    assert step(plan, "process_payment")["terminal"] is True


def test_flight_booking_reports_the_branch_and_the_compensation(tools: list[ToolConfig]) -> None:
    plan = plan_goal("book a flight from AMS to BCN", tools, [])
    branch = next(u for u in plan.undecided if u.kind == "branch")
    assert branch.at == "check_availability"
    assert branch.tools == ("create_booking", "add_to_waitlist")
    assert "needs a business rule" in branch.message
    assert 'description: add_to_waitlist says "instead of create_booking"' in branch.reasons
    compensation = next(u for u in plan.undecided if u.kind == "compensation")
    assert compensation.tools == ("cancel_booking", "create_booking")
    assert "use a workflow with compensate_with" in compensation.message
    assert kinds(plan) == ["branch", "compensation"]  # no parallel, no cycle
    assert plan.excluded == (
        ("confirm_trip", "needs book_hotel, search_hotels, which the goal does not mention"),
    )
    assert "1. search_flights (origin from the user;" in plan.summary
    assert "2. check_availability (flight_id ← search_flights.id)" in plan.summary


def test_flight_and_hotel_are_independent_chains_joined_by_confirm_trip(
    tools: list[ToolConfig],
) -> None:
    plan = plan_goal("book a flight and a hotel, then confirm the trip", tools, [])
    assert plan.order[-1] == "confirm_trip"
    assert set(plan.order) == {
        "search_flights",
        "check_availability",
        "create_booking",
        "search_hotels",
        "book_hotel",
        "confirm_trip",
    }
    parallel = next(u for u in plan.undecided if u.kind == "parallel")
    assert parallel.at == "confirm_trip"
    assert parallel.chains == (
        ("search_flights", "check_availability", "create_booking"),
        ("search_hotels", "book_hotel"),
    )
    assert "parallel: no data dependency" in parallel.message
    assert "order is arbitrary" in parallel.message
    links = step(plan, "confirm_trip")["inputs_from_steps"]
    assert {(x["input"], x["from"]) for x in links} == {
        ("flight_booking_id", "create_booking"),
        ("hotel_booking_id", "book_hotel"),
    }
    undone = {u.tools for u in plan.undecided if u.kind == "compensation"}
    assert undone == {("cancel_booking", "create_booking"), ("cancel_hotel", "book_hotel")}


def test_an_undo_goal_plans_the_compensations_only(tools: list[ToolConfig]) -> None:
    plan = plan_goal("cancel my trip", tools, [])
    assert plan.order == ["cancel_booking", "cancel_hotel"]
    assert step(plan, "cancel_hotel")["inputs_from_user"] == [
        {"name": "booking_id", "required": True}
    ]
    assert kinds(plan) == ["parallel"]


def test_header_hints_override_the_registry(tools: list[ToolConfig]) -> None:
    hints = {"check_availability": ToolHints.model_validate({"next": ["create_booking"]})}
    plan = plan_goal("book a flight", tools, [], hints=hints)
    branches = [u for u in plan.undecided if u.kind == "branch"]
    # the hint no longer lists two next tools; the description's "instead of" still does
    assert [b.at for b in branches] == [None]
    assert branches[0].tools == ("add_to_waitlist", "create_booking")


def test_blank_and_unknown_goals(tools: list[ToolConfig]) -> None:
    with pytest.raises(InvalidInputError) as exc:
        plan_goal("   ", tools, [])
    assert exc.value.violations[0]["field"] == "goal"
    plan = plan_goal("quantum entanglement", tools, [])
    assert plan.kind == "none" and plan.steps == ()
    assert "Nothing matches" in plan.summary


# --- tools with no hints at all: output → input matching only ------------------------------
def shop_tool(
    name: str,
    method: str,
    description: str,
    inputs: dict[str, bool],
    output: dict[str, Any] | None,
    hints: dict[str, Any] | None = None,
) -> ToolConfig:
    path = "/" + name
    params: dict[str, Any] = {}
    for param, required in inputs.items():
        where = "query" if method in ("GET", "DELETE") else "body"
        params[param] = {"type": "string", "in": where, "required": required}
    return ToolConfig.model_validate(
        {
            "name": name,
            "description": description,
            "api": {"method": method, "base_url": "https://shop.example.com", "path": path},
            "parameters": params,
            "output_schema": output,
            "hints": hints or {},
        }
    )


def obj(id_description: str, **extra: Any) -> dict[str, Any]:
    props = {"id": {"type": "string", "description": id_description}, **extra}
    return {"type": "object", "properties": props}


SHOP = [
    shop_tool(
        "pay_order", "POST", "Pay an order.", {"order_id": True, "coupon": False}, obj("Payment id")
    ),
    shop_tool(
        "checkout_cart", "POST", "Turn a cart into an order.", {"cart_id": True}, obj("Order id")
    ),
    shop_tool(
        "search_products",
        "GET",
        "Find products by keyword.",
        {"keyword": True},
        {"type": "array", "items": obj("Product id", name={"type": "string"})},
    ),
    shop_tool(
        "add_to_cart", "POST", "Put a product in a new cart.", {"product_id": True}, obj("Cart id")
    ),
    shop_tool("delete_cart", "DELETE", "Throw a cart away.", {"cart_id": True}, None),
]


def test_without_hints_the_order_comes_from_data_alone() -> None:
    plan = plan_goal("pay the order", SHOP, [])
    assert plan.order == ["search_products", "add_to_cart", "checkout_cart", "pay_order"]
    assert edge(plan, "search_products", "add_to_cart") == [
        "data: product_id ← search_products.id",
        "lifecycle: search before action",
    ]
    assert edge(plan, "checkout_cart", "pay_order")[0] == "data: order_id ← checkout_cart.id"
    assert [s.why for s in plan.steps] == [
        "prerequisite of pay_order",
        "prerequisite of pay_order",
        "prerequisite of pay_order",
        "matches the goal",
    ]
    pay = step(plan, "pay_order")
    assert pay["inputs_from_steps"][0]["pick_one"] is False
    assert pay["inputs_from_user"] == [{"name": "coupon", "required": False}]
    assert step(plan, "add_to_cart")["inputs_from_steps"][0]["pick_one"] is True
    # delete_cart: a DELETE undoing add_to_cart (it consumes the cart id), never a step
    assert [u.tools for u in plan.undecided] == [("delete_cart", "add_to_cart")]
    assert plan.undecided[0].kind == "compensation"


def test_categories_alone_give_the_lifecycle_order() -> None:
    tools = [
        shop_tool(n, "POST", d, {}, None, {"category": c})
        for n, d, c in [
            ("process_payment", "Take the money for the order.", "finalization"),
            ("create_order", "Create the order.", "action"),
            ("check_stock", "Check the order can be served.", "validation"),
            ("find_items", "Find items for the order.", "search"),
        ]
    ]
    plan = plan_goal("order", tools, [])
    assert plan.order == ["find_items", "check_stock", "create_order", "process_payment"]
    assert edge(plan, "check_stock", "create_order") == ["lifecycle: validation before action"]
    assert plan.undecided == ()


def test_a_cycle_is_named_and_broken() -> None:
    tools = [
        shop_tool("reserve_seat", "POST", "Reserve a seat.", {}, None, {"requires": ["hold_seat"]}),
        shop_tool("hold_seat", "POST", "Hold a seat.", {}, None, {"requires": ["reserve_seat"]}),
    ]
    plan = plan_goal("seat", tools, [])
    assert sorted(plan.order) == ["hold_seat", "reserve_seat"]
    cycle = next(u for u in plan.undecided if u.kind == "cycle")
    assert set(cycle.tools) == {"hold_seat", "reserve_seat"}
    assert cycle.message.startswith("cycle: ")
    assert len(plan.edges) == 1  # one direction was set aside
