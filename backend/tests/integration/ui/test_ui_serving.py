"""Serving the UI: the bundle at /ui (open without the API token), / leading there, and a
clear 503 page, never a 500, when the bundle has not been built."""

from __future__ import annotations

import gzip
from collections.abc import Callable
from pathlib import Path

import brotli as brotli_codec
import httpx
from fastapi import FastAPI

from dynamic_tools.api.app import create_app
from dynamic_tools.api.routes.ui import install_ui
from dynamic_tools.settings import Settings
from tests.conftest import EXAMPLES
from tests.support.app_client import app_client
from tests.support.mocked_runs import HOTEL


def bundle(tmp_path: Path) -> Path:
    dist = tmp_path / "dist"
    (dist / "assets").mkdir(parents=True)
    (dist / "index.html").write_text("<!doctype html><title>Dynamic Tools</title>")
    (dist / "assets" / "app.js").write_text("console.log('ui')")
    return dist


async def test_missing_bundle_answers_503_with_how_to_build(tmp_path: Path) -> None:
    app = FastAPI()
    install_ui(app, tmp_path / "nowhere")
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        for path in ("/ui/", "/ui/assets/app.js", "/ui/index.html"):
            response = await client.get(path)
            assert response.status_code == 503, path
            assert "make frontend/dist" in response.text
            assert "npm run build" in response.text
            assert response.headers["content-type"].startswith("text/html")


async def test_bundle_is_served_and_root_redirects(tmp_path: Path) -> None:
    app = FastAPI()
    dist = bundle(tmp_path / "later")
    (dist / "index.html").rename(dist / "index.tmp")  # not built yet when the app starts
    install_ui(app, dist)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        assert (await client.get("/ui/")).status_code == 503
        (dist / "index.tmp").rename(dist / "index.html")  # built while the server runs
        page = await client.get("/ui/")
        assert page.status_code == 200 and "<title>Dynamic Tools</title>" in page.text
        asset = await client.get("/ui/assets/app.js")
        assert asset.status_code == 200 and "console.log('ui')" in asset.text
        assert (await client.get("/ui/assets/missing.js")).status_code == 404
        root = await client.get("/")
        assert root.status_code == 307 and root.headers["location"] == "/ui/"
        bare = await client.get("/ui")
        assert bare.status_code in (301, 307) and bare.headers["location"].endswith("/ui/")


async def test_ui_is_open_while_the_api_needs_the_token(
    make_settings: Callable[..., Settings],
) -> None:
    app = create_app(make_settings(api_token="ui-test-token-123456"))
    async with app_client(app) as client:
        ui = await client.get("/ui/")
        assert ui.status_code in (200, 503)  # the real bundle, or the page saying how to build
        assert (await client.get("/tools")).status_code == 401
        root = await client.get("/", follow_redirects=False)  # a browser's first request
        assert root.status_code in (302, 307) and root.headers["location"].startswith("/ui")
        bearer = {"Authorization": "Bearer ui-test-token-123456"}
        assert (await client.get("/tools", headers=bearer)).status_code == 200


async def test_assets_are_sent_precompressed_and_cached_as_immutable(tmp_path: Path) -> None:
    dist = bundle(tmp_path)
    script = "console.log('" + "ui " * 400 + "')"
    (dist / "assets" / "app.js").write_text(script)
    (dist / "assets" / "app.js.br").write_bytes(brotli_codec.compress(script.encode()))
    (dist / "assets" / "app.js.gz").write_bytes(gzip.compress(script.encode()))
    (tmp_path / "secret.txt.gz").write_bytes(b"outside the bundle")
    app = FastAPI()
    install_ui(app, dist)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        brotli = await client.get("/ui/assets/app.js", headers={"Accept-Encoding": "gzip, br"})
        assert brotli.headers["content-encoding"] == "br" and brotli.text == script
        assert brotli.headers["vary"] == "Accept-Encoding"
        assert brotli.headers["content-type"].startswith("text/javascript")
        assert brotli.headers["cache-control"] == "public, max-age=31536000, immutable"
        zipped = await client.get("/ui/assets/app.js", headers={"Accept-Encoding": "gzip"})
        assert zipped.headers["content-encoding"] == "gzip" and zipped.text == script
        plain = await client.get("/ui/assets/app.js", headers={"Accept-Encoding": "identity"})
        assert "content-encoding" not in plain.headers and plain.text == script
        assert plain.headers["cache-control"] == "public, max-age=31536000, immutable"
        page = await client.get("/ui/", headers={"Accept-Encoding": "gzip, br"})
        assert page.headers["cache-control"] == "no-cache"  # a new build is seen at once
        outside = await client.get(
            "/ui/assets/../../secret.txt", headers={"Accept-Encoding": "gzip"}
        )
        assert outside.status_code == 404 and b"outside" not in outside.content


async def test_json_is_compressed_and_event_streams_are_not(
    make_settings: Callable[..., Settings], tmp_path: Path
) -> None:
    settings = make_settings(
        registry_config_path=tmp_path / "fresh" / "config.yaml", seed_examples_from=EXAMPLES
    )
    async with app_client(create_app(settings)) as client:
        tools = await client.get("/tools", headers={"Accept-Encoding": "gzip"})
        assert tools.status_code == 200 and tools.headers["content-encoding"] == "gzip"
        assert tools.json()["tools"]  # decoded by the client as a browser does
        started = await client.post("/workflows/book_hotel/runs", json={"params": HOTEL})
        run_id = started.json()["run_id"]
        events = await client.get(f"/runs/{run_id}/events", headers={"Accept-Encoding": "gzip"})
        assert events.headers["content-type"].startswith("text/event-stream")
        assert "content-encoding" not in events.headers  # streamed as it happens
