"""Reading an answer's body with a limit on what it decodes to, whatever its content encoding.

httpx decodes ``gzip``/``deflate`` (and ``br``/``zstd`` when their packages are installed) one
received chunk at a time, each chunk in full: a 64 KB chunk of a compression bomb can expand to
tens of megabytes (gzip) or gigabytes (brotli) before any size check runs. So answers are read
raw here and decoded by decompressors that take an output limit — zlib's ``max_length``,
brotli's ``output_buffer_limit``, zstd's ``max_length`` — so no more than ``limit + 1`` decoded
bytes are ever produced, for every encoding alike.

Encodings read: ``identity``, ``gzip`` (``x-gzip``), ``deflate`` (zlib-wrapped or raw), ``br``,
``zstd``. An unknown coding is kept as it came (httpx does the same): the bytes are then
summarized as binary. Stacked codings (``gzip, br``) are refused: each stage would need its own
limit, and no API we know sends them.
"""

from __future__ import annotations

import sys
import zlib
from collections.abc import AsyncIterator
from typing import Protocol

import brotli
import httpx

if sys.version_info >= (3, 14):  # pragma: no cover - the standard library's own
    from compression import zstd
else:
    from backports import zstd

__all__ = ["ACCEPT_ENCODING", "UndecodableBody", "read_limited", "read_response"]

#: what requests announce: every coding :func:`read_limited` decodes with a limit
ACCEPT_ENCODING = "gzip, deflate, br, zstd"


class UndecodableBody(Exception):
    """The body's content encoding cannot be read (corrupt data or stacked codings)."""


class _Decoder(Protocol):
    def decode(self, data: bytes, limit: int) -> bytes:
        """At most ``limit`` bytes decoded from ``data`` (and input held back before)."""
        ...


class _Identity:
    def decode(self, data: bytes, limit: int) -> bytes:
        return data[:limit]


class _Zlib:
    """gzip and deflate: ``max_length`` bounds each call's output."""

    def __init__(self, wbits: int, *, raw_fallback: bool = False) -> None:
        self._inflate = zlib.decompressobj(wbits)
        self._raw_fallback = raw_fallback  # deflate sent without its zlib wrapper
        self._started = False

    def decode(self, data: bytes, limit: int) -> bytes:
        try:
            out = self._inflate.decompress(data, limit)
        except zlib.error:
            if not (self._raw_fallback and not self._started):
                raise
            self._inflate = zlib.decompressobj(-zlib.MAX_WBITS)
            out = self._inflate.decompress(data, limit)
        self._started = True
        return out


class _Brotli:
    def __init__(self) -> None:
        self._decompressor = brotli.Decompressor()

    def decode(self, data: bytes, limit: int) -> bytes:
        if self._decompressor.is_finished():
            return b""
        out: bytes = self._decompressor.process(data, output_buffer_limit=limit)
        return out[:limit]


class _Zstd:
    def __init__(self) -> None:
        self._decompressor = zstd.ZstdDecompressor()

    def decode(self, data: bytes, limit: int) -> bytes:
        if self._decompressor.eof:  # trailing frames or garbage: what came first is the body
            return b""
        return bytes(self._decompressor.decompress(data, max_length=limit))


def _decoder(content_encoding: str) -> _Decoder:
    codings = [c.strip().lower() for c in content_encoding.split(",") if c.strip()]
    codings = [c for c in codings if c != "identity"]
    if not codings:
        return _Identity()
    if len(codings) > 1:
        raise UndecodableBody(f"stacked content encodings ({content_encoding}) are not read")
    coding = codings[0]
    if coding in ("gzip", "x-gzip"):
        return _Zlib(zlib.MAX_WBITS | 16)
    if coding == "deflate":
        return _Zlib(zlib.MAX_WBITS, raw_fallback=True)
    if coding == "br":
        return _Brotli()
    if coding == "zstd":
        return _Zstd()
    return _Identity()  # an unknown coding: the bytes as they came


async def read_limited(
    chunks: AsyncIterator[bytes], content_encoding: str, limit: int
) -> tuple[bytes, bool]:
    """The body decoded, up to ``limit`` bytes, and whether it was cut there.

    ``chunks`` are the raw bytes as received (``Response.aiter_raw()``). Reading stops as soon
    as more than ``limit`` bytes have been decoded.

    Raises:
        UndecodableBody: the coding is not readable, or the data is corrupt.
    """
    decoder = _decoder(content_encoding)
    body = bytearray()
    try:
        async for chunk in chunks:
            body += decoder.decode(chunk, limit + 1 - len(body))
            if len(body) > limit:
                return bytes(body[:limit]), True
        # input held back by a decoder (a limit reached earlier never gets here)
        body += decoder.decode(b"", limit + 1 - len(body))
    except (zlib.error, brotli.error, zstd.ZstdError) as exc:
        raise UndecodableBody(f"the {content_encoding} body is corrupt ({exc})") from None
    if len(body) > limit:
        return bytes(body[:limit]), True
    return bytes(body), False


async def read_response(response: httpx.Response, limit: int) -> tuple[bytes, bool]:
    """A streamed response's body decoded up to ``limit`` bytes, and whether it was cut.

    A response an in-memory transport (a test double) already read is taken as httpx decoded
    it.
    """
    if response.is_stream_consumed:
        return await read_limited(_once(response.content), "", limit)
    return await read_limited(
        response.aiter_raw(), response.headers.get("content-encoding", ""), limit
    )


async def _once(content: bytes) -> AsyncIterator[bytes]:
    yield content
