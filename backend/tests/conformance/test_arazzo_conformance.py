"""Arazzo conformance: every OAI example imports and validates; every runner fixture case runs
through the real import and engine against a loopback mock server and gives what it expects
(except the cases listed, with why, in ``KNOWN_FAILURES`` and docs/arazzo.md)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from dynamic_tools.settings import Settings
from tests.support.arazzo_conformance import KNOWN_FAILURES, run_all


@pytest.fixture
def fixture_settings(
    tmp_path: Path, make_settings: Callable[..., Settings]
) -> Callable[[str, list[str]], Settings]:
    def make(name: str, hosts: list[str]) -> Settings:
        root = tmp_path / name
        (root / "secrets").mkdir(parents=True)
        return make_settings(
            secrets_dir=root / "secrets",
            registry_config_path=root / "config.yaml",
            data_dir=root / "data",
            allowed_target_hosts=hosts,
        )

    return make


async def test_every_runner_fixture_case_gives_what_it_expects(
    fixture_settings: Callable[[str, list[str]], Settings],
) -> None:
    results = await run_all(fixture_settings)
    assert len(results) >= 12, [r.case for r in results]
    unexpected = [
        f"{r.fixture}/{r.case}: {r.why}"
        for r in results
        if not r.passed and (r.fixture, r.case) not in KNOWN_FAILURES
    ]
    assert not unexpected, "\n".join(unexpected)
    fixed = [
        f"{r.fixture}/{r.case}"
        for r in results
        if r.passed and (r.fixture, r.case) in KNOWN_FAILURES
    ]
    assert not fixed, f"passes now, drop it from KNOWN_FAILURES and the docs: {fixed}"
