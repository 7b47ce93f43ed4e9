#!/usr/bin/env python3
"""Two Dynamic Tools replicas on one PostgreSQL database, on this machine, without Docker.

The same layout as ``docker-compose.yml``: replicas ``replica-a`` and ``replica-b`` (distinct
``EXECUTOR_ID``, the same ``DATABASE_URL``), one demo travel API process they share, and nginx
in front with ``deploy/nginx.conf`` when ``nginx`` is on PATH. Logs go to files; Ctrl-C (or
SIGTERM) stops everything. A process that ends (say, a replica killed with ``kill -9`` to watch
failover) is reported and the others keep running. Nothing here needs root: nginx runs with its
prefix, pid file and temporary files in the runtime directory.

    make replicas                                  # or:
    backend/.venv/bin/python scripts/replicas.py [--database-url URL] [--port 8000]
        [--replica-ports 8001,8002] [--demo-port N] [--dir .runtime/replicas] [--no-proxy]

The database (default ``postgresql://postgres@127.0.0.1:5432/dynamic_tools``) is created when
it does not exist. When everything answers, ``<dir>/replicas.json`` names the URLs (it is
removed again on exit).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

import httpx
import sqlalchemy as sa

REPO = Path(__file__).resolve().parents[1]
NGINX_TEMPLATE = REPO / "deploy" / "nginx.conf"
EXAMPLES = REPO / "examples" / "travel"
DEFAULT_DATABASE_URL = "postgresql://postgres@127.0.0.1:5432/dynamic_tools"
REPLICAS = ("replica-a", "replica-b")
START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 15.0
_TEMPLATE_VARIABLE = re.compile(r"\$\{(DT_[A-Z_]+)\}")


class SetupError(Exception):
    """Something this script needs is missing or refused; the message says what."""


@dataclass
class Process:
    """A child process and where its output goes."""

    name: str
    url: str
    log: Path
    popen: subprocess.Popen[bytes]


@dataclass
class Layout:
    """Ports, paths and URLs of one local setup."""

    database_url: str
    runtime: Path
    replica_ports: tuple[int, int]
    demo_port: int
    proxy_port: int | None
    processes: list[Process] = field(default_factory=list)

    @property
    def logs(self) -> Path:
        """The directory holding every log file."""
        return self.runtime / "logs"

    def replica_url(self, index: int) -> str:
        """The base URL of replica ``index`` (0 or 1)."""
        return f"http://127.0.0.1:{self.replica_ports[index]}"

    @property
    def demo_url(self) -> str:
        """The base URL of the demo API process."""
        return f"http://127.0.0.1:{self.demo_port}"

    @property
    def proxy_url(self) -> str | None:
        """The base URL of nginx, when it runs."""
        return None if self.proxy_port is None else f"http://127.0.0.1:{self.proxy_port}"


# --- ports, database, templates ----------------------------------------------------------------
def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def require_free(port: int, what: str) -> int:
    """``port`` when nothing listens on it on 127.0.0.1; :class:`SetupError` otherwise."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError as exc:
            raise SetupError(f"port {port} ({what}) is in use: {exc.strerror}") from None
    return port


def ensure_database(url: str) -> None:
    """Create the database of a PostgreSQL ``url`` when it does not exist."""
    parsed = sa.make_url(url)
    if not parsed.drivername.startswith("postgres"):
        raise SetupError(f"replicas share a PostgreSQL database; '{parsed.drivername}' is not one")
    name = parsed.database
    if not name:
        raise SetupError(f"the database URL names no database: {parsed!r}")
    admin = sa.create_engine(
        parsed.set(drivername="postgresql+psycopg", database="postgres"),
        isolation_level="AUTOCOMMIT",
    )
    try:
        with admin.connect() as connection:
            exists = connection.execute(
                sa.text("SELECT 1 FROM pg_database WHERE datname = :name"), {"name": name}
            ).first()
            if exists is None:
                quoted = admin.dialect.identifier_preparer.quote_identifier(name)
                connection.execute(sa.text(f"CREATE DATABASE {quoted}"))
                print(f"created database {name}")
    except sa.exc.OperationalError as exc:
        reason = str(exc.orig).strip().splitlines()[0] if exc.orig else type(exc).__name__
        raise SetupError(f"PostgreSQL at {parsed!r} does not answer: {reason}") from None
    finally:
        admin.dispose()


def fill_template(text: str, values: dict[str, str]) -> str:
    """``${DT_...}`` variables of the nginx template replaced (nginx's own ``$vars`` kept)."""
    missing = sorted(set(_TEMPLATE_VARIABLE.findall(text)) - set(values))
    if missing:
        raise SetupError(f"no value for {', '.join(missing)} in {NGINX_TEMPLATE}")
    return _TEMPLATE_VARIABLE.sub(lambda m: values[m.group(1)], text)


def nginx_main_config(runtime: Path, site: Path) -> str:
    """A top-level nginx.conf that keeps every file nginx writes under ``runtime``."""
    tmp = runtime / "nginx" / "tmp"
    logs = runtime / "logs"
    return f"""# Written by scripts/replicas.py: deploy/nginx.conf with the ports filled in.
worker_processes 1;
daemon off;
pid {runtime / "nginx" / "nginx.pid"};
error_log {logs / "nginx-error.log"} warn;
events {{ worker_connections 1024; }}
http {{
    log_format upstreams '$remote_addr "$request" $status '
                         'upstream=$upstream_addr upstream_status=$upstream_status';
    access_log {logs / "nginx-access.log"} upstreams;
    client_body_temp_path {tmp / "body"};
    proxy_temp_path {tmp / "proxy"};
    fastcgi_temp_path {tmp / "fastcgi"};
    uwsgi_temp_path {tmp / "uwsgi"};
    scgi_temp_path {tmp / "scgi"};
    include {site};
}}
"""


# --- processes -------------------------------------------------------------------------------
def cli_path() -> str:
    """The ``dynamic-tools`` command beside this Python, else the one on PATH."""
    beside = Path(sys.executable).with_name("dynamic-tools")
    if beside.is_file():
        return str(beside)
    found = shutil.which("dynamic-tools")
    if found is None:
        raise SetupError("'dynamic-tools' is not installed: run `make install` first")
    return found


def start(name: str, command: list[str], env: dict[str, str], url: str, logs: Path) -> Process:
    """Start ``command`` in a session of its own (Ctrl-C reaches only this script)."""
    log = logs / f"{name}.log"
    with log.open("ab") as out:
        popen = subprocess.Popen(
            command,
            env={**os.environ, **env},
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return Process(name, url, log, popen)


def serve_env(layout: Layout, name: str) -> dict[str, str]:
    """The environment of one process (demo API or replica), all under the runtime dir."""
    home = layout.runtime / name
    env = {
        "DATA_DIR": str(home / "data"),
        "REGISTRY_CONFIG_PATH": str(home / "registry" / "config.yaml"),
        "LOG_LEVEL": "INFO",
    }
    if name == "demo":
        # The replicas' travel tools call this process over HTTP with no token: like the demo
        # service of docker-compose.yml, it runs without API_TOKEN (a token from the shell
        # would switch its demo API off) and listens on 127.0.0.1 only.
        return {**env, "DURABLE_RUNS": "false", "DATABASE_URL": "", "API_TOKEN": ""}
    return {
        **env,
        "DATABASE_URL": layout.database_url,
        "EXECUTOR_ID": name,
        "DURABLE_RUNS": "true",
        "SEED_EXAMPLES_FROM": str(EXAMPLES),
        # The travel tools call ${PUBLIC_BASE_URL}/demo/travel: the one shared demo process.
        "PUBLIC_BASE_URL": layout.demo_url,
        "ALLOWED_TARGET_HOSTS": f"127.0.0.1:{layout.demo_port}",
        "ENABLE_DEMO_API": "false",
    }


def wait_ready(
    process: Process, path: str, deadline: float, stop_requested: Callable[[], bool]
) -> None:
    """Wait until ``process`` answers 200 on ``path``; :class:`SetupError` with its log tail."""
    while time.monotonic() < deadline:
        if process.popen.poll() is not None:
            break
        if stop_requested():
            raise SetupError("stopped before everything was ready")
        try:
            if httpx.get(process.url + path, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    state = "exited" if process.popen.poll() is not None else "did not answer in time"
    raise SetupError(f"{process.name} {state}; the end of {process.log}:\n{tail(process.log)}")


def tail(log: Path, lines: int = 20) -> str:
    """The last ``lines`` lines of a log file."""
    if not log.is_file():
        return "(no log)"
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])


def stop_all(processes: list[Process]) -> None:
    """Stop the proxy first, then the replicas, then the demo API (SIGTERM, then SIGKILL)."""
    for process in reversed(processes):
        if process.popen.poll() is None:
            process.popen.terminate()
    deadline = time.monotonic() + STOP_TIMEOUT_S
    for process in reversed(processes):
        try:
            process.popen.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.popen.kill()
            process.popen.wait(timeout=5)


def start_proxy(
    layout: Layout, nginx: str, deadline: float, stop_requested: Callable[[], bool]
) -> Process:
    """Start nginx on ``layout.proxy_port`` with the replicas and the demo API as upstreams."""
    assert layout.proxy_port is not None
    home = layout.runtime / "nginx"
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    site = home / "dynamic_tools.conf"
    site.write_text(
        fill_template(
            NGINX_TEMPLATE.read_text(),
            {
                "DT_REPLICA_A": f"127.0.0.1:{layout.replica_ports[0]}",
                "DT_REPLICA_B": f"127.0.0.1:{layout.replica_ports[1]}",
                "DT_DEMO_API": f"127.0.0.1:{layout.demo_port}",
                "DT_PROXY_LISTEN": f"127.0.0.1:{layout.proxy_port}",
            },
        )
    )
    main = home / "nginx.conf"
    main.write_text(nginx_main_config(layout.runtime, site))
    error_log = str(layout.logs / "nginx-error.log")
    command = [nginx, "-e", error_log, "-p", str(home), "-c", str(main)]
    check = subprocess.run(
        [*command, "-t", "-q"], capture_output=True, text=True, timeout=30, check=False
    )
    if check.returncode != 0:
        raise SetupError(f"nginx refused {main}:\n{check.stderr.strip()}")
    proxy = start("nginx", command, {}, str(layout.proxy_url), layout.logs)
    wait_ready(proxy, "/healthz", deadline, stop_requested)
    return proxy


def run(layout: Layout, *, nginx: str | None, stop_requested: Callable[[], bool]) -> int:
    """Start everything, wait for Ctrl-C or a process that dies, stop everything."""
    layout.logs.mkdir(parents=True, exist_ok=True)
    ready_file = layout.runtime / "replicas.json"
    ready_file.unlink(missing_ok=True)
    cli = cli_path()
    deadline = time.monotonic() + START_TIMEOUT_S
    try:
        demo = start(
            "demo",
            [cli, "serve", "--host", "127.0.0.1", "--port", str(layout.demo_port)],
            serve_env(layout, "demo"),
            layout.demo_url,
            layout.logs,
        )
        layout.processes.append(demo)
        for index, name in enumerate(REPLICAS):
            port = layout.replica_ports[index]
            layout.processes.append(
                start(
                    name,
                    [cli, "serve", "--host", "127.0.0.1", "--port", str(port)],
                    serve_env(layout, name),
                    layout.replica_url(index),
                    layout.logs,
                )
            )
        wait_ready(demo, "/healthz", deadline, stop_requested)
        for process in layout.processes[1:]:
            wait_ready(process, "/readyz", deadline, stop_requested)
        if nginx is not None:
            layout.processes.append(start_proxy(layout, nginx, deadline, stop_requested))
        announce(layout, ready_file)
        return watch(layout.processes, stop_requested)
    finally:
        stop_all(layout.processes)
        ready_file.unlink(missing_ok=True)
        print("stopped", flush=True)


def watch(processes: list[Process], stop_requested: Callable[[], bool]) -> int:
    """Wait for Ctrl-C; 0 then, 1 when every process has ended.

    A process that ends is reported and the others keep running (a replica killed on purpose
    shows failover).
    """
    reported: set[str] = set()
    while not stop_requested():
        for process in processes:
            code = process.popen.poll()
            if code is not None and process.name not in reported:
                reported.add(process.name)
                print(
                    f"{process.name} exited ({code}); the others keep running, Ctrl-C stops "
                    f"them. The end of {process.log}:\n{tail(process.log, 5)}",
                    file=sys.stderr,
                    flush=True,
                )
        if len(reported) == len(processes):
            return 1
        time.sleep(0.2)
    return 0


def announce(layout: Layout, ready_file: Path) -> None:
    """Print the URLs and write them to ``replicas.json``."""
    shown = sa.make_url(layout.database_url).render_as_string(hide_password=True)
    replicas = {name: layout.replica_url(i) for i, name in enumerate(REPLICAS)}
    lines = [f"Dynamic Tools: {len(REPLICAS)} replicas on {shown}"]
    lines += [f"  {name:<10} {url}   (EXECUTOR_ID={name})" for name, url in replicas.items()]
    lines.append(f"  {'demo API':<10} {layout.demo_url}/demo/travel")
    if layout.proxy_url:
        lines.append(f"  {'proxy':<10} {layout.proxy_url}   (nginx, deploy/nginx.conf)")
    else:
        lines.append("  no proxy (nginx is not on PATH): use either replica's URL")
    lines.append(f"Logs in {layout.logs}. Ctrl-C stops them all.")
    print("\n".join(lines), flush=True)
    ready_file.write_text(
        json.dumps(
            {
                "proxy": layout.proxy_url,
                "replicas": replicas,
                "demo": layout.demo_url,
                "logs": str(layout.logs),
                "pids": {p.name: p.popen.pid for p in layout.processes},
            },
            indent=2,
        )
    )


# --- command line ----------------------------------------------------------------------------
def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    env_url = os.environ.get("DATABASE_URL", "")
    parser.add_argument(
        "--database-url",
        default=env_url if env_url.startswith("postgres") else DEFAULT_DATABASE_URL,
        help="PostgreSQL URL shared by the replicas (default: DATABASE_URL when it is "
        f"PostgreSQL, else {DEFAULT_DATABASE_URL}); the database is created if missing",
    )
    parser.add_argument(
        "--port",
        type=int,
        default=int(os.environ.get("PORT") or 8000),
        help="the proxy's port (default PORT or 8000; 0 = a free one)",
    )
    parser.add_argument(
        "--replica-ports", default="", help="two ports, e.g. 8001,8002 (default: free ones)"
    )
    parser.add_argument("--demo-port", type=int, default=0, help="default: a free one")
    parser.add_argument(
        "--dir", type=Path, default=REPO / ".runtime" / "replicas", help="logs and data"
    )
    parser.add_argument("--no-proxy", action="store_true", help="do not start nginx")
    parser.add_argument("--nginx", default=None, help="the nginx binary (default: from PATH)")
    return parser.parse_args(argv)


def layout_from(args: argparse.Namespace, with_proxy: bool) -> Layout:
    """Ports chosen (free ones where none was given) and checked."""
    if args.replica_ports:
        parts = [p.strip() for p in args.replica_ports.split(",")]
        if len(parts) != 2 or not all(p.isdigit() for p in parts):
            raise SetupError(f"--replica-ports wants two ports (8001,8002): '{args.replica_ports}'")
        ports = (require_free(int(parts[0]), "replica-a"), require_free(int(parts[1]), "replica-b"))
    else:
        ports = (free_port(), free_port())
    demo = require_free(args.demo_port, "demo API") if args.demo_port else free_port()
    proxy = None
    if with_proxy:
        proxy = require_free(args.port, "proxy") if args.port else free_port()
    chosen = [*ports, demo] + ([proxy] if proxy else [])
    if len(set(chosen)) != len(chosen):
        raise SetupError(f"the ports must differ: {chosen}")
    return Layout(args.database_url, args.dir.resolve(), ports, demo, proxy)


def main(argv: list[str] | None = None) -> int:
    """Run until Ctrl-C: 0 then, 1 when every process ended by itself, 2 on a setup error."""
    args = parse_args(argv)
    nginx = None if args.no_proxy else (args.nginx or shutil.which("nginx"))
    stopping = False

    def request_stop(signum: int, _frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)
    try:
        layout = layout_from(args, with_proxy=nginx is not None)
        ensure_database(layout.database_url)
        return run(layout, nginx=nginx, stop_requested=lambda: stopping)
    except SetupError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
