"""Reading an OpenAPI document: JSON or YAML (safe loading), with size and expansion limits.

:func:`parse_document` turns bytes into plain data; :func:`detect_kind` says which OpenAPI
generation it is. YAML goes through the C safe loader when PyYAML has it (no Python objects,
no tags). YAML aliases are shared references, so a "billion laughs" document stays small in
memory but would expand when walked; :func:`parse_document` counts the nodes a walk would
visit and refuses a document that expands past ``max_nodes``. Nesting deeper than
``max_depth`` levels is refused before anything recursive sees the document (see
:mod:`dynamic_tools.safe_parsing`: libyaml's C composer would overflow the C stack, the JSON decoder
and the converter would recurse past Python's limit); GitHub's description nests 21 deep.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from dynamic_tools.errors import InvalidInputError
from dynamic_tools.safe_parsing import TooDeep, gc_paused, loads_json, loads_yaml
from dynamic_tools.tools.openapi.issues import DocumentKind
from dynamic_tools.violations import syntax_position, where_in_text

MAX_DOCUMENT_BYTES = 32 * 1024 * 1024
MAX_YAML_NODES = 5_000_000
MAX_DEPTH = 100


def parse_document(
    content: bytes | str,
    *,
    max_bytes: int = MAX_DOCUMENT_BYTES,
    max_nodes: int = MAX_YAML_NODES,
    max_depth: int = MAX_DEPTH,
) -> Any:
    """Parse JSON or YAML text into plain data (dicts, lists, scalars).

    JSON is tried first when the text starts with ``{`` or ``[`` (it is much faster), then
    YAML. Raises :class:`InvalidInputError` (violation path ``source``) when the content is
    over ``max_bytes``, not UTF-8, not JSON/YAML (line and column given), nested deeper than
    ``max_depth``, or a YAML document whose aliases expand past ``max_nodes``.

    The garbage collector is paused while the data is built and measured (see
    :func:`~dynamic_tools.safe_parsing.gc_paused`).
    """
    with gc_paused():
        return _parse(content, max_bytes, max_nodes, max_depth)


def _parse(content: bytes | str, max_bytes: int, max_nodes: int, max_depth: int) -> Any:
    size = len(content)
    if size > max_bytes:
        raise _invalid(
            f"the document is {size} bytes; the limit is {max_bytes}",
            "max_size",
            expected=max_bytes,
            actual=size,
        )
    if isinstance(content, bytes):
        try:
            text = content.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise _invalid(
                f"the document is not UTF-8 text (byte {exc.start})", "encoding"
            ) from None
    else:
        text = content
    stripped = text.lstrip()
    if not stripped:
        raise _invalid("the document is empty", "syntax")
    json_error: json.JSONDecodeError | None = None
    if stripped[0] in "{[":
        try:
            return loads_json(text, max_depth)
        except TooDeep as exc:
            raise _too_deep(exc) from None
        except json.JSONDecodeError as exc:
            json_error = exc
    try:
        data = loads_yaml(text, max_depth)
    except TooDeep as exc:
        raise _too_deep(exc) from None
    except yaml.YAMLError as exc:
        if json_error is not None:
            raise _invalid(
                f"invalid JSON at line {json_error.lineno}, column {json_error.colno}: "
                f"{json_error.msg}",
                "syntax",
            ) from None
        raise _invalid(f"invalid YAML: {_yaml_where(exc)}", "syntax") from None
    _check_expansion(data, max_nodes)
    return data


def detect_kind(document: Any) -> tuple[DocumentKind, str | None]:
    """``(kind, version)``: ``openapi_2`` for Swagger 2.0, ``openapi_3`` for 3.0, 3.1 and 3.2.

    3.2 adds to 3.1 (a ``query`` method, ``additionalOperations``, streamed media types);
    what it shares with 3.1 converts as 3.1 does, and an operation of another method is
    skipped with a warning, as any unsupported one.
    """
    if not isinstance(document, dict):
        return "unknown", None
    swagger = document.get("swagger")
    if swagger is not None and str(swagger).strip() == "2.0":
        return "openapi_2", "2.0"
    version = document.get("openapi")
    if isinstance(version, str) and version.strip().startswith(("3.0", "3.1", "3.2")):
        return "openapi_3", version.strip()
    return "unknown", None if version is None and swagger is None else str(version or swagger)


def _check_expansion(data: Any, max_nodes: int) -> None:
    """Count the nodes a full walk visits (aliases count each time); refuse past the limit."""
    count = 0
    stack = [data]
    while stack:
        node = stack.pop()
        count += 1
        if count > max_nodes:
            raise _invalid(
                f"the document expands to more than {max_nodes} nodes (YAML aliases?)",
                "max_nodes",
                expected=max_nodes,
            )
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def _too_deep(exc: TooDeep) -> InvalidInputError:
    return _invalid(
        f"the document is {exc}; the limit keeps parsing and conversion bounded",
        "max_depth",
        expected=exc.limit,
    )


def _yaml_where(exc: yaml.YAMLError) -> str:
    where = where_in_text(exc)
    return where if where is not None else syntax_position(exc)[2]


def _invalid(
    message: str, rule: str, *, expected: Any = None, actual: Any = None
) -> InvalidInputError:
    violation: dict[str, Any] = {"path": "source", "rule": rule, "message": message}
    if expected is not None:
        violation["expected"] = expected
    if actual is not None:
        violation["actual"] = actual
    return InvalidInputError(message, violations=[violation], context={"field": "source"})
