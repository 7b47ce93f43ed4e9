"""The document fetcher: allow-listed URLs only, no redirects, size caps, registry-root paths."""

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import httpx
import pytest

from dynamic_tools.errors import DocumentSourceError, TransportError
from dynamic_tools.http.document_fetch import DocumentFetcher
from dynamic_tools.http.target_guard import TargetGuard

Handler = Callable[[httpx.Request], httpx.Response]
DOC = b'{"openapi": "3.1.0", "paths": {}}'


def fetcher(
    handler: Handler, *, roots: list[Path] | None = None, max_bytes: int = 1000
) -> DocumentFetcher:
    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    guard = TargetGuard(["127.0.0.1:8080"])
    return DocumentFetcher(client=client, guard=guard, local_roots=roots or [], max_bytes=max_bytes)


def ok(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, content=DOC, headers={"content-type": "application/json"})


async def test_an_allowed_url_is_fetched_with_its_url_kept_for_relative_servers() -> None:
    got = await fetcher(ok).fetch("http://127.0.0.1:8080/spec.json?v=1")
    assert got.content == DOC and got.source_type == "url" and got.media_type == "application/json"
    assert got.document_url == "http://127.0.0.1:8080/spec.json?v=1"


async def test_a_private_host_not_listed_is_refused_before_any_request() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return ok(request)

    with pytest.raises(DocumentSourceError) as caught:
        await fetcher(handler).fetch("http://127.0.0.1:9999/spec.json?token=abc")
    assert seen == [] and caught.value.violations[0]["rule"] == "host_not_allowed"
    assert caught.value.context["source"] == "http://127.0.0.1:9999/spec.json"  # no query


async def test_redirects_are_refused_with_their_location() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(302, headers={"location": "http://169.254.169.254/latest"})

    with pytest.raises(DocumentSourceError, match=r"169\.254\.169\.254") as caught:
        await fetcher(handler).fetch("http://127.0.0.1:8080/spec.json")
    assert caught.value.violations[0]["rule"] == "redirect"


async def test_error_statuses_sizes_and_transport_failures() -> None:
    with pytest.raises(DocumentSourceError, match="HTTP 404"):
        await fetcher(lambda r: httpx.Response(404)).fetch("http://127.0.0.1:8080/x")
    big = httpx.Response(200, content=b"x" * 2000)
    with pytest.raises(DocumentSourceError) as caught:
        await fetcher(lambda r: big).fetch("http://127.0.0.1:8080/x")
    assert caught.value.violations[0]["rule"] == "max_size"

    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(2):
            yield b"y" * 600

    def streamed(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=chunks())  # no length given

    with pytest.raises(DocumentSourceError, match="limit"):
        await fetcher(streamed).fetch("http://127.0.0.1:8080/x")

    def down(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    with pytest.raises(TransportError):
        await fetcher(down).fetch("http://127.0.0.1:8080/x")


async def test_credentials_and_other_schemes_are_refused() -> None:
    with pytest.raises(DocumentSourceError) as caught:
        await fetcher(ok).fetch("http://user:secret@127.0.0.1:8080/x")
    assert "secret" not in str(caught.value.to_dict())
    with pytest.raises(DocumentSourceError, match="not an http"):
        await fetcher(ok).fetch("ftp://127.0.0.1/x", "url")


async def test_local_paths_only_inside_the_root(tmp_path: Path) -> None:
    root = tmp_path / "registry"
    (root / "specs").mkdir(parents=True)
    (root / "specs" / "a.json").write_bytes(DOC)
    (tmp_path / "outside.json").write_bytes(DOC)
    (root / "specs" / "link.json").symlink_to(tmp_path / "outside.json")
    docs = fetcher(ok, roots=[root])
    assert (await docs.fetch("specs/a.json")).content == DOC
    assert (await docs.fetch(f"file://{root}/specs/a.json")).location == str(root / "specs/a.json")
    for source in [str(tmp_path / "outside.json"), "../outside.json", "specs/link.json"]:
        with pytest.raises(DocumentSourceError) as caught:
            await docs.fetch(source)
        assert caught.value.violations[0]["rule"] == "outside_root"
        assert str(tmp_path / "outside.json") in caught.value.message
        assert caught.value.context["path"] == str(tmp_path / "outside.json")
    with pytest.raises(DocumentSourceError) as caught:
        await docs.fetch("specs/missing.json")
    assert caught.value.violations[0]["rule"] == "not_found"
    (root / "big.json").write_bytes(b"z" * 5000)
    with pytest.raises(DocumentSourceError, match="limit"):
        await docs.fetch("big.json")


async def test_no_roots_means_any_path_for_the_operator(tmp_path: Path) -> None:
    (tmp_path / "doc.json").write_bytes(DOC)
    client = httpx.AsyncClient(transport=httpx.MockTransport(ok))
    anywhere = DocumentFetcher(client=client, guard=TargetGuard(), local_roots=None)
    assert (await anywhere.fetch(str(tmp_path / "doc.json"))).content == DOC
