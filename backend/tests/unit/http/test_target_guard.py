import pytest

from dynamic_tools.bootstrap import make_guard
from dynamic_tools.errors import TargetRefusedError
from dynamic_tools.http.target_guard import TargetGuard
from dynamic_tools.settings import Settings


@pytest.mark.parametrize(
    ("host", "port"),
    [
        ("169.254.169.254", 80),
        ("127.0.0.1", 8000),
        ("10.0.0.5", 443),
        ("192.168.1.1", 80),
        ("::1", 80),
        ("::ffff:169.254.169.254", 80),
        ("100.64.0.1", 80),
        ("0.0.0.0", 80),
        ("localhost", 80),
        ("metadata.google.internal", 80),
        ("fd00:ec2::254", 80),
    ],
)
async def test_non_public_targets_are_refused(host: str, port: int) -> None:
    with pytest.raises(TargetRefusedError):
        await TargetGuard().check("http", host, port)


async def test_listed_hosts_are_allowed_by_host_or_host_and_port() -> None:
    guard = TargetGuard(["127.0.0.1:8000", "internal.example"])
    await guard.check("http", "127.0.0.1", 8000)
    with pytest.raises(TargetRefusedError):
        await guard.check("http", "127.0.0.1", 8001)
    assert guard.is_listed("internal.example", 1234)


async def test_public_addresses_pass_and_other_schemes_do_not() -> None:
    await TargetGuard().check("https", "93.184.215.14", None)
    with pytest.raises(TargetRefusedError):
        await TargetGuard().check("file", "93.184.215.14", None)
    with pytest.raises(TargetRefusedError):
        await TargetGuard().check("gopher", "93.184.215.14", None)


async def test_unresolvable_hosts_are_refused() -> None:
    with pytest.raises(TargetRefusedError) as info:
        await TargetGuard().check("https", "no-such-host.invalid", None)
    assert "does not resolve" in info.value.message


@pytest.mark.parametrize(
    "host",
    [
        "::127.0.0.1",  # IPv4-compatible ::/96
        "[::127.0.0.1]",
        "::ffff:127.0.0.1",  # IPv4-mapped ::ffff:0:0/96
        "::ffff:0:7f00:1",  # IPv4-translated ::ffff:0:0:0/96
        "64:ff9b::7f00:1",  # NAT64 well-known prefix 64:ff9b::/96
        "64:ff9b::a9fe:a9fe",  # NAT64 of the metadata address
        "64:ff9b:1::7f00:1",  # NAT64 local-use prefix 64:ff9b:1::/48
        "2002:7f00:1::",  # 6to4 of 127.0.0.1
        "2002:a9fe:a9fe::1",  # 6to4 of 169.254.169.254
        "2001:0:7f00:1::1",  # Teredo, server 127.0.0.1
        "2001:0:4136:e378:8000:63bf:80ff:fffe",  # Teredo, client 127.0.0.1
    ],
)
async def test_ipv4_wrapped_in_ipv6_is_judged_by_its_ipv4_address(host: str) -> None:
    with pytest.raises(TargetRefusedError) as info:
        await TargetGuard().check("http", host, 8000)
    assert "non-public" in info.value.message


@pytest.mark.parametrize("host", ["::8.8.8.8", "64:ff9b::808:808", "2002:808:808::1"])
async def test_public_ipv4_wrapped_in_ipv6_stays_allowed(host: str) -> None:
    await TargetGuard().check("http", host, 80)


DEMO = "/demo/travel"


def own_server_guard(*allowed: str) -> TargetGuard:
    guard = TargetGuard(allowed)
    guard.protect_own_address("127.0.0.1", 8000, allowed_prefixes=[DEMO], listen_port=8000)
    return guard


@pytest.mark.parametrize(
    "path",
    ["/demo/travel/flights", "/demo/travel", "/demo/travel/bookings/BK-1/cancel"],
)
async def test_the_demo_api_is_reachable_on_the_servers_own_address(path: str) -> None:
    await own_server_guard().check("http", "127.0.0.1", 8000, path)


@pytest.mark.parametrize(
    ("host", "path"),
    [
        ("127.0.0.1", "/tools/search_flights"),
        ("127.0.0.1", "/workflows"),
        ("127.0.0.1", "/runs/r-1/cancel"),
        ("127.0.0.1", "/catalogs"),
        ("127.0.0.1", "/mcp"),
        ("127.0.0.1", "/"),
        ("127.0.0.1", "/demo/travelling"),
        ("127.0.0.1", "/demo/travel/../../tools"),
        ("127.0.0.1", "/demo/travel/%2e%2e/%2e%2e/tools"),
        ("127.0.0.1", "/demo/travel/%252e%252e/tools"),
        ("127.0.0.1", "/demo/travel/..%2f..%2ftools"),
        ("127.0.0.1", "/demo/travel\\..\\tools"),
        ("localhost", "/tools"),
        ("::1", "/tools"),
        ("::ffff:127.0.0.1", "/tools"),
    ],
)
async def test_the_servers_own_admin_routes_are_never_a_target(host: str, path: str) -> None:
    # Even when the operator lists the loopback host (or this very address) for another reason.
    guard = own_server_guard("127.0.0.1", "localhost", "::1", "::ffff:127.0.0.1", "127.0.0.1:8000")
    with pytest.raises(TargetRefusedError) as info:
        await guard.check("http", host, 8000, path)
    assert "this server" in info.value.message
    await guard.check("http", host, 9000, path)  # another port of a listed host is fine


async def test_a_base_url_naming_another_process_is_lifted_only_by_its_exact_entry() -> None:
    # PUBLIC_BASE_URL points at another process (127.0.0.1:9000); this one listens on 8000.
    listed = TargetGuard(["127.0.0.1:9000"])
    listed.protect_own_address("127.0.0.1", 9000, allowed_prefixes=[DEMO], listen_port=8000)
    await listed.check("http", "127.0.0.1", 9000, "/tools")
    with pytest.raises(TargetRefusedError):
        await listed.check("http", "127.0.0.1", 8000, "/tools")
    unlisted = TargetGuard(["127.0.0.1"])
    unlisted.protect_own_address("127.0.0.1", 9000, allowed_prefixes=[DEMO], listen_port=8000)
    with pytest.raises(TargetRefusedError):
        await unlisted.check("http", "localhost", 9000, "/tools")


async def test_allow_list_mode_refuses_public_hosts_that_are_not_listed() -> None:
    guard = TargetGuard(["api.example.com"], mode="allow-list")
    with pytest.raises(TargetRefusedError) as info:
        await guard.check("https", "93.184.215.14", None)
    assert "ALLOWED_TARGET_HOSTS" in info.value.message
    assert guard.is_listed("api.example.com", 443)


async def test_the_servers_guard_follows_its_settings() -> None:
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None,
        port=8123,
        public_base_url="https://tools.example.com/dt",
        allowed_target_hosts=["api.partner.example"],
        target_hosts_mode="allow-list",
    )
    guard = make_guard(settings)
    await guard.check("https", "tools.example.com", None, "/dt/demo/travel/flights")
    await guard.check("http", "127.0.0.1", 8123, "/dt/demo/travel/flights")
    await guard.check("https", "api.partner.example", None, "/anything")
    for scheme, host, port, path in [
        ("https", "tools.example.com", None, "/dt/tools"),
        ("https", "tools.example.com", None, "/dt/demo/travel/../../runs"),
        ("http", "localhost", 8123, "/dt/workflows"),
        ("https", "93.184.215.14", None, "/"),  # public, but not listed
    ]:
        with pytest.raises(TargetRefusedError):
            await guard.check(scheme, host, port, path)
    without_demo = make_guard(settings.model_copy(update={"enable_demo_api": False}))
    with pytest.raises(TargetRefusedError):
        await without_demo.check("https", "tools.example.com", None, "/dt/demo/travel/flights")
