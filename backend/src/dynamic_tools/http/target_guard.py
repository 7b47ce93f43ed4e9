"""The SSRF guard: which hosts an outbound request may reach.

A target is allowed when its scheme is http(s) and either its host (or ``host:port``) is in
``ALLOWED_TARGET_HOSTS``, or every address the host resolves to is a global (public) address
(``TARGET_HOSTS_MODE=allow-list`` drops this second way: only listed hosts are reachable).
Private, loopback, link-local (cloud metadata at 169.254.169.254), CGNAT, multicast, reserved
and unspecified addresses are refused unless the host is listed. The check runs right before
each send, after the URL was built, so a name that resolves to a private address is refused too.

An IPv6 address that carries an IPv4 address is judged by that IPv4 address as well: IPv4-mapped
(``::ffff:0:0/96``), IPv4-translated (``::ffff:0:0:0/96``), IPv4-compatible (``::/96``), NAT64
(``64:ff9b::/96``; the local-use ``64:ff9b:1::/48`` is never public), 6to4 (``2002::/16``) and
Teredo (``2001::/32``, server and client), so ``[::127.0.0.1]`` is loopback.

The server's own address (:meth:`TargetGuard.protect_own_address`: loopback on the port it
listens on, and its public base URL) is reachable only under the path prefixes given for it (the
in-process demo API), whatever the allow-list says: a tool or a workflow's ``rest_call`` can
never reach the admin API (``/tools``, ``/workflows``, ``/runs``, ``/mcp``, ...) of the server
that runs it. Only an exact ``host:port`` entry for the base URL (one that names another
process) lifts it for that address.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from collections.abc import Iterable, Sequence
from typing import Literal
from urllib.parse import unquote

from dynamic_tools.errors import TargetRefusedError

METADATA_HOSTS = frozenset({"metadata.google.internal", "metadata", "instance-data"})
_DEFAULT_PORTS = {"http": 80, "https": 443}
TargetHostsMode = Literal["public", "allow-list"]
Address = ipaddress.IPv4Address | ipaddress.IPv6Address

_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")
_IPV4_TRANSLATED = ipaddress.ip_network("::ffff:0:0:0/96")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
# Never public, whatever this Python's ``is_global`` says (3.11 misses some of them).
_NOT_GLOBAL_V6 = tuple(
    ipaddress.ip_network(n)
    for n in ("64:ff9b:1::/48", "100::/64", "2001:db8::/32", "3fff::/20", "5f00::/16")
)
_LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


def _normalise(entry: str) -> str:
    return entry.strip().lower().rstrip(".")


def embedded_ipv4(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address carries (mapped, compatible, NAT64, 6to4, Teredo)."""
    if address.ipv4_mapped is not None:
        return [address.ipv4_mapped]
    low32 = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address in _IPV4_TRANSLATED or address in _NAT64:
        return [low32]
    if address in _IPV4_COMPATIBLE and int(address) > 1:  # not :: nor ::1 (IPv6 themselves)
        return [low32]
    if address.sixtofour is not None:
        return [address.sixtofour]
    if address.teredo is not None:
        return list(address.teredo)
    return []


def non_public_reason(address: Address) -> Address | None:
    """The address (the IPv6 one or an IPv4 it carries) that is not public, or None."""
    if not address.is_global or address.is_multicast:
        return address
    if isinstance(address, ipaddress.IPv6Address):
        if any(address in network for network in _NOT_GLOBAL_V6):
            return address
        for inner in embedded_ipv4(address):
            if not inner.is_global or inner.is_multicast:
                return inner
    return None


def path_is_under(path: str, prefix: str) -> bool:
    """Whether the request path ``path`` is ``prefix`` or below it, once decoded.

    Percent-encoding is undone (three times, for double encoding); a dot segment, a backslash
    or an encoded slash anywhere makes the answer no.
    """
    raw = path.split("?", 1)[0].split("#", 1)[0] or "/"
    decoded = raw
    for _ in range(3):
        decoded = unquote(decoded)
    if "\\" in decoded or decoded.count("/") != raw.count("/"):
        return False
    segments = decoded.split("/")
    if any(segment in (".", "..") for segment in segments):
        return False
    base = prefix.rstrip("/")
    return decoded == base or decoded.startswith(base + "/")


class TargetGuard:
    """Decides whether ``scheme://host:port/path`` may be contacted."""

    def __init__(
        self, allowed_hosts: Iterable[str] = (), *, mode: TargetHostsMode = "public"
    ) -> None:
        self._allowed = {_normalise(h) for h in allowed_hosts if h.strip()}
        self.mode: TargetHostsMode = mode
        self._own: set[tuple[str, int]] = set()
        self._listen_port: int | None = None
        self._own_prefixes: tuple[str, ...] = ()

    def allow(self, entry: str) -> None:
        """Add ``host`` or ``host:port`` to the allow-list."""
        self._allowed.add(_normalise(entry))

    def protect_own_address(
        self,
        host: str,
        port: int,
        *,
        allowed_prefixes: Sequence[str] = (),
        listen_port: int | None = None,
    ) -> None:
        """This server is reachable at ``host:port``: allow only ``allowed_prefixes`` there.

        Loopback names and addresses on ``listen_port`` (the port this process listens on)
        are this server, always. ``host:port`` (the public base URL) and its loopback forms
        are too, unless that exact ``host:port`` is in the allow-list (a base URL that names
        another process). Paths outside the prefixes are refused even when the host is
        listed.
        """
        self._own.add((_normalise(host).strip("[]"), port))
        self._listen_port = listen_port
        self._own_prefixes = tuple("/" + p.strip("/") for p in allowed_prefixes)

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

    async def check(self, scheme: str, host: str, port: int | None, path: str = "/") -> None:
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
        if self._is_own_address(bare, effective_port):
            self._check_own_path(bare, effective_port, path)
            return
        if self.is_listed(bare, effective_port):
            return
        if bare in METADATA_HOSTS:
            raise TargetRefusedError(
                f"host '{bare}' is a metadata service and is not allowed", context={"host": bare}
            )
        if self.mode == "allow-list":
            raise TargetRefusedError(
                f"host '{bare}' is not in ALLOWED_TARGET_HOSTS (TARGET_HOSTS_MODE=allow-list "
                "allows only listed hosts)",
                context={"host": bare},
            )
        for address in await self._addresses(bare, effective_port):
            culprit = non_public_reason(address)
            if culprit is not None:
                shown = str(address) if culprit == address else f"{address}, that is {culprit}"
                raise TargetRefusedError(
                    f"host '{bare}' resolves to a non-public address ({shown}); add it to "
                    "ALLOWED_TARGET_HOSTS to allow it",
                    context={"host": bare, "address": str(address)},
                )

    def _is_own_address(self, host: str, port: int) -> bool:
        loopback = _is_loopback(host)
        if loopback and port == self._listen_port:
            return True
        named = (host, port) in self._own or (
            loopback and any(p == port and _is_loopback(h) for h, p in self._own)
        )
        explicit = f"{host}:{port}" in self._allowed or f"[{host}]:{port}" in self._allowed
        return named and not explicit

    def _check_own_path(self, host: str, port: int, path: str) -> None:
        if any(path_is_under(path, prefix) for prefix in self._own_prefixes):
            return
        reachable = ", ".join(f"{p}/..." for p in self._own_prefixes) or "nothing"
        raise TargetRefusedError(
            f"'{_shown_path(path)}' on {host}:{port} is this server's own API, which tools and "
            f"workflows may not call (reachable there: {reachable})",
            context={"host": host, "port": port},
        )

    async def _addresses(self, host: str, port: int) -> list[Address]:
        try:
            literal = ipaddress.ip_address(host)
        except ValueError:
            pass
        else:
            return [literal]
        loop = asyncio.get_running_loop()
        try:
            infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (socket.gaierror, UnicodeError) as exc:
            reason = exc.strerror if isinstance(exc, socket.gaierror) else "not a valid name"
            raise TargetRefusedError(
                f"host '{host}' does not resolve ({reason})", context={"host": host}
            ) from None
        return [ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos]


def _is_loopback(host: str) -> bool:
    """A loopback name, or a loopback (or unspecified) address, also wrapped in IPv6."""
    if host in _LOOPBACK_NAMES:
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    inner = embedded_ipv4(address) if isinstance(address, ipaddress.IPv6Address) else []
    return any(a.is_loopback or a.is_unspecified for a in (address, *inner))


def _shown_path(path: str) -> str:
    shown = re.split(r"[?#]", path, maxsplit=1)[0]
    return shown if len(shown) <= 80 else shown[:77] + "..."
