"""Recipes of several calls: a ``{prefix}_query`` trace as a parameterised sequence.

An answered ``_query`` whose loop made several successful calls teaches a **sequence**: the
calls in order, each with an argument template. Every argument value (walking into objects, as
a GraphQL call's ``variables``) becomes one of:

- a **parameter** ``{"$param": name}`` when the value appears in the question (or the
  operation requires it and no earlier answer gave it): it varies from one question to the next;
- a **reference** ``{"$ref": {"step": i, "row": …, "field": f}}`` when it came from an earlier
  call's answer: the value of column ``f`` of one row of step ``i``'s table (its rows, as SQL
  sees them). The row is recorded by what singles it out in that answer: the unique smallest or
  largest value of a numeric column (``{"min": "price"}``, ``{"max": …}``; the first such column
  in the row's order), else its position (``0``), or ``null`` when the answer is one object;
- otherwise **fixed** (a GraphQL operation's text, an optional value the model chose).

The sequence is stored in a recipe's ``fixed`` as ``{"$steps": [{tool, arguments}], "$sql":
…}`` (the SQL the model's answer ran over ``step_<i>``, if any); its parameters carry the
learned values as ``examples``, which also make the learned question a **pattern**: a later
``_query`` whose question is the same but for the parameters' values replays the sequence with
no LLM. Its ``schema_hash`` covers every operation it calls: a change to any drops it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dynamic_tools.engine.sql_query import SqlQueryError, run_sql_query
from dynamic_tools.errors import DynamicToolsError, InvalidInputError
from dynamic_tools.http.invoker import ToolInvoker
from dynamic_tools.selection.models import SqlApplied
from dynamic_tools.selection.query_agent import (
    QueryOutcome,
    QueryStep,
    count_rows,
    failure_text,
    step_tables,
)
from dynamic_tools.selection.result_sql import rows_of
from dynamic_tools.tools.models import ToolConfig

STEPS = "$steps"
SQL = "$sql"
PARAM = "$param"
REF = "$ref"
MAX_NAME = 64
FIXED_TEXT_KEYS = frozenset({"query", "operationName"})
MIN_PATTERN_TEXT = 6  # letters a question pattern must keep besides its parameters


class ReplayFailed(Exception):
    """A sequence could not be replayed (a reference found nothing, a call failed)."""

    def __init__(self, message: str, outcome: QueryOutcome) -> None:
        super().__init__(message)
        self.message = message
        self.outcome = outcome


@dataclass(frozen=True)
class SequenceDraft:
    """A sequence recipe before verification."""

    name: str
    tools: list[str]
    fixed: dict[str, Any]  # {"$steps": [...], "$sql": ...}
    parameters: dict[str, Any]
    values: dict[str, Any]  # the learned parameter values


def is_sequence(fixed: Mapping[str, Any]) -> bool:
    """Whether a recipe's ``fixed`` holds a sequence."""
    return isinstance(fixed.get(STEPS), list)


def sequence_tools(fixed: Mapping[str, Any]) -> list[str]:
    """The operations a sequence calls, in order, once each."""
    names: list[str] = []
    for step in fixed.get(STEPS) or []:
        if step["tool"] not in names:
            names.append(step["tool"])
    return names


def tool_hash(config: ToolConfig) -> str:
    """What a sequence relies on of one operation: endpoint, inputs, GraphQL schema."""
    data = {
        "api": config.api.model_dump(mode="json"),
        "input": config.input_schema(),
        "static": config.static_params.model_dump(mode="json"),
        "graphql": config.graphql.model_dump(mode="json") if config.graphql else None,
    }
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def sequence_hash(configs: Sequence[ToolConfig]) -> str:
    """The schema hash of a sequence: every operation it calls."""
    joined = "+".join(f"{c.name}:{tool_hash(c)}" for c in configs)
    return hashlib.sha256(joined.encode()).hexdigest()


def _mentioned(value: Any, question: str) -> bool:
    if isinstance(value, bool) or value is None or not isinstance(value, str | int | float):
        return False
    text = str(value).strip()
    return bool(text) and _find(text, question) is not None


def _find(text: str, question: str) -> re.Match[str] | None:
    """``text`` in ``question`` as a whole token (not inside a longer word or number)."""
    return re.search(rf"(?<![\w-]){re.escape(text)}(?![\w-])", question, flags=re.IGNORECASE)


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return "string"


def _row_selector(rows: list[Any], index: int) -> Any:
    """What singles out ``rows[index]``: a unique min/max of a numeric column, else ``index``."""
    if len(rows) == 1:
        return 0
    row = rows[index]
    if not all(isinstance(r, dict) for r in rows):
        return index
    for column, value in row.items():
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        column_values = [r.get(column) for r in rows]
        if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in column_values):
            continue
        for kind, extreme in (("min", min(column_values)), ("max", max(column_values))):
            if value == extreme and column_values.count(extreme) == 1:
                return {kind: column}
    return index


def _reference(value: Any, earlier: Sequence[QueryStep]) -> dict[str, Any] | None:
    """Where ``value`` is in an earlier answer, as a reference (None when it is not)."""
    if isinstance(value, bool) or value is None or not isinstance(value, str | int | float):
        return None
    for position, step in enumerate(earlier):
        table = rows_of(step.body)
        if isinstance(table, dict):
            for column, found in table.items():
                if found == value:
                    return {"step": position, "row": None, "field": column}
            continue
        if not isinstance(table, list):
            continue
        for index, row in enumerate(table):
            if not isinstance(row, dict):
                continue
            for column, found in row.items():
                if found == value:
                    return {
                        "step": position,
                        "row": _row_selector(table, index),
                        "field": column,
                    }
    return None


class _Parameters:
    """Parameters found so far: a value met twice under the same name is one parameter."""

    def __init__(self) -> None:
        self.schemas: dict[str, Any] = {}
        self.values: dict[str, Any] = {}

    def add(self, name: str, value: Any, schema: dict[str, Any], required: bool) -> str:
        chosen, counter = name, 1
        while chosen in self.values and self.values[chosen] != value:
            counter += 1
            chosen = f"{name}_{counter}"
        if chosen not in self.values:
            self.values[chosen] = value
            self.schemas[chosen] = {**schema, "required": required, "examples": [value]}
        return chosen


def draft_sequence(
    question: str,
    outcome: QueryOutcome,
    configs: Mapping[str, ToolConfig],
) -> SequenceDraft | None:
    """The sequence an answered trace teaches (its successful calls), or None."""
    steps = outcome.ok_steps()
    if len(steps) < 2:
        return None
    parameters = _Parameters()
    template: list[dict[str, Any]] = []
    for position, step in enumerate(steps):
        config = configs.get(step.tool)
        if config is None:
            return None
        free_graphql = config.graphql is not None and config.graphql.schema_sdl is not None
        arguments: dict[str, Any] = {}
        for name, value in step.arguments.items():
            declared = config.parameters.get(name)
            if declared is None:
                return None
            if free_graphql and name in FIXED_TEXT_KEYS:
                arguments[name] = value
                continue
            if isinstance(value, dict):
                arguments[name] = {
                    key: _leaf(question, key, inner, steps[:position], parameters, None)
                    for key, inner in value.items()
                }
                continue
            arguments[name] = _leaf(question, name, value, steps[:position], parameters, declared)
        template.append({"tool": step.tool, "arguments": arguments})
    fixed: dict[str, Any] = {STEPS: template}
    if outcome.sql is not None:
        fixed[SQL] = outcome.sql.query
    tools = sequence_tools(fixed)
    name = "r_" + "_then_".join(tools)
    if parameters.schemas:
        name += "_by_" + "_".join(sorted(parameters.schemas))
    if len(name) > MAX_NAME or not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        digest = hashlib.sha256(name.encode()).hexdigest()[:8]
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", name)[: MAX_NAME - 9] + "_" + digest
    return SequenceDraft(name, tools, fixed, parameters.schemas, parameters.values)


def _leaf(
    question: str,
    name: str,
    value: Any,
    earlier: Sequence[QueryStep],
    parameters: _Parameters,
    declared: Any,
) -> Any:
    """One argument value as a parameter, a reference or itself."""
    if _mentioned(value, question):
        schema = dict(declared.schema_) if declared is not None else {"type": _json_type(value)}
        required = bool(declared.required) if declared is not None else True
        return {PARAM: parameters.add(name, value, schema, required)}
    reference = _reference(value, earlier)
    if reference is not None:
        return {REF: reference}
    if declared is not None and declared.required:
        return {PARAM: parameters.add(name, value, dict(declared.schema_), True)}
    return value


def resolve(template: Any, values: Mapping[str, Any], done: Sequence[QueryStep]) -> Any:
    """A step's arguments from its template, the caller's values and the steps before it.

    Raises:
        InvalidInputError: a reference finds nothing in the answer it names.
    """
    if isinstance(template, dict) and set(template) == {PARAM}:
        return values.get(template[PARAM], _MISSING)
    if isinstance(template, dict) and set(template) == {REF}:
        return _follow(template[REF], done)
    if isinstance(template, dict):
        resolved = {k: resolve(v, values, done) for k, v in template.items()}
        return {k: v for k, v in resolved.items() if v is not _MISSING}
    return template


_MISSING = object()


def _follow(reference: Mapping[str, Any], done: Sequence[QueryStep]) -> Any:
    step, row, column = reference["step"], reference["row"], reference["field"]
    where = f"step {step}"
    if step >= len(done):
        raise InvalidInputError(f"the sequence refers to {where}, which did not run")
    table = rows_of(done[step].body)
    if row is None:
        picked = table
    elif not isinstance(table, list) or not table:
        raise InvalidInputError(f"{where} answered no rows to take '{column}' from")
    elif isinstance(row, int):
        if row >= len(table):
            raise InvalidInputError(f"{where} answered {len(table)} rows; row {row} is missing")
        picked = table[row]
    else:
        ((kind, by),) = row.items()
        scored = [
            r
            for r in table
            if isinstance(r, dict)
            and isinstance(r.get(by), int | float)
            and not isinstance(r.get(by), bool)
        ]
        if not scored:
            raise InvalidInputError(f"{where} answered no row with a number in '{by}'")
        picked = (min if kind == "min" else max)(scored, key=lambda r: r[by])
    if not isinstance(picked, dict) or column not in picked:
        raise InvalidInputError(f"{where}'s row has no '{column}'")
    return picked[column]


async def replay(
    invoker: ToolInvoker,
    fixed: Mapping[str, Any],
    values: Mapping[str, Any],
    configs: Mapping[str, ToolConfig],
    *,
    headers: dict[str, str] | None,
    sql: str | None = None,
) -> QueryOutcome:
    """Run a sequence with ``values``: each call checked, built and sent as the agent's are.

    Raises:
        ReplayFailed: a reference found nothing, a call was refused or answered an error (the
            outcome so far is attached).
    """
    outcome = QueryOutcome()
    for position, template in enumerate(fixed[STEPS]):
        config = configs[template["tool"]]
        step = QueryStep(position, config.name, {}, "invalid")
        outcome.steps.append(step)
        try:
            step.arguments = resolve(template["arguments"], values, outcome.steps[:position])
            result = await invoker.invoke(config, step.arguments, extra_headers=headers)
        except DynamicToolsError as exc:
            step.message = exc.message
            raise ReplayFailed(f"step {position} ({config.name}): {exc.message}", outcome) from None
        step.status_code, step.body = result.status_code, result.body
        if result.failed:
            step.status, step.message = "api_error", failure_text(config.name, result)
            raise ReplayFailed(f"step {position} ({config.name}): {step.message}", outcome)
        step.status, step.rows = "ok", count_rows(result.body)
    query = sql or fixed.get(SQL)
    if isinstance(query, str):
        tables = step_tables(outcome.steps)
        try:
            rows = run_sql_query(query, tables)
        except SqlQueryError as exc:
            raise ReplayFailed(f"the SQL failed: {exc.message}", outcome) from None
        result_table = tables.get("result")
        size = len(result_table) if isinstance(result_table, list) else 1
        outcome.sql = SqlApplied(query=query, table_rows=size, rows=rows)
    return outcome


def question_pattern(question: str, parameters: Mapping[str, Any]) -> re.Pattern[str] | None:
    """The learned question with each parameter's learned value as a group, or None.

    None when a parameter's value is not in the question (it came from elsewhere) or too little
    text is left to tell questions apart.
    """
    spans: list[tuple[int, int, str]] = []
    by_length = sorted(
        parameters.items(),
        key=lambda item: -len(str((item[1].get("examples") or [""])[0])),
    )
    for name, schema in by_length:
        examples = schema.get("examples") or []
        if not examples:
            return None
        text = str(examples[0])
        match = None
        for candidate in re.finditer(
            rf"(?<![\w-]){re.escape(text)}(?![\w-])", question, flags=re.IGNORECASE
        ):
            if all(candidate.end() <= s or candidate.start() >= e for s, e, _ in spans):
                match = candidate
                break
        if match is None:
            return None
        spans.append((match.start(), match.end(), name))
    spans.sort()
    parts, cursor, literal = [], 0, ""
    for start, end, name in spans:
        literal += question[cursor:start]
        parts.append(_literal(question[cursor:start]))
        parts.append(rf"(?P<{_group(name)}>.+?)")
        cursor = end
    literal += question[cursor:]
    parts.append(_literal(question[cursor:]))
    if len(re.sub(r"[\W_]+", "", literal)) < MIN_PATTERN_TEXT:
        return None
    return re.compile("".join(parts), flags=re.IGNORECASE)


def _literal(text: str) -> str:
    words = text.split()
    if not words:
        return r"\s*" if text else ""
    inner = r"\s+".join(re.escape(w) for w in words)
    lead = r"\s*" if text[:1].isspace() else ""
    trail = r"\s*" if text[-1:].isspace() else ""
    return lead + inner + trail


def _group(name: str) -> str:
    return "p_" + re.sub(r"\W", "_", name)


def match_question(
    pattern: re.Pattern[str], question: str, parameters: Mapping[str, Any]
) -> dict[str, Any] | None:
    """The parameter values a question gives, when it matches ``pattern`` (typed), else None."""
    found = pattern.fullmatch(question.strip())
    if found is None:
        return None
    values: dict[str, Any] = {}
    for name, schema in parameters.items():
        text = found.group(_group(name)).strip()
        kind = schema.get("type")
        try:
            if kind == "integer":
                values[name] = int(text)
            elif kind == "number":
                values[name] = float(text)
            elif kind == "boolean":
                return None
            else:
                values[name] = text
        except ValueError:
            return None
    return values
