"""One OpenAPI operation → the data of one :class:`ToolConfig`.

- Parameters: path-level and operation-level ones merged (the operation's win); ``path``,
  ``query``, ``header`` and ``cookie`` parameters keep their place (cookies are sent in one
  ``Cookie`` header).
- The request body's media type: JSON (``application/json``, ``*+json``) when offered, else
  ``application/x-www-form-urlencoded``, else ``multipart/form-data`` — the tool's
  ``api.content_type`` (README, "Tool configs"). Its schema must be an object: each property
  becomes an ``in: body`` parameter (``readOnly`` ones left out); a form's properties are its
  fields, a multipart body's its parts (a ``format: binary`` property a file). Properties of
  ``allOf`` parts are merged; those of ``oneOf`` / ``anyOf`` branches too, required only when
  every branch requires them. OpenAPI's ``encoding`` is honoured where a tool can: a file
  part's ``contentType`` becomes its ``contentMediaType``; what a tool sends otherwise (another
  part type, part headers, a form style other than ``form`` with ``explode``) warns
  ``encoding_not_honoured``. Any other body (an array, a free-form object, XML, raw bytes)
  cannot be sent by a tool: the operation is skipped when the body is required, else the
  body is dropped; both warn.
- ``output_schema``: the JSON schema of the first 2xx response that has one.
- ``hints.category``: the first tag. ``annotations``: derived from the method.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from dynamic_tools.tools.credentials import SECRET_NAME
from dynamic_tools.tools.file_fields import is_binary
from dynamic_tools.tools.models import FORM, JSON, MULTIPART, AuthSpec
from dynamic_tools.tools.openapi.issues import IssueLog, as_dict, pointer
from dynamic_tools.tools.openapi.refs import (
    MAX_DOCUMENT_BYTES,
    MAX_DOCUMENT_REFS,
    MAX_LEVELS,
    MAX_SCHEMA_BYTES,
    SchemaResolver,
)
from dynamic_tools.tools.openapi.security import SECRET_EXTENSION

SUPPORTED_METHODS = frozenset({"get", "post", "put", "patch", "delete"})


class Skip(Exception):
    """The operation cannot be represented as a tool; ``rule`` and message say why."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(message)
        self.rule = rule
        self.message = message


@dataclass(frozen=True)
class Limits:
    """Sizes that keep generated tools readable, and a conversion's cost bounded.

    Attributes:
        input_depth: references inlined on one path of an input schema; deeper ones are
            summarised.
        output_depth: the same for output schemas.
        description_chars: a tool description is cut to this length.
        max_schema_bytes: one inlined schema (a parameter, the body, the output) may take
            this many bytes as JSON (GitHub's largest: 163 KB); more refuses the document.
        max_document_bytes: all the inlined schemas of a document together (GitHub's 1,205
            tools: 7.9 MB); more refuses the document.
        max_document_refs: references inlined in a whole document, each copy counted.
        max_schema_levels: schema nesting once inlined; a deeper operation is skipped.
    """

    input_depth: int = 8
    output_depth: int = 3
    description_chars: int = 1000
    max_schema_bytes: int = MAX_SCHEMA_BYTES
    max_document_bytes: int = MAX_DOCUMENT_BYTES
    max_document_refs: int = MAX_DOCUMENT_REFS
    max_schema_levels: int = MAX_LEVELS


def _media_base(mime: str) -> str:
    """A media type without its parameters, in lower case (``Text/Plain; x=y``: ``text/plain``)."""
    return mime.split(";", 1)[0].strip().lower()


def is_json(mime: object) -> bool:
    """Whether a media type carries JSON (``application/json``, ``*+json``, ``*/*``)."""
    if not isinstance(mime, str):
        return False
    base = _media_base(mime)
    return base in ("application/json", "*/*", "application/*") or base.endswith("+json")


class OperationBuilder:
    """Builds tool data for the operations of one document."""

    def __init__(self, resolver: SchemaResolver, log: IssueLog, limits: Limits) -> None:
        self.resolver = resolver
        self.log = log
        self.limits = limits

    def build(
        self,
        *,
        name: str,
        method: str,
        path: str,
        where: str,
        op: dict[str, Any],
        item: dict[str, Any],
        base_url: str,
        auth: AuthSpec,
        prefer: str | None = None,
    ) -> dict[str, Any]:
        """The tool's data (not yet validated); raises :class:`Skip` when it cannot be one."""
        if method not in SUPPORTED_METHODS:
            raise Skip("unsupported_method", f"{method.upper()} operations are not supported")
        parameters = self._parameters(op, item, path, where)
        secret_fields: dict[str, str] = {}  # the body fields it sends a tool secret in
        content_type = self._body(op, method, where, parameters, secret_fields, prefer)
        tags = op.get("tags")
        api: dict[str, Any] = {"method": method.upper(), "base_url": base_url, "path": path}
        if content_type not in (None, JSON):
            api["content_type"] = content_type
        data: dict[str, Any] = {
            "name": name,
            "description": self._description(op, method, path),
            "api": api,
            "parameters": parameters,
        }
        if auth.type != "none":
            data["auth"] = auth.model_dump(by_alias=True, exclude_defaults=True)
        if secret_fields:
            data["static_params"] = {"body": secret_fields}
        output = self._output(op, where)
        if output is not None:
            data["output_schema"] = output
        if isinstance(tags, list) and tags and isinstance(tags[0], str):
            data["hints"] = {"category": tags[0]}
        return data

    # --- parameters ------------------------------------------------------------------------
    def _parameters(
        self, op: dict[str, Any], item: dict[str, Any], path: str, where: str
    ) -> dict[str, dict[str, Any]]:
        merged: dict[tuple[str, str], dict[str, Any]] = {}
        raw_list = [*_as_list(item.get("parameters")), *_as_list(op.get("parameters"))]
        for index, raw in enumerate(raw_list):
            param = self.resolver.deref(raw, f"{where}/parameters/{index}")
            if not isinstance(param, dict):
                raise Skip("unresolved_parameter", "a parameter reference does not resolve")
            merged[(str(param.get("name", "")), str(param.get("in", "")))] = param
        out: dict[str, dict[str, Any]] = {}
        for (name, location), param in merged.items():
            if not name:
                raise Skip("invalid_parameter", "a parameter has no name")
            if location not in ("path", "query", "header", "cookie"):
                raise Skip(
                    "invalid_parameter", f"parameter '{name}' has an unknown 'in': {location!r}"
                )
            if location == "header" and name.lower() in _IGNORED_HEADERS:
                self.log.add(
                    where,
                    "ignored_header_parameter",
                    f"header parameter '{name}' is ignored, as OpenAPI says (the body's type, "
                    "the accepted answers and the auth are the tool's own)",
                )
                continue
            if name in out:
                raise Skip(
                    "parameter_clash",
                    f"parameter '{name}' appears in both {out[name]['in']} and {location}",
                )
            schema = self._param_schema(param)
            out[name] = {
                **schema,
                "in": location,
                "required": location == "path" or bool(param.get("required")),
            }
        for placeholder in _placeholders(path):
            if placeholder not in out:
                self.log.add(
                    where,
                    "undeclared_path_parameter",
                    f"path parameter '{placeholder}' is not declared; added as a string",
                )
                out[placeholder] = {"type": "string", "in": "path", "required": True}
        return out

    def _param_schema(self, param: dict[str, Any]) -> dict[str, Any]:
        raw = param.get("schema")
        if raw is None and isinstance(param.get("content"), dict):
            media = next(iter(param["content"].values()), None)
            raw = media.get("schema") if isinstance(media, dict) else None
        schema = self.resolver.schema(raw or {}, max_depth=self.limits.input_depth)
        schema = _standalone(schema)
        description = param.get("description")
        if isinstance(description, str) and description.strip() and "description" not in schema:
            schema["description"] = _cap(description.strip(), self.limits.description_chars)
        return schema

    # --- request body ----------------------------------------------------------------------
    def _body(
        self,
        op: dict[str, Any],
        method: str,
        where: str,
        parameters: dict[str, dict[str, Any]],
        secret_fields: dict[str, str],
        prefer: str | None = None,
    ) -> str | None:
        """Add the body's properties to ``parameters``; the tool's content type (None: no body).

        A property naming a tool secret goes to ``secret_fields`` instead (field → reference).
        """
        if "requestBody" not in op:
            return None
        body = self.resolver.deref(op["requestBody"], f"{where}/requestBody")
        if not isinstance(body, dict):
            raise Skip("unresolved_body", "the request body reference does not resolve")
        required = bool(body.get("required"))
        content = as_dict(body.get("content"))
        mime, content_type = _body_media_type(content, prefer)
        body_where = f"{where}/requestBody"
        if mime is None or content_type is None:
            kinds = ", ".join(content) or "none"
            self._unusable(
                required,
                body_where,
                "unsupported_body",
                f"request body types ({kinds}) are not JSON, a form or multipart form data",
            )
            return None
        if method in ("get", "delete"):
            self._unusable(
                required, body_where, "body_not_allowed", f"{method.upper()} with a request body"
            )
            return None
        media = as_dict(content[mime])
        schema = self.resolver.schema(media.get("schema", {}), max_depth=self.limits.input_depth)
        properties, needed = _object_properties(schema)
        if properties is None:
            kind = schema.get("type", "any") if isinstance(schema, dict) else "any"
            self._unusable(
                required,
                body_where,
                "non_object_body",
                f"the {mime} body is not an object with properties (type {kind})",
            )
            return None
        encoding = as_dict(media.get("encoding"))
        # the schema as written: extensions (a secret body field's) are not kept once resolved
        raw_properties = as_dict(as_dict(media.get("schema")).get("properties"))
        for prop, sub in properties.items():
            if isinstance(sub, dict) and sub.get("readOnly") is True:
                continue
            if prop in parameters:
                where_else = parameters[prop]["in"]
                clash = f"body property '{prop}' has the same name as the {where_else} parameter"
                if required and prop in needed:
                    raise Skip("parameter_clash", clash)
                self.log.add(
                    body_where, "parameter_clash", f"{clash}; the optional property was dropped"
                )
                continue
            named = as_dict(raw_properties.get(prop)).get(SECRET_EXTENSION)
            if isinstance(named, str) and re.fullmatch(SECRET_NAME, named):
                secret_fields[prop] = f"secret:{named}"
                self.log.add(
                    body_where,
                    "named_secret",
                    f"body field '{prop}' sends the tool secret secret:{named} "
                    f"({SECRET_EXTENSION}): its value is sent to this document's servers",
                )
                continue
            field = _standalone(sub if isinstance(sub, dict) else {})
            if prop in encoding:
                where_part = body_where + pointer("content", mime, "encoding", prop)[1:]
                self._encoding(field, as_dict(encoding[prop]), content_type, where_part)
            parameters[prop] = {**field, "in": "body", "required": required and prop in needed}
        return content_type

    def _encoding(
        self, field: dict[str, Any], encoding: dict[str, Any], content_type: str, where: str
    ) -> None:
        """Honour a property's ``encoding`` where a tool can (see the module docstring)."""
        unsent: list[str] = []
        part_type = encoding.get("contentType")
        if content_type == MULTIPART and isinstance(part_type, str):
            if is_binary(field) and "," not in part_type and "*" not in part_type:
                field.setdefault("contentMediaType", part_type.strip())
            elif not _default_part_type(field, part_type):
                unsent.append(f"contentType {part_type!r}")
        elif content_type == FORM and part_type is not None:
            unsent.append("contentType (a form field is text)")
        if encoding.get("headers"):
            unsent.append("part headers")
        style, explode = encoding.get("style", "form"), encoding.get("explode", True)
        if content_type == FORM and (style != "form" or explode is not True):
            unsent.append(f"style {style!r} with explode {explode!r} (sent as form, exploded)")
        if encoding.get("allowReserved") is True:
            unsent.append("allowReserved (reserved characters are percent-encoded)")
        if unsent:
            self.log.add(
                where,
                "encoding_not_honoured",
                f"the encoding's {', '.join(unsent)} is not honoured: the tool sends its default",
            )

    def _unusable(self, required: bool, where: str, rule: str, what: str) -> None:
        if required:
            raise Skip(rule, f"{what}: a tool cannot send this body")
        self.log.add(where, rule, f"{what}: the optional body was dropped")

    # --- output and description ------------------------------------------------------------
    def _output(self, op: dict[str, Any], where: str) -> dict[str, Any] | None:
        responses = op.get("responses")
        if not isinstance(responses, dict):
            return None
        by_code = {str(c): r for c, r in responses.items()}  # YAML may read `200:` as a number
        codes = sorted((c for c in by_code if c.startswith("2")), key=_code_order)
        for code in codes:
            response = self.resolver.deref(by_code[code], f"{where}/responses/{code}")
            content = response.get("content") if isinstance(response, dict) else None
            if not isinstance(content, dict):
                continue
            mime = next((m for m in content if is_json(m)), None)
            media = content.get(mime) if mime else None
            if isinstance(media, dict) and "schema" in media:
                schema = self.resolver.schema(media["schema"], max_depth=self.limits.output_depth)
                return schema if isinstance(schema, dict) else None
        return None

    def _description(self, op: dict[str, Any], method: str, path: str) -> str:
        summary = str(op.get("summary") or "").strip()
        details = str(op.get("description") or "").strip()
        text = summary
        if details and details != summary:
            text = f"{summary}\n\n{details}" if summary else details
        text = _cap(text, self.limits.description_chars) or f"{method.upper()} {path}"
        return f"[deprecated] {text}" if op.get("deprecated") is True else text


_IGNORED_HEADERS = frozenset({"accept", "content-type", "authorization"})
"""Header parameters OpenAPI says SHALL be ignored (3.x, Parameter Object ``name``)."""


def _body_media_type(
    content: dict[str, Any], prefer: str | None = None
) -> tuple[str | None, str | None]:
    """The media type to send (its key in ``content``) and the tool's content type for it.

    ``prefer`` when offered; else JSON when offered, else a form, else multipart form data;
    ``(None, None)`` for none.
    """
    keys = {_media_base(str(m)): m for m in content}
    wanted_base = _media_base(prefer or "")
    if wanted_base in (FORM, MULTIPART) and wanted_base in keys:
        return str(keys[wanted_base]), wanted_base
    json_key = next((m for m in content if is_json(m)), None)
    if json_key is not None:
        return str(json_key), JSON
    for wanted in (FORM, MULTIPART):
        if wanted in keys:
            return str(keys[wanted]), wanted
    return None, None


def _default_part_type(field: dict[str, Any], part_type: str) -> bool:
    """Whether ``part_type`` is what a tool sends for this field anyway."""
    base = _media_base(part_type)
    if field.get("type") in ("object", "array"):
        return base == "application/json"
    return base == "text/plain"


def _object_properties(schema: Any) -> tuple[dict[str, Any] | None, set[str]]:
    """Properties and required names of an object schema (merging allOf/oneOf/anyOf)."""
    if not isinstance(schema, dict):
        return None, set()
    properties: dict[str, Any] = {}
    required: set[str] = set(schema.get("required") or [])
    if isinstance(schema.get("properties"), dict):
        properties.update(schema["properties"])
    for part in schema.get("allOf") or []:
        sub, needed = _object_properties(part)
        if sub:
            properties.update(sub)
            required |= needed
    branches: list[tuple[dict[str, Any], set[str]]] = []
    for branch in schema.get("oneOf") or schema.get("anyOf") or []:
        sub, needed = _object_properties(branch)
        if sub:
            branches.append((sub, needed))
    if branches:
        for sub, _ in branches:
            for key, value in sub.items():
                properties.setdefault(key, value)
        required |= set.intersection(*(r for _, r in branches))
    if not properties:
        return None, set()
    return properties, required


def _standalone(schema: Any) -> dict[str, Any]:
    """A parameter schema we may extend: a copy, a ``required`` list moved into ``allOf``.

    (``required`` at the top of a parameter is the parameter's own flag.)
    """
    out = dict(schema) if isinstance(schema, dict) else {}
    out.pop("in", None)
    needed = out.pop("required", None)
    if isinstance(needed, list) and needed:
        out["allOf"] = [*out.get("allOf", []), {"required": needed}]
    return out


def _placeholders(path: str) -> list[str]:
    names, rest = [], path
    while "{" in rest and "}" in rest:
        start = rest.index("{")
        end = rest.find("}", start)
        if end < 0:
            break
        names.append(rest[start + 1 : end])
        rest = rest[end + 1 :]
    return names


def _code_order(code: str) -> tuple[int, str]:
    return (0 if code.isdigit() else 1, code)


def _cap(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0]
    return cut.rstrip() + "…"


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
