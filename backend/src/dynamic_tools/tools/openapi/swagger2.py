"""Swagger 2.0 → the OpenAPI 3.0 shape the converter reads.

- ``host`` / ``basePath`` / ``schemes`` → ``servers`` (relative when there is no host);
- ``definitions`` / ``parameters`` / ``responses`` / ``securityDefinitions`` → ``components``
  (``schemas``, ``parameters``, ``requestBodies``, ``responses``, ``securitySchemes``), with
  every ``$ref`` rewritten to the new place;
- ``in: body`` parameters → ``requestBody`` (one content entry per ``consumes`` type);
  ``in: formData`` parameters → a form ``requestBody`` (``multipart/form-data`` when a file is
  sent or ``consumes`` says so, else ``application/x-www-form-urlencoded``);
- response ``schema`` → ``content`` per ``produces`` type;
- parameter type keywords move into the parameter's ``schema``.

The input is not modified; the result shares no mutable structure with it that is changed.
"""

from __future__ import annotations

from typing import Any

from dynamic_tools.tools.openapi.issues import HTTP_METHODS, as_dict

_REF_MOVES = (
    ("#/definitions/", "#/components/schemas/"),
    ("#/parameters/", "#/components/parameters/"),
    ("#/responses/", "#/components/responses/"),
)
_PARAM_SCHEMA_KEYS = (
    "type",
    "format",
    "items",
    "collectionFormat",
    "default",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "enum",
    "multipleOf",
)
_JSON = "application/json"


def normalise_swagger2(document: dict[str, Any]) -> dict[str, Any]:
    """A Swagger 2.0 document in OpenAPI 3.0 form (see the module docstring)."""
    doc: dict[str, Any] = _rewrite_refs(document)
    consumes = _media_types(doc.get("consumes")) or [_JSON]
    produces = _media_types(doc.get("produces")) or [_JSON]
    out: dict[str, Any] = {
        "openapi": "3.0.0",
        "info": doc.get("info", {}),
        "servers": _servers(doc),
        "tags": doc.get("tags", []),
    }
    if "security" in doc:
        out["security"] = doc["security"]
    parameters = as_dict(doc.get("parameters"))
    components: dict[str, Any] = {
        "schemas": as_dict(doc.get("definitions")),
        "parameters": {},
        "requestBodies": {},
        "responses": {
            name: _response(r, produces)
            for name, r in as_dict(doc.get("responses")).items()
            if isinstance(r, dict)
        },
        "securitySchemes": {
            name: _security_scheme(s)
            for name, s in as_dict(doc.get("securityDefinitions")).items()
            if isinstance(s, dict)
        },
    }
    for name, param in parameters.items():
        if isinstance(param, dict) and param.get("in") not in ("body", "formData"):
            components["parameters"][name] = _parameter(param)
        else:  # body and form parameters are kept as written; operations inline them
            components["parameters"][name] = param
    out["components"] = components
    paths: dict[str, Any] = {}
    for path, item in as_dict(doc.get("paths")).items():
        if not isinstance(item, dict):
            paths[path] = item
            continue
        new_item: dict[str, Any] = {}
        shared = item.get("parameters")
        for key, op in item.items():
            if key in HTTP_METHODS and isinstance(op, dict):
                new_item[key] = _operation(op, shared, parameters, consumes, produces)
            elif key != "parameters":
                new_item[key] = op
        paths[path] = new_item
    out["paths"] = paths
    return out


def _operation(
    op: dict[str, Any],
    shared: Any,
    components: dict[str, Any],
    consumes: list[str],
    produces: list[str],
) -> dict[str, Any]:
    new = {k: v for k, v in op.items() if k not in ("parameters", "responses", "consumes")}
    op_consumes = _media_types(op.get("consumes")) or consumes
    op_produces = _media_types(op.get("produces")) or produces
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    for raw in [*(_list(shared)), *(_list(op.get("parameters")))]:
        param = _local(raw, components)
        if isinstance(param, dict):
            merged[(str(param.get("name")), str(param.get("in")))] = param
    params: list[dict[str, Any]] = []
    form: list[dict[str, Any]] = []
    for param in merged.values():
        where = param.get("in")
        if where == "body":
            schema = param.get("schema", {})
            new["requestBody"] = {
                "required": bool(param.get("required")),
                "description": param.get("description", ""),
                "content": {mime: {"schema": schema} for mime in op_consumes},
            }
        elif where == "formData":
            form.append(param)
        else:
            params.append(_parameter(param))
    if form:
        new["requestBody"] = _form_body(form, op_consumes)
    new["parameters"] = params
    responses = op.get("responses")
    if isinstance(responses, dict):
        new["responses"] = {
            code: _response(r, op_produces) if isinstance(r, dict) else r
            for code, r in responses.items()
        }
    return new


def _form_body(form: list[dict[str, Any]], consumes: list[str]) -> dict[str, Any]:
    has_file = any(p.get("type") == "file" for p in form)
    mime = (
        "multipart/form-data"
        if has_file or "multipart/form-data" in consumes
        else "application/x-www-form-urlencoded"
    )
    properties = {str(p.get("name")): _param_schema(p) for p in form}
    required = [str(p.get("name")) for p in form if p.get("required")]
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return {"required": bool(required), "content": {mime: {"schema": schema}}}


def _parameter(param: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in param:
        return param
    out: dict[str, Any] = {
        k: param[k] for k in ("name", "in", "description", "required", "deprecated") if k in param
    }
    out["schema"] = _param_schema(param)
    return out


def _param_schema(param: dict[str, Any]) -> dict[str, Any]:
    schema = {k: param[k] for k in _PARAM_SCHEMA_KEYS if k in param}
    schema.pop("collectionFormat", None)
    if schema.get("type") == "file":
        schema = {"type": "string", "format": "binary"}
    return schema


def _response(response: dict[str, Any], produces: list[str]) -> dict[str, Any]:
    if "$ref" in response:
        return response
    out = {k: v for k, v in response.items() if k not in ("schema", "examples")}
    if "schema" in response:
        out["content"] = {mime: {"schema": response["schema"]} for mime in produces}
    return out


def _security_scheme(scheme: dict[str, Any]) -> dict[str, Any]:
    kind = scheme.get("type")
    if kind == "basic":
        return {"type": "http", "scheme": "basic", "description": scheme.get("description", "")}
    if kind == "oauth2":
        return {"type": "oauth2", "description": scheme.get("description", ""), "flows": {}}
    return dict(scheme)


def _servers(doc: dict[str, Any]) -> list[dict[str, str]]:
    base_path = str(doc.get("basePath") or "")
    if base_path and not base_path.startswith("/"):
        base_path = "/" + base_path
    host = doc.get("host")
    if not host:
        return [{"url": base_path or "/"}]
    schemes = [s for s in _list(doc.get("schemes")) if s in ("https", "http")] or ["https"]
    return [{"url": f"{scheme}://{host}{base_path}"} for scheme in schemes]


def _local(raw: Any, components: dict[str, Any]) -> Any:
    """A parameter with a ``#/components/parameters/`` reference replaced by its body."""
    if isinstance(raw, dict) and isinstance(raw.get("$ref"), str):
        ref: str = raw["$ref"]
        prefix = "#/components/parameters/"
        if ref.startswith(prefix):
            return components.get(ref[len(prefix) :].replace("~1", "/").replace("~0", "~"), raw)
    return raw


def _rewrite_refs(node: Any) -> Any:
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                for old, new in _REF_MOVES:
                    if value.startswith(old):
                        value = new + value[len(old) :]
                        break
                out[key] = value
            else:
                out[key] = _rewrite_refs(value)
        return out
    if isinstance(node, list):
        return [_rewrite_refs(v) for v in node]
    return node


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def _media_types(value: Any) -> list[str]:
    """The strings of a ``consumes``/``produces`` list (other items name no media type)."""
    return [item for item in _list(value) if isinstance(item, str)]
