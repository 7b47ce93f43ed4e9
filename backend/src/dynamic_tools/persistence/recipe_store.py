"""RecipeStore: learned recipes (MCP layer 2) in the database.

A recipe is identified by ``(scope, name)``: the scope is the API it was learned on (the
registry, or one X-Target-URL), the name says what it does (``r_search_flights_by_origin``).
Saving the same recipe again counts a use instead of adding a row (deduplication).
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Engine, delete, insert, select, update

from dynamic_tools.persistence.db import recipes, utc_now, write_transaction


@dataclass(frozen=True)
class Recipe:
    """A learned call: a tool, its fixed arguments and the parameters left to the caller."""

    recipe_id: str
    scope: str
    name: str
    tool: str
    fixed: dict[str, Any]
    parameters: dict[str, Any]  # name → JSON Schema (from the tool's input schema)
    schema_hash: str
    question: str
    uses: int
    created_at: datetime
    verified_at: datetime

    @classmethod
    def from_row(cls, row: Any) -> Recipe:
        """From a ``recipes`` row."""
        return cls(**{key: row[key] for key in cls.__dataclass_fields__})


class RecipeStore:
    """Recipes per scope; one short transaction per call, off the event loop."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    async def for_scope(self, scope: str) -> list[Recipe]:
        """The scope's recipes, most used first."""

        def work() -> list[Recipe]:
            query = (
                select(recipes)
                .where(recipes.c.scope == scope)
                .order_by(recipes.c.uses.desc(), recipes.c.name)
            )
            with self.engine.connect() as conn:
                return [Recipe.from_row(r) for r in conn.execute(query).mappings()]

        return await asyncio.to_thread(work)

    async def save(
        self,
        *,
        scope: str,
        name: str,
        tool: str,
        fixed: dict[str, Any],
        parameters: dict[str, Any],
        schema_hash: str,
        question: str,
        owner: str = "admin",
    ) -> tuple[Recipe, bool]:
        """Store a verified recipe; ``(recipe, created)`` — an existing one counts a use.

        ``owner``: the principal whose question it was learned from (its scope names them too).
        """

        def work() -> tuple[Recipe, bool]:
            now = utc_now()
            where = (recipes.c.scope == scope) & (recipes.c.name == name)
            with write_transaction(self.engine) as conn:
                row = conn.execute(select(recipes).where(where)).mappings().first()
                if row is not None and row["schema_hash"] == schema_hash and row["fixed"] == fixed:
                    conn.execute(
                        update(recipes).where(where).values(uses=row["uses"] + 1, verified_at=now)
                    )
                    created = False
                else:
                    if row is not None:  # same name, different template or schema: replace
                        conn.execute(delete(recipes).where(where))
                    conn.execute(
                        insert(recipes).values(
                            recipe_id=uuid.uuid4().hex,
                            scope=scope,
                            name=name,
                            tool=tool,
                            fixed=fixed,
                            parameters=parameters,
                            schema_hash=schema_hash,
                            question=question[:2000],
                            uses=1,
                            created_at=now,
                            verified_at=now,
                            owner=owner,
                        )
                    )
                    created = True
                saved = conn.execute(select(recipes).where(where)).mappings().one()
            return Recipe.from_row(saved), created

        return await asyncio.to_thread(work)

    async def use(self, recipe_id: str) -> None:
        """Count one run of a recipe."""

        def work() -> None:
            with write_transaction(self.engine) as conn:
                conn.execute(
                    update(recipes)
                    .where(recipes.c.recipe_id == recipe_id)
                    .values(uses=recipes.c.uses + 1)
                )

        await asyncio.to_thread(work)

    async def invalidate(self, scope: str, recipe_ids: list[str]) -> int:
        """Delete recipes whose tool changed or vanished; returns how many."""
        if not recipe_ids:
            return 0

        def work() -> int:
            with write_transaction(self.engine) as conn:
                result = conn.execute(
                    delete(recipes).where(
                        (recipes.c.scope == scope) & recipes.c.recipe_id.in_(recipe_ids)
                    )
                )
                return int(result.rowcount or 0)

        return await asyncio.to_thread(work)
