"""A shop API on a real loopback port that records what it receives, and a registry using it."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from dynamic_tools.settings import Settings
from tests.conftest import FIXTURES
from tests.support.mocked_runs import wait_for
from tests.support.servers import serve
from tests.support.spans import SpanRecorder

CHARGE_TOKEN = "shop-charge-TOKEN-9d41c7e2b8"
CONFIRM_KEY = "shop-confirm-KEY-51aa0c3f6e"


@dataclass
class Received:
    """One request the shop received."""

    method: str
    path: str
    query: str
    headers: dict[str, str]


@dataclass
class Shop:
    """The shop server: its URL and every request it received, in order."""

    url: str
    received: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def requests(self, method: str, path: str) -> list[Received]:
        with self.lock:
            return [r for r in self.received if r.method == method and r.path == path]


def shop_app(shop: Shop) -> FastAPI:
    app = FastAPI()
    attempts: dict[str, int] = {}

    @app.middleware("http")
    async def record(request: Request, call_next: Any) -> Any:
        with shop.lock:
            shop.received.append(
                Received(
                    request.method,
                    request.url.path,
                    request.url.query,
                    {k.lower(): v for k, v in request.headers.items()},
                )
            )
        return await call_next(request)

    @app.post("/holds", status_code=201)
    async def hold(body: dict[str, Any]) -> dict[str, Any]:
        return {"id": "H-1", "order": body["order"]}

    @app.delete("/holds/{hold_id}")
    async def release(hold_id: str) -> dict[str, Any]:
        return {"released": hold_id}

    @app.post("/charges")
    async def charge(body: dict[str, Any], request: Request) -> JSONResponse:
        key = request.headers.get("idempotency-key", "")
        attempts[key] = attempts.get(key, 0) + 1
        if "flaky" in body["order"] and attempts[key] == 1:
            return JSONResponse({"error": "busy"}, status_code=503)
        return JSONResponse({"id": "C-1", "amount": body["amount"]}, status_code=201)

    @app.post("/confirmations")
    async def confirm(body: dict[str, Any]) -> JSONResponse:
        if "fail" in body["order"]:
            return JSONResponse({"error": "confirmation service down"}, status_code=500)
        return JSONResponse({"confirmed": body["order"]})

    return app


@pytest.fixture
def shop() -> Iterator[Shop]:
    holder = Shop(url="")
    with serve(shop_app(holder)) as url:
        holder.url = url
        yield holder


@pytest.fixture
def shop_settings(
    tmp_path: Path,
    make_settings: Callable[..., Settings],
    shop: Shop,
    monkeypatch: pytest.MonkeyPatch,
) -> Callable[..., Settings]:
    """Settings on a registry holding the shop tools and workflows (secrets in the env)."""
    root = tmp_path / "shop-registry"
    for folder in ("tools", "workflows"):
        (root / folder).mkdir(parents=True)
        for source in (FIXTURES / "observability" / folder).iterdir():
            text = source.read_text().replace("__SHOP__", shop.url)
            (root / folder / source.name).write_text(text)
    monkeypatch.setenv("DT_SECRET_SHOP_CHARGE_TOKEN", CHARGE_TOKEN)
    monkeypatch.setenv("DT_SECRET_SHOP_CONFIRM_KEY", CONFIRM_KEY)
    host = httpx.URL(shop.url)

    def factory(**overrides: Any) -> Settings:
        values: dict[str, Any] = {
            "registry_config_path": root / "config.yaml",
            "allowed_target_hosts": [f"{host.host}:{host.port}"],
            "enable_demo_api": False,
        }
        values.update(overrides)
        return make_settings(**values)

    return factory


@pytest.fixture
def spans() -> Iterator[SpanRecorder]:
    recorder = SpanRecorder()
    yield recorder
    recorder.shutdown()


async def start_run(client: httpx.AsyncClient, workflow_id: str, **params: Any) -> str:
    answer = await client.post(f"/workflows/{workflow_id}/runs", json={"params": params})
    assert answer.status_code == 202, answer.text
    run_id: str = answer.json()["run_id"]
    return run_id


async def wait_for_run(
    client: httpx.AsyncClient, run_id: str, ready: Callable[[dict[str, Any]], bool] | None = None
) -> dict[str, Any]:
    return await wait_for(client, run_id, ready, timeout_s=15)
