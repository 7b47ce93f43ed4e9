"""Safe by default for every call a model composes (README, "Safe by default"): ``_execute``,
``_query``, recipe replays and the runs of model-authored drafts refuse REST writes and GraphQL
mutations unless ``X-Allow-Unsafe-Paths`` matches, before anything reaches the API; the refusal
names the header and the patterns that would allow the call. A saved workflow keeps what it
declares. Real MCP clients against a live server and APIs that record what they receive."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.shared.exceptions import MCPError

from tests.support.fake_llm import FakeLLM, text, tool_call
from tests.support.graphql_api import TOKEN, GraphQLApi
from tests.support.library_api import LibraryApi, running_library_api
from tests.support.mcp_client import mcp_client
from tests.support.mcp_raw import RawMcp
from tests.support.mcp_tasks import call_as_task, poll

ALLOW = "X-Allow-Unsafe-Paths"
MUTATION = 'mutation { createBooking(flightId: "FL-1", passenger: "Ada") { id } }'
STATUS = "query Status($n: String!) { flightStatus(number: $n) { number status } }"


@pytest.fixture
def library() -> Iterator[LibraryApi]:
    with running_library_api() as api:
        yield api


@pytest.fixture
def gateway(start_server: Callable[..., str], travel_root: Path, library: LibraryApi) -> str:
    """Our server, allowed to reach the library; ``search_books`` (a POST read) registered."""
    (travel_root / "tools" / "search_books.yaml").write_text(library.search_tool())
    return start_server(allowed_target_hosts=[library.host])


def rest_session(library: LibraryApi, **more: str) -> dict[str, str]:
    return {"X-Target-URL": library.openapi, "X-API-Name": "library", **more}


def graphql_session(graph: GraphQLApi, **more: str) -> dict[str, str]:
    return {
        "X-Target-URL": graph.endpoint,
        "X-API-Type": "graphql",
        "X-API-Name": "flights",
        "X-Target-Headers": json.dumps({"Authorization": TOKEN}),
        **more,
    }


def refusal(result: Any) -> dict[str, Any]:
    """The error payload of a refused call (the result's text: ``CODE: message``, then JSON)."""
    assert result.is_error, result.content
    payload: dict[str, Any] = json.loads(result.content[0].text.split("\n", 1)[1])
    assert payload["error_code"] == "UNSAFE_CALL_REFUSED", payload
    assert payload["context"]["header"] == ALLOW
    assert ALLOW in payload["message"] and ALLOW in payload["suggested_action"]
    return payload


def draft(library: LibraryApi) -> str:
    """A workflow a model might write: read the books, then add one with a POST rest_call."""
    return f"""\
domain: library
base_url: "{library.url}"
workflows:
  add_a_book:
    description: Read the books, then add one
    params:
      title: {{type: str, required: true}}
    graph:
      books:
        call: rest_call
        args: {{method: GET, path: /books}}
        output: books
      add:
        call: rest_call
        depends_on: [books]
        args: {{method: POST, path: /books, body: {{title: $title}}}}
        output: added
    outputs:
      id: $added.id
"""


async def finished(url: str, run_id: str) -> dict[str, Any]:
    async with httpx.AsyncClient() as http:
        for _ in range(400):
            run: dict[str, Any] = (await http.get(f"{url}/runs/{run_id}")).json()
            if run["status"] in ("succeeded", "failed", "cancelled"):
                return run
            await asyncio.sleep(0.05)
    raise AssertionError(f"run {run_id} did not finish")


# --- {prefix}_execute --------------------------------------------------------------------------
async def test_execute_refuses_a_rest_write_by_default_and_sends_nothing(
    gateway: str, library: LibraryApi
) -> None:
    async with mcp_client(gateway, headers=rest_session(library)) as client:
        listed = await client.call_tool("library_execute", {"operation": "list_books"})
        added = await client.call_tool(
            "library_execute", {"operation": "add_book", "arguments": {"title": "Emma"}}
        )
        deleted = await client.call_tool(
            "library_execute", {"operation": "delete_book", "arguments": {"book_id": "b1"}}
        )
    assert not listed.is_error, listed.content
    payload = refusal(added)
    assert payload["context"]["allow_with"] == ["/books", "add_book"]
    assert "'/books' or 'add_book'" in payload["message"]
    assert payload["violations"][0]["rule"] == "unsafe"
    assert refusal(deleted)["context"]["allow_with"] == ["/books/{book_id}", "delete_book"]
    assert library.received == [("GET", "/books")]  # the writes never reached the API


@pytest.mark.parametrize(
    ("allow", "operation", "arguments", "sent"),
    [
        ("/books", "add_book", {"title": "Emma"}, ("POST", "/books")),
        ('["add_*"]', "add_book", {"title": "Emma"}, ("POST", "/books")),
        ("/books/*", "delete_book", {"book_id": "b1"}, ("DELETE", "/books/b1")),
        ("list_books, delete_book", "delete_book", {"book_id": "b1"}, ("DELETE", "/books/b1")),
    ],
)
async def test_execute_sends_the_rest_write_the_header_allows(
    gateway: str,
    library: LibraryApi,
    allow: str,
    operation: str,
    arguments: dict[str, Any],
    sent: tuple[str, str],
) -> None:
    async with mcp_client(gateway, headers=rest_session(library, **{ALLOW: allow})) as client:
        allowed = await client.call_tool(
            "library_execute", {"operation": operation, "arguments": arguments}
        )
        other = "delete_book" if operation == "add_book" else "add_book"
        other_args = {"book_id": "b2"} if other == "delete_book" else {"title": "Persuasion"}
        not_allowed = await client.call_tool(
            "library_execute", {"operation": other, "arguments": other_args}
        )
    assert not allowed.is_error, allowed.content
    refusal(not_allowed)  # the header allows what it matches, nothing more
    assert library.writes() == [sent]


async def test_execute_refuses_a_graphql_mutation_by_default_and_sends_nothing(
    graph_gateway: str, graph: GraphQLApi
) -> None:
    async with mcp_client(graph_gateway, headers=graphql_session(graph)) as client:
        read = await client.call_tool(
            "flights_execute", {"query": STATUS, "variables": {"n": "KL1234"}}
        )
        refused = await client.call_tool("flights_execute", {"query": MUTATION})
    assert not read.is_error, read.content
    payload = refusal(refused)
    assert payload["context"]["allow_with"] == ["createBooking"]
    assert "mutation createBooking" in payload["message"]
    assert graph.bookings == []
    assert not any("createBooking" in query for query, _ in graph.seen)


@pytest.mark.parametrize("allow", ["createBooking", "create*", '["cancel*", "createBooking"]'])
async def test_execute_sends_the_mutation_the_header_allows(
    graph_gateway: str, graph: GraphQLApi, allow: str
) -> None:
    async with mcp_client(graph_gateway, headers=graphql_session(graph, **{ALLOW: allow})) as c:
        booked = await c.call_tool("flights_execute", {"query": MUTATION})
    assert not booked.is_error, booked.content
    assert [b["passenger"] for b in graph.bookings] == ["Ada"]


async def test_a_pattern_for_another_field_does_not_allow_a_mutation(
    graph_gateway: str, graph: GraphQLApi
) -> None:
    headers = graphql_session(graph, **{ALLOW: '["cancel*", "/bookings"]'})
    async with mcp_client(graph_gateway, headers=headers) as client:
        refused = await client.call_tool("flights_execute", {"query": MUTATION})
    assert refusal(refused)["context"]["allow_with"] == ["createBooking"]
    assert graph.bookings == []


# --- {prefix}_query ----------------------------------------------------------------------------
async def test_query_lets_the_model_write_only_where_the_header_allows(
    gateway: str, library: LibraryApi, fake_llm: FakeLLM
) -> None:
    fake_llm.script(*[tool_call("add_book", {"title": "Emma"})] * 3)
    async with mcp_client(gateway, headers=rest_session(library)) as client:
        refused = await client.call_tool("library_query", {"question": "Add the book Emma"})
    assert refused.is_error
    offered = {f["function"]["name"] for f in fake_llm.requests[0]["tools"]}
    assert {"list_books", "get_book"} <= offered
    assert not {"add_book", "delete_book", "search_books"} & offered  # the rule decides
    assert library.writes() == []

    fake_llm.reset()
    fake_llm.script(tool_call("add_book", {"title": "Emma"}))
    async with mcp_client(gateway, headers=rest_session(library, **{ALLOW: "/books"})) as client:
        added = await client.call_tool("library_query", {"question": "Add the book Emma"})
    assert not added.is_error, added.content
    assert library.writes() == [("POST", "/books")]


async def test_query_refuses_a_mutation_the_model_writes_naming_the_header(
    graph_gateway: str, graph: GraphQLApi, fake_llm: FakeLLM
) -> None:
    fake_llm.script(*[tool_call("flights_graphql", {"query": MUTATION})] * 3)
    async with mcp_client(graph_gateway, headers=graphql_session(graph)) as client:
        refused = await client.call_tool("flights_query", {"question": "Book FL-1 for Ada"})
    assert refused.is_error
    feedback = fake_llm.requests[1]["messages"][-1]["content"]  # what the model was told
    assert ALLOW in feedback and "'createBooking'" in feedback
    assert graph.bookings == []

    fake_llm.reset()
    fake_llm.script(tool_call("flights_graphql", {"query": MUTATION}))
    allowed = graphql_session(graph, **{ALLOW: "create*"})
    async with mcp_client(graph_gateway, headers=allowed) as client:
        booked = await client.call_tool("flights_query", {"question": "Book FL-1 for Ada"})
    assert not booked.is_error, booked.content
    assert [b["passenger"] for b in graph.bookings] == ["Ada"]


# --- recipes -----------------------------------------------------------------------------------
async def test_a_recipe_replays_a_post_only_where_the_header_allows_it(
    gateway: str, library: LibraryApi, fake_llm: FakeLLM
) -> None:
    """``search_books`` reads over POST: learned where allowed, never replayed elsewhere."""
    fake_llm.script(tool_call("search_books", {"text": "dune"}))
    async with mcp_client(gateway, headers={ALLOW: "search_books"}) as client:
        answer = await client.call_tool("api_query", {"question": "books with dune in the title"})
        assert not answer.is_error, answer.content
        recipes = [t.name for t in (await client.list_tools()).tools if t.name.startswith("r_")]
        assert recipes == ["r_search_books_by_text"]
        replay = await client.call_tool("r_search_books_by_text", {"text": "dune"})
    assert not replay.is_error, replay.content
    assert replay.structured_content["result"][0]["title"] == "Dune"
    sent = len(library.received)

    async with mcp_client(gateway) as client:  # no header: the recipe's POST is refused
        names = {t.name for t in (await client.list_tools()).tools}
        try:
            again = await client.call_tool("r_search_books_by_text", {"text": "dune"})
        except MCPError as exc:
            assert exc.error.code == -32602  # not offered in this session
        else:
            refusal(again)
    assert "r_search_books_by_text" not in names
    assert len(library.received) == sent  # nothing reached the API


# --- runs of model-authored drafts -------------------------------------------------------------
async def test_a_draft_run_inline_refuses_its_post_rest_call_unless_allowed(
    gateway: str, library: LibraryApi
) -> None:
    inputs = {"title": "Emma"}
    async with mcp_client(gateway) as client:
        started = await client.call_tool(
            "workflow.run", {"content": draft(library), "inputs": inputs}
        )
    assert not started.is_error, started.content
    run = await finished(gateway, started.structured_content["run_id"])
    assert run["status"] == "failed", run
    message = json.dumps(run["error"])
    assert ALLOW in message and "'/books'" in message
    assert library.received == [("GET", "/books")]  # the read ran; the write was never sent

    async with mcp_client(gateway, headers={ALLOW: "/books"}) as client:
        started = await client.call_tool(
            "workflow.run", {"content": draft(library), "inputs": inputs}
        )
    run = await finished(gateway, started.structured_content["run_id"])
    assert run["status"] == "succeeded", run
    assert library.writes() == [("POST", "/books")]


async def test_a_draft_run_as_a_task_refuses_its_post_rest_call(
    gateway: str, library: LibraryApi
) -> None:
    async with RawMcp(gateway) as mcp:
        task = await call_as_task(
            mcp, "workflow.execute", {"content": draft(library), "inputs": {"title": "Emma"}}
        )
        done = await poll(mcp, task["taskId"], {"completed", "failed"})
    assert done["status"] == "failed", done
    assert ALLOW in done["statusMessage"]
    assert library.writes() == []


async def test_a_workflow_our_model_drafted_runs_safe_by_default_then_keeps_its_declaration(
    gateway: str, library: LibraryApi, fake_llm: FakeLLM
) -> None:
    """``workflow.author_and_run``: the first run (nobody has read the draft) is held to the
    rule; the saved workflow, run later, keeps the POST it declares."""
    fake_llm.script(text(draft(library)))
    async with RawMcp(gateway) as mcp:
        task = await call_as_task(
            mcp,
            "workflow.author_and_run",
            {"goal": "add the book Emma", "inputs": {"title": "Emma"}},
        )
        done = await poll(mcp, task["taskId"], {"completed", "failed"})
    assert done["status"] == "failed", done
    assert ALLOW in done["statusMessage"] and "'/books'" in done["statusMessage"]
    failed_run = done["_meta"]["dynamic-tools/run"]["run_id"]

    async with mcp_client(gateway) as client:
        redriven = await client.call_tool("workflow.redrive", {"run_id": failed_run})
        assert not redriven.is_error, redriven.content
        again = await finished(gateway, redriven.structured_content["run_id"])
        assert again["status"] == "failed", again  # a re-drive stays model-composed
        assert ALLOW in json.dumps(again["error"])
        assert library.writes() == []

        started = await client.call_tool(
            "workflow.run", {"workflow_id": "add_a_book", "inputs": {"title": "Emma"}}
        )
    run = await finished(gateway, started.structured_content["run_id"])
    assert run["status"] == "succeeded", run
    assert library.writes() == [("POST", "/books")]


async def test_a_saved_workflow_keeps_the_post_it_declares(
    gateway: str, library: LibraryApi
) -> None:
    async with mcp_client(gateway) as client:
        saved = await client.call_tool("workflow.save", {"content": draft(library)})
        assert not saved.is_error, saved.content
        started = await client.call_tool(
            "workflow.run", {"workflow_id": "add_a_book", "inputs": {"title": "Emma"}}
        )
        by_tool = await client.call_tool("w_add_a_book", {"title": "Persuasion"})
    run = await finished(gateway, started.structured_content["run_id"])
    assert run["status"] == "succeeded", run
    assert not by_tool.is_error, by_tool.content
    assert library.writes() == [("POST", "/books"), ("POST", "/books")]
