"""Durable runs whose calls HTTP cannot make, or that aim at the server itself, all end.

Before, a non-ASCII header value (UnicodeEncodeError), a base URL such as
``http://0177.0.0.1:…`` (httpx.InvalidURL) or ``http://host:1:2`` (ValueError) left the run
``running`` for good, through restarts; and a ``rest_call`` could reach the server's own admin
API through the demo API's allow-list entry.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from dynamic_tools.api.app import create_app
from dynamic_tools.settings import Settings
from tests.conftest import EXAMPLES, FIXTURES
from tests.support.servers import free_port, serve

HOSTILE = FIXTURES / "workflows" / "hostile"
TERMINAL = {"succeeded", "failed", "cancelled"}


def wait_until_ended(url: str, run_id: str, timeout: float = 30) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    run: dict[str, Any] = {}
    while time.monotonic() < deadline:
        run = httpx.get(f"{url}/runs/{run_id}").json()
        if run["status"] in TERMINAL:
            return run
        time.sleep(0.1)
    raise AssertionError(f"run {run_id} never ended: {run}")


def start(url: str, workflow: str, params: dict[str, Any]) -> dict[str, Any]:
    answer = httpx.post(f"{url}/workflows/{workflow}/runs", json={"params": params})
    assert answer.status_code == 202, answer.text
    return wait_until_ended(url, answer.json()["run_id"])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A durable server on the travel example, plus the hostile tool and documents."""
    tmp = tmp_path_factory.mktemp("hostile")
    root = tmp / "registry"
    shutil.copytree(EXAMPLES / "tools", root / "tools")
    shutil.copy(FIXTURES / "tools" / "hostile" / "noted_search.yaml", root / "tools")
    (root / "workflows").mkdir()
    shutil.copy(HOSTILE / "unsendable.yaml", root / "workflows")
    port = free_port()
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None,
        host="127.0.0.1",
        port=port,
        data_dir=tmp / "data",
        registry_config_path=root / "config.yaml",
        durable_runs=True,
        executor_id="hostile-runs",
        allowed_target_hosts=[],
        freeze_startup_heap=False,  # the test process's heap: tests/conftest.py
    )
    targets = {
        "octal": "http://0177.0.0.1:8000",
        "bad_port": "http://host:1:2",
        "wrapped": "http://[::127.0.0.1]:8000/demo/travel",
        "nat64": "http://[64:ff9b::7f00:1]:8000/demo/travel",
        "sixtofour": "http://[2002:7f00:1::]:8000/demo/travel",
        "admin": f"http://127.0.0.1:{port}",
        "admin_localhost": f"http://localhost:{port}",
        "admin_mapped": f"http://[::ffff:127.0.0.1]:{port}",
        "demo": f"http://127.0.0.1:{port}/demo/travel",
    }
    template = (HOSTILE / "rest_call_target.yaml").read_text()
    for name, target in targets.items():
        text = template.replace("TARGET", target).replace("call_target", f"call_{name}")
        (root / "workflows" / f"{name}.yaml").write_text(text)
    with serve(create_app(settings), port=port) as url:
        yield url, root


def test_a_header_value_http_cannot_carry_fails_the_run_naming_the_header(
    server: tuple[str, Path],
) -> None:
    url, _ = server
    run = start(url, "noted", {"note": "café"})
    assert run["status"] == "failed"
    node = run["nodes"]["search"]
    assert node["status"] == "failed" and node["attempts"] == 1  # refused: never retried
    assert "X-Note" in run["error"]["message"] and "ASCII" in run["error"]["message"]
    recovered = start(url, "recovered", {"note": "café"})
    assert recovered["status"] == "succeeded", recovered["error"]
    assert recovered["nodes"]["plain"]["status"] == "succeeded"


@pytest.mark.parametrize(
    ("workflow", "expected"),
    [
        ("call_octal", "base_url"),
        ("call_bad_port", "base_url"),
        ("call_wrapped", "non-public address"),
        ("call_nat64", "non-public address"),
        ("call_sixtofour", "non-public address"),
    ],
)
def test_a_rest_call_to_an_unusable_or_wrapped_address_fails_the_run(
    server: tuple[str, Path], workflow: str, expected: str
) -> None:
    url, _ = server
    run = start(url, workflow, {})
    assert run["status"] == "failed", run
    assert expected in run["error"]["message"]
    assert run["nodes"]["call"]["attempts"] == 1


@pytest.mark.parametrize("workflow", ["call_admin", "call_admin_localhost", "call_admin_mapped"])
def test_a_rest_call_cannot_reach_the_servers_admin_api(
    server: tuple[str, Path], workflow: str
) -> None:
    url, root = server
    assert httpx.get(f"{url}/tools/search_flights").status_code == 200
    run = start(url, workflow, {"method": "DELETE", "path": "/tools/search_flights"})
    assert run["status"] == "failed"
    assert "this server's own API" in run["error"]["message"]
    assert run["nodes"]["call"]["attempts"] == 1
    assert httpx.get(f"{url}/tools/search_flights").status_code == 200
    assert (root / "tools" / "search_flights.yaml").exists()


def test_the_demo_api_on_the_servers_address_stays_reachable(server: tuple[str, Path]) -> None:
    url, _ = server
    demo = start(url, "call_demo", {"path": "/flights/FL-AMSBCN-20261201-1/availability"})
    assert demo["status"] == "succeeded", demo["error"]
