"""Raw 2026-07-28 requests (stateless, per-request ``_meta``) where the wire itself matters.

Found by the conformance suite (docs/mcp-conformance.md): routing headers are compared
without the whitespace around them (RFC 9110, section 5.5), and a resource that is not there
is -32602 with the ``uri`` in ``data`` (SEP-2164; 2026-07-28 retired -32002, which 2025-11-25
still uses).
"""

from __future__ import annotations

import http.client
import json
from typing import Any
from urllib.parse import urlsplit

from tests.support.mcp_raw import RawMcp, RawModern

MODERN = "2026-07-28"
TRIP = {"origin": "AMS", "destination": "BCN", "date": "2026-12-01"}


def post(
    server: str, method: str, params: dict[str, Any], **headers: str
) -> tuple[int, dict[str, Any]]:
    """One stateless 2026-07-28 request (``headers`` replace the routing headers): status, body.

    ``http.client`` sends header values as given (httpx refuses surrounding whitespace).
    """
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}
    sent = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": method,
        **headers,
    }
    address = urlsplit(server)
    connection = http.client.HTTPConnection(address.hostname or "", address.port, timeout=30)
    try:
        connection.request("POST", "/mcp", body=json.dumps(body), headers=sent)
        answer = connection.getresponse()
        return answer.status, json.loads(answer.read())
    finally:
        connection.close()


def test_routing_headers_are_compared_without_surrounding_whitespace(server: str) -> None:
    call = {"name": "search_flights", "arguments": TRIP}
    status, padded = post(server, "tools/call", call, **{"Mcp-Name": "  search_flights \t"})
    assert status == 200, padded
    assert padded["result"]["isError"] is False
    status, listed = post(server, "tools/list", {}, **{"Mcp-Method": "tools/list  "})
    assert status == 200 and listed["result"]["tools"]
    # Whitespace inside a value still counts: another name is refused.
    status, other = post(server, "tools/call", call, **{"Mcp-Name": "search  flights"})
    assert status == 400
    assert other["error"]["code"] == -32020  # header mismatch


async def test_a_missing_resource_is_invalid_params_with_its_uri_on_2026(server: str) -> None:
    uri = "workflow.manifest:nope"
    _, missing = post(server, "resources/read", {"uri": uri}, **{"Mcp-Name": uri})
    error = missing["error"]
    assert error["code"] == -32602
    assert error["data"]["uri"] == uri
    assert error["data"]["error_code"] and error["data"]["correlation_id"]
    async with RawMcp(server) as raw:  # 2025-11-25 keeps its -32002, with the uri too
        legacy = await raw.request("resources/read", {"uri": uri})
    assert legacy["error"]["code"] == -32002
    assert legacy["error"]["data"]["uri"] == uri


async def test_a_tampered_request_state_is_a_request_error_and_changes_nothing(
    server: str,
) -> None:
    # conformance input-required-result-tampered-state (it calls a fixture tool; ours here)
    book = {**TRIP, "passenger": "Ada"}
    accept = {"action": "accept", "content": {"confirm": True}}
    async with RawModern(server, capabilities={"elicitation": {"form": {}}}) as mcp:
        asked = (
            await mcp.request(
                "tools/call",
                {"name": "workflow.delete", "arguments": {"workflow_id": "book_flight"}},
            )
        )["result"]
        [key] = asked["inputRequests"]
        tampered = asked["requestState"][:-4] + "AAAA"
        deleted = await mcp.request(
            "tools/call",
            {
                "name": "workflow.delete",
                "arguments": {"workflow_id": "book_flight"},
                "inputResponses": {key: accept},
                "requestState": tampered,
            },
        )
        waiting = (
            await mcp.request("tools/call", {"name": "w_book_with_approval", "arguments": book})
        )["result"]
        [yield_key] = waiting["inputRequests"]
        answered = await mcp.request(
            "tools/call",
            {
                "name": "w_book_with_approval",
                "arguments": book,
                "inputResponses": {yield_key: {"action": "accept", "content": {}}},
                "requestState": "not-json",
            },
        )
        still = await mcp.request(
            "tools/call", {"name": "workflow.get", "arguments": {"workflow_id": "book_flight"}}
        )
    assert asked["resultType"] == "input_required"
    for error in (deleted["error"], answered["error"]):
        assert error["code"] == -32602, error
        assert error["data"]["error_code"] == "INVALID_INPUT"
    for error in (deleted["error"], answered["error"]):
        assert error["data"]["violations"][0]["path"] == "requestState", error
    assert not still["result"].get("isError"), "the workflow was not deleted"


async def test_params_the_protocol_refuses_get_the_whole_error_payload(server: str) -> None:
    async with RawModern(server) as modern, RawMcp(server) as legacy:
        answers = [
            await modern.request(
                "tools/call",
                {"name": "w_book_flight", "arguments": {}, "inputResponses": "not-an-object"},
            ),
            await modern.request("tasks/get", {}),
            await legacy.request("tasks/get", {"taskId": 7}),
        ]
    for answer in answers:
        error = answer["error"]
        assert error["code"] == -32602, answer
        data = error["data"]
        assert data["error_code"] == "INVALID_INPUT" and data["retryable"] is False, data
        assert data["suggested_action"] and data["correlation_id"], data
        assert data["violations"][0]["rule"] == "schema", data
    assert answers[0]["error"]["data"]["context"] == {
        "method": "tools/call",
        "tool": "w_book_flight",
    }
    assert answers[1]["error"]["data"]["context"] == {"method": "tasks/get"}
