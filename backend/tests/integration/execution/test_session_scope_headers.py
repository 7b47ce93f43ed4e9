"""A session run's calls, by a process that reads the run's sealed scope (a resumed run): the
session's headers go to the session's own API only, and a stored header that would change how
a request travels or who it claims to be never goes out.

The scopes here are stored as sessions could store them before such headers were refused at
session start (``X-Target-Headers`` without ``X-Target-URL``, ``Host``...): runs made then are
still resumed, and keep the rules.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from dynamic_tools.bootstrap import Services, build_services
from dynamic_tools.execution.run_context import current_run
from dynamic_tools.persistence.db import migrate
from dynamic_tools.persistence.run_scopes import RunScopeStore, session_key
from dynamic_tools.settings import Settings
from dynamic_tools.tools.models import ToolConfig
from dynamic_tools.tools.scope import ToolScope
from tests.conftest import TEST_API_KEY
from tests.support.fake_llm import FakeLLM, tool_call
from tests.support.header_api import (
    PARTNER_SECRET,
    SECRET_NAME,
    SESSION_TOKEN,
    HeaderApi,
    running_header_api,
)

SESSION_HEADERS = {"Authorization": SESSION_TOKEN, "X-Team": "blue"}


@pytest.fixture
def partner() -> Iterator[HeaderApi]:
    with running_header_api() as api:
        yield api


@pytest.fixture
def settings(
    tmp_path: Path, make_settings: Callable[..., Settings], partner: HeaderApi, fake_llm: FakeLLM
) -> Settings:
    """A registry of one tool, ``partner_rates``, with its own bearer secret."""
    root = tmp_path / "scoped-registry"
    (root / "tools").mkdir(parents=True)
    (root / "tools" / "partner_rates.yaml").write_text(partner.registry_tool())
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / SECRET_NAME).write_text(PARTNER_SECRET)
    return make_settings(
        registry_config_path=root / "config.yaml",
        allowed_target_hosts=[partner.host],
        secrets_dir=secrets,
        openai_base_url=fake_llm.base_url,
        openai_api_key=TEST_API_KEY,
    )


@asynccontextmanager
async def resumed(settings: Settings, run_id: str, scope: ToolScope) -> AsyncIterator[Services]:
    """The scope sealed by one process; a second one (a restart) runs ``run_id``'s calls."""
    first = build_services(settings)
    try:
        migrate(first.database)
        await first.run_store.create_run(workflow_id="w", params={}, run_id=run_id)
        store = RunScopeStore(first.database, lambda: session_key(None, settings.data_dir))
        await store.save(run_id, scope)
    finally:
        await first.aclose()
    second = build_services(settings)
    token = current_run.set(run_id)
    try:
        yield second
    finally:
        current_run.reset(token)
        await second.aclose()


async def call(services: Services, tool: str, args: dict[str, Any], key: str) -> Any:
    result = await services.tool_runner.call(tool, args, idempotency_key=key, timeout_s=30)
    assert result.status_code == 200, result.body
    return result.body


async def test_a_scope_over_the_registry_never_lends_its_headers(
    settings: Settings, partner: HeaderApi, fake_llm: FakeLLM
) -> None:
    stored = ToolScope(prefix="api", headers=SESSION_HEADERS)  # no own API: the registry's
    fake_llm.script(tool_call("partner_rates", {"currency": "GBP"}))
    async with resumed(settings, "run-old", stored) as services:
        named = await call(services, "partner_rates", {"currency": "EUR"}, "run-old:rates")
        executed = await call(
            services,
            "api_execute",
            {"operation": "partner_rates", "arguments": {"currency": "USD"}},
            "run-old:execute",
        )
        asked = await call(services, "api_query", {"question": "The GBP rate"}, "run-old:ask")
    assert [named["currency"], executed["currency"], asked["currency"]] == ["EUR", "USD", "GBP"]
    calls = partner.calls("/partner")
    assert len(calls) == 3
    assert all(c.only_the_partner_credential() for c in calls), calls
    assert [c.one("idempotency-key") for c in calls[:2]] == ["run-old:rates", "run-old:execute"]


async def test_a_scope_s_own_api_gets_its_headers_but_never_transport_ones(
    settings: Settings, partner: HeaderApi
) -> None:
    get_note = ToolConfig.model_validate(
        {
            "name": "get_note",
            "description": "Get one note by its id",
            "api": {"method": "GET", "base_url": partner.url, "path": "/notes/{note_id}"},
            "parameters": {"note_id": {"type": "string", "in": "path", "required": True}},
        }
    )
    forged = {
        "Host": "admin.internal",
        "X-Forwarded-For": "10.0.0.1",
        "Idempotency-Key": "forged",
        "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
    }
    stored = ToolScope(
        prefix="notes", tools={"get_note": get_note}, headers={**SESSION_HEADERS, **forged}
    )
    async with resumed(settings, "run-own", stored) as services:
        await call(services, "get_note", {"note_id": "n1"}, "run-own:note")
        await call(
            services,
            "notes_execute",
            {"operation": "get_note", "arguments": {"note_id": "n2"}},
            "run-own:execute",
        )
        await call(services, "partner_rates", {"currency": "EUR"}, "run-own:rates")
    own = partner.calls("/notes")
    assert len(own) == 2
    for note, key in zip(own, ["run-own:note", "run-own:execute"], strict=True):
        assert (note.one("authorization"), note.one("x-team")) == (SESSION_TOKEN, "blue")
        assert note.one("host") == partner.host
        assert note.one("idempotency-key") == key
        assert not note.all("x-forwarded-for") and not note.all("traceparent")
    [rates] = partner.calls("/partner")
    assert rates.only_the_partner_credential(), rates
