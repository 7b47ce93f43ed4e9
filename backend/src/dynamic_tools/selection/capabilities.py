"""What an OpenAI-compatible endpoint can do, and so how the model is asked for one call.

Self-hosted servers differ (docs/llm-servers.md): llama.cpp's server ignores ``tool_choice`` in
its default chat format but honours ``response_format`` with a grammar, vLLM refuses ``auto``
unless started with a tool-call parser, Ollama ignores ``tool_choice``. So the capabilities of
the configured endpoint and model are taken from settings (``LLM_CAPABILITIES``) or detected by
a cheap probe at start (a few requests of at most a few tokens, cached for the process), and
the adapter asks for a call the best way available, in this order:

1. ``required``: ``tool_choice: "required"`` over the candidate functions;
2. ``named``: ``tool_choice`` naming one function (a single candidate, or one ``call``
   function whose arguments are ``{tool, arguments}``, any of the candidates);
3. ``json_schema``: no tools, ``response_format`` with that ``{tool, arguments}`` schema (as
   OpenAI writes it, or llama.cpp's ``{"type": "json_object", "schema": ...}``:
   ``json_object_schema``);
4. ``auto``: the functions with ``tool_choice: "auto"`` and a prompt asking for one call;
5. ``text``: a prompt asking for that JSON object, parsed from the answer (JSON mode when the
   server has it).

Every way ends in the same validation and re-ask loop of the caller. ``strict`` (closed
schemas, optional parameters sent as nullable) is only used where it is enforced: OpenAI's own
endpoint, or ``LLM_STRICT=true``. ``system`` says the server passes system messages to the
model (a chat format may drop them: they are then folded into the first user message);
``tool_definitions`` that the model reads the functions sent as tools (a GGUF template may not
render them: the parameters are then written in the prompt).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

if TYPE_CHECKING:
    import openai

#: what an endpoint may be able to do (LLM_CAPABILITIES takes a comma list of these)
CAPABILITIES = (
    "required",
    "named",
    "auto",
    "json_schema",
    "json_object_schema",
    "json_object",
    "strict",
    "system",
    "tool_definitions",
)

Method = Literal["required", "named", "json_schema", "auto", "text"]
#: the ways to ask for one call, best first (LLM_TOOL_CHOICE forces one)
METHODS: tuple[Method, ...] = ("required", "named", "json_schema", "auto", "text")

#: what OpenAI's own endpoint (and Azure OpenAI) is documented to do
OPENAI = frozenset(CAPABILITIES) - {"json_object_schema"}

#: per method, what the model is asked and what to try when it answers with text instead
_MISSING_CALL = {
    "required": "the endpoint was asked to force a call (tool_choice=required) and returned "
    "text: set LLM_CAPABILITIES without 'required' or LLM_TOOL_CHOICE=json_schema",
    "named": "the endpoint was asked to force a named call and returned text: set "
    "LLM_TOOL_CHOICE=json_schema (or text)",
    "json_schema": "the endpoint was asked for JSON under a schema (response_format "
    "json_schema) and returned something else: set LLM_TOOL_CHOICE=text, or start the server "
    "with grammar support",
    "auto": "the endpoint does not force calls (only tool_choice=auto works) and the model "
    "answered with text: use a server or chat format that honours tool_choice=required or "
    "response_format json_schema (e.g. llama.cpp's server, vLLM), or LLM_TOOL_CHOICE=text",
    "text": "the model was asked to write a JSON object {tool, arguments} and did not: use a "
    "server that honours response_format json_schema or tool_choice=required, or a larger model",
}


def missing_call_hint(method: str) -> str:
    """Why the model answered with no call under ``method``, and which setting to try."""
    return _MISSING_CALL.get(method, _MISSING_CALL["text"])


@dataclass(frozen=True)
class Capabilities:
    """What the endpoint does, where that was learnt, and the way a call is asked for."""

    supported: frozenset[str]
    source: Literal["settings", "probe", "openai", "unknown"]
    method: Method
    notes: tuple[str, ...] = ()
    probed_at: str | None = None

    @property
    def strict(self) -> bool:
        """Strict schemas are sent (and enforced by the endpoint)."""
        return "strict" in self.supported

    @property
    def system(self) -> bool:
        """System messages reach the model."""
        return "system" in self.supported

    def view(self) -> dict[str, Any]:
        """What ``/readyz`` shows."""
        out: dict[str, Any] = {
            "capabilities": sorted(self.supported, key=CAPABILITIES.index),
            "method": self.method,
            "source": self.source,
        }
        if self.notes:
            out["notes"] = list(self.notes)
        if self.probed_at:
            out["probed_at"] = self.probed_at
        return out


def best_method(supported: frozenset[str], forced: str | None = None) -> Method:
    """The best way to ask for one call with ``supported`` (or ``forced``, when set)."""
    if forced in METHODS:
        return forced
    if forced not in (None, "", "best"):
        raise ValueError(f"unknown LLM_TOOL_CHOICE {forced!r}")
    if "json_object_schema" in supported:
        supported = supported | {"json_schema"}
    return next((m for m in METHODS[:-1] if m in supported), "text")


def parse_capabilities(text: str) -> frozenset[str]:
    """``LLM_CAPABILITIES`` as a set; raises ValueError naming an unknown entry."""
    names = {part.strip() for part in text.replace(" ", ",").split(",") if part.strip()}
    names.discard("none")
    unknown = sorted(names - set(CAPABILITIES))
    if unknown:
        raise ValueError(
            f"unknown capabilities {unknown}: use a comma list of {', '.join(CAPABILITIES)} "
            "(or 'detect', or 'none')"
        )
    return frozenset(names)


def listed(text: str) -> frozenset[str] | None:
    """The capabilities ``LLM_CAPABILITIES`` lists (None: ``detect``); ValueError on an unknown."""
    text = text.strip().lower()
    return None if text in ("", "detect") else parse_capabilities(text)


def is_openai(base_url: str | None) -> bool:
    """Whether the endpoint is OpenAI's own (or Azure OpenAI)."""
    if not base_url:
        return True
    host = (urlsplit(base_url).hostname or "").lower()
    return host == "api.openai.com" or host.endswith(".openai.azure.com")


def declared(
    text: str, *, base_url: str | None, forced: str | None, strict: bool | None
) -> Capabilities | None:
    """The capabilities settings give (None: to be probed)."""
    names = listed(text)
    if names is not None:
        return finish(names, "settings", forced=forced, strict=strict)
    if not is_openai(base_url):
        return None
    return finish(OPENAI, "openai", forced=forced, strict=strict)


def finish(
    supported: frozenset[str],
    source: Literal["settings", "probe", "openai", "unknown"],
    *,
    forced: str | None,
    strict: bool | None,
    notes: tuple[str, ...] = (),
    probed_at: str | None = None,
) -> Capabilities:
    """Capabilities with ``LLM_STRICT`` applied and the method chosen."""
    if strict is True:
        supported |= {"strict"}
    elif strict is False:
        supported -= {"strict"}
    return Capabilities(
        frozenset(supported),
        source,
        best_method(supported, forced),
        notes=notes,
        probed_at=probed_at,
    )


# --- the probe ---------------------------------------------------------------------------------
_PROBE_SCHEMA = {
    "type": "object",
    "properties": {"number": {"type": "integer"}},
    "required": ["number"],
}
_PROBE_FUNCTION = {
    "type": "function",
    "function": {"name": "report", "description": "Report a number.", "parameters": _PROBE_SCHEMA},
}
#: a request no model answers with a call or JSON unless the server forces it
_UNRELATED = [{"role": "user", "content": "Say hello."}]
#: with a system message: llama.cpp's chatml-function-calling lists the functions only there
_RELATED = [
    {"role": "system", "content": "You can call functions."},
    {"role": "user", "content": "What is 2 + 3? Report it with the report function."},
]
_JSON = [{"role": "user", "content": 'Say hello as a JSON object {"number": 1}.'}]
_SYSTEM = (
    "You are a helpful assistant. Answer briefly. This instruction only exists to measure "
    "whether a system message reaches the model; ignore it otherwise."
)
PROBE_MAX_TOKENS = 48
#: answers that say the endpoint is busy or still loading, not what it can do: the probe fails
TRANSIENT_STATUS = frozenset({429, 502, 503, 504})


@dataclass
class ProbeResult:
    """What each probe request showed."""

    supported: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)


async def probe(client: openai.AsyncOpenAI, model: str, *, timeout_s: float) -> ProbeResult:
    """Ask the endpoint a few tiny questions; each capability is kept only when it worked.

    A request refused (4xx/5xx) or answered the wrong way means the capability is missing; the
    reason is noted. A transport failure or a transient status (429, 502-504: a server still
    loading its model) stops the probe (raised to the caller, which probes again later).
    """
    import openai

    result = ProbeResult()

    async def ask(capability: str, max_tokens: int = PROBE_MAX_TOKENS, **kwargs: Any) -> Any:
        try:
            return await client.chat.completions.create(
                model=model, max_tokens=max_tokens, timeout=timeout_s, **kwargs
            )
        except (openai.APIConnectionError, openai.APITimeoutError):
            raise
        except openai.APIStatusError as exc:
            if exc.status_code in TRANSIENT_STATUS:  # busy or loading: no answer about this
                raise
            result.notes.append(f"{capability}: refused ({exc.status_code}: {server_text(exc)})")
        except openai.APIError as exc:
            result.notes.append(f"{capability}: unusable answer ({type(exc).__name__})")
        return None

    def called(response: Any) -> bool:
        if response is None or not response.choices:
            return False
        calls = response.choices[0].message.tool_calls or []
        return any(getattr(c, "function", None) and c.function.name == "report" for c in calls)

    def json_number(response: Any) -> bool:
        if response is None or not response.choices:
            return False
        value = first_json_object(response.choices[0].message.content or "")
        return isinstance(value, dict) and isinstance(value.get("number"), int)

    tools = [_PROBE_FUNCTION]
    checks: list[tuple[str, list[dict[str, Any]], dict[str, Any], Any]] = [
        ("required", _UNRELATED, {"tools": tools, "tool_choice": "required"}, called),
        (
            "named",
            _UNRELATED,
            {"tools": tools, "tool_choice": {"type": "function", "function": {"name": "report"}}},
            called,
        ),
        (
            "json_schema",
            _UNRELATED,
            {
                "response_format": {
                    "type": "json_schema",
                    "json_schema": {"name": "report", "schema": _PROBE_SCHEMA},
                }
            },
            json_number,
        ),
        (
            "json_object_schema",
            _UNRELATED,
            {"response_format": {"type": "json_object", "schema": _PROBE_SCHEMA}},
            json_number,
        ),
        ("json_object", _JSON, {"response_format": {"type": "json_object"}}, json_number),
        ("auto", _RELATED, {"tools": tools, "tool_choice": "auto"}, called),
    ]
    for capability, messages, kwargs, worked in checks:
        response = await ask(capability, messages=messages, **kwargs)
        if worked(response):
            result.supported.add(capability)
        elif response is not None:
            result.notes.append(f"{capability}: accepted but not honoured")
    plain = _prompt_tokens(await ask("system", messages=_UNRELATED, max_tokens=1))
    with_system = await ask(
        "system", messages=[{"role": "system", "content": _SYSTEM}, *_UNRELATED], max_tokens=1
    )
    grew = _grew(plain, _prompt_tokens(with_system))
    if grew is not False:
        result.supported.add("system")
    else:
        result.notes.append("system: the system message did not reach the model")
    if result.supported & {"required", "named", "auto"}:
        choice: Any = "required" if "required" in result.supported else "auto"
        if "named" in result.supported:
            choice = {"type": "function", "function": {"name": "report"}}
        # beside a system message: a chat format may list the functions only inside one
        system = [{"role": "system", "content": _SYSTEM}, *_UNRELATED]
        with_tools = await ask(
            "tool_definitions", messages=system, max_tokens=1, tools=tools, tool_choice=choice
        )
        if _grew(_prompt_tokens(with_system), _prompt_tokens(with_tools)) is not False:
            result.supported.add("tool_definitions")
        else:
            result.notes.append("tool_definitions: the functions sent do not reach the model")
    return result


def _grew(before: int | None, after: int | None) -> bool | None:
    """Whether the prompt grew (None: the server does not count its tokens)."""
    if before is None or after is None:
        return None
    return after > before


def _prompt_tokens(response: Any) -> int | None:
    usage = getattr(response, "usage", None)
    tokens = getattr(usage, "prompt_tokens", None)
    return tokens if isinstance(tokens, int) and tokens > 0 else None


def probed(result: ProbeResult, *, forced: str | None, strict: bool | None) -> Capabilities:
    """The capabilities a probe found."""
    return finish(
        frozenset(result.supported),
        "probe",
        forced=forced,
        strict=strict,
        notes=tuple(result.notes),
        probed_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )


# --- reading answers ---------------------------------------------------------------------------
_MAX_SCAN = 20_000  # characters of an answer searched for a JSON object


def first_json_object(text: str) -> Any:
    """The first JSON object in ``text`` (bare, or in a code fence), or None."""
    text = text[:_MAX_SCAN]
    decoder = json.JSONDecoder()
    start = text.find("{")
    tries = 0
    while start != -1 and tries < 50:
        tries += 1
        try:
            value, _ = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
    return None


def server_text(exc: Any) -> str:
    """The server's own words of an error answer (its ``message``), at most 300 characters."""
    body = getattr(exc, "body", None)
    message: Any = None
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            message = inner.get("message") or inner.get("detail") or inner.get("msg")
        elif isinstance(inner, str):
            message = inner
        if message is None and isinstance(body.get("detail"), (str, list)):
            message = body["detail"]
    elif isinstance(body, str):
        message = body
    if message is None:
        response = getattr(exc, "response", None)
        try:
            message = response.text if response is not None else None
        except Exception:  # a streamed or closed body: nothing more to say
            message = None
    if not isinstance(message, str):
        message = json.dumps(message, default=str) if message is not None else ""
    words = " ".join(str(message).split())
    return words[:300] + ("…" if len(words) > 300 else "")
