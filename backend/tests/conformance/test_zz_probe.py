import os
from urllib.parse import urlsplit

from tests.support.arazzo_conformance import fixtures, mock_server, run_fixture


async def test_probe(tmp_path, make_settings):
    wanted = os.environ.get("PROBE", "").split(",")
    with mock_server() as (mock, url):
        host = urlsplit(url).netloc
        for folder in fixtures():
            if folder.name not in wanted:
                continue
            root = tmp_path / folder.name
            (root / "secrets").mkdir(parents=True)
            settings = make_settings(
                secrets_dir=root / "secrets",
                registry_config_path=root / "config.yaml",
                data_dir=root / "data",
                allowed_target_hosts=[host],
            )
            for r in await run_fixture(folder, settings, mock, url):
                print("\nRESULT", r.fixture, r.case, r.passed, r.why[:1500])
