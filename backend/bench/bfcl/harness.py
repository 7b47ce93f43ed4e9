"""Runs BFCL items through the real pipeline with an oracle and a noisy fake LLM.

The fake LLM is the scripted OpenAI-compatible server of ``tests.support.fake_llm`` on loopback,
spoken to by the real ``openai`` client; outbound API calls go to an ``httpx.MockTransport``
that records them. Per item, the item's converted tools are written to the registry and
reloaded.

- **oracle**: the LLM answers with the gold call (absent optional parameters as null when the
  function it was offered is strict); the recorded request must equal the gold request.
- **noisy**: the LLM answers with one corruption on every attempt; each must fail at
  ``llm_selection`` with no outbound request, for the documented reason.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
from jsonschema import Draft202012Validator
from loguru import logger

from bench.bfcl.convert import (
    HOST,
    SAMPLE_DIR,
    Item,
    load_bfcl,
    load_sample,
    request_diff,
    variant_param,
    variant_tool,
)
from dynamic_tools.bootstrap import Services, build_services
from dynamic_tools.selection.function_schema import NONE_SUITABLE
from dynamic_tools.selection.models import WorkflowRequest, WorkflowResponse
from dynamic_tools.settings import Settings
from tests.support.fake_llm import FakeLLM, Reply, http_error, refusal, running_fake_llm, tool_call

METADATA_URL = "http://169.254.169.254/latest/meta-data/iam/security-credentials/"
_WRONG = {"string": 12345, "integer": "12", "number": "1.5", "boolean": "true",
          "array": "not-an-array", "object": "not-an-object"}  # fmt: skip


# --- the recorder --------------------------------------------------------------------------
@dataclass
class Recorder:
    """An ``httpx.MockTransport`` handler that records every outbound request."""

    requests: list[httpx.Request] = field(default_factory=list)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return httpx.Response(200, json={"ok": True})


# --- what the fake LLM answers -------------------------------------------------------------
def _object_branch(schema: dict[str, Any]) -> dict[str, Any]:
    for branch in schema.get("anyOf", []):
        if branch.get("type") != "null":
            return dict(branch)
    return schema


def strict_arguments(value: Any, schema: dict[str, Any]) -> Any:
    """``value`` as a strict-mode model writes it: every absent property present as null."""
    schema = _object_branch(schema)
    props = schema.get("properties")
    if isinstance(value, dict) and isinstance(props, dict):
        out = {n: strict_arguments(value[n], s) if n in value else None for n, s in props.items()}
        return {**out, **{k: v for k, v in value.items() if k not in props}}
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [strict_arguments(v, schema["items"]) for v in value]
    return value


def offered(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The functions a chat request offered, by name."""
    return {t["function"]["name"]: t["function"] for t in body.get("tools", [])}


def answer_args(base: dict[str, Any], function: dict[str, Any] | None) -> dict[str, Any]:
    """``base`` as the model would send it for the offered ``function``."""
    if function and function.get("strict"):
        return strict_arguments(base, function["parameters"])  # type: ignore[no-any-return]
    return base


# --- corruptions ---------------------------------------------------------------------------
Answer = Callable[[dict[str, Any]], Reply]


@dataclass(frozen=True)
class Corruption:
    """A broken LLM answer, the variant tool it needs, and the words its error must contain."""

    name: str
    reason: str
    attempts: int
    make: Callable[[Item, dict[str, Any]], Answer | None]  # None: not applicable to the item
    variant: str | None = None  # "path" | "header": the gold tool gets such a parameter
    stage: str = "llm_selection"


def _with(item: Item, update: dict[str, Any], **kw: Any) -> Answer:
    def answer(body: dict[str, Any]) -> Reply:
        fn = offered(body).get(item.gold_tool or "")
        return tool_call(item.gold_tool or "", answer_args({**item.arguments, **update}, fn), **kw)

    return answer


def _wrong_type(item: Item, tool: dict[str, Any]) -> Answer | None:
    params = tool["parameters"]
    typed = [n for n, p in params.items() if p.get("type") in _WRONG]
    present = [n for n in typed if n in item.arguments] or typed
    if not present:
        return None
    return _with(item, {present[0]: _WRONG[params[present[0]]["type"]]})


def _unknown_tool(item: Item, tool: dict[str, Any]) -> Answer:
    return lambda body: tool_call(f"{item.gold_tool}-admin", item.arguments)


def _extra_url(item: Item, tool: dict[str, Any]) -> Answer:
    name = next(n for n in ("url", "target_url", "callback_url") if n not in tool["parameters"])
    return _with(item, {name: METADATA_URL})


def _invalid_json(item: Item, tool: dict[str, Any]) -> Answer:
    def answer(body: dict[str, Any]) -> Reply:
        args = answer_args(item.arguments, offered(body).get(item.gold_tool or ""))
        return tool_call(item.gold_tool or "", json.dumps(args)[:-1] + ", }")

    return answer


def _fixed(reply: Reply) -> Callable[[Item, dict[str, Any]], Answer]:
    return lambda item, tool: lambda body: reply


CORRUPTIONS: tuple[Corruption, ...] = (
    Corruption("unknown tool", "is not one of the available functions", 3, _unknown_tool),
    Corruption("extra parameter", "Additional properties are not allowed", 3,
               lambda i, t: _with(i, {"bfcl_extra": "x"})),
    Corruption("wrong types", "is not of type", 3, _wrong_type),
    Corruption("path ../", "dot segment", 3,
               lambda i, t: _with(i, {variant_param(t, "path"): "../../admin"}), "path"),
    Corruption("path %2e%2e", "dot segment", 3,
               lambda i, t: _with(i, {variant_param(t, "path"): "%2e%2e"}), "path"),
    Corruption("header injection", "line breaks or control characters", 3,
               lambda i, t: _with(i, {variant_param(t, "header"): "a\r\nX-Admin: 1"}), "header"),
    Corruption("metadata URL argument", "Additional properties are not allowed", 3, _extra_url),
    Corruption("invalid JSON", "not valid JSON", 3, _invalid_json),
    Corruption("truncated (length)", "finish_reason=length", 3,
               lambda i, t: _with(i, {}, finish_reason="length")),
    Corruption("refusal", "the LLM refused", 1, _fixed(refusal("I can't help with that."))),
    Corruption("LLM 429", "429", 1, _fixed(http_error(429))),
    Corruption("LLM 500", "500", 1, _fixed(http_error(500))),
)  # fmt: skip


# --- running -------------------------------------------------------------------------------
@dataclass
class Outcome:
    """What one pipeline run did."""

    response: WorkflowResponse
    sent: list[httpx.Request]
    llm_calls: int


class Bench:
    """The real services on a temporary registry, the fake LLM and the recorder."""

    def __init__(self, fake: FakeLLM, root: Path) -> None:
        self.fake, self.recorder, self.runs = fake, Recorder(), 0
        settings = Settings(  # type: ignore[call-arg]
            _env_file=None, host="127.0.0.1", port=8000, data_dir=root / "data",
            registry_config_path=root / "registry" / "config.yaml",
            openai_api_key="sk-bench-unused", openai_base_url=fake.base_url,
            llm_model="fake-model", llm_max_retries=0, allowed_target_hosts=[HOST],
            llm_capabilities="required,named,auto,json_schema,json_object,strict,system,tool_definitions",
            enable_demo_api=False, seed_examples_from=None,
        )  # fmt: skip
        settings.tools_dir.mkdir(parents=True)
        self.tools_file = settings.tools_dir / "item.json"
        self.services: Services = build_services(
            settings, http_transport=httpx.MockTransport(self.recorder)
        )

    def install(self, tools: list[dict[str, Any]]) -> list[str]:
        """Make ``tools`` the registry's tools; returns the load problems."""
        self.tools_file.write_text(json.dumps(tools), encoding="utf-8")
        return [f"{p.tool}: {p.field}: {p.reason}" for p in self.services.registry.reload()]

    async def run(self, item: Item, answer: Answer) -> Outcome:
        """One pipeline run of ``item`` with the LLM answering through ``answer``."""
        self.recorder.requests.clear()
        self.fake.requests.clear()
        self.fake.headers.clear()
        self.fake.fallback = answer
        self.runs += 1
        request = WorkflowRequest(
            user_instructions=item.instructions, tool_ids=[t["name"] for t in item.tools]
        )
        response = await self.services.pipeline.run(request)
        return Outcome(response, list(self.recorder.requests), len(self.fake.requests))


def oracle_answer(item: Item, notes: list[str]) -> Answer:
    """The gold call; a strict function's schema must accept it, else a note is kept."""

    def answer(body: dict[str, Any]) -> Reply:
        fn = offered(body).get(item.gold_tool or "")
        if fn is None:
            notes.append(f"gold tool '{item.gold_tool}' was not offered to the LLM")
            return tool_call(NONE_SUITABLE, {"reason": "the gold tool was not offered"})
        args = answer_args(item.arguments, fn)
        if fn.get("strict"):
            notes.extend(
                f"strict schema refuses the gold answer: {e.message}"
                for e in Draft202012Validator(fn["parameters"]).iter_errors(args)
            )
        return tool_call(fn["name"], args)

    return answer


async def check_oracle(bench: Bench, item: Item) -> list[str]:
    """The differences between what was sent and the gold request (empty: exact)."""
    problems = bench.install(item.tools)
    notes: list[str] = []
    out = await bench.run(item, oracle_answer(item, notes))
    diff = problems + notes
    if out.response.status != "success":
        diff.append(f"{out.response.error_stage}: {out.response.error}")
    if out.llm_calls != 1:
        diff.append(f"{out.llm_calls} LLM calls, expected 1")
    if len(out.sent) != 1:
        diff.append(f"{len(out.sent)} requests sent, expected 1")
    elif item.request is not None:
        diff += request_diff(item.request, out.sent[0])
    return diff


CONTROLS = {"path": "v 1/ü", "header": "v1\tok"}  # benign values in the variant tools
CHECKS = (*(c.name for c in CORRUPTIONS), *(f"{k} control" for k in CONTROLS))


async def _control(bench: Bench, item: Item, tool: dict[str, Any], kind: str) -> str | None:
    """A benign value in the variant parameter is placed as documented (None: it is)."""
    name, value = variant_param(tool, kind), CONTROLS[kind]
    out = await bench.run(item, _with(item, {name: value}))
    if out.response.status != "success" or len(out.sent) != 1:
        return f"{out.response.error_stage}: {out.response.error}; {len(out.sent)} sent"
    seen = out.sent[0]
    if kind == "path":
        want = f"{tool['api']['base_url']}/{tool['name']}/{quote(value, safe='')}"
        got = str(seen.url.copy_with(query=None))
    else:
        want, got = value, seen.headers.get(name)
    return None if want == got else f"expected {want!r}, sent {got!r}"


async def check_corruptions(bench: Bench, item: Item) -> dict[str, str | None]:
    """Per check: None when it went as expected, a reason when not; absent when n/a."""
    results: dict[str, str | None] = {}
    gold = item.tool(item.gold_tool or "")
    for kind in (None, "path", "header"):
        tool = variant_tool(gold, kind) if kind else gold
        tools = [tool if t["name"] == gold["name"] else t for t in item.tools]
        if problems := bench.install(tools):
            results.update({c.name: f"load: {problems}" for c in CORRUPTIONS if c.variant == kind})
            continue
        for c in (c for c in CORRUPTIONS if c.variant == kind):
            answer = c.make(item, tool)
            if answer is None:
                continue
            out = await bench.run(item, answer)
            r = out.response
            checks = [
                (r.error_stage == c.stage, f"stage {r.error_stage!r}: {r.error}"),
                (not out.sent, f"{len(out.sent)} request(s) sent: {out.sent[:1]}"),
                (c.reason in (r.error or ""), f"error does not say {c.reason!r}: {r.error}"),
                (out.llm_calls == c.attempts, f"{out.llm_calls} LLM calls, not {c.attempts}"),
            ]
            results[c.name] = next((why for ok, why in checks if not ok), None)
        if kind:
            results[f"{kind} control"] = await _control(bench, item, tool, kind)
    return results


async def run_items(
    bench: Bench, items: list[Item], *, noisy: bool, progress: Callable[[], None] | None = None
) -> dict[str, Any]:
    """Oracle (and noisy) runs of ``items`` of one category; returns its figures."""
    mismatches: dict[str, list[str]] = {}
    flagged: dict[str, dict[str, Any]] = {}
    corruptions = {n: {"caught": 0, "total": 0, "failures": {}} for n in CHECKS}
    started, runs, oracle_s = time.perf_counter(), bench.runs, 0.0
    for item in items:
        oracle_started = time.perf_counter()
        if item.flagged:
            notes: list[str] = []
            bench.install(item.tools)
            out = await bench.run(item, oracle_answer(item, notes))
            flagged[item.id] = {"problems": item.problems, "stage": out.response.error_stage,
                                "sent": len(out.sent)}  # fmt: skip
        elif diff := await check_oracle(bench, item):
            mismatches[item.id] = diff
        oracle_s += time.perf_counter() - oracle_started
        if noisy and not item.flagged:
            for name, failure in (await check_corruptions(bench, item)).items():
                figures = corruptions[name]
                figures["total"] += 1
                if failure is None:
                    figures["caught"] += 1
                else:
                    figures["failures"][item.id] = failure
        if progress:
            progress()
    unflagged = len(items) - len(flagged)
    seconds = time.perf_counter() - started
    return {
        "items": len(items),
        "flagged": flagged,
        "unflagged": unflagged,
        "exact": unflagged - len(mismatches),
        "rate": (unflagged - len(mismatches)) / unflagged if unflagged else 0.0,
        "mismatches": mismatches,
        "corruptions": corruptions if noisy else {},
        "seconds": round(seconds, 2),
        "ms_per_item": round(1000 * seconds / max(len(items), 1), 2),
        "oracle_ms_per_item": round(1000 * oracle_s / max(len(items), 1), 2),
        "pipeline_runs": bench.runs - runs,
    }


@contextmanager
def _quiet() -> Iterator[None]:
    logger.disable("dynamic_tools")  # thousands of expected failures would flood stderr
    try:
        yield
    finally:
        logger.enable("dynamic_tools")


def run(
    data: dict[str, list[Item]], *, noisy: bool = True, progress: Callable[[], None] | None = None
) -> dict[str, dict[str, Any]]:
    """Run every category of ``data``; returns the figures per category."""

    async def go(bench: Bench) -> dict[str, dict[str, Any]]:
        try:
            return {c: await run_items(bench, i, noisy=noisy, progress=progress)
                    for c, i in data.items()}  # fmt: skip
        finally:
            await bench.services.aclose()

    with running_fake_llm() as fake, tempfile.TemporaryDirectory() as tmp, _quiet():
        return asyncio.run(go(Bench(fake, Path(tmp))))


# --- entry points -------------------------------------------------------------------------
def run_sample(directory: Path = SAMPLE_DIR) -> dict[str, dict[str, Any]]:
    """Oracle and noisy runs of the committed sample (used by the test)."""
    return run(load_sample(directory))


def report(figures: dict[str, dict[str, Any]]) -> None:
    """Print the figures as rich tables."""
    from rich.console import Console
    from rich.table import Table

    console = Console()
    oracle = Table(title="BFCL oracle: the request sent equals the gold request")
    for col in ("category", "items", "flagged", "exact", "rate", "ms/item oracle", "ms/item all"):
        oracle.add_column(col, justify="right" if col != "category" else "left")
    for c, f in figures.items():
        oracle.add_row(c, str(f["items"]), str(len(f["flagged"])), f"{f['exact']}/{f['unflagged']}",
                       f"{100 * f['rate']:.2f}%", f"{f['oracle_ms_per_item']:.1f}",
                       f"{f['ms_per_item']:.1f}")  # fmt: skip
    console.print(oracle)
    for f in figures.values():
        for item_id, diff in f["mismatches"].items():
            console.print(f"[red]mismatch[/] {item_id}: " + "; ".join(diff))
        for item_id, info in f["flagged"].items():
            outcome = f"pipeline: {info['stage'] or 'success'}, {info['sent']} sent"
            console.print(
                f"[yellow]flagged[/] {item_id}: {'; '.join(info['problems'])} ({outcome})"
            )
    noisy = Table(
        title="BFCL noisy: caught at llm_selection, no request sent, right reason "
        "(controls: a benign value placed as documented)"
    )
    for col in ("corruption", *figures):
        noisy.add_column(col, justify="right" if col != "corruption" else "left")
    for name in CHECKS:
        cells = [figures[k]["corruptions"].get(name) for k in figures]
        noisy.add_row(name, *(f"{x['caught']}/{x['total']}" if x else "-" for x in cells))
    console.print(noisy)
    for k, f in figures.items():
        for name, x in f["corruptions"].items():
            for item_id, why in list(x["failures"].items())[:5]:
                console.print(f"[red]not caught[/] {k} {name} {item_id}: {why}")


def main(full: bool = True) -> dict[str, dict[str, Any]]:
    """Run both categories (all items when ``full``, else the sample), print and return figures."""
    from rich.progress import Progress

    data = load_bfcl() if full else load_sample()
    started = time.perf_counter()
    with Progress(transient=True) as bar:
        task = bar.add_task("BFCL items", total=sum(map(len, data.values())))
        figures = run(data, progress=lambda: bar.advance(task))
    report(figures)
    print(f"total {time.perf_counter() - started:.1f} s for {sum(map(len, data.values()))} items")
    return figures
