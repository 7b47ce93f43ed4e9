"""One Arazzo workflow → one workflow of ours: params, steps as nodes, branches, outputs."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping
from typing import Any

from dynamic_tools.definitions.arazzo.expressions import (
    Answer,
    ExpressionProblem,
    Names,
    Translator,
    listing,
)
from dynamic_tools.definitions.arazzo.operations import Operation
from dynamic_tools.definitions.arazzo.parts import (
    MAX_LOOPS,
    MAX_RETRY_LIMIT,
    ArazzoConversion,
    Path_,
    Problem,
    as_list,
    as_mapping,
    identifier,
    resolved,
)
from dynamic_tools.definitions.arazzo.requests import StepRequests, quoted

_JSON_TYPES = {
    "string": "str",
    "integer": "int",
    "number": "float",
    "boolean": "bool",
    "array": "list",
    "object": "dict",
}
_JSONPATH_COMPARISON = re.compile(
    r"\$(?P<path>(?:\.[A-Za-z_][A-Za-z0-9_]*|\[\d+\])*)\s*(?P<op>==|!=|<=|>=|<|>)\s*"
    r"(?P<value>'[^']*'|\"[^\"]*\"|-?\d+(?:\.\d+)?|true|false|null)"
)
"""``$.name == 'x'``: a comparison some runners accept as a jsonpath criterion."""
_ANY_FAILURE = ["transport", "timeout", "4xx", "5xx", "429", "criteria"]


class WorkflowConverter(StepRequests):
    """One Arazzo workflow → one workflow of ours."""

    def __init__(
        self,
        raw: dict[str, Any],
        sources: Mapping[str, Any],
        workflow: dict[str, Any],
        here: Path_,
        operations: dict[tuple[str, str], Operation],
        result: ArazzoConversion,
        lenient: bool,
        find_workflow: Callable[[str], tuple[str, list[str]] | None],
        *,
        secret_prefix: str = "ARAZZO",
    ) -> None:
        self.find_workflow = find_workflow
        self.secret_prefix = secret_prefix
        self.raw = raw
        self.sources = sources
        self.workflow = workflow
        self.here = here
        self.operations = operations
        self.result = result
        self.components = as_mapping(raw.get("components"))
        self.steps = [s for s in as_list(workflow.get("steps")) if isinstance(s, dict)]
        self.node_ids: set[str] = set()
        self.params = self._params()
        self.step_ids = {
            str(step.get("stepId")): identifier(str(step.get("stepId")), self.node_ids)
            for step in self.steps
        }
        self.index = {str(step.get("stepId")): i for i, step in enumerate(self.steps)}
        self.depends: dict[str, str] = {}
        for dep in as_list(workflow.get("dependsOn")):
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
                others=_declared_names(raw),
            ),
            lenient=lenient,
        )
        self.dep_outputs = dep_outputs
        self.step_outputs = step_outputs
        self.graph: dict[str, Any] = {}

    def problem(self, path: Path_, rule: str, message: str, severity: str = "error") -> None:
        """Record a problem of the conversion at ``path`` (of this workflow)."""
        self.result.problems.append(Problem((*self.here, *path), rule, message, severity))

    # --- the workflow ----------------------------------------------------------------------
    def convert(self) -> dict[str, Any]:
        """The workflow of ours (problems go to the conversion's result)."""
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
        required = set(as_list(schema.get("required")))
        properties = as_mapping(schema.get("properties"))
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
        return resolved(value, self.components)

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
        for i, action in enumerate(as_list(own)):
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
                self.problem(
                    (*where, "stepId"),
                    "unknown_step",
                    f"no step '{action['stepId']}'" + listing("steps", self.step_ids),
                )
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
        for i, criterion in enumerate(as_list(criteria)):
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
                parts.append(f"{function}({context}, {quoted(converted['condition'])})")
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
            compared = _JSONPATH_COMPARISON.fullmatch(criterion["condition"].strip())
            if kind == "jsonpath" and compared and self.translator.lenient:
                given = criterion.get("context")
                context = (
                    self.translator.text(given, answer) if isinstance(given, str) else answer.body
                )
                self.problem(
                    where,
                    "jsonpath_comparison",
                    f"'{criterion['condition']}' is a comparison, not a JSONPath query: read as "
                    "the simple condition it spells on its context",
                    "warning",
                )
                path = re.sub(r"\[(\d+)\]", r".\1", compared.group("path"))
                condition = f"{context}{path} {compared.group('op')} {compared.group('value')}"
                return {"condition": condition}
            out: dict[str, Any] = {"condition": criterion["condition"], "type": kind}
            if isinstance(criterion.get("context"), str):
                out["context"] = self.translator.text(criterion["context"], answer)
            return out
        except ExpressionProblem as exc:
            self.problem(where, "arazzo_expression", str(exc))
            return None


def _declared_names(raw: dict[str, Any]) -> frozenset[str]:
    """The workflow ids, component names and source names a document declares."""
    names = {str(w.get("workflowId")) for w in as_list(raw.get("workflows")) if isinstance(w, dict)}
    names |= {
        str(s.get("name")) for s in as_list(raw.get("sourceDescriptions")) if isinstance(s, dict)
    }
    for kind, entries in as_mapping(raw.get("components")).items():
        names.add(str(kind))
        names |= {str(name) for name in as_mapping(entries)}
    return frozenset(names)


__all__ = ["WorkflowConverter"]
