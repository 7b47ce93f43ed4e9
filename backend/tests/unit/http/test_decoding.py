"""Bodies decode with an output limit whatever their encoding: a bomb stops at the limit."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import AsyncIterator

import brotli
import pytest

from dynamic_tools.http.decoding import UndecodableBody, read_limited

try:
    from compression import zstd  # type: ignore[import-not-found]
except ImportError:
    from backports import zstd

LIMIT = 100_000
BOMB = b"\0" * 50_000_000  # 50 MB of zeros: a few KB compressed


async def chunks(data: bytes, size: int = 16_384) -> AsyncIterator[bytes]:
    for i in range(0, len(data), size):
        yield data[i : i + size]


def deflate_raw(data: bytes) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush()


ENCODERS = {
    "gzip": lambda d: gzip.compress(d, 9),
    "x-gzip": lambda d: gzip.compress(d, 9),
    "deflate": zlib.compress,
    "br": lambda d: brotli.compress(d, quality=5),
    "zstd": zstd.compress,
}


@pytest.mark.parametrize("coding", sorted(ENCODERS))
async def test_each_encoding_reads_back_exactly(coding: str) -> None:
    data = b'{"hello": "world"}' * 1000
    body, cut = await read_limited(chunks(ENCODERS[coding](data)), coding, LIMIT)
    assert (body, cut) == (data, False)


@pytest.mark.parametrize("coding", sorted(ENCODERS))
async def test_a_bomb_stops_at_the_limit(coding: str) -> None:
    packed = ENCODERS[coding](BOMB)
    assert len(packed) < 1_000_000
    body, cut = await read_limited(chunks(packed), coding, LIMIT)
    assert cut and len(body) == LIMIT


async def test_raw_deflate_and_identity_and_unknown_codings() -> None:
    data = b"plain text " * 100
    assert await read_limited(chunks(deflate_raw(data)), "deflate", LIMIT) == (data, False)
    assert await read_limited(chunks(data), "identity", LIMIT) == (data, False)
    assert await read_limited(chunks(data), "", 50) == (data[:50], True)
    assert await read_limited(chunks(data), "compress", LIMIT) == (data, False)  # as it came


async def test_corrupt_and_stacked_codings_are_refused_by_name() -> None:
    with pytest.raises(UndecodableBody, match="gzip"):
        await read_limited(chunks(b"\x1f\x8b\x08 not gzip at all"), "gzip", LIMIT)
    with pytest.raises(UndecodableBody, match="stacked"):
        await read_limited(chunks(b""), "gzip, br", LIMIT)
