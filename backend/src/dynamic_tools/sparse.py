"""Views whose optional fields appear only when given, as the mappings they type had them."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, SerializerFunctionWrapHandler, model_serializer


class Sparse(BaseModel):
    """A model whose ``SPARSE`` fields are left out of its JSON unless they were given.

    For a view whose keys depend on the case (a call step has ``tool`` and ``args``, another
    step has neither): each key is a declared field, and the answer has only those given.
    """

    SPARSE: ClassVar[frozenset[str]] = frozenset()

    # No return annotation: pydantic then documents the model's own fields (a dict return type
    # would make the OpenAPI schema an open mapping).
    @model_serializer(mode="wrap")
    def _omit_unset(self, handler: SerializerFunctionWrapHandler):  # type: ignore[no-untyped-def]
        data: dict[str, Any] = handler(self)
        given = self.model_fields_set
        return {k: v for k, v in data.items() if k not in self.SPARSE or k in given}
