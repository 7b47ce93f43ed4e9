"""The libraries only some requests need are loaded by those requests, not at start-up: a
server with the travel example (as ``make run`` starts it) serving REST has not imported
graphql-core, the JSONPath, XPath and regex libraries, PyJWT, cryptography, pebble, tenacity or
standardwebhooks (docs/performance.md, "Memory: idle and at 1,000 tools")."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.conftest import EXAMPLES

LAZY = (
    "graphql",
    "elementpath",
    "jsonpath",
    "regex",
    "jwt",
    "cryptography",
    "pebble",
    "tenacity",
    "standardwebhooks",
)

PROBE = textwrap.dedent(
    """
    import json, sys
    from fastapi.testclient import TestClient
    from dynamic_tools.api.app import create_app
    from dynamic_tools.settings import Settings

    settings = Settings(
        _env_file=None,
        data_dir=sys.argv[1],
        registry_config_path=sys.argv[2],
        seed_examples_from=sys.argv[3],
        openai_api_key=None,
        durable_runs=False,
    )
    app = create_app(settings)
    with TestClient(app) as client:
        answers = [client.get(p).status_code for p in ("/readyz", "/tools", "/workflows")]
        tools = len(client.get("/tools").json())
    lazy = json.loads(sys.argv[4])
    print(json.dumps({"answers": answers, "tools": tools,
                      "loaded": sorted(m for m in lazy if m in sys.modules)}))
    """
)


def test_start_up_and_rest_load_none_of_the_lazy_libraries(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            PROBE,
            str(tmp_path / "data"),
            str(tmp_path / "registry" / "config.yaml"),
            str(EXAMPLES),
            json.dumps(LAZY),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert figures["answers"] == [200, 200, 200]
    assert figures["tools"] > 0
    assert figures["loaded"] == []
