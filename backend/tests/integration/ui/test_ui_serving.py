"""Serving the UI: the bundle at /ui (open without the API token), / leading there, and a
clear 503 page, never a 500, when the bundle has not been built."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx
from fastapi import FastAPI

from dynamic_tools.api.app import create_app
from dynamic_tools.api.routes.ui import install_ui
from dynamic_tools.settings import Settings
from tests.support.app_client import app_client


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
