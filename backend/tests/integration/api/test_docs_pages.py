"""``/docs`` and ``/redoc`` work on a machine without internet: their pages name only files of
this server (Swagger UI's and ReDoc's, from the ``fastapi-offline`` package), and each answers
200. The files are open like the UI's; the pages keep their ``read`` scope."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from dynamic_tools.api.app import create_app
from dynamic_tools.settings import Settings
from tests.support.app_client import app_client

REFERENCE = re.compile(r"""(?:src|href)\s*=\s*["']([^"']+)["']""")


@pytest.mark.parametrize(
    ("page", "wanted"),
    [
        ("/docs", {"swagger-ui-bundle.js", "swagger-ui.css", "favicon.png"}),
        ("/redoc", {"redoc.standalone.js", "favicon.png"}),
    ],
)
async def test_a_document_page_names_only_this_servers_files_and_they_answer(
    make_settings: Callable[..., Settings], page: str, wanted: set[str]
) -> None:
    async with app_client(create_app(make_settings())) as client:
        html = await client.get(page)
        referenced = REFERENCE.findall(html.text)
        answers = {url: await client.get(url) for url in referenced}
        spec = await client.get("/openapi.json")
    assert html.status_code == 200 and html.headers["content-type"].startswith("text/html")
    assert "http://" not in html.text and "https://" not in html.text  # no CDN, no fonts
    assert referenced and all(url.startswith("/docs/assets/") for url in referenced)
    assert {url.rsplit("/", 1)[-1] for url in referenced} == wanted
    for url, answer in answers.items():
        assert answer.status_code == 200, url
        assert len(answer.content) > 1000, url
    assert "'/openapi.json'" in html.text or '"/openapi.json"' in html.text
    assert spec.status_code == 200


async def test_the_swagger_oauth2_redirect_page_is_served(
    make_settings: Callable[..., Settings],
) -> None:
    async with app_client(create_app(make_settings())) as client:
        page = await client.get("/docs/oauth2-redirect")
    assert page.status_code == 200 and "oauth2" in page.text.lower()


async def test_the_files_are_open_and_the_pages_keep_their_scope(
    tmp_path: Path, make_settings: Callable[..., Settings]
) -> None:
    guarded = make_settings(registry_config_path=tmp_path / "g" / "config.yaml", api_token="t" * 32)
    async with app_client(create_app(guarded)) as client:
        asset = await client.get("/docs/assets/swagger-ui.css")
        page = await client.get("/docs")
        redoc = await client.get("/redoc")
        allowed = await client.get("/docs", headers={"Authorization": "Bearer " + "t" * 32})
    assert asset.status_code == 200
    assert page.status_code == redoc.status_code == 401
    assert allowed.status_code == 200
