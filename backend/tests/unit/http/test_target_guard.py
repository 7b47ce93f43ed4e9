import pytest

from dynamic_tools.errors import TargetRefusedError
from dynamic_tools.http.target_guard import TargetGuard


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
