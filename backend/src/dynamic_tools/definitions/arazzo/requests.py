"""A step's request and answer: parameters, the body, and what its outputs read."""

from __future__ import annotations

import copy
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import Any

from dynamic_tools.definitions.arazzo.expressions import Answer, ExpressionProblem, Translator
from dynamic_tools.definitions.arazzo.operations import Operation, operation_of
from dynamic_tools.definitions.arazzo.parts import ArazzoConversion, Path_, as_list, identifier
from dynamic_tools.engine.loaders import MAX_DEPTH
from dynamic_tools.engine.params import JSON_TYPES
from dynamic_tools.safe_parsing import TooDeep, loads_json
from dynamic_tools.tools.credentials import environment_variable
from dynamic_tools.tools.models import JSON, ToolConfig
from dynamic_tools.tools.registry import dump_tool


class StepRequests(ABC):
    """How a workflow converter builds a step's node: its call or sub-workflow, args, outputs.

    The base of :class:`~dynamic_tools.definitions.arazzo.workflow_graph.WorkflowConverter`, which
    gives it the document, the operations, the translator, the problem log and the three
    abstract methods below.
    """

    raw: dict[str, Any]
    sources: Mapping[str, Any]
    operations: dict[tuple[str, str], Operation]
    translator: Translator
    find_workflow: Callable[[str], tuple[str, list[str]] | None]
    workflow: dict[str, Any]
    params_spec: dict[str, Any]
    """The workflow's params (engine name → spec), as converted from its inputs."""
    result: ArazzoConversion
    secret_prefix: str
    """The start of the names of the tool secrets credentials become (``<CATALOG>``)."""

    @abstractmethod
    def problem(self, path: Path_, rule: str, message: str, severity: str = "error") -> None:
        """Record a problem of the conversion at ``path`` (of the workflow)."""

    @abstractmethod
    def _criterion(self, where: Path_, criterion: Any, answer: Answer) -> dict[str, Any] | None:
        """A criterion as the engine's."""

    @abstractmethod
    def _component(self, reference: str) -> Any:
        """What ``$components.<kind>.<name>`` names."""

    def _call_step(self, step: dict[str, Any], here: Path_) -> dict[str, Any]:
        found = operation_of(step, self.raw, self.sources)
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
        own = as_list(step.get("parameters"))
        named = {self._parameter_key(p) for p in own}
        for i, parameter in enumerate(as_list(self.workflow.get("parameters"))):
            if self._parameter_key(parameter) not in named:  # a step's own overrides it
                self._parameter(("parameters", i), parameter, tool, args, for_every_step=True)
        for i, parameter in enumerate(own):
            self._parameter((*here, "parameters", i), parameter, tool, args)
        body = step.get("requestBody")
        whole = None
        if isinstance(body, dict):
            whole = self._body((*here, "requestBody"), body, tool, args)
        answer = self._request_answer(tool, args)
        node: dict[str, Any] = {"call": tool.name, "args": args}
        if whole is not None:
            node["body"] = whole
        criteria = []
        for i, criterion in enumerate(as_list(step.get("successCriteria"))):
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

    def _parameter_key(self, parameter: Any) -> tuple[str, str] | None:
        """A parameter's (name, in), references resolved: what a step's own overrides."""
        if isinstance(parameter, dict) and isinstance(parameter.get("reference"), str):
            parameter = self._component(parameter["reference"])
        if not isinstance(parameter, dict):
            return None
        return str(parameter.get("name", "")).lower(), str(parameter.get("in") or "")

    def _parameter(
        self,
        where: Path_,
        parameter: Any,
        tool: ToolConfig,
        args: dict[str, Any],
        *,
        for_every_step: bool = False,
    ) -> None:
        """One parameter into ``args``; ``for_every_step``: a workflow's, skipped where unknown."""
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
        if (
            match is None
            and self.translator.lenient
            and location is not None
            and not for_every_step
        ):
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
        if match is None and for_every_step:
            return  # a workflow's parameter is for the steps whose operations take it
        if match is None and location in ("header", None):
            tool, match = self._credential_header(where, tool, name, parameter.get("value"))
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
            return
        self._input_type((*where, "value"), args[match], tool, match)
        self._literal_outside_enum((*where, "value"), tool, match, parameter.get("value"))
        kinds = tool.parameters[match].schema_.get("type")
        literal = parameter.get("value")
        if self.translator.lenient and kinds == "array" and _literal(literal):
            args[match] = [args[match]]  # one value of a list parameter: sent as that list
            self.problem(
                (*where, "value"),
                "scalar_for_array",
                f"'{name}' takes a list: {literal!r} is sent as the list of it",
                "warning",
            )

    def _input_type(self, where: Path_, value: Any, tool: ToolConfig, name: str) -> None:
        """An input whose declared type is not the type of the text parameter it feeds.

        Arazzo does not tie them, and a path, query, header or cookie value travels as text:
        lenient mode warns and lets the input hold either (its text is read as the
        parameter's type when the call is made, ``tools/text_values.py``); strict mode names
        both types as a problem.
        """
        spec = tool.parameters[name]
        json_body = spec.location == "body" and tool.api.content_type == JSON
        if json_body or not isinstance(value, str):
            return  # a JSON body keeps its types; a form field travels as text too
        found = re.fullmatch(r"\$([A-Za-z_][A-Za-z0-9_]*)", value)
        param = self.params_spec.get(found.group(1)) if found else None
        if param is None or param.get("type") in (None, "any"):
            return
        given = JSON_TYPES.get(str(param["type"]), str(param["type"]))
        wanted = spec.schema_.get("type")
        wanted_types = {wanted} if isinstance(wanted, str) else set(wanted or ())
        if (
            not wanted_types
            or given in wanted_types
            or (given == "integer" and "number" in wanted_types)
        ):
            return
        text = (
            f"input '{value[1:]}' is declared {given}, but the {spec.location} parameter "
            f"'{name}' of {tool.api.method} {tool.api.path} takes "
            + " or ".join(sorted(wanted_types))
        )
        if not self.translator.lenient:
            self.problem(where, "input_type", text)
            return
        if given == "string" and wanted_types <= {"object", "array"}:
            # a form field holding a whole value as text (a signed JWT where the description
            # documents its claims): the field takes the text as it is
            self._change_tool(
                tool,
                lambda data: data["parameters"].update(
                    {
                        name: {
                            "anyOf": [spec.schema_, {"type": "string"}],
                            "in": "body",
                            "required": spec.required,
                        }
                    }
                ),
            )
            self.problem(where, "input_type", f"{text}: the text is sent as it is", "warning")
            return
        param["type"] = "any"
        note = f"(declared {given} in the Arazzo document; sent as text)"
        param["description"] = f"{param.get('description', '')} {note}".strip()
        self.problem(
            where,
            "input_type",
            f"{text}: it is sent as text, read as {' or '.join(sorted(wanted_types))}",
            "warning",
        )

    def _body(
        self, where: Path_, body: dict[str, Any], tool: ToolConfig, args: dict[str, Any]
    ) -> str | None:
        """The step's payload into ``args``; a whole-body expression is returned instead.

        A payload that is one expression (``$inputs.order``, a step's output) is the body as
        a whole: the call's ``body``, checked against the operation's schema when the call is
        made; ``replacements`` then set its top-level properties (as args, which win).
        """
        content_type = str(body.get("contentType") or tool.api.content_type)
        wanted = content_type.split(";", 1)[0].strip().lower()
        sent = tool.api.content_type
        if wanted != sent and not ("json" in wanted and sent == "application/json"):
            self.problem(
                (*where, "contentType"),
                "body_content_type",
                f"operation {tool.api.method} {tool.api.path} takes "
                + (f"a {sent} body" if sent else "no body")
                + f", not {content_type}: the body is sent as {sent}",
                "warning" if self.translator.lenient else "error",
            )
        payload = copy.deepcopy(body.get("payload"))
        whole: str | None = None
        overrides: dict[str, Any] = {}  # a whole body's replacements
        if isinstance(payload, str) and self.translator.is_expression(payload.strip()):
            try:
                whole = self.translator.text(payload.strip())
            except ExpressionProblem as exc:
                self.problem((*where, "payload"), "arazzo_expression", str(exc))
                return None
            payload = {}
        elif isinstance(payload, str):  # JSON text with {$...} inside its strings
            try:
                payload = loads_json(payload, MAX_DEPTH)
            except TooDeep:
                self.problem(
                    (*where, "payload"),
                    "max_depth",
                    f"the payload nests deeper than {MAX_DEPTH} levels",
                )
                return None
            except ValueError:
                self.problem(
                    (*where, "payload"),
                    "unsupported_body",
                    "a text payload must be JSON (an object of the body's properties) or one "
                    "expression (the whole body)",
                )
                return None
        for i, replacement in enumerate(as_list(body.get("replacements"))):
            if isinstance(replacement, dict) and isinstance(replacement.get("target"), str):
                target = replacement["target"]
                if whole is not None:
                    if not re.fullmatch(r"/[^/]+", target):
                        self.problem(
                            (*where, "replacements", i, "target"),
                            "replacement_target",
                            f"'{target}': a whole-body payload's replacements set its "
                            "top-level properties (/name)",
                        )
                        continue
                    name = target[1:].replace("~1", "/").replace("~0", "~")
                    overrides[name] = replacement.get("value")
                    continue
                payload = _replace(payload, target, replacement.get("value"))
                if payload is None:
                    self.problem(
                        (*where, "replacements", i, "target"),
                        "replacement_target",
                        f"'{target}' points at nothing in the payload",
                    )
                    return None
        if whole is not None:
            payload = overrides
        if not isinstance(payload, dict):
            self.problem(
                (*where, "payload"),
                "unsupported_body",
                "the payload must be an object whose keys are the operation's body "
                "properties, or one expression (the whole body)",
            )
            return None
        properties = {n for n, p in tool.parameters.items() if p.location == "body"}
        if whole is not None and not properties:
            self.problem(
                (*where, "payload"),
                "unsupported_body",
                f"operation {tool.api.method} {tool.api.path} takes no body properties, so "
                "the whole-body payload has nothing to fill",
            )
            return None
        for key, value in payload.items():
            made = str(tool.static_params.body.get(key, ""))
            if made.startswith("secret:"):  # a credential an earlier step made a tool secret
                self.problem(
                    (*where, "payload", key),
                    "credential_input",
                    f"'{key}' is sent as the tool secret {made}, not as this step's value",
                    "warning",
                )
                continue
            if key in properties and self._credential_input(
                (*where, "payload", key), tool, key, value
            ):
                continue
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
                continue
            self._input_type((*where, "payload", key), args[key], tool, key)
            self._literal_outside_enum((*where, "payload", key), tool, key, value)
        return whole

    def _credential_header(
        self, where: Path_, tool: ToolConfig, name: str, value: Any
    ) -> tuple[ToolConfig, str | None]:
        """A step that sets the credential header itself: the operation takes it from the run.

        ``Authorization: Bearer {$steps.token.outputs.access_token}`` after an OAuth token
        step (OpenAPI says an ``Authorization`` header parameter SHALL be ignored, and its
        security scheme names a secret): the value comes from the run, so the tool gets a
        header parameter of that name and sends no secret of its own in that header.
        """
        tool = self._current(tool)
        header = name.lower()
        auth = tool.auth
        own = {"authorization"} if auth.type in ("bearer", "basic") else set()
        if auth.type == "api_key" and auth.location == "header" and auth.name:
            own = {auth.name.lower()}
        runtime = isinstance(value, str) and "$" in value
        if not runtime or not (header == "authorization" or header in own):
            return tool, None

        def take_header(data: dict[str, Any]) -> None:
            data.setdefault("parameters", {})[name] = {
                "type": "string",
                "description": f"The {name} header, set by the workflow",
                "in": "header",
            }
            if header in own:
                data.pop("auth", None)

        changed = self._change_tool(tool, take_header)
        dropped = f" instead of the secret {auth.secret}" if header in own else ""
        self.problem(
            (*where, "name"),
            "credential_header",
            f"the step sets the {name} header itself (a credential of the run, e.g. a token "
            f"an earlier step got): {tool.api.method} {tool.api.path} takes it as a "
            f"parameter{dropped}",
            "warning",
        )
        return changed, name

    def _current(self, tool: ToolConfig) -> ToolConfig:
        """The tool of ``tool``'s operation as the conversion has changed it so far."""
        return next((t for t in self.result.tools if t.name == tool.name), tool)

    def _change_tool(
        self, tool: ToolConfig, change: Callable[[dict[str, Any]], None]
    ) -> ToolConfig:
        """``tool`` changed in its file form and checked again, used from now on (see below)."""
        data = dump_tool(tool)
        change(data)
        changed = ToolConfig.model_validate(data)
        self._replace_tool(changed)
        return changed

    def _replace_tool(self, changed: ToolConfig) -> None:
        """Use ``changed`` for its operation in every step from now on, and import it."""
        for place, operation in list(self.operations.items()):
            if operation.tool.name == changed.name:
                self.operations[place] = Operation(changed, operation.source)
        self.result.tools = [changed if t.name == changed.name else t for t in self.result.tools]

    def _literal_outside_enum(self, where: Path_, tool: ToolConfig, name: str, value: Any) -> None:
        """Lenient: a literal the document sends that the operation's ``enum`` lacks is taken.

        The two documents disagree (FAPI-PAR's token step sends ``authorization_code`` to a
        ``grant_type`` whose enum is ``client_credentials``); a runner sends what the Arazzo
        document says, so the tool's enum gains the value, with a warning. Strict mode leaves
        it to the workflow validator, which names it as a problem.
        """
        tool = self._current(tool)
        param = tool.parameters.get(name)
        enum = param.schema_.get("enum") if param is not None else None
        if not self.translator.lenient or not isinstance(enum, list) or not _literal(value):
            return
        if value in enum or param is None:
            return
        self._change_tool(tool, lambda data: data["parameters"][name].update(enum=[*enum, value]))
        self.problem(
            where,
            "value_outside_enum",
            f"{value!r} is not one of the values {tool.api.method} {tool.api.path} declares "
            f"for '{name}' ({', '.join(repr(e) for e in enum)}): it is sent as the Arazzo "
            "document says",
            "warning",
        )

    def _credential_input(self, where: Path_, tool: ToolConfig, key: str, value: Any) -> bool:
        """A client's credential in a body field fed by a run input becomes a secret of the tool.

        ``client_secret: $inputs.client_secret`` in a token request: a run's params are
        stored, shown and journaled, and a secret travels by reference only. The tool sends
        ``secret:<CATALOG>_CLIENT_SECRET`` in that field instead (set it as any tool secret);
        the input is no longer needed. Only an application's own credentials (``*secret*``,
        ``api_key``) are: a user's password in a login step differs from run to run.
        """
        tool = self._current(tool)
        found = re.fullmatch(r"\$inputs\.(.+)", value) if isinstance(value, str) else None
        if found is None or not _client_credential(key):
            return False
        secret = f"{self.secret_prefix}_{identifier(key).upper().strip('_')}"

        def by_reference(data: dict[str, Any]) -> None:
            data.get("parameters", {}).pop(key, None)
            static = data.setdefault("static_params", {})
            static["body"] = {**static.get("body", {}), key: f"secret:{secret}"}

        self._change_tool(tool, by_reference)
        engine = self.translator.names.params.get(found.group(1).strip())
        param = self.params_spec.get(engine or "")
        if param is not None:
            param["required"] = False
            note = f"(not used: the secret {secret} is sent instead)"
            param["description"] = f"{param.get('description', '')} {note}".strip()
        self.problem(
            where,
            "credential_input",
            f"'{key}' is a credential: a run does not carry it; {tool.api.method} "
            f"{tool.api.path} sends the tool secret secret:{secret} instead (set it as the "
            f"environment variable {environment_variable(secret)} or the file {secret} in "
            "SECRETS_DIR)",
            "warning",
        )
        return True

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
        for i, parameter in enumerate(as_list(step.get("parameters"))):
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
        for i in range(len(as_list(step.get("successCriteria")))):
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


def _literal(value: Any) -> bool:
    """Whether a value the document writes is a literal scalar (no runtime expression)."""
    return isinstance(value, str | int | float | bool) and "$" not in str(value)


def _client_credential(name: str) -> bool:
    """Whether a field holds an application's own credential (``client_secret``, ``api_key``)."""
    flat = re.sub(r"[-_.\s]", "", name.lower())
    return "secret" in flat or flat == "apikey"  # a client assertion differs per call (jti)


def quoted(text: str) -> str:
    """``text`` as a string literal of the expression language."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _loose(name: str) -> str:
    """A name compared loosely: case, ``_`` and ``-`` ignored (``pet_id`` is ``petId``)."""
    return re.sub(r"[_\-]", "", name).lower()


__all__ = ["StepRequests", "quoted"]
