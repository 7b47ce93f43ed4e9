"""The peer of the Arazzo conformance bench: Jentic's ``arazzo-runner`` on the same fixtures.

The same cases, the same loopback mock server and the same comparison (success, outputs, API
calls) as ours (``tests/support/arazzo_conformance.py``). The runner calls the URLs its
documents give; a ``requests`` session sends them to the mock server instead (the path kept),
as our import maps the sources' base URLs to it. Its runs are in memory and not durable; ours
are imported over REST and run by the engine (a durable run in production).
"""

from __future__ import annotations

import functools
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import requests
import yaml

from tests.support.arazzo_conformance import (
    CaseResult,
    MockApi,
    arazzo_file,
    case_label,
    case_mocks,
    expected_problems,
    fixtures,
    load_document,
    local_source,
)


class _ToMock(requests.Session):
    """Every request goes to the mock server, its path and query kept."""

    def __init__(self, mock_url: str) -> None:
        super().__init__()
        self.mock_url = mock_url

    def request(self, method: str | bytes, url: str | bytes, *args: Any, **kwargs: Any) -> Any:
        parts = urlsplit(str(url))
        moved = self.mock_url + parts.path + (f"?{parts.query}" if parts.query else "")
        return super().request(method, moved, *args, **kwargs)


def run_peer(mock: MockApi, mock_url: str) -> list[CaseResult] | str:
    """Every fixture case through ``arazzo-runner`` (each result with its seconds), or why it
    cannot run here (not installed: ``make bench`` installs it)."""
    try:
        import arazzo_runner  # noqa: F401
    except ImportError as exc:
        return f"arazzo-runner is not installed ({exc})"
    results: list[CaseResult] = []
    for folder in fixtures():
        config = yaml.safe_load((folder / "test_config.yaml").read_text(encoding="utf-8"))
        try:
            runner = _runner(folder, config, mock_url)
        except Exception as exc:  # the peer could not load the fixture: every case fails
            for case in config.get("workflows") or []:
                why = f"did not load: {type(exc).__name__}: {str(exc)[:200]}"
                results.append(CaseResult(folder.name, case_label(case), False, why))
            continue
        for case in config.get("workflows") or []:
            mock.reset(case_mocks(config, case))
            started = time.perf_counter()
            try:
                outcome = runner.execute_workflow(
                    str(case.get("id")), case.get("inputs") or case.get("params") or {}
                )
            except Exception as exc:  # a crash of the peer is its failure
                why = f"raised {type(exc).__name__}: {str(exc)[:200]}"
                failed = CaseResult(folder.name, case_label(case), False, why)
                failed.seconds = time.perf_counter() - started
                results.append(failed)
                continue
            elapsed = time.perf_counter() - started
            outputs, steps = dict(outcome.outputs or {}), dict(outcome.step_outputs or {})
            problems = expected_problems(
                case,
                succeeded=str(outcome.status) == "workflow_complete",
                error=outcome.error,
                output=functools.partial(_read, outputs),
                step_output=lambda step, name, steps=steps: _read(steps.get(step) or {}, name),
                mock=mock,
            )
            result = CaseResult(folder.name, case_label(case), not problems, "; ".join(problems))
            result.seconds = elapsed
            results.append(result)
    return results


def _runner(folder: Path, config: dict[str, Any], mock_url: str) -> Any:
    """The runner for a fixture; the sources it maps (``sources``) read from its copies."""
    from arazzo_runner import ArazzoRunner
    from arazzo_runner.utils import load_arazzo_doc, load_source_descriptions

    path, client = arazzo_file(folder), _ToMock(mock_url)
    mapped = config.get("sources") or {}
    if not mapped:
        return ArazzoRunner.from_arazzo_path(str(path), http_client=client)
    document = load_arazzo_doc(str(path))
    sources = document.get("sourceDescriptions") or []
    rest = {**document, "sourceDescriptions": [s for s in sources if s.get("name") not in mapped]}
    found = load_source_descriptions(rest, str(path), "", client)
    for source in sources:
        local = local_source(folder, config, source)
        if local is not None and source.get("name") in mapped:
            found[str(source["name"])] = load_document(local)
    return ArazzoRunner(arazzo_doc=document, source_descriptions=found, http_client=client)


def _read(values: dict[str, Any], key: str) -> Any:
    return values.get(key, "(missing)")


__all__ = ["run_peer"]


if __name__ == "__main__":  # a quick look at the peer alone
    from tests.support.arazzo_conformance import mock_server

    with mock_server() as (api, url):
        found = run_peer(api, url)
    if isinstance(found, str):
        raise SystemExit(found)
    for result in found:
        print(Path(result.fixture).name, result.case, result.passed, result.why[:160])
