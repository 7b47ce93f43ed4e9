"""The SSRF guard: which hosts an outbound request may reach.

A target is allowed when its scheme is http(s) and either its host (or ``host:port``) is in
``ALLOWED_TARGET_HOSTS``, or every address the host resolves to is a global (public) address.
Private, loopback, link-local (cloud metadata at 169.254.169.254), CGNAT, multicast, reserved
and unspecified addresses are refused unless the host is listed. The check runs right before
each send, after the URL was built, so a name that resolves to a private address is refused too.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Iterable

from dynamic_tools.errors import TargetRefusedError

METADATA_HOSTS = frozenset({"metadata.google.internal", "metadata", "instance-data"})
_DEFAULT_PORTS = {"http": 80, "https": 443}


def _normalise(entry: str) -> str:
    return entry.strip().lower().rstrip(".")


class TargetGuard:
    """Decides whether ``scheme://host:port`` may be contacted."""

    def __init__(self, allowed_hosts: Iterable[str] = ()) -> None:
        self._allowed = {_normalise(h) for h in allowed_hosts if h.strip()}

    def allow(self, entry: str) -> None:
        """Add ``host`` or ``host:port`` to the allow-list (e.g. the demo API's own address)."""
        self._allowed.add(_normalise(entry))

    @property
    def allowed_hosts(self) -> list[str]:
        """The allow-list, sorted."""
        return sorted(self._allowed)

    def is_listed(self, host: str, port: int) -> bool:
        """Whether ``host`` (any port) or ``host:port`` is in the allow-list."""
        host = _normalise(host).strip("[]")
        return (
            host in self._allowed
            or f"{host}:{port}" in self._allowed
            or (f"[{host}]:{port}" in self._allowed)
        )

    async def check(self, scheme: str, host: str, port: int | None) -> None:
        """Raise :class:`TargetRefusedError` unless the target may be contacted."""
        scheme = scheme.lower()
        if scheme not in _DEFAULT_PORTS:
            raise TargetRefusedError(
                f"scheme '{scheme}' is not allowed; use http or https", context={"scheme": scheme}
            )
        if not host:
            raise TargetRefusedError("the URL has no host")
        effective_port = port or _DEFAULT_PORTS[scheme]
        bare = _normalise(host).strip("[]")
        if self.is_listed(bare, effective_port):
            return
        if bare in METADATA_HOSTS:
            raise TargetRefusedError(
                f"host '{bare}' is a metadata service and is not allowed", context={"host": bare}
            )
        for address in await self._addresses(bare, effective_port):
            if not address.is_global or address.is_multicast:
                raise TargetRefusedError(
                    f"host '{bare}' resolves to a non-public address ({address}); add it to "
                    "ALLOWED_TARGET_HOSTS to allow it",
                    context={"host": bare, "address": str(address)},
                )

    async def _addresses(
        self, host: str, port: int
    ) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
        try:
            literal = ipaddress.ip_address(host)
        except ValueError:
            pass
        else:
            return [_unmap(literal)]
        loop = asyncio.get_running_loop()
        try:
            infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except socket.gaierror as exc:
            raise TargetRefusedError(
                f"host '{host}' does not resolve ({exc.strerror})", context={"host": host}
            ) from None
        return [_unmap(ipaddress.ip_address(info[4][0])) for info in infos]


def _unmap(
    address: ipaddress.IPv4Address | ipaddress.IPv6Address,
) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address
