"""BFCL items → tool configs, and the request each gold answer must produce.

Everything here is computed from the BFCL documents alone, never through the project's request
builder, so the harness can compare the two:

- :func:`to_json_schema` maps BFCL types (``dict``, ``float``, ``tuple``, ``any``) to JSON Schema;
- :class:`NameMap` maps BFCL names (``math.gcd``) to tool names (``math-gcd``) and back;
- :func:`tool_config` makes one HTTP operation on ``https://bfcl.example`` per function: all
  scalar parameters → ``GET /<tool>`` with ``in: query``, otherwise ``POST /<tool>`` with
  ``in: body``; :func:`variant_tool` moves one string parameter ``in: path`` or ``in: header``
  (BFCL has neither) for the path-traversal and header-injection corruptions;
- :func:`gold_arguments` takes the first acceptable value of each argument (``""`` listed means
  "may be omitted", so it is omitted), :func:`gold_request` renders them as the request builder
  documents, and :func:`gold_problems` names where a gold answer contradicts its own doc;
- :func:`request_diff` compares a gold request with the request the pipeline sent;
- :func:`load_bfcl` reads the installed ``bfcl-eval`` data, :func:`load_sample` the committed
  sample in ``tests/fixtures/bfcl`` (written by :func:`export_sample`).
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import httpx
from jsonschema import Draft202012Validator

BASE_URL = "https://bfcl.example"
HOST = "bfcl.example"
CATEGORIES = ("multiple", "live_multiple")
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_HEADER_NAME = re.compile(r"^[A-Za-z0-9-]+$")
SAMPLE_DIR = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "bfcl"
SAMPLE_SIZE = 25  # per category: every (len // 25)-th item, the first 25 of them

_TYPES = {"dict": "object", "float": "number", "tuple": "array"}
_SCALARS = frozenset({"string", "integer", "number", "boolean"})
# JSON Schema keywords kept from a BFCL parameter; BFCL's own ("optional") are dropped.
_KEPT = ("description", "enum", "default", "format", "minimum", "maximum")


# --- types ---------------------------------------------------------------------------------
def to_json_schema(bfcl: dict[str, Any]) -> dict[str, Any]:
    """The JSON Schema of one BFCL parameter (recursing into ``properties`` and ``items``)."""
    out: dict[str, Any] = {}
    kind = bfcl.get("type")
    if kind is not None and kind != "any":
        out["type"] = _TYPES.get(kind, kind)
    for key in _KEPT:
        if key in bfcl:
            out[key] = bfcl[key]
    if isinstance(bfcl.get("properties"), dict):
        out["properties"] = {n: to_json_schema(s) for n, s in bfcl["properties"].items()}
    if isinstance(bfcl.get("required"), list) and "properties" in out:
        out["required"] = list(bfcl["required"])
    if isinstance(bfcl.get("items"), dict):
        out["items"] = to_json_schema(bfcl["items"])
        if "enum" in out and out.get("type") == "array" and "enum" not in out["items"]:
            # BFCL puts an array's allowed item values on the array itself.
            out["items"]["enum"] = out.pop("enum")
    return out


def is_scalar(schema: dict[str, Any]) -> bool:
    """Whether a converted schema is a string, integer, number or boolean."""
    return schema.get("type") in _SCALARS


# --- names ---------------------------------------------------------------------------------
def tool_name(bfcl_name: str) -> str:
    """The tool name for a BFCL function name: ``.`` → ``-``, other bad characters → ``_``.

    BFCL names never contain ``-``, so the mapping is reversible on the corpus; a name longer
    than 64 characters is cut and given a hash suffix. :class:`NameMap` checks both.
    """
    name = re.sub(r"[^a-zA-Z0-9_-]", lambda m: "-" if m.group() == "." else "_", bfcl_name)
    if len(name) > 64:
        name = name[:55] + "_" + hashlib.sha1(bfcl_name.encode()).hexdigest()[:8]
    return name


@dataclass
class NameMap:
    """BFCL name ↔ tool name; refuses two BFCL names that map to one tool name."""

    to_tool: dict[str, str] = field(default_factory=dict)
    to_bfcl: dict[str, str] = field(default_factory=dict)

    def add(self, bfcl_name: str) -> str:
        """Map ``bfcl_name`` (idempotent); returns the tool name."""
        name = tool_name(bfcl_name)
        known = self.to_bfcl.get(name)
        if known is not None and known != bfcl_name:
            raise ValueError(f"'{bfcl_name}' and '{known}' both map to tool name '{name}'")
        self.to_tool[bfcl_name] = name
        self.to_bfcl[name] = bfcl_name
        return name


# --- tools ---------------------------------------------------------------------------------
def tool_config(function: dict[str, Any], names: NameMap) -> dict[str, Any]:
    """The ToolConfig mapping of one BFCL function doc."""
    name = names.add(function["name"])
    params = function.get("parameters") or {}
    required = set(params.get("required") or [])
    schemas = {n: to_json_schema(s) for n, s in (params.get("properties") or {}).items()}
    scalar_only = all(is_scalar(s) for s in schemas.values())
    location = "query" if scalar_only else "body"
    parameters: dict[str, Any] = {}
    for pname, schema in schemas.items():
        if "required" in schema:  # a nested required list would clash with our "required" flag
            schema = {**schema, "allOf": [{"required": schema.pop("required")}]}
        parameters[pname] = {**schema, "in": location, "required": pname in required}
    return {
        "name": name,
        "description": (function.get("description") or "").strip() or function["name"],
        "api": {
            "method": "GET" if scalar_only else "POST",
            "base_url": BASE_URL,
            "path": f"/{name}",
        },
        "parameters": parameters,
    }


def input_schema(tool: dict[str, Any]) -> dict[str, Any]:
    """The closed object schema of a converted tool's arguments."""
    props = {
        n: {k: v for k, v in p.items() if k not in ("in", "required")}
        for n, p in tool["parameters"].items()
    }
    req = [n for n, p in tool["parameters"].items() if p["required"]]
    return {"type": "object", "properties": props, "required": req, "additionalProperties": False}


def variant_param(tool: dict[str, Any], kind: str) -> str:
    """The parameter a path or header variant of ``tool`` uses (added when none fits)."""
    for name, p in tool["parameters"].items():
        plain = p.get("type") == "string" and not {"enum", "format"} & p.keys()
        if plain and (kind == "path" or _HEADER_NAME.match(name)):
            return name
    return "resource_id" if kind == "path" else "X-Trace"


def variant_tool(tool: dict[str, Any], kind: str) -> dict[str, Any]:
    """``tool`` with one string parameter moved ``in: path`` (``/<tool>/{p}``) or ``in: header``."""
    out = copy.deepcopy(tool)
    name = variant_param(tool, kind)
    param = out["parameters"].setdefault(name, {"type": "string"})
    param.update({"in": kind, "required": kind == "path" or param.get("required", False)})
    if kind == "path":
        out["api"]["path"] = f"/{tool['name']}/{{{name}}}"
    return out


# --- gold answers --------------------------------------------------------------------------
_OMIT = object()


def _choose(acceptable: Any) -> Any:
    if not isinstance(acceptable, list):  # malformed nested answer: a bare value
        return _resolve(acceptable)
    if not acceptable or "" in acceptable:
        return _OMIT
    return _resolve(acceptable[0])


def _resolve(value: Any) -> Any:
    if isinstance(value, dict):  # a nested dict lists acceptable values per key, too
        chosen = {k: _choose(v) for k, v in value.items()}
        return {k: v for k, v in chosen.items() if v is not _OMIT}
    if isinstance(value, list):
        return [_resolve(v) for v in value]
    return value


def gold_call(answer: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """``(bfcl function name, acceptable values per argument)`` of a possible-answer record."""
    ((name, args),) = answer["ground_truth"][0].items()
    return name, args


def gold_arguments(acceptable: dict[str, Any], required: Iterable[str] = ()) -> dict[str, Any]:
    """The first acceptable value of each argument, as a model obeying the doc would send.

    ``""`` listed means "may be omitted", so the argument is omitted, except for a parameter
    the doc requires when another value is listed (the first such value is taken). A ``None``
    for an optional parameter means "the default": omitted too, as strict mode's null is.
    """
    needed = set(required)
    arguments: dict[str, Any] = {}
    for name, values in acceptable.items():
        if name in needed and isinstance(values, list) and "" in values:
            values = [v for v in values if v != ""]
        value = _choose(values)
        if value is _OMIT or (value is None and name not in needed):
            continue
        arguments[name] = value
    return arguments


def render_scalar(value: Any) -> str:
    """A query value as the request builder documents: true/false, str(), compact JSON."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


@dataclass(frozen=True)
class GoldRequest:
    """The request a gold answer must produce."""

    method: str
    url: str
    query: list[tuple[str, str]]
    body: dict[str, Any] | None


def gold_request(tool: dict[str, Any], arguments: dict[str, Any]) -> GoldRequest:
    """Render ``arguments`` into the request for ``tool`` (parameters in doc order)."""
    query: list[tuple[str, str]] = []
    body: dict[str, Any] = {}
    for pname, param in tool["parameters"].items():
        if arguments.get(pname) is None:
            continue
        value = arguments[pname]
        if param["in"] == "query":
            query += [
                (pname, render_scalar(v)) for v in (value if isinstance(value, list) else [value])
            ]
        elif param["in"] == "body":
            body[pname] = value
    api = tool["api"]
    return GoldRequest(api["method"], api["base_url"] + api["path"], query, body or None)


def gold_problems(
    tool: dict[str, Any] | None, acceptable: dict[str, Any], arguments: dict[str, Any]
) -> list[str]:
    """Where a gold answer contradicts its own function doc (empty when it does not)."""
    if tool is None:
        return ["the gold function is not among the item's functions"]
    params = tool["parameters"]
    problems = [f"unknown parameter '{n}'" for n in acceptable if n not in params]
    problems += [
        f"required parameter '{n}' is missing or may be omitted"
        for n, p in params.items()
        if p["required"] and n not in arguments
    ]
    schema = input_schema(tool)
    schema["properties"] = {n: s for n, s in schema["properties"].items() if n in arguments}
    schema["required"] = []
    problems += [
        f"{'.'.join(str(p) for p in e.absolute_path) or '(arguments)'}: {e.message}"
        for e in Draft202012Validator(schema).iter_errors(
            {k: v for k, v in arguments.items() if k in params}
        )
    ]
    return problems


# --- comparison with a sent request ------------------------------------------------------
def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True)  # 1 != 1.0 != true, unlike ==


def request_diff(gold: GoldRequest, seen: httpx.Request) -> list[str]:
    """Differences between the gold request and a recorded one (empty when equal)."""
    diff: list[str] = []
    url = str(seen.url.copy_with(query=None))
    query = parse_qsl(seen.url.query.decode(), keep_blank_values=True)
    body = json.loads(seen.content) if seen.content else None
    if body is not None and seen.headers.get("content-type") != "application/json":
        diff.append(f"content-type: {seen.headers.get('content-type')!r} for a JSON body")
    for what, want, got in (
        ("method", gold.method, seen.method),
        ("url", gold.url, url),
        ("query", gold.query, query),
        ("body", _canonical(gold.body), _canonical(body)),
    ):
        if want != got:
            diff.append(f"{what}: expected {want!r}, sent {got!r}")
    return diff


# --- items --------------------------------------------------------------------------------
@dataclass
class Item:
    """One BFCL item, converted."""

    id: str
    category: str
    instructions: str
    tools: list[dict[str, Any]]
    gold_tool: str | None
    gold_bfcl_name: str
    arguments: dict[str, Any]
    problems: list[str]
    request: GoldRequest | None

    @property
    def flagged(self) -> bool:
        """Whether the gold answer contradicts its own function doc."""
        return bool(self.problems)

    def tool(self, name: str) -> dict[str, Any]:
        """The converted tool called ``name``."""
        return next(t for t in self.tools if t["name"] == name)


def convert_item(
    raw: dict[str, Any], answer: dict[str, Any], category: str, names: NameMap
) -> Item:
    """Convert one BFCL item and its possible answer."""
    if raw["id"] != answer["id"]:
        raise ValueError(f"item {raw['id']} is paired with answer {answer['id']}")
    tools = [tool_config(f, names) for f in raw["function"]]
    bfcl_name, acceptable = gold_call(answer)
    gold = names.to_tool.get(bfcl_name)
    by_name = {t["name"]: t for t in tools}
    tool = by_name.get(gold) if gold else None
    required = [n for n, p in tool["parameters"].items() if p["required"]] if tool else []
    arguments = gold_arguments(acceptable, required)
    problems = gold_problems(tool, acceptable, arguments)
    turn = raw["question"][0]
    instructions = "\n\n".join(str(m["content"]) for m in turn)[:20_000]
    request = gold_request(tool, arguments) if tool and not problems else None
    return Item(
        raw["id"], category, instructions, tools, gold, bfcl_name, arguments, problems, request
    )


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The records of a JSON-lines file."""
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def bfcl_data_dir() -> Path:
    """The data directory of the installed ``bfcl-eval`` package."""
    import bfcl_eval  # optional: only the full run needs it

    return Path(bfcl_eval.__file__).parent / "data"


def load_category(
    items_path: Path, answers_path: Path, category: str, names: NameMap | None = None
) -> list[Item]:
    """Load and convert every item of one category file and its answers file."""
    names = names if names is not None else NameMap()
    raws, answers = read_jsonl(items_path), read_jsonl(answers_path)
    if len(raws) != len(answers):
        raise ValueError(f"{items_path.name}: {len(raws)} items but {len(answers)} answers")
    return [convert_item(r, a, category, names) for r, a in zip(raws, answers, strict=True)]


def load_bfcl(categories: Iterable[str] = CATEGORIES) -> dict[str, list[Item]]:
    """Every item of ``categories`` from the installed ``bfcl-eval`` package."""
    data = bfcl_data_dir()
    return {
        c: load_category(
            data / f"BFCL_v4_{c}.json", data / "possible_answer" / f"BFCL_v4_{c}.json", c
        )
        for c in categories
    }


def load_sample(directory: Path = SAMPLE_DIR) -> dict[str, list[Item]]:
    """The committed sample: ``<category>.jsonl`` and ``<category>_answers.jsonl``."""
    return {
        c: load_category(directory / f"{c}.jsonl", directory / f"{c}_answers.jsonl", c)
        for c in CATEGORIES
    }


def export_sample(directory: Path = SAMPLE_DIR) -> dict[str, list[str]]:
    """Write ``SAMPLE_SIZE`` evenly spaced items of the installed BFCL data as the sample."""
    data, ids = bfcl_data_dir(), {}
    directory.mkdir(parents=True, exist_ok=True)
    for c in CATEGORIES:
        for suffix, source in (("", data), ("_answers", data / "possible_answer")):
            rows = read_jsonl(source / f"BFCL_v4_{c}.json")
            rows = rows[:: len(rows) // SAMPLE_SIZE][:SAMPLE_SIZE]
            lines = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
            (directory / f"{c}{suffix}.jsonl").write_text(lines, encoding="utf-8")
            ids[c] = [r["id"] for r in rows]
    return ids
