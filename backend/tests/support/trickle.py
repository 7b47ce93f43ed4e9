"""An HTTP peer that answers one byte at a time: every read succeeds, the answer never ends.

Each read finishes well within a per-read timeout, so only a deadline on the whole exchange
stops a call to it. ``/headers`` trickles the status line and headers, anything else sends its
headers at once and trickles the body. Bounded: a connection stops after ``max_bytes`` bytes
or when the caller goes away; the server stops with its block.
"""

from __future__ import annotations

import socket
import socketserver
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

INTERVAL_S = 0.2
MAX_BYTES = 600  # two minutes at the interval: far past any deadline a test sets


class _Handler(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        sock: socket.socket = self.request
        sock.settimeout(10)
        request = b""
        while b"\r\n\r\n" not in request and len(request) < 65_536:
            data = sock.recv(4096)
            if not data:
                return
            request += data
        path = request.split(b" ", 2)[1] if request.count(b" ") >= 2 else b"/"
        head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100000\r\n"
        slow = head + b"X-Slow: " + b"a" * MAX_BYTES if path.startswith(b"/headers") else b""
        try:
            if not slow:
                sock.sendall(head + b"\r\n")
            for byte in (slow or b"x" * MAX_BYTES)[:MAX_BYTES]:
                sock.sendall(bytes([byte]))
                time.sleep(INTERVAL_S)
        except OSError:  # the caller gave up: what a deadline does
            return


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


@contextmanager
def trickling_server() -> Iterator[str]:
    """Serve on a free loopback port until the block ends; yields the base URL."""
    server = _Server(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
