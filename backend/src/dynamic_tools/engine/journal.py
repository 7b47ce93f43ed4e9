"""The one conversion pair between the engine's records and the JSON a durable run journals.

A durable run journals what its steps returned and what its child workflows were given and
handed back, as JSON (docs/durability.md); a replay reads it back. Every record that crosses
that line is a dataclass of the engine (:class:`~dynamic_tools.engine.call_record.CallRecord`,
:class:`~dynamic_tools.engine.children.ChildSpec`, :class:`~dynamic_tools.engine.children.
ChildResult`, :class:`~dynamic_tools.engine.ports.ChildOutcome`, :class:`~dynamic_tools.engine.
saga.Compensation`, :class:`~dynamic_tools.engine.scope.Scope`, :class:`~dynamic_tools.engine.
redrive.Redrive`, :class:`~dynamic_tools.engine.state.RunOutcome` and its
:class:`~dynamic_tools.engine.state.NodeState`), and :func:`to_json` / :func:`from_json` are
the only functions that convert them, the way Temporal's SDK has one pair of payload
converters.

Conversion follows the declared field types: a nested dataclass becomes an object with one
key per field, a list or tuple a list, a ``dict[str, X]`` an object, an :class:`~enum.Enum`
its value; a field typed ``Any`` holds JSON already (a tool's answer, a node's output) and is
passed through as it is, never walked, so outside data cannot make the conversion recurse.
Only the declared types nest, and they nest at most :data:`MAX_TYPE_DEPTH` levels.

What the wire format keeps stable (an older run's journal replays with newer code):

- decoding ignores keys it does not know and gives a missing field its default;
- a field whose metadata is :data:`OMIT_NONE` is left out while it is None, :data:`OMIT_EMPTY`
  while it is None or empty, :data:`NOT_JOURNALED` always (it is not part of the record's
  JSON and decodes to its default);
- fields that share an :func:`omit_together` group are left out when all of them are None.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import types
import typing
from collections.abc import Mapping
from typing import Any, Literal, TypeVar, Union, cast, get_args, get_origin, overload

__all__ = [
    "MAX_TYPE_DEPTH",
    "NOT_JOURNALED",
    "OMIT_EMPTY",
    "OMIT_NONE",
    "JournalError",
    "from_json",
    "omit_together",
    "to_json",
]

T = TypeVar("T")

MAX_TYPE_DEPTH = 16
"""How deep declared types may nest (a record in a list in a record… counts one per level)."""

_KEY = "journal"
OMIT_NONE: Mapping[str, Any] = types.MappingProxyType({_KEY: "omit_none"})
"""Field metadata: leave the key out while the value is None."""
OMIT_EMPTY: Mapping[str, Any] = types.MappingProxyType({_KEY: "omit_empty"})
"""Field metadata: leave the key out while the value is None or empty."""
NOT_JOURNALED: Mapping[str, Any] = types.MappingProxyType({_KEY: "skip"})
"""Field metadata: never journaled; decodes to the field's default."""


def omit_together(group: str) -> Mapping[str, Any]:
    """Field metadata: the fields of ``group`` are left out when all of them are None."""
    return types.MappingProxyType({_KEY: "group", "group": group})


class JournalError(ValueError):
    """A journaled value does not have the shape of the record it should decode to."""

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(f"{path}: {message}")
        self.message = message
        self.path = path


@dataclasses.dataclass(frozen=True)
class _Field:
    name: str
    hint: Any
    mode: str | None
    group: str | None
    required: bool


@functools.cache
def _fields(cls: type) -> tuple[_Field, ...]:
    hints = typing.get_type_hints(cls)
    found = []
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        found.append(
            _Field(f.name, hints[f.name], f.metadata.get(_KEY), f.metadata.get("group"), required)
        )
    return tuple(found)


def to_json(record: Any) -> Any:
    """The JSON form of ``record`` (a dataclass of the engine, or a list / dict of them).

    Raises:
        JournalError: The record nests deeper than :data:`MAX_TYPE_DEPTH`, or holds a value
            its declared type does not allow to convert.
    """
    if isinstance(record, list | tuple):
        return [_encode(v, Any, 1, f"$[{i}]") for i, v in enumerate(record)]
    if isinstance(record, Mapping):
        return {str(k): _encode(v, Any, 1, f"$.{k}") for k, v in record.items()}
    return _encode(record, Any, 0, "$")


def _encode(value: Any, hint: Any, depth: int, path: str) -> Any:
    if depth > MAX_TYPE_DEPTH:
        raise JournalError(f"nested deeper than {MAX_TYPE_DEPTH} levels", path=path)
    if value is None:
        return None
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _encode_record(value, depth, path)
    if isinstance(value, enum.Enum):
        return value.value
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        options = [a for a in get_args(hint) if a is not type(None)]
        hint = options[0] if len(options) == 1 else Any
        origin = get_origin(hint)
    if hint is Any or origin is Literal or hint in (str, int, float, bool):
        return value  # JSON already (Any is never walked)
    args = get_args(hint)
    if origin in (list, tuple, set, frozenset) and isinstance(
        value, list | tuple | set | frozenset
    ):
        item = args[0] if args else Any
        return [_encode(v, item, depth + 1, f"{path}[{i}]") for i, v in enumerate(value)]
    if origin in (dict, Mapping) and isinstance(value, Mapping):
        item = args[1] if len(args) == 2 else Any
        return {str(k): _encode(v, item, depth + 1, f"{path}.{k}") for k, v in value.items()}
    return value


def _encode_record(record: Any, depth: int, path: str) -> dict[str, Any]:
    fields = _fields(cast(type, type(record)))
    groups: dict[str, bool] = {}
    for f in fields:
        if f.mode == "group" and f.group is not None:
            empty = getattr(record, f.name) is None
            groups[f.group] = groups.get(f.group, True) and empty
    data: dict[str, Any] = {}
    for f in fields:
        value = getattr(record, f.name)
        if (
            f.mode == "skip"
            or (f.mode == "omit_none" and value is None)
            or (f.mode == "omit_empty" and (value is None or value in ({}, [], (), "")))
            or (f.mode == "group" and f.group is not None and groups[f.group])
        ):
            continue
        data[f.name] = _encode(value, f.hint, depth + 1, f"{path}.{f.name}")
    return data


@overload
def from_json(kind: type[T], data: Any) -> T: ...
@overload
def from_json(kind: Any, data: Any) -> Any: ...
def from_json(kind: Any, data: Any) -> Any:
    """The record of type ``kind`` that ``data`` (from :func:`to_json`) encodes.

    ``kind`` is a dataclass, or a type expression over them (``list[ChildOutcome]``,
    ``Redrive | None``).

    Raises:
        JournalError: ``data`` does not have the shape of ``kind`` (the path says where).
    """
    return _decode(kind, data, 0, "$")


def _decode(hint: Any, data: Any, depth: int, path: str) -> Any:
    if depth > MAX_TYPE_DEPTH:
        raise JournalError(f"nested deeper than {MAX_TYPE_DEPTH} levels", path=path)
    if hint is Any or hint is object:
        return data
    if hint is None or hint is type(None):
        if data is not None:
            raise JournalError("expected null", path=path)
        return None
    origin = get_origin(hint)
    args = get_args(hint)
    if origin in (Union, types.UnionType):
        if data is None and type(None) in args:
            return None
        options = [a for a in args if a is not type(None)]
        last: JournalError | None = None
        for option in options:
            try:
                return _decode(option, data, depth + 1, path)
            except JournalError as exc:
                last = exc
        raise last or JournalError("no type of the union fits", path=path)
    if origin is Literal:
        if data not in args:
            raise JournalError(f"expected one of {list(args)}, got {data!r}", path=path)
        return data
    if origin in (list, tuple, set, frozenset):
        if not isinstance(data, list | tuple):
            raise JournalError(f"expected a list, got {type(data).__name__}", path=path)
        item = args[0] if args else Any
        items = [_decode(item, v, depth + 1, f"{path}[{i}]") for i, v in enumerate(data)]
        return items if origin is list else origin(items)
    if origin in (dict, Mapping):
        if not isinstance(data, Mapping):
            raise JournalError(f"expected an object, got {type(data).__name__}", path=path)
        item = args[1] if len(args) == 2 else Any
        return {str(k): _decode(item, v, depth + 1, f"{path}.{k}") for k, v in data.items()}
    if isinstance(hint, type):
        if dataclasses.is_dataclass(hint):
            return _decode_record(cast(type, hint), data, depth, path)
        if issubclass(hint, enum.Enum):
            try:
                return hint(data)
            except ValueError as exc:
                raise JournalError(str(exc), path=path) from None
        return _decode_scalar(hint, data, path)
    raise JournalError(f"cannot decode to {hint!r}", path=path)


def _decode_scalar(hint: type, data: Any, path: str) -> Any:
    if hint is float and isinstance(data, int | float) and not isinstance(data, bool):
        return float(data)
    if hint is int and isinstance(data, bool):
        raise JournalError("expected an integer, got a boolean", path=path)
    if hint in (str, int, bool) and isinstance(data, hint):
        return data
    if hint in (str, int, float, bool):
        raise JournalError(f"expected {hint.__name__}, got {type(data).__name__}", path=path)
    raise JournalError(f"cannot decode to {hint.__name__}", path=path)


def _decode_record(cls: type, data: Any, depth: int, path: str) -> Any:
    if not isinstance(data, Mapping):
        raise JournalError(
            f"expected an object for {cls.__name__}, got {type(data).__name__}", path=path
        )
    values: dict[str, Any] = {}
    for f in _fields(cls):
        if f.mode == "skip" or f.name not in data:
            if f.required:
                raise JournalError(f"{cls.__name__} needs '{f.name}'", path=path)
            continue
        values[f.name] = _decode(f.hint, data[f.name], depth + 1, f"{path}.{f.name}")
    return cls(**values)
