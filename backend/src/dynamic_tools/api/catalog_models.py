"""Response models of the catalog routes (``/catalogs``): the service's views, and the list."""

from __future__ import annotations

from dynamic_tools.lazy_model import LazyModel
from dynamic_tools.tools.catalog_views import (
    ArazzoReport,
    Catalog,
    Imported,
    ImportPreview,
    OpenApiCheck,
    Removed,
    Toggled,
)

__all__ = [
    "ArazzoReport",
    "Catalog",
    "CatalogList",
    "ImportPreview",
    "Imported",
    "OpenApiCheck",
    "Removed",
    "Toggled",
]


class CatalogList(LazyModel):
    """Every catalog."""

    catalogs: list[Catalog]
