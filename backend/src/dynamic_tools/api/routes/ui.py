"""The web UI: the built bundle (``frontend/dist``) served at ``/ui``; ``/`` leads there.

The bundle is looked up on every request, so a server started before ``make`` built it serves
it as soon as it exists. Without it, ``/ui`` answers 503 with a page saying how to build it.

Served like a product: the build writes a brotli and a gzip copy of each text file, sent as
they are to a browser that accepts them (``Content-Encoding``, ``Vary: Accept-Encoding``);
hashed assets (``/ui/assets/…``) are cached for a year as immutable, ``index.html`` is
revalidated on every load (``no-cache``) so a new build is picked up at once.
"""

from __future__ import annotations

from html import escape
from mimetypes import guess_type
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import HTMLResponse, RedirectResponse
from starlette.datastructures import Headers, MutableHeaders
from starlette.responses import FileResponse
from starlette.staticfiles import StaticFiles
from starlette.types import Message, Receive, Scope, Send

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


IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"
ENCODINGS = (("br", ".br"), ("gzip", ".gz"))  # preferred first
ASSETS = "assets/"


class BundleApp:
    """Serves the bundle's files (``index.html`` for ``/ui/``) or the 503 page when absent."""

    def __init__(self, dist: Path) -> None:
        self.dist = dist
        self.files = StaticFiles(directory=dist, html=True, check_dir=False)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Handle one request under ``/ui``."""
        if scope["type"] != "http":
            await self.files(scope, receive, send)
            return
        if not (self.dist / "index.html").is_file():
            page = _MISSING.format(dist=escape(str(self.dist)))
            response = HTMLResponse(page, status_code=503, headers={"Retry-After": "30"})
            await response(scope, receive, send)
            return
        relative = str(scope.get("path", "")).removeprefix(str(scope.get("root_path", "")))
        relative = relative.removeprefix("/ui").lstrip("/")
        cache = IMMUTABLE if relative.startswith(ASSETS) else REVALIDATE
        encoded = self._encoded(relative, Headers(scope=scope).get("accept-encoding", ""))
        if encoded is not None and scope.get("method") in ("GET", "HEAD"):
            path, encoding = encoded
            headers = {"Content-Encoding": encoding, "Vary": "Accept-Encoding"}
            headers["Cache-Control"] = cache
            media = guess_type(relative or "index.html")[0]  # the original's, not the .br's
            await FileResponse(path, headers=headers, media_type=media)(scope, receive, send)
            return

        async def cached(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] < 400:
                MutableHeaders(scope=message)["Cache-Control"] = cache
            await send(message)

        await self.files(scope, receive, cached)

    def _encoded(self, relative: str, accepted: str) -> tuple[Path, str] | None:
        """The precompressed copy of a bundle file the client accepts, if the build made one."""
        name = relative or "index.html"
        if name.endswith("/") or ".." in Path(name).parts:
            return None
        wanted = {part.split(";")[0].strip().lower() for part in accepted.split(",")}
        for encoding, suffix in ENCODINGS:
            if encoding not in wanted:
                continue
            candidate = (self.dist / f"{name}{suffix}").resolve()
            if candidate.is_relative_to(self.dist.resolve()) and candidate.is_file():
                return candidate, encoding
        return None


def install_ui(app: FastAPI, dist: Path | None = None) -> None:
    """Mount the UI at ``/ui`` and redirect ``/`` to it."""

    @app.get("/", include_in_schema=False)
    async def root() -> RedirectResponse:
        return RedirectResponse("/ui/")

    app.mount("/ui", BundleApp(dist or DEFAULT_DIST), name="ui")
