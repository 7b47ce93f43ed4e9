"""First-start seeding puts each example folder where the server reads it."""

from __future__ import annotations

from pathlib import Path

from dynamic_tools.bootstrap import seed_registry
from dynamic_tools.definitions.repository import WorkflowRepository
from dynamic_tools.settings import Settings
from tests.conftest import EXAMPLES


def test_seeding_follows_registry_workflows_path(tmp_path: Path) -> None:
    elsewhere = tmp_path / "team-workflows"
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None,
        registry_config_path=tmp_path / "registry" / "config.yaml",
        registry_workflows_path=elsewhere,
        seed_examples_from=EXAMPLES,
        data_dir=tmp_path / "data",
    )
    copied = seed_registry(settings)
    assert "workflows" in copied and "tools" in copied
    assert (elsewhere / "travel.yaml").is_file()
    assert not (tmp_path / "registry" / "workflows").exists()
    assert (tmp_path / "registry" / "tools").is_dir()
    repository = WorkflowRepository(settings.workflows_dir)
    repository.reload()
    assert "book_flight" in {w.id for w in repository.list()}
