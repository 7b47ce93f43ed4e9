"""What the README and docs/ say the CLI and the REST API take, they take.

- Every ``dynamic-tools ...`` command line of README.md and docs/*.md (code blocks and inline
  code): the (sub)command exists, ``--help`` answers, and each option it writes is one of the
  command's options.
- Every ``METHOD /path`` they name is a route of the OpenAPI document; the body fields written
  after it (``POST /catalogs {source, name}``) are fields of its request body, and the query
  parameters (``GET /runs?owner=...``) parameters of the route.
- The import options docs/arazzo.md lists are fields of the preview and import bodies, and
  ``POST /catalogs/validate`` takes what the docs say it takes.
- ``dynamic-tools validate --server`` asks a running server (the README's example).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from dynamic_tools.api.app import create_app
from dynamic_tools.cli.main import app
from dynamic_tools.settings import Settings
from tests.conftest import EXAMPLES
from tests.support.servers import serve

REPO = Path(__file__).resolve().parents[4]
DOCUMENTS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
INLINE = re.compile(r"`(dynamic-tools [^`]+)`")
ROUTE = re.compile(
    r"\b(GET|POST|PUT|PATCH|DELETE) (/[A-Za-z0-9_./{}<>-]*)(\?[^\s`]*)?(?: \{([a-z_, ]+)\})?"
)


def command_lines() -> list[tuple[str, str]]:
    """(where, command line) for every documented ``dynamic-tools`` invocation."""
    found = []
    for path in DOCUMENTS:
        in_code = False
        for number, line in enumerate(path.read_text().splitlines(), 1):
            where = f"{path.name}:{number}"
            if line.strip().startswith("```"):
                in_code = not in_code
                continue
            if in_code:
                text = line.split(" #", 1)[0].strip()
                if text.startswith("dynamic-tools "):
                    found.append((where, text))
            else:
                found += [(where, m.group(1)) for m in INLINE.finditer(line)]
    return found


def resolve(tokens: list[str]) -> tuple[list[str], Any]:
    """The command path the tokens name and its (click) command."""
    command: Any = typer.main.get_command(app)
    path: list[str] = []
    for token in tokens:
        commands = getattr(command, "commands", None)
        if not commands or token not in commands:
            break
        command = commands[token]
        path.append(token)
    return path, command


def options_written(tokens: list[str]) -> list[str]:
    found = []
    for token in tokens:
        token = token.strip("[]")
        if re.fullmatch(r"--?[A-Za-z][\w-]*(=.*)?", token):
            found.append(token.split("=", 1)[0])
    return found


LINES = command_lines()


def test_the_docs_show_the_cli() -> None:
    assert len(LINES) >= 15
    assert any("validate" in line and "--server" in line for _, line in LINES) or any(
        "--server URL" in p.read_text() for p in DOCUMENTS
    )


@pytest.mark.parametrize(("where", "line"), LINES, ids=[w for w, _ in LINES])
def test_every_documented_command_line_exists(where: str, line: str) -> None:
    if "|" in line:  # "dynamic-tools validate | run | runs": each a command
        names = [part.strip().split()[-1] for part in line.removeprefix("dynamic-tools").split("|")]
        for name in names:
            assert resolve([name])[0] == [name], f"{where}: no command {name}"
        return
    tokens = shlex.split(line.replace("<", "").replace(">", ""))[1:]
    path, command = resolve(tokens)
    assert path, f"{where}: `{line}` names no command"
    result = CliRunner().invoke(app, [*path, "--help"])
    assert result.exit_code == 0, f"{where}: {result.output}"
    known = {opt for param in command.params for opt in (*param.opts, *param.secondary_opts)}
    for option in options_written(tokens[len(path) :]):
        assert option in known, f"{where}: `{line}`: {option} is not an option of {path}"


# --- REST --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def openapi(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("openapi")
    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        data_dir=root / "data",
        registry_config_path=root / "registry" / "config.yaml",
        seed_examples_from=EXAMPLES,
    )
    document: dict[str, Any] = create_app(settings).openapi()
    return document


def routes_named() -> list[tuple[str, str, str, list[str], list[str]]]:
    """(where, method, path, body fields, query parameters) for every route the docs name.

    A ```text block shows what the server prints (an error naming a target API's path, say),
    not a route of ours: its lines are not read.
    """
    found = []
    for path in DOCUMENTS:
        sample = False
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if line.startswith("```"):
                sample = line.strip() == "```text"
                continue
            if sample:
                continue
            for m in ROUTE.finditer(line):
                query = re.findall(r"[?&]([a-z_]+)=", m.group(3) or "")
                fields = [f.strip() for f in (m.group(4) or "").split(",") if f.strip()]
                found.append((f"{path.name}:{number}", m.group(1), m.group(2), fields, query))
    return found


def template(path: str) -> re.Pattern[str]:
    """A documented path as a pattern: ``{id}``, ``<id>`` and literal ids match any segment."""
    parts = []
    for segment in path.rstrip("/.").split("/")[1:]:
        if segment.startswith(("{", "<")):
            parts.append(r"[^/]+")
        else:
            parts.append(r"(?:" + re.escape(segment) + r"|\{[^/]+\})")
    return re.compile("^/" + "/".join(parts) + "$")


def operation(openapi: dict[str, Any], method: str, path: str) -> dict[str, Any] | None:
    pattern = template(path)
    for route, operations in openapi["paths"].items():
        if pattern.match(route) and method.lower() in operations:
            found: dict[str, Any] = operations[method.lower()]
            return found
    return None


def body_fields(openapi: dict[str, Any], op: dict[str, Any]) -> set[str]:
    content = (op.get("requestBody") or {}).get("content") or {}
    schema = (content.get("application/json") or {}).get("schema") or {}
    return set(_properties(openapi, schema))


def _properties(openapi: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return _properties(openapi, openapi["components"]["schemas"][name])
    found = dict(schema.get("properties") or {})
    for part in (*schema.get("allOf", ()), *schema.get("anyOf", ()), *schema.get("oneOf", ())):
        found.update(_properties(openapi, part))
    return found


ROUTES = routes_named()
NOT_IN_OPENAPI = {"/demo/travel/_reset"}  # the demo API: its own app, off the documented API


@pytest.mark.parametrize(
    ("where", "method", "path", "fields", "query"), ROUTES, ids=[r[0] for r in ROUTES]
)
def test_every_documented_route_and_option_exists(
    openapi: dict[str, Any], where: str, method: str, path: str, fields: list[str], query: list[str]
) -> None:
    if path in NOT_IN_OPENAPI:
        return
    op = operation(openapi, method, path)
    assert op is not None, f"{where}: {method} {path} is not a route"
    if fields:
        assert set(fields) <= body_fields(openapi, op), f"{where}: {method} {path} {fields}"
    parameters = {p["name"] for p in op.get("parameters") or []}
    assert set(query) <= parameters, f"{where}: {method} {path}?{query}"


def test_the_arazzo_import_options_are_what_the_bodies_take(openapi: dict[str, Any]) -> None:
    text = (REPO / "docs" / "arazzo.md").read_text()
    section = text.split("Options of an import and its preview", 1)[1]
    section = section.split("Removing the catalog", 1)[0]
    intro, *bullets = section.split("\n- ")
    listed = {name for b in bullets for name in re.findall(r"`([a-z_]+)`", b.split(":", 1)[0])}
    assert listed == {"prefix", "base_url", "base_urls", "sources", "workflows", "lenient"}
    for path in ("/catalogs/preview", "/catalogs"):
        op = operation(openapi, "POST", path)
        assert op is not None
        assert listed <= body_fields(openapi, op), path
    validate = operation(openapi, "POST", "/catalogs/validate")
    assert validate is not None
    said = set(re.findall(r"`([a-z_]+)`", intro.split("take only", 1)[1].split(", and check")[0]))
    document = {"source", "source_type", "content", "filename", "files"}
    assert said == {*document, "base_url"} == body_fields(openapi, validate)


# --- validate --server -------------------------------------------------------------------
def test_validate_asks_a_running_server(
    tmp_path: Path, make_settings: Callable[..., Settings]
) -> None:
    settings = make_settings(
        registry_config_path=tmp_path / "reg" / "config.yaml", seed_examples_from=EXAMPLES
    )
    good = EXAMPLES / "workflows" / "travel.yaml"
    bad = tmp_path / "bad.yaml"
    bad.write_text("workflows:\n  w:\n    graph:\n      s: {call: no_such_tool}\n")
    runner = CliRunner()
    with serve(create_app(settings), port=settings.port) as url:
        valid = runner.invoke(app, ["validate", "--server", url, str(good)])
        invalid = runner.invoke(app, ["validate", "--server", url, "--json", str(bad)])
    assert valid.exit_code == 0, valid.output
    assert "valid" in valid.output
    assert invalid.exit_code == 1, invalid.output
    assert "unknown_tool" in invalid.output
