"""An API whose answers are compression bombs: a few hundred KB that decode to 1 GB of zeros.

Built chunk by chunk, so the bombs cost their compressed size to make, never the gigabyte.
"""

from __future__ import annotations

import sys
import zlib
from functools import cache

import brotli
from fastapi import FastAPI
from fastapi.responses import Response

if sys.version_info >= (3, 14):  # pragma: no cover
    from compression import zstd
else:
    from backports import zstd

DECODED_BYTES = 1 << 30  # 1 GB of zeros once decoded
_CHUNK = b"\0" * (1 << 20)


@cache
def bomb(coding: str) -> bytes:
    """``DECODED_BYTES`` zeros compressed with ``coding`` (gzip, br or zstd)."""
    parts: list[bytes] = []
    if coding == "gzip":
        packer = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
        parts = [packer.compress(_CHUNK) for _ in range(DECODED_BYTES // len(_CHUNK))]
        parts.append(packer.flush())
    elif coding == "br":
        compressor = brotli.Compressor(quality=1)
        parts = [compressor.process(_CHUNK) for _ in range(DECODED_BYTES // len(_CHUNK))]
        parts.append(compressor.finish())
    else:
        compressor = zstd.ZstdCompressor()
        parts = [compressor.compress(_CHUNK) for _ in range(DECODED_BYTES // len(_CHUNK))]
        parts.append(compressor.flush())
    return b"".join(parts)


def bomb_app() -> FastAPI:
    """``/gzip``, ``/br``, ``/zstd``: bombs as JSON; ``/nul``: 5 MB of NUL bytes, plain."""
    app = FastAPI(openapi_url=None)

    def answer(coding: str) -> Response:
        return Response(
            bomb(coding),
            media_type="application/json",
            headers={"Content-Encoding": coding},
        )

    app.get("/gzip")(lambda: answer("gzip"))
    app.get("/br")(lambda: answer("br"))
    app.get("/zstd")(lambda: answer("zstd"))
    app.get("/nul")(lambda: Response(b"\0" * 5_000_000, media_type="text/plain"))
    return app
