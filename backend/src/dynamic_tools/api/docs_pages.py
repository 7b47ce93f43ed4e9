"""``/docs`` (Swagger UI) and ``/redoc`` (ReDoc), served with their files from this server.

FastAPI's own pages load Swagger UI and ReDoc from a CDN (and ReDoc's fonts from Google), so
they stay blank on a machine without internet. Here the same pages (FastAPI's
``get_swagger_ui_html`` / ``get_redoc_html``) name files under :data:`ASSETS_PATH`, served from
the ``fastapi-offline`` package (PyPI), which ships Swagger UI's bundle and CSS, ReDoc's
standalone bundle and a favicon. The files hold no data: like the UI's, they are open paths
(``api/edge.py``); the pages themselves keep their scope (``access/policy.py``).
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import (
    get_redoc_html,
    get_swagger_ui_html,
    get_swagger_ui_oauth2_redirect_html,
)
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.staticfiles import StaticFiles

ASSETS_PATH = "/docs/assets"
DOCS_PATH = "/docs"
REDOC_PATH = "/redoc"
OAUTH2_REDIRECT_PATH = "/docs/oauth2-redirect"


def assets_directory() -> Path:
    """Where the installed ``fastapi-offline`` keeps Swagger UI's and ReDoc's files."""
    return Path(str(files("fastapi_offline") / "static"))


def install_docs_pages(app: FastAPI) -> None:
    """Serve ``/docs``, ``/docs/oauth2-redirect``, ``/redoc`` and their files from this app.

    The app is made with ``docs_url=None, redoc_url=None`` (FastAPI's CDN pages off).
    """
    title = f"{app.title} — API"
    openapi_url = app.openapi_url or "/openapi.json"

    async def swagger_ui(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_swagger_ui_html(
            openapi_url=root + openapi_url,
            title=title,
            swagger_js_url=f"{root}{ASSETS_PATH}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{ASSETS_PATH}/swagger-ui.css",
            swagger_favicon_url=f"{root}{ASSETS_PATH}/favicon.png",
            oauth2_redirect_url=root + OAUTH2_REDIRECT_PATH,
        )

    async def oauth2_redirect(request: Request) -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()

    async def redoc(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_redoc_html(
            openapi_url=root + openapi_url,
            title=title,
            redoc_js_url=f"{root}{ASSETS_PATH}/redoc.standalone.js",
            redoc_favicon_url=f"{root}{ASSETS_PATH}/favicon.png",
            with_google_fonts=False,
        )

    app.mount(ASSETS_PATH, StaticFiles(directory=assets_directory()), name="docs-assets")
    app.add_route(DOCS_PATH, swagger_ui, include_in_schema=False)
    app.add_route(OAUTH2_REDIRECT_PATH, oauth2_redirect, include_in_schema=False)
    app.add_route(REDOC_PATH, redoc, include_in_schema=False)


__all__ = ["ASSETS_PATH", "assets_directory", "install_docs_pages"]
