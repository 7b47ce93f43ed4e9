"""Every pydantic model of the package is built on its first use (``LazyModel``), so a server
holds the validators and serializers of the models it has met, not of all of them. Models that
extend another library's (the MCP SDK's request types) and the settings are built as that
library builds them."""

from __future__ import annotations

import importlib
import pkgutil

from pydantic import BaseModel
from pydantic_settings import BaseSettings

import dynamic_tools
from dynamic_tools.lazy_model import LazyModel


def _subclasses(base: type) -> set[type]:
    found: set[type] = set()
    stack = [base]
    while stack:
        for sub in stack.pop().__subclasses__():
            if sub not in found:
                found.add(sub)
                stack.append(sub)
    return found


def _own(model: type) -> bool:
    """Defined here on pydantic's ``BaseModel`` alone (no other library's model in its MRO)."""
    return model.__module__.startswith("dynamic_tools.") and all(
        k.__module__.startswith(("dynamic_tools.", "pydantic.")) or k is object
        for k in model.__mro__
    )


def test_every_model_of_the_package_is_built_on_first_use() -> None:
    for info in pkgutil.walk_packages(dynamic_tools.__path__, "dynamic_tools."):
        if not info.name.startswith("dynamic_tools.persistence.migrations"):
            importlib.import_module(info.name)
    ours = [m for m in _subclasses(BaseModel) if _own(m) and not issubclass(m, BaseSettings)]
    assert len(ours) > 100
    eager = sorted(
        f"{m.__module__}.{m.__qualname__}" for m in ours if not m.model_config.get("defer_build")
    )
    assert eager == [], "derive these from LazyModel (dynamic_tools/lazy_model.py)"
    assert all(issubclass(m, LazyModel) for m in ours if m.model_config.get("defer_build"))


def test_a_lazy_model_validates_and_dumps_as_a_built_one() -> None:
    class Point(LazyModel):
        x: int
        y: int = 0

    assert Point.model_validate({"x": "3"}).model_dump() == {"x": 3, "y": 0}
    assert Point.model_json_schema()["required"] == ["x"]
