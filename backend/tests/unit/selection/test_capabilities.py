"""The pure parts of the LLM adapter: capabilities from settings, the method chosen, reading
JSON out of an answer, the server's words of an error, and the shapes of the conversation."""

from __future__ import annotations

import json
from typing import Any

import httpx
import openai
import pytest

from dynamic_tools.selection.capabilities import (
    CAPABILITIES,
    METHODS,
    OPENAI,
    Capabilities,
    best_method,
    declared,
    first_json_object,
    is_openai,
    missing_call_hint,
    parse_capabilities,
    server_text,
)
from dynamic_tools.selection.function_schema import FunctionSpec
from dynamic_tools.selection.llm import (
    CALL_FUNCTION,
    LLMAnswer,
    ToolCall,
    _as_calls,
    _envelope_schema,
    _fold_system,
    _rejection,
    _with_instruction,
    assistant_turn,
    call_result,
)

# --- parse_capabilities ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("required,named", {"required", "named"}),
        (" required , json_schema ,, ", {"required", "json_schema"}),
        ("auto system", {"auto", "system"}),  # spaces separate too
        ("none", set()),
        ("", set()),
        (",".join(CAPABILITIES), set(CAPABILITIES)),
    ],
)
def test_parse_capabilities(text: str, expected: set[str]) -> None:
    assert parse_capabilities(text) == frozenset(expected)


def test_parse_capabilities_names_every_unknown_entry_and_the_known_ones() -> None:
    with pytest.raises(ValueError) as caught:
        parse_capabilities("required,teleport,xray")
    said = str(caught.value)
    assert "['teleport', 'xray']" in said
    assert all(c in said for c in CAPABILITIES) and "detect" in said


# --- best_method -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("supported", "expected"),
    [
        (set(CAPABILITIES), "required"),
        ({"named", "json_schema", "auto"}, "named"),
        ({"json_schema", "auto"}, "json_schema"),
        ({"json_object_schema", "auto"}, "json_schema"),  # llama.cpp's form counts
        ({"auto", "json_object", "system"}, "auto"),
        ({"json_object", "strict", "system"}, "text"),
        (set(), "text"),
    ],
)
def test_best_method_takes_the_first_supported_in_order(supported: set[str], expected: str) -> None:
    assert best_method(frozenset(supported)) == expected


@pytest.mark.parametrize("forced", METHODS)
def test_a_forced_method_wins_even_when_unsupported(forced: str) -> None:
    assert best_method(frozenset(), forced) == forced
    assert best_method(frozenset(CAPABILITIES), forced) == forced


@pytest.mark.parametrize("forced", [None, "", "best"])
def test_best_or_nothing_forced_means_the_best(forced: str | None) -> None:
    assert best_method(frozenset({"auto"}), forced) == "auto"


def test_an_unknown_forced_method_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown LLM_TOOL_CHOICE 'telepathy'"):
        best_method(frozenset(), "telepathy")


# --- declared ----------------------------------------------------------------------------------


def test_declared_capabilities_come_from_settings() -> None:
    caps = declared("Required, Named", base_url="http://gpu:8000/v1", forced=None, strict=None)
    assert caps == Capabilities(frozenset({"required", "named"}), "settings", "required")
    assert not caps.strict and not caps.system
    assert caps.view() == {
        "capabilities": ["required", "named"],
        "method": "required",
        "source": "settings",
    }


@pytest.mark.parametrize("text", ["detect", "", "  DETECT "])
def test_detect_on_a_self_hosted_server_means_a_probe(text: str) -> None:
    assert declared(text, base_url="http://127.0.0.1:11434/v1", forced=None, strict=None) is None


@pytest.mark.parametrize(
    "base_url",
    [None, "", "https://api.openai.com/v1", "https://my-team.openai.azure.com/openai"],
)
def test_openais_own_endpoint_is_known(base_url: str | None) -> None:
    caps = declared("detect", base_url=base_url, forced=None, strict=None)
    assert caps is not None
    assert (caps.source, caps.method, caps.supported) == ("openai", "required", OPENAI)
    assert caps.strict and caps.system and "json_object_schema" not in caps.supported


@pytest.mark.parametrize(
    "base_url", ["http://localhost:8080/v1", "https://api.openai.com.evil.test/v1"]
)
def test_other_hosts_are_not_openai(base_url: str) -> None:
    assert not is_openai(base_url)


def test_strict_and_forced_apply_to_declared_capabilities() -> None:
    on = declared("named", base_url="http://x/v1", forced="text", strict=True)
    off = declared("detect", base_url=None, forced=None, strict=False)
    assert on is not None and off is not None
    assert on.strict and on.method == "text"
    assert not off.strict and off.source == "openai"


def test_settings_capabilities_win_over_openai() -> None:
    caps = declared("json_schema", base_url=None, forced=None, strict=None)
    assert caps is not None and (caps.source, caps.method) == ("settings", "json_schema")


def test_an_unknown_declared_capability_is_refused() -> None:
    with pytest.raises(ValueError, match="teleport"):
        declared("teleport", base_url=None, forced=None, strict=None)


# --- first_json_object -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"tool": "a", "arguments": {}}', {"tool": "a", "arguments": {}}),
        (
            'Sure! ```json\n{"tool": "a", "arguments": {"x": 1}}\n```',
            {"tool": "a", "arguments": {"x": 1}},
        ),
        (
            '{"outer": {"inner": {"deep": [1, {"k": "}"}]}}}',
            {"outer": {"inner": {"deep": [1, {"k": "}"}]}}},
        ),
        ('{broken json} then {"ok": true}', {"ok": True}),
        ('[1, 2] and {"ok": 1}', {"ok": 1}),
        ('[{"in": "an array"}]', {"in": "an array"}),
        ("no json here at all", None),
        ("{{{{", None),
        ("", None),
        ('"just a string"', None),
    ],
)
def test_first_json_object(text: str, expected: Any) -> None:
    assert first_json_object(text) == expected


def test_first_json_object_reads_only_the_start_of_a_huge_answer() -> None:
    late = "x" * 25_000 + '{"late": true}'
    assert first_json_object(late) is None
    early = '{"early": true}' + "x" * 1_000_000
    assert first_json_object(early) == {"early": True}


def test_first_json_object_survives_deep_nesting_and_many_braces() -> None:
    assert first_json_object("{" * 19_000) is None  # each try bounded; no RecursionError
    assert first_json_object("[" * 5000 + '{"a": 1}') == {"a": 1}
    many = "{x " * 60 + '{"found": 1}'
    assert first_json_object(many) is None  # at most 50 tries: bounded work


# --- server_text -------------------------------------------------------------------------------


def status_error(status: int, body: Any, raw: str | None = None) -> openai.APIStatusError:
    request = httpx.Request("POST", "http://llm.test/v1/chat/completions")
    content = raw if raw is not None else (json.dumps(body) if body is not None else "")
    response = httpx.Response(status, request=request, content=content.encode())
    return openai.APIStatusError("failed", response=response, body=body)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            {"error": {"message": "The model `x` does not exist.", "code": 404}},
            "The model `x` does not exist.",
        ),
        ({"error": "model 'x' not found"}, "model 'x' not found"),  # Ollama's native shape
        ({"detail": "Not Found"}, "Not Found"),  # FastAPI's
        ({"message": "flat message"}, "flat message"),
        ({"error": {"detail": "inner detail"}}, "inner detail"),
        ({"msg": "a msg"}, "a msg"),
        ("a plain text body", "a plain text body"),
    ],
)
def test_server_text_reads_the_servers_message(body: Any, expected: str) -> None:
    assert server_text(status_error(400, body)) == expected


def test_server_text_of_a_validation_list_is_its_json() -> None:
    detail = [{"loc": ["body", "messages"], "msg": "Field required"}]
    assert json.loads(server_text(status_error(422, {"detail": detail}))) == detail


def test_server_text_falls_back_to_the_body_text() -> None:
    empty = {"error": {"message": "", "type": "internal_server_error"}}  # llama.cpp's assert
    assert "internal_server_error" in server_text(status_error(500, empty))
    assert server_text(status_error(502, None, raw="<html>Bad Gateway</html>")) == (
        "<html>Bad Gateway</html>"
    )
    assert server_text(status_error(500, None)) == ""
    assert server_text(object()) == ""


def test_server_text_is_one_line_and_bounded() -> None:
    said = server_text(status_error(400, {"error": {"message": "line one\n\n  line two " * 100}}))
    assert "\n" not in said and said.startswith("line one line two")
    assert len(said) == 301 and said.endswith("…")


# --- hints and rejections ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "names"),
    [
        ("required", ["LLM_CAPABILITIES", "'required'", "LLM_TOOL_CHOICE=json_schema"]),
        ("named", ["LLM_TOOL_CHOICE=json_schema"]),
        ("json_schema", ["LLM_TOOL_CHOICE=text"]),
        ("auto", ["tool_choice=required", "LLM_TOOL_CHOICE=text"]),
        ("text", ["response_format json_schema"]),
        ("unheard-of", ["response_format json_schema"]),
    ],
)
def test_a_missing_call_names_what_to_try(method: str, names: list[str]) -> None:
    hint = missing_call_hint(method)
    assert all(n in hint for n in names), hint
    answer = LLMAnswer([], "text", None, "stop", method=method)
    assert answer.missing_call == hint


def test_rejections_name_the_setting_at_fault() -> None:
    assert "LLM_MODEL='m'" in _rejection(404, "The model `m` does not exist.", "m")
    overflow = _rejection(400, "This model's maximum context length is 4096 tokens.", "m")
    assert "rejected the request (400)" in overflow and "SELECTION_TOP_K" in overflow
    assert "another LLM_TOOL_CHOICE" in _rejection(500, "boom", "m")
    assert _rejection(400, "", "m") == "the LLM endpoint rejected the request (400): no message"


# --- reading calls out of answers --------------------------------------------------------------


def answer_with(content: str | None = None, calls: list[ToolCall] | None = None) -> LLMAnswer:
    return LLMAnswer(calls or [], content, None, "stop", prompt_tokens=7, calls=2)


OFFERED = {"search_flights", "none_suitable"}


@pytest.mark.parametrize(
    "content",
    [
        '{"tool": "search_flights", "arguments": {"origin": "AMS"}}',
        '```json\n{"name": "search_flights", "parameters": {"origin": "AMS"}}\n```',
        'I will call it: {"function": "search_flights", "args": {"origin": "AMS"}}',
    ],
)
def test_an_envelope_in_text_becomes_a_call(content: str) -> None:
    read = _as_calls(answer_with(content), "json_schema", OFFERED)
    assert [(c.name, json.loads(c.arguments), c.native) for c in read.tool_calls] == [
        ("search_flights", {"origin": "AMS"}, False)
    ]
    assert read.content is None and read.method == "json_schema"
    assert (read.prompt_tokens, read.calls) == (7, 2)


def test_an_envelope_without_arguments_is_a_call_with_none() -> None:
    read = _as_calls(answer_with('{"tool": "none_suitable"}'), "text", OFFERED)
    assert [(c.name, c.arguments) for c in read.tool_calls] == [("none_suitable", "{}")]


def test_arguments_written_as_a_string_are_kept_as_written() -> None:
    read = _as_calls(
        answer_with('{"tool": "search_flights", "arguments": "{\\"a\\": 1"}'), "text", OFFERED
    )
    assert read.tool_calls[0].arguments == '{"a": 1'  # the pipeline reports the broken JSON


def test_bare_arguments_are_the_call_only_with_one_function() -> None:
    alone = _as_calls(answer_with('{"origin": "AMS"}'), "text", {"search_flights"})
    assert [(c.name, c.arguments) for c in alone.tool_calls] == [
        ("search_flights", '{"origin": "AMS"}')
    ]
    several = _as_calls(answer_with('{"origin": "AMS"}'), "text", OFFERED)
    assert several.tool_calls == [] and several.content == '{"origin": "AMS"}'


@pytest.mark.parametrize("content", ["I cannot help with that.", '{"answer": "no tool"}', ""])
def test_text_without_an_envelope_stays_text(content: str) -> None:
    original = answer_with(content)
    read = _as_calls(original, "text", OFFERED)
    assert read.tool_calls == [] and read.content == content


def test_the_named_call_function_is_unwrapped() -> None:
    wrapped = ToolCall("call_9", CALL_FUNCTION, '{"tool": "search_flights", "arguments": {"x": 1}}')
    read = _as_calls(answer_with(calls=[wrapped]), "named", OFFERED)
    assert [(c.name, json.loads(c.arguments), c.native) for c in read.tool_calls] == [
        ("search_flights", {"x": 1}, False)
    ]
    broken = ToolCall("call_9", CALL_FUNCTION, "not json")
    assert _as_calls(answer_with(calls=[broken]), "named", OFFERED).tool_calls == [broken]


def test_a_native_call_is_kept_as_the_server_made_it() -> None:
    call = ToolCall("call_1", "search_flights", '{"origin": "AMS"}')
    original = answer_with(calls=[call])
    assert _as_calls(original, "required", OFFERED) is original
    assert _as_calls(original, "named", OFFERED) is original


# --- the conversation --------------------------------------------------------------------------


def test_a_native_turn_never_has_null_content_and_its_result_is_a_tool_message() -> None:
    call = ToolCall("call_1", "search_flights", "")
    turn = assistant_turn(call, None)
    assert turn["content"] == ""
    assert turn["tool_calls"][0]["function"] == {"name": "search_flights", "arguments": "{}"}
    assert assistant_turn(call, "thinking")["content"] == "thinking"
    assert call_result(call, "bad date") == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": "bad date",
    }


def test_a_call_read_from_text_goes_on_in_plain_messages() -> None:
    call = ToolCall("call_1", "search_flights", '{"origin": "AMS"}', native=False)
    turn = assistant_turn(call)
    assert set(turn) == {"role", "content"}
    assert json.loads(turn["content"]) == {"tool": "search_flights", "arguments": {"origin": "AMS"}}
    assert call_result(call, "bad") == {"role": "user", "content": "Result of search_flights: bad"}
    broken = assistant_turn(ToolCall("c", "f", "{oops", native=False))
    assert json.loads(broken["content"]) == {"tool": "f", "arguments": "{oops"}


def test_system_messages_are_folded_into_the_first_user_message() -> None:
    messages = [
        {"role": "system", "content": "rules"},
        {"role": "assistant", "content": "hi"},
        {"role": "user", "content": "question"},
        {"role": "user", "content": "more"},
    ]
    assert _fold_system(messages) == [
        {"role": "assistant", "content": "hi"},
        {"role": "user", "content": "rules\n\nquestion"},
        {"role": "user", "content": "more"},
    ]
    assert _fold_system([{"role": "system", "content": "only"}]) == [
        {"role": "user", "content": "only"}
    ]
    plain = [{"role": "user", "content": "q"}]
    assert _fold_system(plain) == plain


def test_an_instruction_joins_the_system_message_or_leads() -> None:
    with_system = [{"role": "system", "content": "rules"}, {"role": "user", "content": "q"}]
    assert _with_instruction(with_system, "do X")[0] == {
        "role": "system",
        "content": "rules\n\ndo X",
    }
    assert with_system[0]["content"] == "rules", "the caller's list is not changed"
    assert _with_instruction([{"role": "user", "content": "q"}], "do X")[0] == {
        "role": "system",
        "content": "do X",
    }


STRICT = FunctionSpec(
    "pick",
    "Pick.",
    {
        "type": "object",
        "properties": {"a": {"type": ["string", "null"]}},
        "required": ["a"],
        "additionalProperties": False,
    },
    strict=True,
    loose={"type": "object", "properties": {"a": {"type": "string"}}},
)
LOOSE = FunctionSpec("other", "Other.", {"type": "object", "properties": {}}, strict=False)


def test_the_envelope_schema_is_strict_only_when_asked() -> None:
    strict = _envelope_schema([STRICT, LOOSE], strict=True)
    first, second = strict["anyOf"]
    assert first["properties"]["tool"] == {"type": "string", "enum": ["pick"]}
    assert first["properties"]["arguments"] == STRICT.parameters
    assert first["additionalProperties"] is False and second["additionalProperties"] is False
    assert second["properties"]["arguments"] == LOOSE.parameters
    loose = _envelope_schema([STRICT], strict=False)
    assert "anyOf" not in loose and "additionalProperties" not in loose
    assert loose["properties"]["arguments"] == STRICT.loose_parameters


# --- OpenAI's own endpoint, capabilities declared ----------------------------------------------


@pytest.mark.parametrize("capabilities", ["detect", "required,strict,system"])
async def test_openais_endpoint_gets_max_completion_tokens_however_its_capabilities_came(
    capabilities: str,
) -> None:
    """Newer OpenAI models refuse ``max_tokens``: OpenAI's own host gets
    ``max_completion_tokens`` (and no parallel calls) also when LLM_CAPABILITIES is set.
    OpenAI's host is not reachable from tests: the real client runs over an in-process transport
    that answers as the endpoint does."""
    from dynamic_tools.selection.llm import OpenAIChatClient

    sent: list[dict[str, Any]] = []

    def endpoint(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        sent.append(body)
        if "max_tokens" in body:
            error = {
                "message": "Unsupported parameter: 'max_tokens'.",
                "type": "invalid_request_error",
            }
            return httpx.Response(400, json={"error": error})
        call = {
            "id": "call_1",
            "type": "function",
            "function": {"name": "pick", "arguments": '{"a": null}'},
        }
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
        return httpx.Response(
            200,
            json={
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": 0,
                "model": "gpt-5-mini",
                "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
            },
        )

    client = openai.AsyncOpenAI(
        api_key="sk-unit",
        max_retries=0,
        http_client=httpx.AsyncClient(transport=httpx.MockTransport(endpoint)),
    )
    llm = OpenAIChatClient(
        client,
        model="gpt-5-mini",
        capabilities=declared(capabilities, base_url=None, forced=None, strict=None),
        max_tokens=99,
    )
    try:
        answer = await llm.choose([{"role": "user", "content": "pick"}], [STRICT, LOOSE])
    finally:
        await llm.aclose()
    assert [c.name for c in answer.tool_calls] == ["pick"]
    assert sent[0]["max_completion_tokens"] == 99 and "max_tokens" not in sent[0]
    assert sent[0]["parallel_tool_calls"] is False


async def test_a_failed_startup_probe_is_logged_not_left_unretrieved() -> None:
    """A probe at start that fails (here: a TCP server that never answers) while no request
    asks for the capabilities: its failure is logged, and asyncio never reports an exception
    "never retrieved" when the task is collected."""
    import asyncio
    import gc
    import socket

    from loguru import logger

    from dynamic_tools.selection.llm import OpenAIChatClient

    loop = asyncio.get_running_loop()
    unhandled: list[dict[str, Any]] = []
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, context: unhandled.append(context))
    logged: list[str] = []
    sink = logger.add(lambda m: logged.append(str(m)), level="WARNING")
    try:
        with socket.socket() as silent:
            silent.bind(("127.0.0.1", 0))
            silent.listen(8)
            url = f"http://127.0.0.1:{silent.getsockname()[1]}/v1"
            client = openai.AsyncOpenAI(base_url=url, api_key="sk-unit", max_retries=0)
            llm = OpenAIChatClient(client, model="m", timeout_s=0.2)
            llm.start_probe()
            deadline = loop.time() + 5
            while llm.probe_error is None:
                assert loop.time() < deadline, "the probe did not fail"
                await asyncio.sleep(0.01)
            await llm.aclose()
        del llm
        gc.collect()
        await asyncio.sleep(0)
    finally:
        loop.set_exception_handler(previous)
        logger.remove(sink)
    assert unhandled == []
    assert any("did not answer within 0.2 s (LLM_TIMEOUT_S)" in line for line in logged), logged
