"""An Arazzo document (and its OpenAPI sources) → tools and a workflow document of ours.

The operations the steps use become tools through the OpenAPI converter (only those). Each
Arazzo workflow becomes a workflow of one document, step by step:

- a step is a ``call`` node (``operationId`` / ``operationPath``) or a ``workflow`` node
  (``workflowId``), named after the step and writing its output under the same name; its
  parameters and ``requestBody`` (``payload`` with ``replacements``) become ``args``; its
  ``successCriteria`` the node's ``criteria``; its ``outputs`` the node's ``outputs``;
- the next step waits for it (``depends_on``); ``onSuccess`` actions (or the workflow's
  ``successActions``) become a branch after it (``goto`` a step or a workflow, ``end``, the
  next step otherwise);
- ``onFailure`` ``retry`` becomes ``on_error`` (``retryLimit`` retries ``retryAfter`` seconds
  apart, while its criteria hold); ``goto`` and ``end`` a fallback branch, whose default
  fails the run as Arazzo does;
- ``dependsOn`` workflows run first, as sub-workflows; ``components`` are inlined;
- workflow ``inputs`` (a JSON Schema) become params, workflow ``outputs`` the outputs.

A goto back to an earlier step is a loop (a branch case with ``max_loops``, at most
:data:`MAX_LOOPS` rounds, a warning says so). What cannot be carried over is a problem with
its path (never dropped silently): a payload that is not an object of the operation's body
properties, a body that is not JSON, a pointer segment a reference cannot name.
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dynamic_tools.engine.loaders import MAX_DEPTH
from dynamic_tools.nesting import TooDeep, loads_json
from dynamic_tools.tools.arazzo.expressions import Answer, ExpressionProblem, Names, Translator
from dynamic_tools.tools.models import ToolConfig
from dynamic_tools.tools.openapi.convert import ConversionOptions, convert_document

Path_ = tuple[str | int, ...]
_ID = re.compile(r"[^A-Za-z0-9_]")
_JSON_TYPES = {
    "string": "str",
    "integer": "int",
    "number": "float",
    "boolean": "bool",
    "array": "list",
    "object": "dict",
}
_ANY_FAILURE = ["transport", "timeout", "4xx", "5xx", "429", "criteria"]
MAX_RETRY_LIMIT = 20
MAX_LOOPS = 100
"""How many times a goto back to an earlier step may be taken (Arazzo sets no bound)."""


@dataclass
class Problem:
    """One problem of the conversion, at a path of the Arazzo document."""

    path: Path_
    rule: str
    message: str
    severity: str = "error"


@dataclass
class ArazzoConversion:
    """Tools, a workflow document (as data) and what the conversion found."""

    tools: list[ToolConfig] = field(default_factory=list)
    document: dict[str, Any] = field(default_factory=dict)
    workflow_ids: dict[str, str] = field(default_factory=dict)
    """Arazzo workflow id → the id of its workflow here."""
    problems: list[Problem] = field(default_factory=list)

    @property
    def errors(self) -> list[Problem]:
        """The problems that stop an import."""
        return [p for p in self.problems if p.severity == "error"]


@dataclass(frozen=True)
class _Operation:
    tool: ToolConfig
    source: str


def identifier(text: str, taken: set[str] | None = None) -> str:
    """``text`` as an engine identifier (``find-pet`` → ``find_pet``), unique among ``taken``."""
    name = _ID.sub("_", text)[:60] or "_"
    if name[0].isdigit():
        name = "_" + name
    if taken is not None:
        base, count = name, 2
        while name in taken:
            name = f"{base[:56]}_{count}"
            count += 1
        taken.add(name)
    return name


@dataclass
class ArazzoSource:
    """An Arazzo document another one names in ``sourceDescriptions``, read with its sources."""

    raw: dict[str, Any]
    sources: dict[str, Any] = field(default_factory=dict)
    source_urls: dict[str, str] = field(default_factory=dict)
    documents: dict[str, ArazzoSource] = field(default_factory=dict)


MAX_DOCUMENT_DEPTH = 3
"""How deep Arazzo documents may name each other (a workflow of a document's document...)."""


def convert_arazzo(
    raw: dict[str, Any],
    sources: Mapping[str, Any],
    *,
    catalog: str,
    base_urls: Mapping[str, str] | None = None,
    source_urls: Mapping[str, str] | None = None,
    lenient: bool = False,
    documents: Mapping[str, ArazzoSource] | None = None,
    base_url: str | None = None,
) -> ArazzoConversion:
    """Convert a checked Arazzo document whose OpenAPI ``sources`` were read (by name).

    ``base_urls`` gives this document's sources a base URL by name; ``base_url`` every source
    it has none for (the named documents' too).

    ``documents`` are the Arazzo documents it names (by source name): when a step calls a
    workflow there (``workflowId: $sourceDescriptions.<name>.<id>``), that document's
    workflows are converted into the same workflow document, as ``<name>_<id>``, with their
    own operations as tools.
    """
    result = ArazzoConversion()
    root = ArazzoSource(dict(raw), dict(sources), dict(source_urls or {}), dict(documents or {}))
    bundle = _Bundle(result, catalog, base_urls or {}, lenient, base_url)
    bundle.convert(root, ())
    info = _mapping(raw.get("info"))
    result.document = {
        "domain": identifier(catalog),
        "version": str(info.get("version", "1.0")),
        "description": str(info.get("title") or info.get("summary") or catalog),
        "workflows": bundle.workflows,
    }
    return result


class _Bundle:
    """The documents of one import: each converted once, their workflow ids kept apart."""

    def __init__(
        self,
        result: ArazzoConversion,
        catalog: str,
        base_urls: Mapping[str, str],
        lenient: bool,
        base_url: str | None,
    ) -> None:
        self.base_url = base_url
        self.result = result
        self.catalog = catalog
        self.base_urls = base_urls
        self.lenient = lenient
        self.workflows: dict[str, Any] = {}
        self.ids: dict[tuple[tuple[str, ...], str], tuple[str, list[str]]] = {}
        self.taken: set[str] = set()
        self.done: set[tuple[str, ...]] = set()

    def convert(self, document: ArazzoSource, key: tuple[str, ...]) -> None:
        self.done.add(key)
        raw = document.raw
        prefix = "_".join(key)
        tool_prefix = identifier("_".join((self.catalog, *key)))[:32].strip("_")
        operations = _tools(
            raw,
            document.sources,
            tool_prefix,
            self.catalog,
            {
                **({n: self.base_url for n in document.sources} if self.base_url else {}),
                **(self.base_urls if not key else {}),
            },
            document.source_urls,
            self.result,
            key,
        )
        components = _mapping(raw.get("components"))
        for workflow in _list(raw.get("workflows")):
            if isinstance(workflow, dict):
                arazzo_id = str(workflow.get("workflowId"))
                engine_id = identifier(f"{prefix}_{arazzo_id}" if key else arazzo_id, self.taken)
                inputs = _input_names(_resolved(workflow.get("inputs"), components), components)
                self.ids[(key, arazzo_id)] = (engine_id, inputs)
                self.result.workflow_ids[".".join((*key, arazzo_id))] = engine_id
        for index, workflow in enumerate(_list(raw.get("workflows"))):
            if not isinstance(workflow, dict):
                continue
            here: Path_ = (*_key_path(raw, key), "workflows", index)
            converter = _WorkflowConverter(
                raw,
                document.sources,
                workflow,
                here,
                operations,
                self.result,
                self.lenient,
                functools.partial(self.find, document, key),
            )
            engine_id = self.ids[(key, str(workflow.get("workflowId")))][0]
            self.workflows[engine_id] = converter.convert()

    def find(
        self, document: ArazzoSource, key: tuple[str, ...], text: str
    ) -> tuple[str, list[str]] | None:
        """The engine id and input names of the workflow ``text`` names from ``document``."""
        match = re.match(r"^\$sourceDescriptions\.([A-Za-z0-9_\-]+)\.(.+)$", text)
        if not match:
            return self.ids.get((key, text))
        name, workflow_id = match.group(1), match.group(2)
        other = document.documents.get(name)
        if other is None or len(key) >= MAX_DOCUMENT_DEPTH:
            return None
        child = (*key, name)
        if child not in self.done:
            self.convert(other, child)
        return self.ids.get((child, workflow_id))


def _key_path(raw: dict[str, Any], key: tuple[str, ...]) -> Path_:
    """Where a named document's problems are reported: under the source that names it."""
    return ("sourceDescriptions", *key) if key else ()


def _resolved(value: Any, components: Mapping[str, Any]) -> Any:
    """A ``$ref: '#/components/...'`` replaced by what it names (once, no cycles)."""
    if isinstance(value, dict) and isinstance(value.get("$ref"), str):
        ref = value["$ref"]
        if ref.startswith("#/components/"):
            found: Any = components
            for part in ref[len("#/components/") :].split("/"):
                found = found.get(part) if isinstance(found, dict) else None
            return copy.deepcopy(found) if isinstance(found, dict) else {}
    return value


def _input_names(schema: Any, components: Mapping[str, Any]) -> list[str]:
    props = schema.get("properties") if isinstance(schema, dict) else None
    return [str(k) for k in props] if isinstance(props, dict) else []


# --- tools ---------------------------------------------------------------------------------
def _tools(
    raw: dict[str, Any],
    sources: Mapping[str, Any],
    prefix: str,
    catalog: str,
    base_urls: Mapping[str, str],
    source_urls: Mapping[str, str],
    result: ArazzoConversion,
    key: tuple[str, ...] = (),
) -> dict[tuple[str, str], _Operation]:
    """The tools of the operations the steps use, keyed by (source, operationId or METHOD path)."""
    wanted: dict[str, list[str]] = {}
    for _, step in _all_steps(raw):
        found = _operation_of(step, raw, sources)
        if found is not None:
            wanted.setdefault(found[0], []).append(found[1])
    found_ops: dict[tuple[str, str], _Operation] = {}
    several = len(wanted) > 1
    where: Path_ = ("sourceDescriptions", *key)
    for source, include in wanted.items():
        source_prefix = identifier(f"{prefix}_{source}" if several else prefix)[:32].strip("_")
        conversion = convert_document(
            sources[source],
            ConversionOptions(
                catalog=catalog,
                prefix=source_prefix,
                base_url=base_urls.get(source),
                document_url=source_urls.get(source),
                include=sorted(set(include)),
            ),
        )
        for problem in conversion.violations:
            result.problems.append(Problem(where, "source_invalid", f"{source}: {problem.message}"))
        for problem in conversion.warnings:
            result.problems.append(
                Problem(
                    where,
                    "source_warning",
                    f"{source}: {problem.path}: {problem.message}",
                    "warning",
                )
            )
        for tool, info in zip(conversion.tools, conversion.operations, strict=True):
            result.tools.append(tool)
            op = _Operation(tool, source)
            if info.operation_id:
                found_ops[(source, info.operation_id)] = op
            found_ops[(source, f"{info.method.upper()} {info.path}")] = op
    return found_ops


def _operation_of(
    step: dict[str, Any], raw: dict[str, Any], sources: Mapping[str, Any]
) -> tuple[str, str] | None:
    """(source name, operationId or ``METHOD /path``) of a step, when it calls an operation."""
    names = [
        str(s.get("name")) for s in _list(raw.get("sourceDescriptions")) if isinstance(s, dict)
    ]
    if isinstance(step.get("operationId"), str):
        text = step["operationId"]
        match = re.match(r"^\$sourceDescriptions\.([A-Za-z0-9_\-]+)\.(.+)$", text)
        if match:
            names, text = [match.group(1)], match.group(2)
        for name in names:
            if name in sources and text in _operation_ids(sources[name]):
                return name, text
        lowered = text.lower()  # a case-only mismatch was a warning when checked
        for name in names:
            for op_id in _operation_ids(sources.get(name)):
                if op_id.lower() == lowered:
                    return name, op_id
        return None
    if isinstance(step.get("operationPath"), str):
        match = re.match(
            r"^\{\$sourceDescriptions\.([A-Za-z0-9_\-]+)\.url\}#/paths/([^/]+)/([a-z]+)$",
            step["operationPath"],
        ) or re.match(  # a shortcut some runners accept: <source>#/paths/...
            r"^([A-Za-z0-9_\-]+)#/paths/([^/]+)/([a-z]+)$", step["operationPath"]
        )
        if match:
            path = match.group(2).replace("~1", "/").replace("~0", "~")
            return match.group(1), f"{match.group(3).upper()} {path}"
    return None


def _operation_ids(document: Any) -> set[str]:
    found: set[str] = set()
    paths = document.get("paths") if isinstance(document, dict) else None
    for item in (paths or {}).values() if isinstance(paths, dict) else ():
        if isinstance(item, dict):
            for op in item.values():
                if isinstance(op, dict) and isinstance(op.get("operationId"), str):
                    found.add(op["operationId"])
    return found


# --- workflows -----------------------------------------------------------------------------
class _WorkflowConverter:
    """One Arazzo workflow → one workflow of ours."""

    def __init__(
        self,
        raw: dict[str, Any],
        sources: Mapping[str, Any],
        workflow: dict[str, Any],
        here: Path_,
        operations: dict[tuple[str, str], _Operation],
        result: ArazzoConversion,
        lenient: bool,
        find_workflow: Callable[[str], tuple[str, list[str]] | None],
    ) -> None:
        self.find_workflow = find_workflow
        self.raw = raw
        self.sources = sources
        self.workflow = workflow
        self.here = here
        self.operations = operations
        self.result = result
        self.components = _mapping(raw.get("components"))
        self.steps = [s for s in _list(workflow.get("steps")) if isinstance(s, dict)]
        self.node_ids: set[str] = set()
        self.params = self._params()
        self.step_ids = {
            str(step.get("stepId")): identifier(str(step.get("stepId")), self.node_ids)
            for step in self.steps
        }
        self.index = {str(step.get("stepId")): i for i, step in enumerate(self.steps)}
        self.depends: dict[str, str] = {}
        for dep in _list(workflow.get("dependsOn")):
            found = self.find_workflow(str(dep))
            if found is not None:
                self.depends[str(dep)] = identifier(f"after_{found[0]}", self.node_ids)
        output_taken = set(self.params.values())
        step_outputs = {s: identifier(n, output_taken) for s, n in self.step_ids.items()}
        dep_outputs = {d: identifier(f"{n}_outputs", output_taken) for d, n in self.depends.items()}
        self.translator = Translator(
            Names(
                params=self.params,
                step_outputs=step_outputs,
                workflow_outputs=dep_outputs,
                output_names={
                    str(s.get("stepId")): {
                        k: identifier(k) for k in (s.get("outputs") or {}) if isinstance(k, str)
                    }
                    for s in self.steps
                },
            ),
            lenient=lenient,
        )
        self.dep_outputs = dep_outputs
        self.step_outputs = step_outputs
        self.graph: dict[str, Any] = {}

    def problem(self, path: Path_, rule: str, message: str, severity: str = "error") -> None:
        self.result.problems.append(Problem((*self.here, *path), rule, message, severity))

    # --- the workflow ----------------------------------------------------------------------
    def convert(self) -> dict[str, Any]:
        description = self.workflow.get("description") or self.workflow.get("summary") or ""
        out: dict[str, Any] = {"description": str(description).strip()}
        if self.params_spec:
            out["params"] = self.params_spec
        for dep, node_id in self.depends.items():
            engine_id, inputs = self.find_workflow(dep) or ("", [])
            self.graph[node_id] = {
                "workflow": engine_id,
                "args": self._pass_inputs(inputs),
                "output": self.dep_outputs[dep],
            }
        gotos = self._goto_targets()
        for index, step in enumerate(self.steps):
            self._step(index, step, gotos)
        out["graph"] = self.graph
        outputs = self.workflow.get("outputs")
        if isinstance(outputs, dict):
            values: dict[str, Any] = {}
            for key, value in outputs.items():
                try:
                    values[str(key)] = self.translator.value(value)
                except ExpressionProblem as exc:
                    self.problem(("outputs", key), "arazzo_expression", str(exc))
            out["outputs"] = values
        for shortcut in dict.fromkeys(self.translator.shortcuts):
            self.problem((), "lenient_expression", shortcut, "warning")
        return out

    # --- inputs ----------------------------------------------------------------------------
    def _params(self) -> dict[str, str]:
        schema = self._resolve(self.workflow.get("inputs"))
        self.params_spec: dict[str, Any] = {}
        names: dict[str, str] = {}
        if not isinstance(schema, dict):
            return names
        required = set(_list(schema.get("required")))
        properties = _mapping(schema.get("properties"))
        for name, prop in properties.items():
            engine_name = identifier(str(name), self.node_ids)
            names[str(name)] = engine_name
            prop = self._resolve(prop) if isinstance(prop, dict) else {}
            spec: dict[str, Any] = {
                "type": _JSON_TYPES.get(str(prop.get("type")), "any"),
                "required": name in required,
            }
            for key in ("default", "description", "format", "enum", "example"):
                if key in prop:
                    spec[key] = prop[key]
            self.params_spec[engine_name] = spec
        return names

    def _resolve(self, value: Any) -> Any:
        """A ``$ref: '#/components/...'`` replaced by what it names (once, no cycles)."""
        return _resolved(value, self.components)

    def _component(self, reference: str) -> Any:
        match = re.match(r"^\$components\.([A-Za-z]+)\.([A-Za-z0-9_.\-]+)$", reference)
        if not match:
            return None
        kind = self.components.get(match.group(1))
        return copy.deepcopy(kind.get(match.group(2))) if isinstance(kind, dict) else None

    # --- steps -----------------------------------------------------------------------------
    def _goto_targets(self) -> set[str]:
        targets: set[str] = set()
        for index, step in enumerate(self.steps):
            for where, action in self._actions(step, "onSuccess") + self._actions(
                step, "onFailure"
            ):
                target = action.get("stepId")
                if action.get("type") == "goto" and isinstance(target, str):
                    if target in self.index and self.index[target] <= index:
                        self.problem(
                            (*where, "stepId"),
                            "loop",
                            f"goto '{target}' goes back to an earlier step: a loop, run at "
                            f"most {MAX_LOOPS} times (then the run fails)",
                            "warning",
                        )
                    targets.add(target)
        return targets

    def _actions(self, step: dict[str, Any], key: str) -> list[tuple[Path_, dict[str, Any]]]:
        index = self.steps.index(step)
        own = step.get(key)
        default_key = "successActions" if key == "onSuccess" else "failureActions"
        path_key: Path_ = ("steps", index, key)
        if own is None:
            own = self.workflow.get(default_key)
            path_key = (default_key,)
        found = []
        for i, action in enumerate(_list(own)):
            if isinstance(action, dict) and isinstance(action.get("reference"), str):
                action = self._component(action["reference"]) or {}
            if isinstance(action, dict):
                found.append(((*path_key, i), action))
        return found

    def _step(self, index: int, step: dict[str, Any], gotos: set[str]) -> None:
        step_id = str(step.get("stepId"))
        node_id = self.step_ids[step_id]
        here: Path_ = ("steps", index)
        node: dict[str, Any]
        if isinstance(step.get("workflowId"), str):
            node = self._workflow_step(step, here)
        else:
            node = self._call_step(step, here)
        node["output"] = self.step_outputs[step_id]
        if step.get("description"):
            node["description"] = str(step["description"]).strip()
        waits = [self.depends[d] for d in self.depends] if index == 0 else []
        if index > 0:
            previous = self.steps[index - 1]
            previous_id = self.step_ids[str(previous.get("stepId"))]
            if self._actions(previous, "onSuccess") or step_id in gotos:
                self._ensure_next(previous, previous_id, node_id)
            else:
                waits.append(previous_id)
        if waits:
            node["depends_on"] = waits
        self.graph[node_id] = node
        self._success_branch(index, step, node_id)
        self._failure_branch(step, node_id, node)

    def _ensure_next(self, step: dict[str, Any], step_node: str, next_node: str) -> None:
        branch_id = f"{step_node}__next"
        if branch_id not in self.graph:
            self.graph[branch_id] = {
                "type": "branch",
                "depends_on": [step_node],
                "on": [{"goto": next_node}],
            }

    def _success_branch(self, index: int, step: dict[str, Any], node_id: str) -> None:
        actions = self._actions(step, "onSuccess")
        if not actions:
            return
        out = self.graph[node_id]["output"]
        answer = Answer(status=f"${out}._status", body=f"${out}._body", headers=f"${out}._headers")
        cases: list[dict[str, Any]] = []
        for where, action in actions:
            case = self._case(where, action, answer, node_id)
            if case is not None:
                cases.append(case)
        self._keep_answer(node_id, out, " ".join(str(c.get("when") or "") for c in cases))
        following = self.steps[index + 1] if index + 1 < len(self.steps) else None
        branch: dict[str, Any] = {"type": "branch", "depends_on": [node_id], "on": cases}
        if following is not None:
            branch["default"] = self.step_ids[str(following.get("stepId"))]
        if not cases:
            branch["on"] = [{"goto": branch.pop("default")}] if "default" in branch else []
        if branch["on"]:
            self.node_ids.add(f"{node_id}__next")
            self.graph[f"{node_id}__next"] = branch

    def _keep_answer(self, node_id: str, out: str, conditions: str) -> None:
        """Add what the success branch reads of the answer to the call's outputs.

        As ``_status``, ``_body`` and ``_headers``: a branch runs after the call and reads
        only its output.
        """
        node = self.graph[node_id]
        if "call" not in node:
            return
        extra: dict[str, Any] = {}
        if f"${out}._status" in conditions:
            extra["_status"] = "$status"
        if f"${out}._body" in conditions:
            extra["_body"] = "$result"
        headers = sorted(
            set(re.findall(rf"\${re.escape(out)}\._headers\.([A-Za-z0-9_]+)", conditions))
        )
        if headers:
            extra["_headers"] = {h: f"$headers.{h}" for h in headers}
        if extra:
            node["outputs"] = {**(node.get("outputs") or {}), **extra}

    def _failure_branch(self, step: dict[str, Any], node_id: str, node: dict[str, Any]) -> None:
        actions = self._actions(step, "onFailure")
        failed = Answer(status="$error.status_code", body="$error.body", headers=None)
        cases: list[dict[str, Any]] = []
        retried = False
        for where, action in actions:
            if action.get("type") == "retry":
                again = action.get("stepId", step.get("stepId"))
                if again != step.get("stepId") or action.get("workflowId") is not None:
                    self.problem(
                        where,
                        "retry_elsewhere",
                        "a retry runs this step again; retrying another step or a workflow is "
                        "not imported (use a goto)",
                    )
                    continue
                if retried:
                    self.problem(where, "retry_repeated", "only the first retry action is used")
                    continue
                retried = True
                self._retry(where, action, node)
                continue
            case = self._case(where, action, failed, node_id, failure=True)
            if case is not None:
                cases.append(case)
        if not any(c.get("goto") for c in cases):
            return  # ending on failure is what a failed step does anyway
        end_id = f"{node_id}__failed_end"
        self.graph[end_id] = {
            "type": "error",
            "message": f"step {step.get('stepId')} failed and no onFailure action applies",
        }
        for case in cases:
            if case.pop("end", False):
                case["goto"] = end_id
        branch_id = f"{node_id}__failed"
        self.graph[branch_id] = {"type": "branch", "on": cases, "default": end_id}
        node.setdefault("on_error", {})["fallback"] = branch_id

    def _retry(self, where: Path_, action: dict[str, Any], node: dict[str, Any]) -> None:
        limit = action.get("retryLimit", 1)
        limit = limit if isinstance(limit, int) and limit >= 0 else 1
        if limit > MAX_RETRY_LIMIT:
            self.problem(
                (*where, "retryLimit"),
                "retry_limit",
                f"retryLimit {limit} is more than {MAX_RETRY_LIMIT}; {MAX_RETRY_LIMIT} are made",
                "warning",
            )
            limit = MAX_RETRY_LIMIT
        after = action.get("retryAfter", 0)
        after = after if isinstance(after, int | float) and after >= 0 else 0
        on_error: dict[str, Any] = {
            "retry": limit,
            "delay": round(after * 1000),
            "retry_on": list(_ANY_FAILURE),
        }
        condition = self._criteria_condition(where, action.get("criteria"), Answer())
        if condition:
            on_error["retry_if"] = condition
        node.setdefault("on_error", {}).update(on_error)

    def _case(
        self,
        where: Path_,
        action: dict[str, Any],
        answer: Answer,
        node_id: str,
        *,
        failure: bool = False,
    ) -> dict[str, Any] | None:
        kind = action.get("type")
        case: dict[str, Any] = {}
        condition = self._criteria_condition(where, action.get("criteria"), answer)
        if condition:
            case["when"] = condition
        if kind == "end":
            case["end"] = True
            return case
        if kind != "goto":
            self.problem((*where, "type"), "action_type", f"action type '{kind}' is not known")
            return None
        if isinstance(action.get("stepId"), str):
            target = self.step_ids.get(action["stepId"])
            if target is None:
                self.problem((*where, "stepId"), "unknown_step", f"no step '{action['stepId']}'")
                return None
            case["goto"] = target
            here_index = self.index.get(self._step_of(node_id), -1)
            if self.index[action["stepId"]] <= here_index:
                case["max_loops"] = MAX_LOOPS
            return case
        found = self.find_workflow(str(action.get("workflowId")))
        if found is None:
            self.problem(
                (*where, "workflowId"),
                "unknown_workflow",
                f"goto names no workflow of this document ('{action.get('workflowId')}')",
            )
            return None
        workflow_id, inputs = found
        then_id = identifier(f"{node_id}__then_{workflow_id}", self.node_ids)
        self.graph[then_id] = {"workflow": workflow_id, "args": self._pass_inputs(inputs)}
        case["goto"] = then_id
        return case

    def _step_of(self, node_id: str) -> str:
        """The Arazzo step id of a step's node id."""
        return next((s for s, n in self.step_ids.items() if n == node_id), "")

    def _pass_inputs(self, inputs: list[str]) -> dict[str, Any]:
        """This workflow's inputs of the same name as another workflow's, passed on."""
        return {name: f"${self.params[name]}" for name in inputs if name in self.params}

    def _criteria_condition(self, where: Path_, criteria: Any, answer: Answer) -> str | None:
        parts = []
        for i, criterion in enumerate(_list(criteria)):
            converted = self._criterion((*where, "criteria", i), criterion, answer)
            if converted is None:
                continue
            kind = converted.get("type", "simple")
            if kind != "simple":
                context = converted.get("context") or answer.body
                if not re.fullmatch(r"\$[A-Za-z0-9_.]+", context):
                    self.problem(
                        (*where, "criteria", i, "context"),
                        "action_criterion",
                        "an action's criterion reads one value as its context",
                    )
                    continue
                function = {"regex": "matches"}.get(kind, kind)
                parts.append(f"{function}({context}, {_quoted(converted['condition'])})")
                continue
            parts.append(f"({converted['condition']})")
        return " && ".join(parts) or None

    def _criterion(self, where: Path_, criterion: Any, answer: Answer) -> dict[str, Any] | None:
        if not isinstance(criterion, dict) or not isinstance(criterion.get("condition"), str):
            return None
        kind = criterion.get("type", "simple")
        kind = kind.get("type") if isinstance(kind, dict) else kind
        try:
            if kind in (None, "simple"):
                return {"condition": self.translator.condition(criterion["condition"], answer)}
            out: dict[str, Any] = {"condition": criterion["condition"], "type": kind}
            if isinstance(criterion.get("context"), str):
                out["context"] = self.translator.text(criterion["context"], answer)
            return out
        except ExpressionProblem as exc:
            self.problem(where, "arazzo_expression", str(exc))
            return None

    # --- a step's request ------------------------------------------------------------------
    def _call_step(self, step: dict[str, Any], here: Path_) -> dict[str, Any]:
        found = _operation_of(step, self.raw, self.sources)
        op = self.operations.get(found) if found is not None else None
        if op is None:
            what = step.get("operationId") or step.get("operationPath")
            self.problem(
                here,
                "operation_not_converted",
                f"operation '{what}' did not become a tool (see the source's warnings)",
            )
            return {"call": "rest_call", "args": {}}
        tool = op.tool
        args: dict[str, Any] = {}
        for i, parameter in enumerate(_list(step.get("parameters"))):
            self._parameter((*here, "parameters", i), parameter, tool, args)
        body = step.get("requestBody")
        if isinstance(body, dict):
            self._body((*here, "requestBody"), body, tool, args)
        answer = self._request_answer(tool, args)
        node: dict[str, Any] = {"call": tool.name, "args": args}
        criteria = []
        for i, criterion in enumerate(_list(step.get("successCriteria"))):
            converted = self._criterion((*here, "successCriteria", i), criterion, answer)
            if converted is not None:
                criteria.append(converted)
        if criteria:
            node["criteria"] = criteria
        outputs = step.get("outputs")
        if isinstance(outputs, dict) and outputs:
            node["outputs"] = self._outputs(here, outputs, answer)
        return node

    def _request_answer(self, tool: ToolConfig, args: dict[str, Any]) -> Answer:
        def request(where: str, name: str) -> str:
            value = args.get(name)
            if isinstance(value, str) and value.startswith("$"):
                return value
            raise ExpressionProblem(
                f"'$request.{where}.{name}' is not an expression the step sends"
            )

        url = tool.api.base_url + re.sub(
            r"\{([^{}]+)\}",
            lambda m: str(args.get(m.group(1), "{" + m.group(1) + "}")),
            tool.api.path,
        )
        return Answer(request=request, method=tool.api.method, url=url)

    def _parameter(
        self, where: Path_, parameter: Any, tool: ToolConfig, args: dict[str, Any]
    ) -> None:
        if not isinstance(parameter, dict):
            return
        if isinstance(parameter.get("reference"), str):
            base = self._component(parameter["reference"])
            if not isinstance(base, dict):
                self.problem(
                    where, "unknown_component", f"'{parameter['reference']}' is not defined"
                )
                return
            parameter = {**base, **({"value": parameter["value"]} if "value" in parameter else {})}
        name = str(parameter.get("name", ""))
        location = parameter.get("in")
        match = None
        for param_name, spec in tool.parameters.items():
            same_place = location is None or spec.location == location
            if same_place and (
                param_name == name
                or (spec.location == "header" and param_name.lower() == name.lower())
            ):
                match = param_name
                break
        if match is None and self.translator.lenient:
            wanted = _loose(name)
            for param_name, spec in tool.parameters.items():
                if _loose(param_name) == wanted and (location is None or spec.location == location):
                    match = param_name
                    self.problem(
                        (*where, "name"),
                        "parameter_name",
                        f"'{name}' is taken as the operation's parameter '{param_name}'",
                        "warning",
                    )
                    break
        if match is None and self.translator.lenient and location is not None:
            free = [
                n
                for n, spec in tool.parameters.items()
                if spec.location == location and n not in args
            ]
            if len(free) == 1:  # the operation's only other parameter there
                match = free[0]
                self.problem(
                    (*where, "name"),
                    "parameter_name",
                    f"'{name}' is taken as the operation's only {location} parameter '{match}'",
                    "warning",
                )
        if match is None:
            self.problem(
                (*where, "name"),
                "unknown_parameter",
                f"operation {tool.api.method} {tool.api.path} has no parameter '{name}'"
                + (f" in {location}" if location else ""),
                "warning" if self.translator.lenient else "error",
            )
            return
        try:
            args[match] = self.translator.value(parameter.get("value"))
        except ExpressionProblem as exc:
            self.problem((*where, "value"), "arazzo_expression", str(exc))

    def _body(
        self, where: Path_, body: dict[str, Any], tool: ToolConfig, args: dict[str, Any]
    ) -> None:
        content_type = str(body.get("contentType") or "application/json")
        if "json" not in content_type:
            self.problem(
                (*where, "contentType"),
                "unsupported_body",
                f"a {content_type} body cannot be sent by a tool (JSON objects only)",
            )
            return
        payload = copy.deepcopy(body.get("payload"))
        if isinstance(payload, str):  # JSON text with {$...} inside its strings
            try:
                payload = loads_json(payload, MAX_DEPTH)
            except TooDeep:
                self.problem(
                    (*where, "payload"),
                    "max_depth",
                    f"the payload nests deeper than {MAX_DEPTH} levels",
                )
                return
            except ValueError:
                self.problem(
                    (*where, "payload"),
                    "unsupported_body",
                    "a text payload must be JSON (an object of the body's properties)",
                )
                return
        for i, replacement in enumerate(_list(body.get("replacements"))):
            if isinstance(replacement, dict) and isinstance(replacement.get("target"), str):
                payload = _replace(payload, replacement["target"], replacement.get("value"))
                if payload is None:
                    self.problem(
                        (*where, "replacements", i, "target"),
                        "replacement_target",
                        f"'{replacement['target']}' points at nothing in the payload",
                    )
                    return
        if not isinstance(payload, dict):
            self.problem(
                (*where, "payload"),
                "unsupported_body",
                "the payload must be an object whose keys are the operation's body properties",
            )
            return
        properties = {n for n, p in tool.parameters.items() if p.location == "body"}
        for key, value in payload.items():
            if key not in properties:
                self.problem(
                    (*where, "payload", key),
                    "unknown_body_property",
                    f"the operation's body has no property '{key}'",
                    "warning" if self.translator.lenient else "error",
                )
                continue
            try:
                args[key] = self.translator.value(value)
            except ExpressionProblem as exc:
                self.problem((*where, "payload", key), "arazzo_expression", str(exc))

    def _outputs(self, here: Path_, outputs: dict[str, Any], answer: Answer) -> dict[str, Any]:
        converted: dict[str, Any] = {}
        for key, value in outputs.items():
            try:
                converted[identifier(str(key))] = self.translator.value(value, answer)
            except ExpressionProblem as exc:
                self.problem((*here, "outputs", key), "arazzo_expression", str(exc))
        return converted

    def _workflow_step(self, step: dict[str, Any], here: Path_) -> dict[str, Any]:
        target = str(step["workflowId"])
        found = self.find_workflow(target)
        if found is None:
            self.problem(
                (*here, "workflowId"),
                "unknown_workflow",
                f"'{target}' names no workflow that could be read (this document's, or one of "
                "an Arazzo source description)",
            )
            return {"workflow": "missing", "args": {}}
        workflow_id, inputs = found
        params = {name: identifier(name) for name in inputs}
        args: dict[str, Any] = {}
        for i, parameter in enumerate(_list(step.get("parameters"))):
            if not isinstance(parameter, dict):
                continue
            name = str(parameter.get("name", ""))
            if name not in params:
                self.problem(
                    (*here, "parameters", i, "name"),
                    "unknown_input",
                    f"workflow '{target}' has no input '{name}'",
                )
                continue
            try:
                args[params[name]] = self.translator.value(parameter.get("value"))
            except ExpressionProblem as exc:
                self.problem((*here, "parameters", i, "value"), "arazzo_expression", str(exc))
        node: dict[str, Any] = {"workflow": workflow_id, "args": args}
        for i in range(len(_list(step.get("successCriteria")))):
            self.problem(
                (*here, "successCriteria", i),
                "workflow_step_criteria",
                "a workflow step succeeds when its workflow does; its criteria are not checked",
                "warning",
            )
        outputs = step.get("outputs")
        if isinstance(outputs, dict) and outputs:
            node["outputs"] = self._outputs(here, outputs, Answer(body="$result"))
        return node


def _replace(payload: Any, pointer: str, value: Any) -> Any:
    """``payload`` with the value at pointer ``pointer`` set to ``value`` (None: no such place)."""
    if pointer in ("", "/"):
        return value
    parts = [p.replace("~1", "/").replace("~0", "~") for p in pointer.lstrip("/").split("/")]
    current = payload
    for part in parts[:-1]:
        if isinstance(current, dict) and part in current:
            current = current[part]
        elif isinstance(current, list) and part.isdigit() and int(part) < len(current):
            current = current[int(part)]
        else:
            return None
    last = parts[-1]
    if isinstance(current, dict):
        current[last] = value
    elif isinstance(current, list) and last.isdigit() and int(last) < len(current):
        current[int(last)] = value
    else:
        return None
    return payload


def _quoted(text: str) -> str:
    """``text`` as a string literal of the expression language."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _loose(name: str) -> str:
    """A name compared loosely: case, ``_`` and ``-`` ignored (``pet_id`` is ``petId``)."""
    return re.sub(r"[_\-]", "", name).lower()


def _all_steps(raw: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [
        (str(workflow.get("workflowId")), step)
        for workflow in _list(raw.get("workflows"))
        if isinstance(workflow, dict)
        for step in _list(workflow.get("steps"))
        if isinstance(step, dict)
    ]


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


__all__ = ["ArazzoConversion", "Problem", "convert_arazzo", "identifier"]
