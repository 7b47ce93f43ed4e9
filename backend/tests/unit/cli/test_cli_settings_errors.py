"""Bad settings stop the CLI with one line per setting and exit 1, and create nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

CLI = str(Path(sys.executable).with_name("dynamic-tools"))


def test_serve_refuses_an_unset_variable_in_a_path_and_creates_nothing(tmp_path: Path) -> None:
    env = {**os.environ, "REGISTRY_WORKFLOWS_PATH": "$DT_NOT_SET_ANYWHERE/wf"}
    env.pop("DT_NOT_SET_ANYWHERE", None)
    done = subprocess.run(
        [CLI, "serve", "--port", "1"], cwd=tmp_path, env=env, capture_output=True, timeout=60
    )
    said = done.stderr.decode()
    assert done.returncode == 1
    assert "REGISTRY_WORKFLOWS_PATH" in said and "$DT_NOT_SET_ANYWHERE" in said
    assert "Traceback" not in said
    assert list(tmp_path.iterdir()) == []  # no literal '$DT_NOT_SET_ANYWHERE' directory


def test_a_tilde_path_is_the_home_directory_not_a_folder_named_tilde(tmp_path: Path) -> None:
    home = tmp_path / "home"
    work = tmp_path / "work"
    work.mkdir()
    env = {
        **os.environ,
        "HOME": str(home),
        "REGISTRY_CONFIG_PATH": "~/registry/config.yaml",
        "DATA_DIR": "~/data",
    }
    done = subprocess.run(
        [CLI, "tools", "list"], cwd=work, env=env, capture_output=True, timeout=60
    )
    assert done.returncode == 0, done.stderr.decode()
    assert not (work / "~").exists()
