"""bench.llm: cases, scoring, and a run through the real pipeline against the scripted model.

The scripted model (tests.support.fake_llm, on loopback, spoken to by the real openai client)
answers with the gold call, so every item must come out done, exact and AST; answering with
text instead must stop every item at llm_selection, neither exact nor AST.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from bench.bfcl.convert import load_sample
from bench.bfcl.harness import answer_args, offered
from bench.llm import (
    Case,
    Config,
    Result,
    ast_match,
    bfcl_cases,
    drop_nulls,
    exact_match,
    first_of_each,
    run_cases,
    spread,
    timed_out,
    totals,
    travel_cases,
)
from tests.conftest import FAKE_LLM_CAPABILITIES
from tests.support.fake_llm import Reply, running_fake_llm, text, tool_call


def test_config_reads_the_environment() -> None:
    config = Config.from_env(
        {
            "BENCH_LLM_BASE_URL": "http://127.0.0.1:1/v1",
            "BENCH_LLM_MODEL": "m",
            "BENCH_LLM_LIMIT": "3",
            "BENCH_LLM_TIMEOUT_S": "12.5",
            "BENCH_LLM_SERVER_ARGS": "--n_threads 2",
        }
    )
    assert (config.base_url, config.model, config.limit, config.timeout_s) == (
        "http://127.0.0.1:1/v1", "m", 3, 12.5,
    )  # fmt: skip
    assert config.server_args == ("--n_threads", "2")
    assert Config.from_env({}).base_url is None and Config.from_env({}).limit is None


def test_travel_cases_offer_every_travel_tool() -> None:
    cases = travel_cases()
    assert len(cases) == 10
    assert all(len(c.tool_ids) == 10 and c.tool in c.tool_ids for c in cases)


def test_spread_keeps_only_unflagged_items_evenly() -> None:
    items = load_sample()["live_multiple"]
    chosen = spread(items, 5)
    assert len(chosen) == 5 and len({i.id for i in chosen}) == 5
    assert not any(i.flagged for i in chosen)
    assert spread(items, 1000) == [i for i in items if not i.flagged and i.request is not None]


def test_a_limit_takes_each_category_in_turn() -> None:
    cases, _ = bfcl_cases(3)
    chosen = first_of_each(cases, 3)
    assert [c.part for c in chosen] == ["multiple", "multiple", "live_multiple"]
    assert chosen == [c for c in cases if c in chosen]
    assert first_of_each(cases, None) == cases


def test_ast_drops_nulls_and_exact_is_strict_about_types() -> None:
    case = Case("x", "travel", "i", ["t"], "t", {"a": 1, "b": {"c": None, "d": [1]}})
    assert drop_nulls({"a": None, "b": [{"c": None}]}) == {"b": [{}]}
    assert ast_match(case, "t", {"a": 1.0, "b": {"d": [1]}, "e": None})
    assert not exact_match(case, "t", {"a": 1.0, "b": {"d": [1]}}, [])
    assert exact_match(case, "t", {"a": 1, "b": {"d": [1]}, "e": None}, [])
    assert not ast_match(case, "u", {"a": 1, "b": {"d": [1]}})
    assert not ast_match(case, "t", None)


def _cases() -> list[Case]:
    bfcl, source = bfcl_cases(2)
    assert "committed sample" in source or source == "bfcl-eval"
    return travel_cases() + bfcl


def _run(answer: Any) -> list[Any]:
    cases = _cases()
    by_text = {c.instructions: c for c in cases}

    def reply(body: dict[str, Any]) -> Reply:
        user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        return answer(by_text[user], body)

    with running_fake_llm() as fake:
        fake.fallback = reply
        config = Config(
            base_url=fake.base_url, model="fake", timeout_s=10, capabilities=FAKE_LLM_CAPABILITIES
        )

        async def go() -> list[Any]:
            travel = await run_cases(fake.base_url, config, cases[:10], travel=True)
            return travel + await run_cases(fake.base_url, config, cases[10:], travel=False)

        return asyncio.run(go())


@pytest.mark.timeout(120)
def test_the_gold_answer_is_exact_on_every_item() -> None:
    def gold(case: Case, body: dict[str, Any]) -> Reply:
        return tool_call(case.tool, answer_args(case.arguments, offered(body).get(case.tool)))

    results = _run(gold)
    assert len(results) == 14
    assert [(r.stage, r.exact, r.ast) for r in results] == [("done", True, True)] * 14
    figures = totals(results)
    assert figures["travel"]["exact"] == 10 and figures["travel"]["prompt_tokens"] == 1000
    assert figures["multiple"]["items"] == 2 and figures["live_multiple"]["ast"] == 2


@pytest.mark.timeout(120)
def test_a_text_answer_stops_at_selection() -> None:
    results = _run(lambda case, body: text("I would call a tool."))
    assert {(r.stage, r.exact, r.ast, r.tool) for r in results} == {
        ("llm_selection", False, False, None)
    }
    assert all(r.error and r.llm_calls >= 1 for r in results)
    assert not any(timed_out(r) for r in results)


def test_a_timed_out_item_is_recognised() -> None:
    late = Result("x", "travel", "llm_selection", None, False, False, 0, 0, 0, 30.0,
                  "the LLM endpoint timed out")  # fmt: skip
    assert timed_out(late)
    assert not timed_out(Result("x", "travel", "done", "t", True, True, 1, 1, 1, 1.0))


def test_exact_for_bfcl_compares_the_request_sent() -> None:
    case = next(c for c in bfcl_cases(1)[0] if c.part == "multiple")
    assert case.bfcl is not None and case.bfcl.request is not None
    gold = case.bfcl.request
    right = httpx.Request(gold.method, gold.url, params=gold.query, json=gold.body)
    wrong = httpx.Request(gold.method, gold.url + "x", params=gold.query, json=gold.body)
    assert exact_match(case, case.tool, case.arguments, [right])
    assert not exact_match(case, case.tool, case.arguments, [wrong])
    assert not exact_match(case, case.tool, case.arguments, [])


def test_the_http_part_reaches_a_call_and_an_answer_through_a_llama_like_server() -> None:
    """``POST /workflow`` and MCP ``api_query`` over HTTP, against a server that answers as
    llama.cpp's does (probed, asked by named calls): a call, an answer, both in time."""
    from bench.llm_http import run_over_http
    from tests.support.llm_servers import llama_cpp, running

    case = travel_cases()[0]
    with running(llama_cpp("default", model="bench")) as server:
        results = run_over_http(
            server.base_url, "bench", "sk-unused", 30.0, [(case.id, case.instructions)],
            case.tool_ids,
        )  # fmt: skip
    by_path = {r.path: r for r in results}
    assert by_path["POST /workflow"].outcome == f"call {case.tool}", by_path
    assert by_path["api_query"].outcome == "answer", by_path
    assert all(r.in_time and r.llm_calls >= 1 for r in results), results
