"""The scripted llama.cpp, vLLM and Ollama servers answer as their documentation and code say.

The real ``openai`` client talks to each over loopback. Each test pins one documented behaviour:
a field honoured, ignored or refused, with the status and JSON body the real server sends
(``tests/support/llm_servers.py`` lists the facts and their sources).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest

from tests.support.llm_servers import (
    PROFILES,
    LLMServer,
    ProfileName,
    Seen,
    TravelOracle,
    llama_cpp,
    ollama,
    profile,
    running,
    travel_cases,
    vllm,
)

MODEL = "served-model"
PROBE_TOOL = {
    "type": "function",
    "function": {
        "name": "probe",
        "parameters": {
            "type": "object",
            "properties": {"ok": {"type": "boolean"}},
            "required": ["ok"],
        },
    },
}
OK_SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
PROBE_MESSAGES = [
    {"role": "system", "content": "You are a probe."},
    {"role": "user", "content": "Call probe."},
]
ENVELOPE_ASK = 'Answer with one JSON object {"tool": <name>, "arguments": {...}}.'


def client(server: LLMServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="sk-local", max_retries=0)


def create(server: LLMServer, **kwargs: Any) -> Any:
    values: dict[str, Any] = {"model": MODEL, "messages": PROBE_MESSAGES, "max_tokens": 32}
    values.update(kwargs)
    return client(server).chat.completions.create(**values)


def refused(server: LLMServer, **kwargs: Any) -> openai.APIStatusError:
    with pytest.raises(openai.APIStatusError) as caught:
        create(server, **kwargs)
    return caught.value


def calls(response: Any) -> list[tuple[str, dict[str, Any]]]:
    message = response.choices[0].message
    return [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls or []]


@pytest.fixture(params=PROFILES)
def any_server(request: pytest.FixtureRequest) -> Iterator[LLMServer]:
    name: ProfileName = request.param
    with running(profile(name)) as server:
        yield server


# --- every profile ---------------------------------------------------------------------------


def test_each_records_the_request_bodies_and_counts_tokens(any_server: LLMServer) -> None:
    response = create(any_server, response_format={"type": "json_object"})
    assert any_server.requests[-1]["max_tokens"] == 32
    assert any_server.requests[-1]["messages"] == PROBE_MESSAGES
    assert json.loads(response.choices[0].message.content) == {
        "tool": "probe",
        "arguments": {"ok": True},
    }
    assert response.usage.prompt_tokens > 0
    assert response.usage.completion_tokens == -(-len(response.choices[0].message.content) // 4)


def test_each_answers_a_named_probe_with_ok_true_except_ollama_which_ignores_tool_choice(
    any_server: LLMServer,
) -> None:
    choice = {"type": "function", "function": {"name": "probe"}}
    response = create(any_server, tools=[PROBE_TOOL], tool_choice=choice)
    assert calls(response) == [("probe", {"ok": True})]
    expected = "stop" if any_server.kind == "vllm" else "tool_calls"
    assert response.choices[0].finish_reason == expected


# --- llama-cpp-python ------------------------------------------------------------------------


@pytest.fixture(params=["default", "chatml-function-calling", "gemma"])
def llama(request: pytest.FixtureRequest) -> Iterator[LLMServer]:
    with running(llama_cpp(request.param)) as server:
        yield server


def test_llama_refuses_response_format_json_schema_with_a_500(llama: LLMServer) -> None:
    fmt = {"type": "json_schema", "json_schema": {"name": "x", "schema": OK_SCHEMA}}
    error = refused(llama, response_format=fmt)
    assert error.status_code == 500
    body = error.body
    assert isinstance(body, dict) and body["type"] == "internal_server_error"
    assert body["param"] is None and body["code"] is None
    assert "validation error" in body["message"] and "json_object" in body["message"]


def test_llama_honours_json_object_with_a_schema(llama: LLMServer) -> None:
    response = create(llama, response_format={"type": "json_object", "schema": OK_SCHEMA})
    assert json.loads(response.choices[0].message.content) == {"ok": True}
    assert response.choices[0].finish_reason == "stop"


def test_llama_refuses_assistant_content_null_with_a_500(llama: LLMServer) -> None:
    messages = [
        *PROBE_MESSAGES,
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "probe", "arguments": '{"ok": true}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "{}"},
    ]
    error = refused(llama, messages=messages)
    assert error.status_code == 500
    assert isinstance(error.body, dict) and "content" in error.body["message"]


def test_llama_accepts_an_empty_string_content_on_tool_call_messages(llama: LLMServer) -> None:
    messages = [
        *PROBE_MESSAGES,
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "probe", "arguments": '{"ok": true}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "{}"},
    ]
    response = create(llama, messages=messages, response_format={"type": "json_object"})
    assert response.choices[0].message.content


def test_llama_gemma_and_chatml_fc_fail_on_an_assistant_message_without_content() -> None:
    messages = [
        *PROBE_MESSAGES,
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "probe", "arguments": "{}"},
                }
            ],
        },
    ]
    with running(llama_cpp("gemma")) as gemma:
        assert refused(gemma, messages=messages).body == {
            "message": "'content'",
            "type": "internal_server_error",
            "param": None,
            "code": None,
        }
    with running(llama_cpp("chatml-function-calling")) as chatml:
        error = refused(chatml, messages=messages)
        assert error.status_code == 500 and "content" in str(error.body)
    with running(llama_cpp("default")) as default:
        assert create(default, messages=messages).choices[0].finish_reason == "length"


def test_llama_default_ignores_tools_and_tool_choice_and_rambles_to_max_tokens() -> None:
    with running(llama_cpp("default")) as server:
        for choice in ("required", "auto", None):
            extra = {"tool_choice": choice} if choice else {}
            response = create(server, tools=[PROBE_TOOL], max_tokens=20, **extra)
            assert calls(response) == []
            assert response.choices[0].finish_reason == "length"
            assert response.usage.completion_tokens == 20
        runaway = client(server).chat.completions.create(model=MODEL, messages=PROBE_MESSAGES)
        assert runaway.choices[0].finish_reason == "length"
        used = runaway.usage.prompt_tokens + runaway.usage.completion_tokens
        assert used == server.n_ctx  # type: ignore[attr-defined]


def test_llama_default_writes_the_json_it_is_asked_for_and_stops() -> None:
    with running(llama_cpp("default")) as server:
        messages = [
            {"role": "system", "content": "Tools: probe. " + ENVELOPE_ASK},
            {"role": "user", "content": "Check that you work."},
        ]
        response = create(server, messages=messages)
    assert json.loads(response.choices[0].message.content) == {
        "tool": "probe",
        "arguments": {"ok": True},
    }
    assert response.choices[0].finish_reason == "stop"


def test_llama_named_tool_choice_is_cut_by_max_tokens_yet_says_tool_calls() -> None:
    big = {
        "type": "function",
        "function": {
            "name": "search_flights",
            "parameters": {"type": "object", "properties": {}, "additionalProperties": True},
        },
    }
    case = travel_cases()[0]
    with running(llama_cpp("default")) as server:
        response = create(
            server,
            messages=[{"role": "user", "content": case.instructions}],
            tools=[big],
            tool_choice={"type": "function", "function": {"name": "search_flights"}},
            max_tokens=4,
        )
    (call,) = response.choices[0].message.tool_calls
    assert len(call.function.arguments) == 16  # 4 tokens of the JSON, not parseable
    assert response.choices[0].finish_reason == "tool_calls"


def test_llama_a_named_function_not_offered_is_a_500() -> None:
    with running(llama_cpp("default")) as server:
        choice = {"type": "function", "function": {"name": "other"}}
        error = refused(server, tools=[PROBE_TOOL], tool_choice=choice)
    assert error.status_code == 500
    assert isinstance(error.body, dict)
    assert error.body["message"] == "Tool choice 'other' not found in tools."


def test_llama_chatml_function_calling_refuses_required_with_an_empty_500() -> None:
    with running(llama_cpp("chatml-function-calling")) as server:
        error = refused(server, tools=[PROBE_TOOL], tool_choice="required")
        assert error.status_code == 500
        assert error.body == {
            "message": "",
            "type": "internal_server_error",
            "param": None,
            "code": None,
        }
        auto = create(server, tools=[PROBE_TOOL], tool_choice="auto")
        assert calls(auto) == [("probe", {"ok": True})]
        assert auto.choices[0].finish_reason == "tool_calls"
        # no tool_choice: the functions are not even shown, the answer is text
        plain = create(server, tools=[PROBE_TOOL])
        assert calls(plain) == [] and plain.choices[0].message.content


def test_llama_chatml_function_calling_auto_text_comes_back_empty() -> None:
    def no_call(seen: Seen) -> Any:
        return TravelOracle([])(Seen([{"role": "user", "content": "hello"}]))

    with running(llama_cpp("chatml-function-calling", brain=no_call)) as server:
        response = create(server, tools=[PROBE_TOOL], tool_choice="auto")
    assert calls(response) == [] and response.choices[0].message.content == ""


def test_llama_chatml_function_calling_hides_tool_results_from_the_model() -> None:
    messages = [
        *PROBE_MESSAGES,
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "probe", "arguments": '{"ok": true}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "RESULT-7731"},
    ]
    with running(llama_cpp("chatml-function-calling")) as server:
        create(server, messages=messages, tools=[PROBE_TOOL], tool_choice="auto")
        seen = server.seen[-1]
    assert "RESULT-7731" not in seen.text()
    assert [m["role"] for m in seen.messages] == ["system", "user", "assistant"]
    assert seen.messages[-1]["tool_calls"] == [("probe", '{"ok": true}')]


def test_llama_gemma_drops_the_system_message() -> None:
    case = travel_cases()[0]
    system = "Call search_flights for flight searches. " + ENVELOPE_ASK
    messages = [
        {"role": "system", "content": system},
        {"role": "user", "content": case.instructions},
    ]
    with running(llama_cpp("gemma")) as gemma:
        response = create(gemma, messages=messages)
        assert [m["role"] for m in gemma.seen[-1].messages] == ["user"]
        assert "search_flights" not in response.choices[0].message.content
        asked_in_user = [{"role": "user", "content": f"{system}\n\n{case.instructions}"}]
        envelope = json.loads(create(gemma, messages=asked_in_user).choices[0].message.content)
    assert envelope == {"tool": case.tool, "arguments": case.arguments}


def test_llama_ignores_the_model_name_and_unknown_fields() -> None:
    with running(llama_cpp("default")) as server:
        response = create(
            server,
            model="no-such-model",
            response_format={"type": "json_object"},
            parallel_tool_calls=False,
            extra_body={"guided_json": OK_SCHEMA},
        )
    assert response.model == "no-such-model"
    assert json.loads(response.choices[0].message.content)["tool"] == "probe"


def test_llama_context_overflow_is_a_400_context_length_exceeded() -> None:
    with running(llama_cpp("default", n_ctx=64)) as server:
        long = [{"role": "user", "content": "x" * 400}]
        error = refused(server, messages=long, max_tokens=10)
    assert error.status_code == 400
    assert isinstance(error.body, dict)
    assert error.body["code"] == "context_length_exceeded"
    assert error.body["type"] == "invalid_request_error" and error.body["param"] == "messages"
    assert error.body["message"].startswith("This model's maximum context length is 64 tokens.")
    assert "in the messages, 10 in the completion" in error.body["message"]


# --- vLLM ------------------------------------------------------------------------------------


def test_vllm_without_auto_tool_choice_refuses_auto_and_implied_auto_with_a_400() -> None:
    with running(vllm(auto_tool_choice=False)) as server:
        for extra in ({"tool_choice": "auto"}, {}):
            error = refused(server, tools=[PROBE_TOOL], **extra)
            assert error.status_code == 400
            assert error.body == {
                "message": '"auto" tool choice requires --enable-auto-tool-choice and '
                "--tool-call-parser to be set",
                "type": "BadRequestError",
                "param": None,
                "code": 400,
            }
        required = create(server, tools=[PROBE_TOOL], tool_choice="required")
        assert calls(required) == [("probe", {"ok": True})]
        assert required.choices[0].finish_reason == "tool_calls"
        none = create(server, tools=[PROBE_TOOL], tool_choice="none")
        assert calls(none) == [] and none.choices[0].message.content


def test_vllm_with_auto_tool_choice_parses_calls() -> None:
    with running(vllm(auto_tool_choice=True)) as server:
        response = create(server, tools=[PROBE_TOOL])
    assert calls(response) == [("probe", {"ok": True})]
    assert response.choices[0].finish_reason == "tool_calls"


def test_vllm_honours_json_schema_json_object_and_guided_json() -> None:
    schema_format = {"type": "json_schema", "json_schema": {"name": "ok", "schema": OK_SCHEMA}}
    with running(vllm()) as server:
        by_schema = create(server, response_format=schema_format)
        by_guided = create(server, extra_body={"guided_json": OK_SCHEMA})
        by_object = create(server, response_format={"type": "json_object"})
        unwrapped = refused(server, response_format={"type": "json_schema", "schema": OK_SCHEMA})
    assert json.loads(by_schema.choices[0].message.content) == {"ok": True}
    assert json.loads(by_guided.choices[0].message.content) == {"ok": True}
    assert json.loads(by_object.choices[0].message.content)["tool"] == "probe"
    assert unwrapped.status_code == 500
    assert unwrapped.body == {
        "message": "",
        "type": "InternalServerError",
        "param": None,
        "code": 500,
    }


def test_vllm_request_errors_are_400s_and_an_unknown_model_a_404() -> None:
    with running(vllm()) as server:
        unknown = refused(server, model="gpt-4o")
        empty = refused(server, tools=[], tool_choice="required")
        missing = refused(
            server,
            tools=[PROBE_TOOL],
            tool_choice={"type": "function", "function": {"name": "other"}},
        )
        no_tools = refused(server, tool_choice="required")
    assert unknown.status_code == 404
    assert unknown.body == {
        "message": "The model `gpt-4o` does not exist.",
        "type": "NotFoundError",
        "param": None,
        "code": 404,
    }
    assert empty.status_code == 400 and "must not be an empty array" in str(empty.body)
    assert missing.status_code == 400 and "does not match any" in str(missing.body)
    assert no_tools.status_code == 400 and "`tools` must be set" in str(no_tools.body)


def test_vllm_accepts_assistant_content_null() -> None:
    messages = [
        *PROBE_MESSAGES,
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "probe", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "{}"},
    ]
    with running(vllm()) as server:
        response = create(server, messages=messages, response_format={"type": "json_object"})
    assert response.choices[0].finish_reason == "stop"


def test_vllm_context_and_max_tokens_overflow_are_400s() -> None:
    with running(vllm(max_model_len=100)) as server:
        too_long = refused(server, messages=[{"role": "user", "content": "x" * 800}])
        too_many = refused(server, max_tokens=95)
    assert too_long.status_code == 400
    assert "maximum context length is 100 tokens. However, your request has" in str(too_long.body)
    assert too_many.status_code == 400
    assert "'max_tokens' or 'max_completion_tokens' is too large: 95" in str(too_many.body)


# --- Ollama ----------------------------------------------------------------------------------


def test_ollama_ignores_tool_choice_and_lets_the_model_decide() -> None:
    with running(ollama()) as server:
        for choice in ("required", "none", {"type": "function", "function": {"name": "probe"}}):
            response = create(server, tools=[PROBE_TOOL], tool_choice=choice)
            assert calls(response) == [("probe", {"ok": True})]
            assert response.choices[0].finish_reason == "tool_calls"
            assert response.choices[0].message.content == ""


def test_ollama_honours_json_schema_and_json_object() -> None:
    schema_format = {"type": "json_schema", "json_schema": {"name": "ok", "schema": OK_SCHEMA}}
    with running(ollama()) as server:
        by_schema = create(server, response_format=schema_format)
        by_object = create(server, response_format={"type": "json_object"})
    assert json.loads(by_schema.choices[0].message.content) == {"ok": True}
    assert json.loads(by_object.choices[0].message.content)["tool"] == "probe"


def test_ollama_errors_unknown_model_404_and_null_content_400() -> None:
    with running(ollama()) as server:
        unknown = refused(server, model="llama3")
        null = refused(server, messages=[{"role": "user", "content": None}])
        call_message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "probe", "arguments": "{}"}}
            ],
        }
        with_calls = create(server, messages=[*PROBE_MESSAGES, call_message])
    assert unknown.status_code == 404
    assert unknown.body == {
        "message": 'model "llama3" not found, try pulling it first',
        "type": "not_found_error",
        "param": None,
        "code": None,
    }
    assert null.status_code == 400
    assert null.body == {
        "message": "invalid message content type: <nil>",
        "type": "invalid_request_error",
        "param": None,
        "code": None,
    }
    assert with_calls.choices[0].finish_reason == "stop"


def test_ollama_truncates_a_long_prompt_silently_keeping_system_and_last() -> None:
    messages = [
        {"role": "system", "content": "SYSTEM-KEPT"},
        {"role": "user", "content": "OLDEST " + "x" * 2000},
        {"role": "assistant", "content": "older answer"},
        {"role": "user", "content": "Call probe."},
    ]
    with running(ollama(num_ctx=200)) as server:
        response = create(server, messages=messages, response_format={"type": "json_object"})
        seen = server.seen[-1]
    assert "OLDEST" not in seen.text() and "SYSTEM-KEPT" in seen.text()
    assert seen.messages[-1]["content"] == "Call probe."
    assert response.usage.prompt_tokens <= 200


def test_max_tokens_cuts_text_with_finish_reason_length() -> None:
    case = travel_cases()[0]
    messages = [{"role": "user", "content": case.instructions}]
    with running(ollama()) as server:
        response = create(server, messages=messages, max_tokens=3)
    assert response.choices[0].finish_reason == "length"
    assert len(response.choices[0].message.content) == 12
