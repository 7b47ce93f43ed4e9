"""The CLI builds its registry, workflow repository and HTTP client through ``bootstrap``."""

from __future__ import annotations

import ast
from pathlib import Path

from dynamic_tools import bootstrap
from dynamic_tools.settings import Settings

CLI = Path(bootstrap.__file__).parent / "cli"
BUILT_BY_BOOTSTRAP = {"ToolRegistry", "WorkflowRepository", "AsyncClient"}


def test_no_cli_module_constructs_what_bootstrap_builds() -> None:
    constructed = []
    for path in sorted(CLI.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                name = getattr(node.func, "attr", None) or getattr(node.func, "id", None)
                if name in BUILT_BY_BOOTSTRAP:
                    constructed.append(f"{path.name}:{node.lineno}: {name}")
    assert constructed == []


def test_load_definitions_reads_the_settings_registry_and_workflows(tmp_path: Path) -> None:
    (tmp_path / "tools").mkdir()
    (tmp_path / "workflows").mkdir()
    (tmp_path / "tools" / "ping.yaml").write_text(
        "name: ping\ndescription: Ping the API\n"
        "api: {base_url: 'https://api.example.com', path: /ping, method: GET}\n",
        encoding="utf-8",
    )
    (tmp_path / "workflows" / "w.yaml").write_text(
        "domain: d\nversion: '1'\nworkflows:\n  pinger:\n    graph:\n      p: {call: ping}\n",
        encoding="utf-8",
    )
    settings = Settings(registry_config_path=tmp_path / "config.yaml", _env_file=None)  # type: ignore[call-arg]
    registry, workflows = bootstrap.load_definitions(settings)
    assert registry.names() == ["ping"]
    assert "pinger" in workflows.definitions()
