"""Views whose optional fields appear only when given, as the mappings they type had them."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import (
    GetJsonSchemaHandler,
    SerializerFunctionWrapHandler,
    model_serializer,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from dynamic_tools.lazy_model import LazyModel


class Sparse(LazyModel):
    """A model whose ``SPARSE`` fields are left out of its JSON unless they were given.

    For a view whose keys depend on the case (a call step has ``tool`` and ``args``, another
    step has neither): each key is a declared field, and the answer has only those given.
    ``SPARSE`` names the keys as they are on the wire (a field's alias when it has one). Their
    JSON Schema shows no default: a client reads them as keys that may be absent, not as keys
    that are always there with a default value.
    """

    SPARSE: ClassVar[frozenset[str]] = frozenset()

    # No return annotation: pydantic then documents the model's own fields (a dict return type
    # would make the OpenAPI schema an open mapping).
    @model_serializer(mode="wrap")
    def _omit_unset(self, handler: SerializerFunctionWrapHandler):  # type: ignore[no-untyped-def]
        data: dict[str, Any] = handler(self)
        given = self.model_fields_set | {
            field.alias
            for name, field in type(self).model_fields.items()
            if field.alias and name in self.model_fields_set
        }
        return {k: v for k, v in data.items() if k not in self.SPARSE or k in given}

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        """The model's schema, its ``SPARSE`` properties without a default."""
        return schema_without_defaults(core_schema, handler, cls.SPARSE)


def schema_without_defaults(
    core_schema: CoreSchema, handler: GetJsonSchemaHandler, keys: frozenset[str]
) -> JsonSchemaValue:
    """A model's JSON schema with no ``default`` on the properties ``keys``.

    They may be absent from an answer, so a generated client must not assume a value.
    """
    schema = handler(core_schema)
    target = handler.resolve_ref_schema(schema)
    for key, prop in target.get("properties", {}).items():
        if key in keys and isinstance(prop, dict):
            prop.pop("default", None)
    return schema
