"""GitHub's real REST description (npm ``@octokit/openapi``): 12.4 MiB, 1,223 operations.

The package is installed by npm into ``backend/test-artifacts/`` (git-ignored) once per
session. Figures (operations, tools, warnings, time, peak memory) are printed and written to
``test-artifacts/openapi_github_figures.json``; no assertion is made on time or memory.
"""

import json
import re
import time
import tracemalloc
from collections import Counter
from pathlib import Path

import pytest

from dynamic_tools.tools.models import TOOL_NAME_PATTERN
from dynamic_tools.tools.openapi import (
    ConversionOptions,
    convert_document,
    find_provider_contracts,
    parse_document,
)
from tests.support.node_peers import PEERS, npm_install

VERSION = "23.0.2"
ARTIFACTS = Path(__file__).resolve().parents[4] / "test-artifacts"
CACHE = PEERS / "npm-openapi"
DOCUMENT = CACHE / "node_modules" / "@octokit" / "openapi" / "generated" / "api.github.com.json"


def npm_installs() -> list[tuple[Path, dict[str, str]]]:
    """The pinned package holding GitHub's description."""
    return [(CACHE, {"@octokit/openapi": VERSION})]


def install_github_description() -> Path:
    """The document's path, installing the npm package on first use (under a file lock: test
    workers in parallel install it once, and none reads it half installed)."""
    npm_install(*npm_installs()[0])
    return DOCUMENT


@pytest.fixture(scope="session")
def github_document() -> bytes:
    return install_github_description().read_bytes()


@pytest.mark.timeout(300)
def test_github_rest_description_converts(github_document: bytes) -> None:
    tracemalloc.start()
    started = time.perf_counter()
    document = parse_document(github_document)
    result = convert_document(document, ConversionOptions(catalog="github"))
    elapsed = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    assert result.kind == "openapi_3" and result.valid
    assert result.operation_count == 1223
    names = [t.name for t in result.tools]
    assert len(names) == len(set(names)) >= 1190
    assert all(re.match(TOOL_NAME_PATTERN, n) for n in names)
    assert any(len(n) == 64 for n in names)  # some operationIds are longer than 64
    hosts = Counter(t.api.base_url for t in result.tools)
    assert set(hosts) == {"https://api.github.com", "https://uploads.github.com"}  # op servers
    assert hosts["https://uploads.github.com"] == 1
    skipped = [w for w in result.warnings if w.message.startswith("skipped")]
    assert len(skipped) == result.operation_count - len(result.tools)
    tools = {o.operation_id: t for o, t in zip(result.operations, result.tools, strict=True)}
    get_repo = tools["repos/get"]
    assert set(get_repo.parameters) == {"owner", "repo"}
    assert (
        get_repo.output_schema is not None and "full_name" in get_repo.output_schema["properties"]
    )
    assert get_repo.hints.category == "repos"
    create_issue = tools["issues/create"]
    assert create_issue.parameters["title"].required
    assert create_issue.parameters["title"].location == "body"
    contracts = find_provider_contracts(result.tools)
    figures = {
        "document_bytes": len(github_document),
        "operations": result.operation_count,
        "tools": len(result.tools),
        "warnings": len(result.warnings),
        "warnings_by_rule": dict(Counter(w.rule for w in result.warnings)),
        "provider_contracts": len(contracts),
        "seconds_parse_and_convert_traced": round(elapsed, 3),
        "peak_mib_traced": round(peak / 2**20, 1),
    }
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "openapi_github_figures.json").write_text(json.dumps(figures, indent=2))
    print("\nGitHub REST description:", json.dumps(figures))


def test_github_names_are_the_same_on_every_run(github_document: bytes) -> None:
    document = parse_document(github_document)
    first = [t.name for t in convert_document(document, ConversionOptions(prefix="gh")).tools]
    again = [t.name for t in convert_document(document, ConversionOptions(prefix="gh")).tools]
    assert first == again and all(n.startswith("gh_") for n in first)
