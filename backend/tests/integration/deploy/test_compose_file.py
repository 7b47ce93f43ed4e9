"""``docker-compose.yml``, ``deploy/nginx.conf`` and the ``Dockerfile`` agree with the app.

No Docker engine is needed: the compose file is read with PyYAML (merge keys resolved), every
app service's environment is checked against the fields of :class:`Settings` (and validated by
it), health checks must hit routes the app really has, and the nginx template is filled in with
the proxy service's environment and read back: both replica upstreams name both replicas, and
``/mcp`` and ``/runs/`` are proxied without buffering.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from dynamic_tools.api.app import create_app
from dynamic_tools.settings import Settings
from tests.conftest import REPO

COMPOSE = REPO / "docker-compose.yml"
NGINX = REPO / "deploy" / "nginx.conf"
DOCKERFILE = REPO / "Dockerfile"
SETTING_NAMES = frozenset(name.upper() for name in Settings.model_fields)
TEMPLATE_VARIABLE = re.compile(r"\$\{(DT_[A-Z_]+)\}")
SHELL_VARIABLE = re.compile(r"\$\{[A-Z_][A-Z0-9_]*(?::?-([^}]*))?\}")


@cache
def compose() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())
    return data


def services() -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = compose()["services"]
    return found


def environment(service: dict[str, Any]) -> dict[str, Any]:
    """The service's environment as compose sets it with nothing exported in the shell:
    ``${VAR:-default}`` is its default; a name without a value is not set at all."""
    env = service.get("environment", {})
    assert isinstance(env, dict), "environment is written as a mapping"
    return {
        name: SHELL_VARIABLE.sub(lambda m: m.group(1) or "", value)
        if isinstance(value, str)
        else value
        for name, value in env.items()
    }


def app_services() -> dict[str, dict[str, Any]]:
    """Services running this repository's image."""
    return {name: s for name, s in services().items() if s.get("build") in (".", "./")}


def replicas() -> dict[str, dict[str, Any]]:
    """App services that execute durable runs (they name an executor)."""
    return {n: s for n, s in app_services().items() if "EXECUTOR_ID" in environment(s)}


def proxy() -> dict[str, Any]:
    [found] = [s for s in services().values() if str(s.get("image", "")).startswith("nginx")]
    return found


@cache
def app_routes(tmp: Path) -> frozenset[str]:
    app = create_app(Settings(data_dir=tmp / "data", registry_config_path=tmp / "r/c.yaml"))
    return frozenset(app.openapi()["paths"])


def health_url(service: dict[str, Any]) -> str:
    test = service["healthcheck"]["test"]
    command = " ".join(test[1:]) if isinstance(test, list) else test
    [url] = re.findall(r"https?://[^\s'\"]+", command)
    return str(url)


def port_of(service: dict[str, Any]) -> int:
    return int(environment(service).get("PORT", 8000))


def filled_nginx_conf() -> str:
    env = environment(proxy())
    text = NGINX.read_text()
    missing = set(TEMPLATE_VARIABLE.findall(text)) - set(env)
    assert not missing, f"the proxy service does not set {sorted(missing)}"
    return TEMPLATE_VARIABLE.sub(lambda m: str(env[m.group(1)]), text)


def test_the_image_fills_the_template_the_same_way() -> None:
    """The nginx image runs ``envsubst`` with every variable of its environment: only
    ``${DT_...}`` may look like one (nginx's own variables are lower case)."""
    text = re.sub(r"#[^\n]*", "", NGINX.read_text())
    upper = set(re.findall(r"\$\{?([A-Z_][A-Za-z0-9_]*)", text))
    assert upper and all(name.startswith("DT_") for name in upper), upper
    assert "$http_mcp_session_id" in text and "$binary_remote_addr" in text
    envsubst = shutil.which("envsubst")
    if envsubst is not None:  # gettext's envsubst, as in the image's entrypoint
        env = {"PATH": os.environ.get("PATH", ""), "HOSTNAME": "proxy", **environment(proxy())}
        shell_format = " ".join(f"${{{name}}}" for name in env)
        done = subprocess.run(
            [envsubst, shell_format],
            input=NGINX.read_text(),
            env=env,
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        )
        assert done.stdout == filled_nginx_conf()


def blocks(conf: str, head: str) -> dict[str, str]:
    """``{argument: body}`` of every top-level-or-nested ``head argument { ... }`` block."""
    conf = re.sub(r"#[^\n]*", "", conf)
    found: dict[str, str] = {}
    for match in re.finditer(rf"(?m)^\s*{head}\b\s*([^{{;]*?)\s*\{{", conf):
        depth, start = 1, match.end()
        index = start
        while depth:
            depth += {"{": 1, "}": -1}.get(conf[index], 0)
            index += 1
        found[match.group(1).strip()] = conf[start : index - 1]
    return found


def directives(body: str, name: str) -> list[str]:
    """Arguments of each ``name ...;`` directive in a block body (comments removed)."""
    text = re.sub(r"#[^\n]*", "", body)
    return [m.group(1).strip() for m in re.finditer(rf"(?m)^\s*{name}\s+([^;]*);", text)]


# --- services ----------------------------------------------------------------------------------
def test_compose_has_postgres_two_replicas_and_a_proxy() -> None:
    assert "postgres" in services()
    assert str(services()["postgres"]["image"]).startswith("postgres")
    assert len(replicas()) == 2, sorted(replicas())
    assert proxy()["ports"], "the proxy publishes a port"
    assert all("ports" not in s for s in replicas().values()), "clients go through the proxy"


def test_app_environments_name_only_settings_and_validate() -> None:
    for name, service in app_services().items():
        env = environment(service)
        unknown = sorted(set(env) - SETTING_NAMES)
        assert not unknown, f"{name}: {unknown} are not settings"
        given = {k.lower(): str(v) for k, v in env.items() if v is not None}
        try:
            Settings.model_validate(given)
        except ValidationError as exc:
            pytest.fail(f"{name}: {exc}")


def test_replicas_share_the_database_and_have_distinct_executor_ids() -> None:
    envs = {name: environment(s) for name, s in replicas().items()}
    ids = [env["EXECUTOR_ID"] for env in envs.values()]
    assert all(ids) and len(set(ids)) == len(ids), ids
    urls = {env["DATABASE_URL"] for env in envs.values()}
    assert len(urls) == 1, urls
    settings = Settings.model_validate({"database_url": urls.pop()})
    assert settings.uses_postgres
    host = re.search(r"@([^:/]+)", str(settings.database_url))
    assert host is not None and host.group(1) == "postgres", settings.database_url
    for name, service in replicas().items():
        assert service["depends_on"]["postgres"]["condition"] == "service_healthy", name
        assert environment(service).get("DURABLE_RUNS", "true") != "false", name


def test_health_checks_hit_routes_the_app_has(tmp_path: Path) -> None:
    routes = app_routes(tmp_path)
    assert "healthcheck" in services()["postgres"]
    for name, service in {**app_services(), "proxy": proxy()}.items():
        url = health_url(service)
        path = "/" + url.split("/", 3)[3]
        assert path in ("/healthz", "/readyz"), (name, url)
        assert path in routes, (name, path)
        port = port_of(service) if name != "proxy" else int(environment(proxy())["DT_PROXY_LISTEN"])
        assert f"127.0.0.1:{port}/" in url, (name, url)


def test_the_proxy_waits_for_healthy_replicas() -> None:
    depends = proxy()["depends_on"]
    for name in replicas():
        assert depends[name]["condition"] == "service_healthy", name


# --- nginx ---------------------------------------------------------------------------------------
def test_proxy_upstreams_name_every_replica_port() -> None:
    conf = filled_nginx_conf()
    upstreams = blocks(conf, "upstream")
    expected = {f"{name}:{port_of(s)}" for name, s in replicas().items()}
    for upstream in ("dynamic_tools", "dynamic_tools_mcp"):
        servers = {entry.split()[0] for entry in directives(upstreams[upstream], "server")}
        assert servers == expected, (upstream, servers)
    [demo] = directives(upstreams["demo_travel"], "server")
    demo_url = environment(replicas()[next(iter(replicas()))])["PUBLIC_BASE_URL"]
    assert demo_url == f"http://{demo.split()[0]}"
    [server] = blocks(conf, "server").values()
    assert directives(server, "listen") == [environment(proxy())["DT_PROXY_LISTEN"]]


def test_mcp_and_run_events_are_proxied_unbuffered_with_long_timeouts() -> None:
    locations = blocks(filled_nginx_conf(), "location")
    for location in ("/runs/", "~ ^/mcp/?$", "@mcp_session"):
        body = locations[location]
        assert directives(body, "proxy_buffering") == ["off"], location
        [timeout] = directives(body, "proxy_read_timeout")
        assert timeout.endswith("h"), (location, timeout)
    assert directives(locations["/runs/"], "proxy_pass") == ["http://dynamic_tools"]


def test_mcp_sessions_find_their_replica() -> None:
    """A session lives on the replica that opened it: requests carrying its id go to the
    session location, which passes a 404 ("Session not found") on to the other replica."""
    conf = filled_nginx_conf()
    upstream = blocks(conf, "upstream")["dynamic_tools_mcp"]
    assert directives(upstream, "hash") == ["$binary_remote_addr consistent"]
    locations = blocks(conf, "location")
    mcp = locations["~ ^/mcp/?$"]
    assert "if ($http_mcp_session_id)" in mcp
    assert directives(mcp, "error_page") == ["418 = @mcp_session"]
    assert "non_idempotent" not in " ".join(directives(mcp, "proxy_next_upstream"))
    session = locations["@mcp_session"]
    assert directives(session, "proxy_pass") == ["http://dynamic_tools_mcp"]
    [retry] = directives(session, "proxy_next_upstream")
    assert {"http_404", "non_idempotent"} <= set(retry.split())


# --- image -------------------------------------------------------------------------------------
def test_the_image_holds_what_the_compose_file_points_at() -> None:
    """Paths the services use under /app exist in the image (by the Dockerfile's COPY lines)."""
    stages = DOCKERFILE.read_text().split("\nFROM ")
    final = stages[-1]
    copies = [shlex.split(line)[1:] for line in final.splitlines() if line.startswith("COPY ")]
    destinations = ["/app/" + args[-1].rstrip("/") for args in copies]
    sources = [args[-2] for args in copies if not args[0].startswith("--from")]
    for source in sources:
        assert (REPO / source).exists(), f"COPY {source}: not in the repository"
    assert "/app/frontend/dist" in destinations, "the UI bundle is copied where the app looks"
    assert "uv sync --locked" in final, "the image installs exactly the lock file's versions"
    assert ["backend/pyproject.toml", "backend/uv.lock", "backend/"] in copies
    assert 'CMD ["dynamic-tools", "serve"]' in final
    for name, service in app_services().items():
        for value in environment(service).values():
            if isinstance(value, str) and value.startswith("/app/"):
                assert any(value.startswith(d) for d in destinations), (name, value)
                assert (REPO / value.removeprefix("/app/")).exists(), (name, value)
