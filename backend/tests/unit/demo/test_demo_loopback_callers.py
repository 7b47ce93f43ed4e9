"""Only an address this machine vouches for is a loopback caller of the demo's controls."""

from __future__ import annotations

import pytest

from dynamic_tools.demo.access import from_loopback


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("::1", True),
        ("::ffff:127.0.0.1", True),  # IPv4 on an IPv6 socket
        ("10.0.0.5", False),
        ("192.168.1.20", False),
        ("203.0.113.7", False),
        ("::ffff:10.0.0.5", False),
        ("fe80::1%eth0", False),
        ("localhost", False),  # a name, not an address the server saw
        ("testclient", False),
        ("", False),
        (None, False),
    ],
)
def test_loopback_callers(host: str | None, loopback: bool) -> None:
    assert from_loopback(host) is loopback
