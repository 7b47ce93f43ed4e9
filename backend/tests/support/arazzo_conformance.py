"""The Arazzo conformance harness: runner fixtures through the real import and the real engine.

Each fixture folder (``tests/fixtures/arazzo/runner``) is copied into a fresh registry root,
imported over REST as a catalog in lenient mode, its sources' base URLs mapped to one loopback
mock server; each case then sets that server's mocks (the fixture's, then the case's), starts
the workflow over REST, waits for the run to end and compares: success, ``expected_outputs``
(a plain key is a workflow output; ``"step.output"`` a step's named output) and
``expected_api_calls`` (requests the mock server received). A request no mock matches is
answered 501 and named in the failure.

``tests/conformance/test_arazzo_conformance.py`` asserts the results; ``bench/arazzo.py``
prints them as a table. The cases expected to fail are listed, with why, in
:data:`KNOWN_FAILURES` and in ``docs/arazzo.md``.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx
import yaml
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from dynamic_tools.api.app import create_app
from dynamic_tools.definitions.arazzo.convert import identifier
from dynamic_tools.settings import Settings
from tests.support.app_client import app_client
from tests.support.servers import serve

RUNNER_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "arazzo" / "runner"
OAI_EXAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "arazzo" / "oai"
RUN_TIMEOUT_S = 20.0


@dataclass(frozen=True)
class KnownFailure:
    """A case that cannot pass: why (for people), and what its failure must say (checked)."""

    reason: str
    says: str
    only: bool = False  # the failure says exactly that, nothing more


KNOWN_FAILURES: dict[tuple[str, str], KnownFailure] = {
    ("xkcd", "getCurrentComic"): KnownFailure(
        "the document's output 'date' is the literal null (its comment says concatenation is "
        "not supported by that runner) while the case expects '2022-10-10'",
        "date: expected '2022-10-10', got None",
        only=True,
    ),
    ("xkcd", "getComicById"): KnownFailure(
        "the document's output 'date' is the literal null while the case expects '2009-7-3'",
        "date: expected '2009-7-3', got None",
        only=True,
    ),
    ("bnpl", "ApplyForLoanAtCheckout"): KnownFailure(
        "the case's inputs do not match the operation's request schema (customer is an object "
        "where the API takes a URI string, products lack the required netAmount), so the tool "
        "refuses to send the first call; and for the mocked answer the step's first onSuccess "
        "action (end when existingCustomerNotEligible == false) holds, so a runner that "
        "follows the document ends after that call, not after the 6 the case expects",
        "bnpl_findEligibleProducts failed: the arguments of 'bnpl_findEligibleProducts' do "
        "not match its input schema: customer:",
    ),
    ("museum_api", "events-crud"): KnownFailure(
        "create-event's criterion `$.name == 'Mermaid ...'` (type jsonpath) is no JSONPath "
        "query, so both peers find it cannot hold and the step fails; lenient mode here reads "
        "it as the comparison it spells (a jsonpath_comparison warning), so the step holds and "
        "the workflow goes on to its five calls",
        "expected failure, got success; expected 2 API calls, got 5",
        only=True,
    ),
    ("respect_severity", "client-registration"): KnownFailure(
        "its create-client step deliberately leaves out the request body's required 'name' to "
        "get a 400; a tool never sends a body its schema refuses, so the workflow is left out "
        "of the import (missing_argument) and cannot be started",
        "start refused: ",
    ),
    ("spotify", "getTrackDetails"): KnownFailure(
        "the case's mocked answer lacks preview_url, which the document reads as an output: a "
        "value that is not there fails the step here (never a silent null, docs/expressions.md)",
        "cannot resolve $result.preview_url in node 'getTrack'",
    ),
}
"""(fixture, case) → why it cannot pass, and what its failure says; every other case must."""


def unexpected(results: list[CaseResult]) -> list[str]:
    """Cases that failed but should pass, or failed otherwise than documented, or now pass."""
    found = []
    for result in results:
        known = KNOWN_FAILURES.get((result.fixture, result.case))
        label = f"{result.fixture}/{result.case}"
        if known is None:
            if not result.passed:
                found.append(f"{label}: {result.why}")
        elif result.passed:
            found.append(f"{label} passes now: drop it from KNOWN_FAILURES and the docs")
        elif (result.why != known.says) if known.only else (known.says not in result.why):
            found.append(f"{label} fails otherwise than documented: {result.why}")
    return found


@dataclass
class CaseResult:
    """How one case went."""

    fixture: str
    case: str
    passed: bool
    why: str = ""
    seconds: float = 0.0


@dataclass
class MockApi:
    """The mocks served now, and the requests received since the last reset."""

    mocks: list[dict[str, Any]] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)

    def reset(self, mocks: list[dict[str, Any]]) -> None:
        self.mocks, self.calls, self.unmatched = mocks, [], []

    async def answer(self, request: Request) -> Response:
        method, path = request.method.lower(), request.url.path
        self.calls.append(f"{request.method} {path}")
        query = parse_qs(request.url.query)
        matching = [
            mock
            for mock in self.mocks
            if str(mock.get("method", "get")).lower() == method
            and _path_matches(_mock_path(mock), path)
            and _query_matches(mock.get("query_params", mock.get("request_params")), query)
        ]
        if not matching:
            self.unmatched.append(f"{request.method} {path}")
            return JSONResponse({"error": f"no mock for {request.method} {path}"}, status_code=501)
        # the most specific mock: a literal path before a template, the longest first
        mock = max(matching, key=_specificity)
        status = int(mock.get("status_code", 200))
        headers = {str(k): str(v) for k, v in (mock.get("headers") or {}).items()}
        if "response" in mock and status != 204:
            return JSONResponse(mock["response"], status_code=status, headers=headers)
        if "text" in mock:
            return PlainTextResponse(str(mock["text"]), status_code=status, headers=headers)
        return Response(status_code=status, headers=headers)


def _mock_path(mock: dict[str, Any]) -> str:
    """A mock's path: ``path``, or ``url`` (some fixtures name the whole URL)."""
    return str(mock.get("path", mock.get("url", "")))


def _specificity(mock: dict[str, Any]) -> tuple[int, int]:
    path = _mock_path(mock)
    path = urlsplit(path).path if "://" in path else path
    return ("{" not in path, len(path))


def _path_matches(mock_path: str, path: str) -> bool:
    wanted = urlsplit(mock_path).path if "://" in mock_path else mock_path
    wanted = wanted.rstrip("/") or "/"
    pattern = re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(wanted))
    return re.search(f"(^|/){pattern.lstrip('/')}$", path.rstrip("/") or "/") is not None


def _query_matches(wanted: Any, query: dict[str, list[str]]) -> bool:
    if not isinstance(wanted, dict):
        return True
    for key, value in wanted.items():
        expected = [str(v) for v in (value if isinstance(value, list) else [value])]
        got = [part for item in query.get(key, []) for part in item.split(",")]
        if got != expected:
            return False
    return True


@contextmanager
def mock_server() -> Iterator[tuple[MockApi, str]]:
    """A loopback server answering every request from :class:`MockApi`'s mocks."""
    api = MockApi()
    methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
    app = Starlette(routes=[Route("/{path:path}", api.answer, methods=methods)])
    with serve(app) as url:
        yield api, url


def fixtures() -> list[Path]:
    """Every runner fixture folder."""
    return sorted(p for p in RUNNER_FIXTURES.iterdir() if (p / "test_config.yaml").is_file())


def arazzo_file(folder: Path) -> Path:
    """The fixture's Arazzo document: its config's ``document`` (a path in the folder, keeping
    its repository's layout), else the one YAML or JSON file that is an Arazzo document."""
    config = folder / "test_config.yaml"
    named = (yaml.safe_load(config.read_text(encoding="utf-8")) or {}).get("document")
    if named:
        return folder / str(named)
    for path in sorted(folder.iterdir()):
        if path.suffix in (".yaml", ".yml", ".json") and path.name != "test_config.yaml":
            head = path.read_text(encoding="utf-8")[:2000]
            if re.search(r"""^[\s{]*["']?arazzo["']?\s*:""", head, re.MULTILINE):
                return path
    raise AssertionError(f"no Arazzo document in {folder}")


def load_document(path: Path) -> Any:
    """A YAML or JSON file, parsed by the C parsers (the fixtures' sources reach 1 MB)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        return json.loads(text)
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def local_source(folder: Path, config: dict[str, Any], source: dict[str, Any]) -> Path | None:
    """The fixture's file for a source: ``sources`` maps a remote one; else its URL's file name."""
    mapped = (config.get("sources") or {}).get(str(source.get("name")))
    local = folder / (str(mapped) if mapped else str(source.get("url", "")).split("/")[-1])
    return local if local.is_file() else None


def base_urls(arazzo: dict[str, Any], folder: Path, config: dict[str, Any], mock: str) -> dict:
    """Each source's server URL with its scheme and host replaced by the mock server's."""
    found: dict[str, str] = {}
    fallback = next(iter((config.get("base_urls") or {}).values()), "https://api.example.com")
    for source in arazzo.get("sourceDescriptions") or []:
        local = local_source(folder, config, source)
        if local is None:
            continue
        document = load_document(local)
        if not isinstance(document, dict) or "arazzo" in document:
            continue  # an Arazzo source has no servers of its own
        servers = document.get("servers") or [{"url": "/"}]
        server = urljoin(str(fallback).rstrip("/") + "/", str(servers[0].get("url", "/")))
        found[str(source.get("name"))] = mock + urlsplit(server).path.rstrip("/")
    return found


async def run_fixture(folder: Path, settings: Settings, mock: MockApi, mock_url: str) -> list:
    """Import one fixture and run its cases; a result per case."""
    config = yaml.safe_load((folder / "test_config.yaml").read_text(encoding="utf-8"))
    target = settings.registry_root / "arazzo" / folder.name
    shutil.copytree(folder, target)
    arazzo_path = arazzo_file(target)
    arazzo = load_document(arazzo_path)
    results: list[CaseResult] = []
    async with app_client(create_app(settings)) as client:
        imported = await client.post(
            "/catalogs",
            json={
                "source": str(arazzo_path),
                "name": identifier(folder.name).replace("_", "-").strip("-"),
                "lenient": True,
                "base_urls": base_urls(arazzo, folder, config, mock_url),
                "sources": config.get("sources") or {},
            },
        )
        if imported.status_code != 201:
            why = f"import refused: {imported.status_code} {imported.text[:600]}"
            return [
                CaseResult(folder.name, case_label(case), False, why)
                for case in config.get("workflows") or []
            ]
        # the fixtures' APIs ask for a token, and an input that is a credential (a password, a
        # client secret) becomes a tool secret: every secret the answer names gets a value
        named = {str(item.get("secret", "")) for item in imported.json().get("secrets") or []}
        named |= set(re.findall(r"secret:[A-Za-z0-9_]+", imported.text))
        assert settings.secrets_dir is not None
        for name in sorted(n.removeprefix("secret:") for n in named if n):
            (settings.secrets_dir / name).write_text("fixture-token", encoding="utf-8")
        for case in config.get("workflows") or []:
            mock.reset(case_mocks(config, case))
            started = time.perf_counter()
            result = await _run_case(client, folder.name, case, mock)
            result.seconds = time.perf_counter() - started
            results.append(result)
    return results


async def _run_case(
    client: httpx.AsyncClient, fixture: str, case: dict[str, Any], mock: MockApi
) -> CaseResult:
    name = str(case.get("id"))
    label = case_label(case)
    started = await client.post(
        f"/workflows/{identifier(name)}/runs",
        # an input's name here is an id of ours (``User-Agent`` → ``User_Agent``, docs/arazzo.md)
        json={
            "params": {
                identifier(k): v
                for k, v in (case.get("inputs") or case.get("params") or {}).items()
            }
        },
    )
    if started.status_code != 202:
        return CaseResult(fixture, label, False, f"start refused: {started.text[:300]}")
    run_id = started.json()["run_id"]
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while True:
        run = (await client.get(f"/runs/{run_id}")).json()
        if run["status"] in ("succeeded", "failed", "cancelled"):
            break
        if time.monotonic() > deadline:
            return CaseResult(fixture, label, False, f"still {run['status']} after 20 s")
        await asyncio.sleep(0.005)
    result = run.get("result") if isinstance(run.get("result"), dict) else {}

    def step_output(step: str, output: str) -> Any:
        node = run["nodes"].get(identifier(step)) or {}
        return (node.get("output") or {}).get(identifier(output), "(missing)")

    problems = expected_problems(
        case,
        succeeded=run["status"] == "succeeded",
        error=(run.get("error") or {}).get("message"),
        output=lambda key: result.get(key, "(missing)"),
        step_output=step_output,
        mock=mock,
    )
    return CaseResult(fixture, label, not problems, "; ".join(problems))


def case_label(case: dict[str, Any]) -> str:
    """A case's name in results: its ``label`` (two cases of one workflow), else the workflow id."""
    return str(case.get("label") or case.get("id"))


def case_mocks(config: dict[str, Any], case: dict[str, Any]) -> list[dict[str, Any]]:
    """The mocks of a case: its own first, then the fixture's."""
    shared = [m for mocks in (config.get("custom_mocks") or {}).values() for m in mocks]
    return [*(case.get("custom_mocks") or []), *shared]


def expected_problems(
    case: dict[str, Any],
    *,
    succeeded: bool,
    error: str | None,
    output: Callable[[str], Any],
    step_output: Callable[[str, str], Any],
    mock: MockApi,
) -> list[str]:
    """How a run differs from what the case expects (success, outputs, API calls)."""
    problems: list[str] = []
    expect_success = bool(case.get("expect_success", True))
    if succeeded != expect_success:
        got = "success" if succeeded else "failure"
        problems.append(
            f"expected {'success' if expect_success else 'failure'}, got {got}"
            + (f" ({error})" if error and not succeeded else "")
        )
    for key, expected in (case.get("expected_outputs") or {}).items():
        value = step_output(*key.split(".", 1)) if "." in key else output(key)
        if value != expected:
            problems.append(f"{key}: expected {expected!r}, got {value!r}")
    wanted_calls = case.get("expected_api_calls")
    if wanted_calls is not None and len(mock.calls) != wanted_calls:
        problems.append(f"expected {wanted_calls} API calls, got {len(mock.calls)}")
    if mock.unmatched:
        problems.append("no mock for " + ", ".join(dict.fromkeys(mock.unmatched)))
    return problems


async def run_all(make_settings: Any) -> list[CaseResult]:
    """Every case of every fixture; ``make_settings(allowed_target_hosts=...)`` builds settings."""
    results: list[CaseResult] = []
    with mock_server() as (mock, url):
        host = urlsplit(url).netloc
        for folder in fixtures():
            settings = make_settings(folder.name, [host])
            results += await run_fixture(folder, settings, mock, url)
    return results


__all__ = [
    "KNOWN_FAILURES",
    "OAI_EXAMPLES",
    "CaseResult",
    "KnownFailure",
    "MockApi",
    "arazzo_file",
    "base_urls",
    "case_label",
    "case_mocks",
    "expected_problems",
    "fixtures",
    "load_document",
    "local_source",
    "mock_server",
    "run_all",
    "run_fixture",
    "unexpected",
]
