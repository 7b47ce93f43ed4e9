"""The base of the project's pydantic models: each is built on its first use, not at import.

A pydantic model's validator and serializer take memory once built; with ``defer_build`` they
are built when the model first validates, serializes or gives its JSON Schema. A server that
has not yet met a model (an authoring view, a catalog answer, a request body no client has
sent) does not hold them: about 4 MiB less at idle (docs/performance.md, "Memory: idle and at
1,000 tools"). Validation and serialization are the same as with a model built at once.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["LazyModel"]


class LazyModel(BaseModel):
    """A ``BaseModel`` whose schema is built on first use (``defer_build``); configs merge."""

    model_config = ConfigDict(defer_build=True)
