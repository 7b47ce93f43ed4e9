"""The LLM adapter end to end: the probe, every way of asking for a call, the messages sent, the
errors, cut answers and strict schemas.

The app is served over real HTTP (``POST /workflow``, ``GET /readyz``) with the real ``openai``
client pointed at a scripted server: the llama.cpp, vLLM and Ollama profiles of
``tests/support/llm_servers.py`` (what each server honours, ignores or refuses; the facts and
their sources are in its docstring), the OpenAI-like scripted fake (``tests/support/fake_llm.py``,
its capabilities declared so no probe takes its replies), or a TCP server that never answers.
"""

from __future__ import annotations

import json
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from dynamic_tools.api.app import create_app
from dynamic_tools.demo.travel_data import OPERATIONS
from dynamic_tools.settings import Settings
from tests.conftest import EXAMPLES, FAKE_LLM_CAPABILITIES, TEST_API_KEY
from tests.integration.llm.test_real_server_shapes import settings_for as shapes_settings
from tests.support.fake_llm import FakeLLM, http_error, text, tool_call
from tests.support.llm_servers import (
    PROFILES,
    Call,
    Decision,
    LLMServer,
    ProfileName,
    Seen,
    ServerError,
    TravelOracle,
    VLLMServer,
    llama_cpp,
    profile,
    running,
    travel_cases,
    vllm,
)
from tests.support.servers import serve

MODEL = "served-model"
TRAVEL_TOOLS = list(OPERATIONS)
CASES = {c.id: c for c in travel_cases()}
FLIGHTS = CASES["search-flights"]
#: a tool with optional parameters that carry enum and pattern (strict schemas keep them)
CABIN_TOOL = """\
name: pick_cabin
description: Pick the cabin class and a seat for a flight.
api:
  method: GET
  base_url: "${PUBLIC_BASE_URL}/demo/travel"
  path: /flights
parameters:
  flight_id:
    in: query
    required: true
    type: string
  cabin:
    in: query
    type: string
    enum: [economy, business]
  seat:
    in: query
    type: string
    pattern: "^[0-9]{1,2}[A-F]$"
"""


class ProbeFollower(TravelOracle):
    """The travel oracle that also does what the adapter's probe asks of a model: it calls
    ``report`` when asked to and that function reached it (otherwise as the oracle)."""

    def __call__(self, seen: Seen) -> Decision:
        users = " ".join(str(m.get("content") or "") for m in seen.messages if m["role"] == "user")
        rendered = any(t.name == "report" for t in seen.tools)
        if "report function" in users and (rendered or seen.forced is not None):
            return Call("report", {"number": 5})
        return super().__call__(seen)


# --- the app -----------------------------------------------------------------------------------


@dataclass
class App:
    """The app served over HTTP."""

    url: str
    settings: Settings

    def workflow(
        self,
        instructions: str = FLIGHTS.instructions,
        *,
        tools: list[str] | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        body = {"user_instructions": instructions, "tool_ids": tools or TRAVEL_TOOLS, **extra}
        response = httpx.post(f"{self.url}/workflow", json=body, timeout=30)
        assert response.status_code == 200, response.text
        data: dict[str, Any] = response.json()
        return data

    def llm_check(self, *, settled: bool = True) -> dict[str, Any]:
        """``/readyz``'s ``checks.llm``; with ``settled``, once the probe has ended."""
        deadline = time.monotonic() + 15
        while True:
            check: dict[str, Any] = httpx.get(f"{self.url}/readyz", timeout=10).json()["checks"][
                "llm"
            ]
            if not settled or check.get("probe") != "running":
                return check
            assert time.monotonic() < deadline, f"the probe did not end: {check}"
            time.sleep(0.01)


def settings_for(root: Path, base_url: str | None, **overrides: Any) -> Settings:
    """The test settings (``tests/conftest.py``) pointed at ``base_url``; capabilities detected."""
    return shapes_settings(root, base_url, **{"llm_capabilities": "detect", **overrides})


@contextmanager
def app_on(root: Path, base_url: str | None, **overrides: Any) -> Iterator[App]:
    """The app with the travel tools (and ``pick_cabin``), its LLM at ``base_url``."""
    tools = root / "registry" / "tools"
    if not tools.exists():
        shutil.copytree(EXAMPLES / "tools", tools)
        (tools / "pick_cabin.yaml").write_text(CABIN_TOOL, encoding="utf-8")
    settings = settings_for(root, base_url, **overrides)
    with serve(create_app(settings), port=settings.port) as url:
        yield App(url, settings)


@contextmanager
def app_and_server(root: Path, server: LLMServer, **overrides: Any) -> Iterator[App]:
    """``server`` running and the app served against it."""
    with running(server), app_on(root, server.base_url, **overrides) as app:
        yield app


@pytest.fixture(scope="module")
def fake_app(_fake_llm_server: FakeLLM, tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    """The app against the scripted fake (declared capabilities: OpenAI's, so strict)."""
    with app_on(
        tmp_path_factory.mktemp("fake"),
        _fake_llm_server.base_url,
        llm_capabilities=FAKE_LLM_CAPABILITIES,
        llm_max_tokens=321,
        llm_text_max_tokens=654,
        llm_max_retries=2,
    ) as app:
        yield app


def selection_requests(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The requests that asked for a call (the format request has neither tools nor a schema)."""
    return [r for r in requests if "tools" in r or "response_format" in r]


def tool_names(body: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools") or []]


def present(arguments: dict[str, Any] | None) -> dict[str, Any]:
    return {k: v for k, v in (arguments or {}).items() if v is not None}


def assert_every_message_accepted(requests: list[dict[str, Any]]) -> None:
    """No assistant message with content null or missing; max_tokens on every request."""
    assert requests
    for body in requests:
        assert isinstance(body.get("max_tokens"), int), body
        for message in body["messages"]:
            if message["role"] == "assistant":
                assert isinstance(message.get("content"), str), message


# --- 1. the probe ------------------------------------------------------------------------------

#: what the probe finds on each profile with a model that does what it is asked (ProbeFollower):
#: llama.cpp's simple formats honour only a named tool_choice and response_format json_object +
#: schema (json_schema is refused with 500), and their templates do not render the tools;
#: chatml-function-calling also makes calls under "auto" and lists the functions (only in a
#: system message) and fails "required" with 500; gemma drops system messages; vLLM forces
#: required/named, honours json_schema and renders the tools, "auto" only when started with
#: --enable-auto-tool-choice; Ollama ignores tool_choice (the model decides: auto), renders the
#: tools and honours json_schema. No profile's JSON mode writes the probe's {"number": 1} (the
#: scripted models write the {tool, arguments} envelope), so json_object is found nowhere.
PROBED: dict[ProfileName, tuple[list[str], str]] = {
    "llama_cpp:default": (["named", "json_object_schema", "system"], "named"),
    "llama_cpp:chatml-function-calling": (
        ["named", "auto", "json_object_schema", "system", "tool_definitions"],
        "named",
    ),
    "llama_cpp:gemma": (["named", "json_object_schema"], "named"),
    "vllm": (["required", "named", "json_schema", "system", "tool_definitions"], "required"),
    "vllm:auto": (
        ["required", "named", "auto", "json_schema", "system", "tool_definitions"],
        "required",
    ),
    "ollama": (["auto", "json_schema", "system", "tool_definitions"], "json_schema"),
}


@pytest.mark.parametrize("name", PROFILES)
def test_the_probe_finds_what_each_server_does(name: ProfileName, tmp_path: Path) -> None:
    server = profile(name, ProbeFollower(), model=MODEL)
    with app_and_server(tmp_path, server) as app:
        check = app.llm_check()
        capabilities, method = PROBED[name]
        assert check["source"] == "probe", check
        assert (check["capabilities"], check["method"]) == (capabilities, method), check
        assert check["probed_at"], check
        assert all(b["max_tokens"] <= 48 for b in server.requests), "the probe stays tiny"
        if name == "vllm":
            assert any("--enable-auto-tool-choice" in n for n in check["notes"]), check
        if name == "llama_cpp:gemma":
            assert any(n.startswith("system:") for n in check["notes"]), check
        probe_requests = len(server.requests)
        data = app.workflow()
    assert (data["status"], data["selected_tool"]) == ("success", "search_flights"), data
    assert present(data["arguments"]) == FLIGHTS.arguments
    asked = server.requests[probe_requests:]
    assert asked, "the selection reached the server"
    assert_every_message_accepted(asked)


class GatedVLLM(VLLMServer):
    """vLLM that answers only once ``gate`` is open (a slow probe), or 503 "Loading model" as
    llama.cpp's server does while ``loading``."""

    def __init__(self) -> None:
        super().__init__(model=MODEL)
        self.gate = threading.Event()
        self.loading = False

    def answer(self, body: Any) -> dict[str, Any]:
        if self.loading:
            raise ServerError(
                503,
                {"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}},
            )
        assert self.gate.wait(10), "the test never opened the gate"
        return super().answer(body)


def test_readyz_shows_a_probe_running_then_its_findings(tmp_path: Path) -> None:
    server = GatedVLLM()
    with app_and_server(tmp_path, server) as app:
        try:
            assert app.llm_check(settled=False) == {"configured": True, "probe": "running"}
        finally:
            server.gate.set()
        check = app.llm_check()
    assert (check["source"], check["method"]) == ("probe", "required"), check


def test_a_server_still_loading_fails_the_probe_which_is_retried(tmp_path: Path) -> None:
    """503 (or 429, 502, 504) says nothing about a capability: the probe fails and is run
    again on the next request, instead of caching "nothing works" for the process."""
    server = GatedVLLM()
    server.gate.set()
    server.loading = True
    with app_and_server(tmp_path, server) as app:
        assert app.llm_check() == {"configured": True, "probe": "failed"}
        early = app.workflow()
        assert "503" in failed(early) and "Loading model" in early["error"], early
        server.loading = False
        data = app.workflow()
        check = app.llm_check()
    assert (data["status"], data["selected_tool"]) == ("success", "search_flights"), data
    assert (check["source"], check["method"]) == ("probe", "required"), check


def test_declared_capabilities_are_used_without_a_probe(tmp_path: Path) -> None:
    server = vllm(model=MODEL)
    with app_and_server(tmp_path, server, llm_capabilities="named, json_schema") as app:
        check = app.llm_check(settled=False)
        assert check == {
            "configured": True,
            "capabilities": ["named", "json_schema"],
            "method": "named",
            "source": "settings",
        }
        assert server.requests == [], "no probe request reached the server"
        data = app.workflow()
    assert data["selected_tool"] == "search_flights", data
    assert len(server.requests) == 1, "one request: the selection"
    assert server.requests[0]["tool_choice"] == {"type": "function", "function": {"name": "call"}}


def test_llm_tool_choice_forces_the_method_over_the_probe(tmp_path: Path) -> None:
    with app_and_server(tmp_path, vllm(model=MODEL), llm_tool_choice="text") as app:
        check = app.llm_check()
    assert check["source"] == "probe"
    assert "required" in check["capabilities"], check
    assert check["method"] == "text", check


def test_an_unknown_capability_is_a_settings_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(ValidationError) as caught:
        settings_for(tmp_path, "http://127.0.0.1:9/v1", llm_capabilities="required,teleport")
    said = str(caught.value)
    assert "teleport" in said and "llm_capabilities" in said.lower(), said
    with pytest.raises(ValidationError) as forced:
        settings_for(tmp_path, "http://127.0.0.1:9/v1", llm_tool_choice="telepathy")
    assert "llm_tool_choice" in str(forced.value).lower()


@pytest.mark.parametrize("base_url", [None, "https://api.openai.com/v1"])
def test_openais_own_endpoint_is_known_without_a_probe(
    base_url: str | None, tmp_path: Path
) -> None:
    with app_on(tmp_path, base_url) as app:
        check = app.llm_check(settled=False)
    assert check["source"] == "openai", check
    assert check["method"] == "required"
    assert "strict" in check["capabilities"] and "json_object_schema" not in check["capabilities"]
    assert "probed_at" not in check and "probe" not in check


# --- 2. every method ---------------------------------------------------------------------------

#: (profile, forced method, what the selection request looks like)
METHOD_CASES: list[tuple[ProfileName, str]] = [
    ("vllm", "required"),
    ("vllm", "named"),
    ("vllm", "json_schema"),
    ("vllm", "text"),
    ("vllm:auto", "auto"),
    ("ollama", "auto"),
    ("ollama", "json_schema"),
    ("ollama", "text"),
    ("llama_cpp:default", "json_schema"),
    ("llama_cpp:default", "named"),
    ("llama_cpp:default", "text"),
    ("llama_cpp:chatml-function-calling", "named"),
    ("llama_cpp:gemma", "json_schema"),
]


def assert_asked_by(method: str, body: dict[str, Any], name: ProfileName) -> None:
    """The selection request has the shape of ``method``."""
    choice = body.get("tool_choice")
    fmt = body.get("response_format")
    if method in ("required", "auto"):
        assert choice == method and "search_flights" in tool_names(body), body
    elif method == "named":
        assert choice == {"type": "function", "function": {"name": "call"}}, body
        assert tool_names(body) == ["call"]
    elif method == "json_schema":
        assert "tools" not in body and "tool_choice" not in body, body
        if name.startswith("llama_cpp"):  # llama.cpp's form
            assert fmt["type"] == "json_object" and "anyOf" in fmt["schema"], fmt
        else:
            assert fmt["type"] == "json_schema" and "anyOf" in fmt["json_schema"]["schema"], fmt
    else:
        assert "tools" not in body and "tool_choice" not in body and fmt is None, body
        said = "\n".join(m["content"] for m in body["messages"])
        assert '{"tool": "<function name>"' in said, "the prompt asks for the envelope"


@pytest.mark.parametrize(
    ("name", "method"), METHOD_CASES, ids=[f"{n}-{m}" for n, m in METHOD_CASES]
)
def test_every_method_selects_the_right_call(
    name: ProfileName, method: str, tmp_path: Path
) -> None:
    server = profile(name, model=MODEL)
    case = CASES["search-flights-passengers"]
    with app_and_server(tmp_path, server, llm_tool_choice=method) as app:
        assert app.llm_check()["method"] == method
        server.reset()
        data = app.workflow(case.instructions)
    assert (data["status"], data["selected_tool"]) == ("success", case.tool), data
    assert present(data["arguments"]) == case.arguments, data
    assert data["usage"]["llm_calls"] == 1, data
    assert len(server.requests) == 1
    assert_asked_by(method, server.requests[0], name)
    assert_every_message_accepted(server.requests)


# --- 3. the messages every server accepts ------------------------------------------------------


def test_every_request_has_its_max_tokens(fake_app: App, fake_llm: FakeLLM) -> None:
    fake_llm.script(tool_call("search_flights", FLIGHTS.arguments), text("Three flights."))
    data = fake_app.workflow(format_response=True)
    assert data["formatted_response"] == "Three flights.", data
    call, fmt = fake_llm.requests
    assert (call["max_tokens"], fmt["max_tokens"]) == (321, 654)
    assert "tools" in call and "tools" not in fmt


def test_a_reask_keeps_to_the_first_tool_then_reopens_all_on_none_suitable(
    fake_app: App, fake_llm: FakeLLM
) -> None:
    fake_llm.script(
        tool_call("search_flights", {"origin": "Amsterdam", "destination": "BCN"}),
        tool_call("none_suitable", {"reason": "search_flights cannot do it"}),
        tool_call("search_flights", FLIGHTS.arguments),
    )
    data = fake_app.workflow()
    assert (data["status"], data["selected_tool"]) == ("success", "search_flights"), data
    assert data["usage"]["llm_calls"] == 3
    first, second, third = fake_llm.requests
    everything = [*TRAVEL_TOOLS, "none_suitable"]
    assert sorted(tool_names(first)) == sorted(everything)
    assert tool_names(second) == ["search_flights", "none_suitable"]
    assert sorted(tool_names(third)) == sorted(everything)
    said = json.dumps(second["messages"])
    assert "Keep to 'search_flights'" in said, said
    assert "does not fit; choose again among all the functions" in json.dumps(third["messages"])
    assert_every_message_accepted(fake_llm.requests)
    # the conversation goes on with the server's own calls: each tool message answers one
    for body in (second, third):
        calls = {c["id"] for m in body["messages"] for c in m.get("tool_calls") or []}
        answered = {m["tool_call_id"] for m in body["messages"] if m["role"] == "tool"}
        assert answered == calls and calls, body["messages"]


@pytest.mark.parametrize("name", ["llama_cpp:chatml-function-calling", "llama_cpp:gemma", "ollama"])
def test_a_reask_on_a_strict_server_sends_messages_it_accepts(
    name: ProfileName, tmp_path: Path
) -> None:
    """An invalid first answer, corrected: the re-ask (assistant turn + feedback) is accepted by
    the servers that refuse ``content: null`` or a missing ``content``."""
    # an argument the tool does not have: a grammar from its open schema lets it through
    bad = {**FLIGHTS.arguments, "cabin": "business"}
    oracle = TravelOracle([FLIGHTS])
    answered: list[Seen] = []

    def brain(seen: Seen) -> Decision:
        if oracle.case_for(seen) is FLIGHTS and seen.knows("search_flights"):
            answered.append(seen)
            # the oracle takes a re-ask for a call already made: this model corrects itself
            return Call("search_flights", bad if len(answered) == 1 else FLIGHTS.arguments)
        return oracle(seen)

    server = profile(name, brain, model=MODEL)
    with app_and_server(tmp_path, server) as app:
        app.llm_check()
        server.reset()
        data = app.workflow()
    assert (data["status"], data["selected_tool"]) == ("success", "search_flights"), data
    assert present(data["arguments"]) == FLIGHTS.arguments
    assert [status for status, _ in server.answers] == [200, 200], server.answers
    assert any("corrected after 1 re-ask" in w for w in data["warnings"]), data["warnings"]
    assert_every_message_accepted(server.requests)
    assert any(m["role"] == "assistant" for m in server.requests[1]["messages"])


# --- 4. errors name their cause ----------------------------------------------------------------


def failed(data: dict[str, Any], stage: str = "llm_selection") -> str:
    """The error of a failed run; the API key appears nowhere in the answer."""
    assert (data["status"], data["error_stage"]) == ("error", stage), data
    assert TEST_API_KEY not in json.dumps(data) and TEST_API_KEY[3:15] not in json.dumps(data)
    error: str = data["error"]
    return error


@pytest.mark.parametrize("name", ["vllm", "ollama"])
def test_an_unknown_model_says_the_servers_404_and_llm_model(
    name: ProfileName, tmp_path: Path
) -> None:
    server = profile(name, model=MODEL)
    with app_and_server(tmp_path, server, llm_model="no-such-model") as app:
        check = app.llm_check()
        assert any("404" in n for n in check.get("notes", [])), check
        data = app.workflow()
    error = failed(data)
    said = "The model `no-such-model` does not exist." if name == "vllm" else "not found"
    assert said in error and "LLM_MODEL='no-such-model'" in error, error
    assert "(404)" in error, error
    assert data["usage"]["llm_calls"] == 1, data


def test_a_context_overflow_says_the_servers_words(tmp_path: Path) -> None:
    server = llama_cpp("default", model=MODEL, n_ctx=400)
    with app_and_server(tmp_path, server, llm_capabilities="named,json_object_schema") as app:
        data = app.workflow()
    error = failed(data)
    assert "This model's maximum context length is 400 tokens" in error, error
    assert "too long for the model's context" in error, error
    assert data["usage"]["llm_calls"] == 1


def test_a_server_error_says_its_text(fake_app: App, fake_llm: FakeLLM) -> None:
    fake_llm.script(http_error(500))
    error = failed(fake_app.workflow())
    assert "failed (500): scripted failure" in error, error
    assert len(fake_llm.requests) == 1, "a 500 is not retried"


def test_refused_credentials_name_the_setting_not_the_key(fake_app: App, fake_llm: FakeLLM) -> None:
    fake_llm.script(http_error(401))
    error = failed(fake_app.workflow())
    assert "OPENAI_API_KEY" in error and "scripted failure" in error, error
    assert fake_llm.headers[0]["authorization"] == f"Bearer {TEST_API_KEY}", "the key was sent"


def test_unavailable_answers_are_retried_and_each_attempt_counted(
    fake_app: App, fake_llm: FakeLLM
) -> None:
    fake_llm.script(http_error(503), http_error(503), http_error(503))
    data = fake_app.workflow()
    error = failed(data)
    assert "answered 503 (unavailable): scripted failure" in error, error
    assert data["usage"]["llm_calls"] == 3, data
    assert len(fake_llm.requests) == 3


def test_a_model_answering_text_is_told_which_setting_to_try(
    fake_app: App, fake_llm: FakeLLM
) -> None:
    fake_llm.script(*[text("I would search flights for you.")] * 3)
    error = failed(fake_app.workflow())
    assert "after 3 attempt(s)" in error, error
    assert "set LLM_CAPABILITIES without 'required' or LLM_TOOL_CHOICE=json_schema" in error


def test_a_server_ignoring_required_is_told_which_setting_to_try(tmp_path: Path) -> None:
    """llama.cpp's default format ignores tool_choice=required: declared anyway, the text that
    comes back fails with the hint."""
    server = llama_cpp("default", model=MODEL)
    with app_and_server(
        tmp_path, server, llm_capabilities="required,system", llm_max_tokens=64
    ) as app:
        data = app.workflow()
    error = failed(data)
    assert "tool_choice=required" in error and "LLM_TOOL_CHOICE=json_schema" in error, error
    assert all(r["tool_choice"] == "required" for r in server.requests)


@contextmanager
def silent_server() -> Iterator[str]:
    """A TCP server that takes connections and never answers; yields its ``/v1`` URL."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)  # connections wait in the backlog: the request is sent, no reply comes
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/v1"


def test_a_silent_endpoint_times_out_naming_llm_timeout_s(tmp_path: Path) -> None:
    with silent_server() as url, app_on(tmp_path, url, llm_timeout_s=0.5) as app:
        check = app.llm_check()
        assert check == {"configured": True, "probe": "failed"}, check
        started = time.monotonic()
        data = app.workflow()
        elapsed = time.monotonic() - started
    error = failed(data)
    assert "did not answer within 0.5 s (LLM_TIMEOUT_S)" in error, error
    assert elapsed < 5, "bounded by LLM_TIMEOUT_S"


# --- 5. cut answers ----------------------------------------------------------------------------


def test_a_cut_formatted_answer_succeeds_with_a_warning(fake_app: App, fake_llm: FakeLLM) -> None:
    fake_llm.script(
        tool_call("search_flights", FLIGHTS.arguments),
        text("There are three flights: KL1", finish_reason="length"),
    )
    data = fake_app.workflow(format_response=True)
    assert data["status"] == "success", data
    assert data["formatted_response"] == "There are three flights: KL1"
    assert any("LLM_TEXT_MAX_TOKENS" in w for w in data["warnings"]), data["warnings"]


def test_a_rambling_formatter_is_cut_at_llm_text_max_tokens(tmp_path: Path) -> None:
    """llama.cpp's default format writes prose until max_tokens: cut, with a warning."""
    server = llama_cpp("default", model=MODEL)
    with app_and_server(tmp_path, server, llm_text_max_tokens=16) as app:
        app.llm_check()
        server.reset()
        data = app.workflow(format_response=True)
    assert data["status"] == "success", data
    assert data["formatted_response"], data
    assert any("LLM_TEXT_MAX_TOKENS" in w for w in data["warnings"]), data["warnings"]
    assert server.requests[-1]["max_tokens"] == 16
    assert server.answers[-1][1]["choices"][0]["finish_reason"] == "length"


def test_a_date_the_model_writes_in_another_format_is_reasked_not_sent(
    fake_app: App, fake_llm: FakeLLM
) -> None:
    """The tool says ``format: date``: "01/06/2025" is not sent; the model is told and fixes it."""
    wrong = {**FLIGHTS.arguments, "date": "01/06/2025"}
    fake_llm.script(
        tool_call("search_flights", wrong), tool_call("search_flights", FLIGHTS.arguments)
    )
    data = fake_app.workflow()
    assert (data["status"], data["arguments"]["date"]) == ("success", "2025-06-01"), data
    feedback = json.dumps(fake_llm.requests[1]["messages"])
    assert "date: '01/06/2025' is not a 'date'" in feedback, feedback
    # a model that keeps to it: refused at llm_selection, nothing sent
    fake_llm.script(*[tool_call("search_flights", wrong)] * 3)
    data = fake_app.workflow()
    assert data["error_stage"] == "llm_selection" and "is not a 'date'" in data["error"], data
    assert data["raw_response"] is None


def test_a_cut_selection_is_reasked(fake_app: App, fake_llm: FakeLLM) -> None:
    fake_llm.script(
        tool_call("search_flights", '{"origin": "AMS", "desti', finish_reason="length"),
        tool_call("search_flights", FLIGHTS.arguments),
    )
    data = fake_app.workflow()
    assert (data["status"], data["selected_tool"]) == ("success", "search_flights"), data
    assert data["usage"]["llm_calls"] == 2
    assert any("corrected after 1 re-ask" in w for w in data["warnings"]), data["warnings"]
    assert "cut off (finish_reason=length)" in json.dumps(fake_llm.requests[1]["messages"])
    assert_every_message_accepted(fake_llm.requests)


def test_a_call_llama_cut_but_called_tool_calls_is_known_as_cut(tmp_path: Path) -> None:
    """llama.cpp says finish_reason "tool_calls" even when max_tokens cut the call: the product
    reads the cut from the token count, so the model is told it was cut (not "invalid JSON")."""
    server = llama_cpp("default", model=MODEL)
    with app_and_server(tmp_path, server, llm_max_tokens=16) as app:
        app.llm_check()
        server.reset()
        data = app.workflow()
    finishes = [answer["choices"][0]["finish_reason"] for _, answer in server.answers]
    assert "tool_calls" in finishes, finishes  # what the server said
    assert data["status"] == "error" and data["error_stage"] == "llm_selection", data
    assert "cut off (finish_reason=length)" in data["error"], data["error"]
    assert all(body["max_tokens"] == 16 for body in server.requests)


# --- 6. strict schemas -------------------------------------------------------------------------


def cabin_parameters(body: dict[str, Any]) -> dict[str, Any]:
    function = next(t["function"] for t in body["tools"] if t["function"]["name"] == "pick_cabin")
    return function


def test_strict_sends_optional_parameters_as_nullable_with_their_constraints(
    fake_app: App, fake_llm: FakeLLM
) -> None:
    fake_llm.script(tool_call("none_suitable", {"reason": "not a cabin request"}))
    fake_app.workflow("Pick a business seat on FL-AMSBCN-20250601-1.", tools=["pick_cabin"])
    function = cabin_parameters(fake_llm.requests[0])
    assert function["strict"] is True
    parameters = function["parameters"]
    assert parameters["additionalProperties"] is False
    assert sorted(parameters["required"]) == ["cabin", "flight_id", "seat"]
    cabin, seat = parameters["properties"]["cabin"], parameters["properties"]["seat"]
    assert {"type": "null"} in cabin["anyOf"] and {"type": "null"} in seat["anyOf"], parameters
    assert any(b.get("enum") == ["economy", "business"] for b in cabin["anyOf"]), cabin
    assert any(b.get("pattern") == "^[0-9]{1,2}[A-F]$" for b in seat["anyOf"]), seat


def assert_own_schema(function: dict[str, Any]) -> None:
    assert "strict" not in function, function
    parameters = function["parameters"]
    assert parameters["required"] == ["flight_id"], parameters
    assert parameters["properties"]["cabin"] == {"type": "string", "enum": ["economy", "business"]}
    assert parameters["properties"]["seat"]["pattern"] == "^[0-9]{1,2}[A-F]$"


def test_without_strict_the_tools_own_schema_is_sent(fake_llm: FakeLLM, tmp_path: Path) -> None:
    fake_llm.script(tool_call("pick_cabin", {"flight_id": "FL-AMSBCN-20250601-1"}))
    with app_on(
        tmp_path, fake_llm.base_url, llm_capabilities=FAKE_LLM_CAPABILITIES, llm_strict=False
    ) as app:
        data = app.workflow("Pick a cabin on FL-AMSBCN-20250601-1.", tools=["pick_cabin"])
    assert data["selected_tool"] == "pick_cabin", data
    assert data["arguments"] == {"flight_id": "FL-AMSBCN-20250601-1"}, "optional left out"
    assert_own_schema(cabin_parameters(fake_llm.requests[0]))


def test_a_probed_server_gets_the_tools_own_schema(tmp_path: Path) -> None:
    server = vllm(model=MODEL)
    with app_and_server(tmp_path, server) as app:
        assert "strict" not in app.llm_check()["capabilities"]
        server.reset()
        app.workflow("Pick a cabin on FL-AMSBCN-20250601-1.", tools=["pick_cabin"])
    assert_own_schema(cabin_parameters(server.requests[0]))


def test_the_json_schema_way_sends_a_strict_envelope_only_when_strict(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    envelope = '{"tool": "search_flights", "arguments": ' + json.dumps(FLIGHTS.arguments) + "}"
    fake_llm.script(text(envelope))
    with app_on(
        tmp_path,
        fake_llm.base_url,
        llm_capabilities=FAKE_LLM_CAPABILITIES,
        llm_tool_choice="json_schema",
    ) as app:
        data = app.workflow()
    assert (data["status"], data["selected_tool"]) == ("success", "search_flights"), data
    fmt = fake_llm.requests[0]["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True, fmt
    branches = fmt["json_schema"]["schema"]["anyOf"]
    assert all(b["additionalProperties"] is False for b in branches)


OPEN_TOOL = {
    "name": "tag_flight",
    "description": "Attach free-form tags to a flight.",
    "api": {"method": "POST", "base_url": "https://tags.example", "path": "/tags"},
    "parameters": {
        "flight_id": {"in": "body", "type": "string", "required": True},
        "tags": {"in": "body", "type": "object", "required": True},  # open: strict cannot say it
    },
}


def test_the_not_strict_warning_only_where_strict_schemas_are_used(
    fake_app: App, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    """An open object cannot be strict: said where strict schemas are used (OpenAI's
    endpoint), not on a server that uses none (it would read as a fault)."""
    made = httpx.post(f"{fake_app.url}/tools", json=OPEN_TOOL, timeout=10)
    assert made.status_code == 201, made.text
    fake_llm.script(tool_call("tag_flight", {"flight_id": "FL-1", "tags": {"a": 1}}))
    data = fake_app.workflow("Tag FL-1 with a=1", tools=["tag_flight"])
    assert any(
        "strict structured output not possible for: tag_flight" in w for w in data["warnings"]
    )
    server = llama_cpp("default", model=MODEL)
    with app_and_server(tmp_path, server) as app:
        assert httpx.post(f"{app.url}/tools", json=OPEN_TOOL, timeout=10).status_code == 201
        assert "strict" not in app.llm_check()["capabilities"]
        data = app.workflow("Tag FL-1 with a=1", tools=["tag_flight"])
    assert not any("strict" in w for w in data["warnings"]), data["warnings"]
