"""The web UI: the built bundle (``frontend/dist``) served at ``/ui``; ``/`` leads there.

The bundle is looked up on every request, so a server started before ``make`` built it serves
it as soon as it exists. Without it, ``/ui`` answers 503 with a page saying how to build it.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import HTMLResponse, RedirectResponse
from starlette.staticfiles import StaticFiles
from starlette.types import Receive, Scope, Send

DEFAULT_DIST = Path(__file__).resolve().parents[5] / "frontend" / "dist"

_MISSING = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Dynamic Tools: UI not built</title>
<style>body{{font-family:system-ui,sans-serif;max-width:720px;margin:60px auto;color:#1f2933}}
code,pre{{background:#f3f5f7;padding:2px 6px;border-radius:4px}}</style></head>
<body><h1>The web UI is not built</h1>
<p>No bundle was found at <code>{dist}</code>.</p>
<p>Build it from the repository root with <code>make frontend/dist</code> (or just
<code>make run</code>, which builds it when it is missing), or by hand:</p>
<pre>cd frontend &amp;&amp; npm ci &amp;&amp; npm run build</pre>
<p>The REST API works without it: see <a href="/docs">/docs</a>.</p></body></html>
"""


class BundleApp:
    """Serves the bundle's files (``index.html`` for ``/ui/``) or the 503 page when absent."""

    def __init__(self, dist: Path) -> None:
        self.dist = dist
        self.files = StaticFiles(directory=dist, html=True, check_dir=False)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Handle one request under ``/ui``."""
        if scope["type"] == "http" and not (self.dist / "index.html").is_file():
            page = _MISSING.format(dist=escape(str(self.dist)))
            response = HTMLResponse(page, status_code=503, headers={"Retry-After": "30"})
            await response(scope, receive, send)
            return
        await self.files(scope, receive, send)


def install_ui(app: FastAPI, dist: Path | None = None) -> None:
    """Mount the UI at ``/ui`` and redirect ``/`` to it."""

    @app.get("/", include_in_schema=False)
    async def root() -> RedirectResponse:
        return RedirectResponse("/ui/")

    app.mount("/ui", BundleApp(dist or DEFAULT_DIST), name="ui")
