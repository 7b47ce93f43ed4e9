"""Schemathesis over the live REST API: every check, a few examples per operation, loopback only.

The server is the real app (``create_app``) on a free 127.0.0.1 port, with a temporary registry
seeded from ``examples/travel`` (so DELETEs remove copies), no LLM, and the demo travel API the
example's tools call. Name resolution is fenced: any host but loopback fails to resolve, so no
request (a catalog source, a tool call) can leave the machine.

Checks: all of them (``--checks all``): not_a_server_error, status_code_conformance,
content_type_conformance, response_schema_conformance, response_headers_conformance,
negative_data_rejection, positive_data_acceptance, missing_required_header, unsupported_method,
allow_header_conformance, use_after_free, ensure_resource_availability, ignored_auth — over the
examples, coverage, fuzzing and stateful phases, run by schemathesis's engine (what ``schemathesis
run --checks all`` runs) with a few examples per operation and a time budget.

What the schema cannot say. Some operations take a *document* (a tool config, a workflow, an
OpenAPI source, run params checked against a workflow's declared params) or values that must
agree with each other (checkout after checkin). A request can match the schema and still be
refused by the domain with 422 and its violations. For those operations (``SEMANTIC_422``)
422 is an accepted answer to schema-valid data, and the extra check
``schema_valid_passes_request_validation`` makes sure such a 422 never comes from request
validation itself: that would mean the schema is missing a constraint.

Left out: ``POST /demo/travel/_faults`` arms injected failures (5xx, latency) by design, and
``GET /runs/{run_id}/events`` is a live stream that ends only when the run does.
"""

from __future__ import annotations

import json
import shutil
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
import schemathesis.engine
from schemathesis import Case, CheckContext, Response
from schemathesis.engine import Status, events
from schemathesis.specs.openapi.schemas import OpenApiSchema

from dynamic_tools.api.app import create_app
from dynamic_tools.api.responses import ErrorBody
from dynamic_tools.settings import Settings
from tests.support.servers import free_port, serve

REPO = Path(__file__).resolve().parents[4]
EXAMPLES = REPO / "examples" / "travel"
LOOPBACK = {"127.0.0.1", "localhost", "::1"}
REQUEST_LOCATIONS = {"body", "query", "path", "header", "cookie"}

# Operations whose schema-valid requests the domain may refuse with 422 (see the docstring).
SEMANTIC_422 = [
    ("POST", "/tools"),  # a tool config: path placeholders, auth completeness, JSON Schemas
    ("PUT", "/tools/{name}"),  # the same, and the body's name must be the path's
    ("POST", "/workflows"),  # a workflow document: parsed and validated
    ("PUT", "/workflows/{workflow_id}"),  # the same, and it must define the path's workflow
    ("POST", "/workflows/validate"),
    ("POST", "/workflows/{workflow_id}/runs"),  # params checked against the workflow's params
    ("POST", "/workflows/{workflow_id}/dry-run"),
    ("POST", "/runs/{run_id}/resume"),  # values checked against the yield's expects
    ("GET", "/runs"),  # a cursor this server gave; since before until
    ("GET", "/runs/stats"),  # since before until; a bucket that makes at most 500 buckets
    ("POST", "/runs/cancel"),  # a filter that narrows, at most 500 runs
    ("POST", "/runs/redrive"),
    ("POST", "/workflows/{workflow_id}/webhooks/{name}/example"),  # a body JSON can sign
    ("POST", "/authoring/preview-inputs"),  # a draft document, or inputs for a workflow
    ("POST", "/authoring/preview-rendered"),
    ("POST", "/authoring/step-plan"),
    ("POST", "/authoring/resolve-inputs"),
    ("POST", "/authoring/runs"),
    ("POST", "/catalogs"),  # an OpenAPI source: it must exist, be readable and be OpenAPI
    ("POST", "/catalogs/preview"),
    ("POST", "/catalogs/validate"),
    ("POST", "/keys"),  # an expiry of zero ("0d") is not in the future
    ("GET", "/demo/travel/flights"),  # destination must differ from origin
    ("GET", "/demo/travel/hotels"),  # checkout 1..30 nights after checkin
    ("POST", "/demo/travel/hotel-bookings"),  # the same
    ("POST", "/demo/travel/payments"),  # amount must be the booking's price
    # A reused Idempotency-Key with a different request (the stateful phase reuses values).
    ("POST", "/demo/travel/bookings"),
    ("POST", "/demo/travel/waitlist"),
    ("POST", "/demo/travel/trips"),
    ("POST", "/demo/travel/bookings/{booking_id}/cancel"),
    ("POST", "/demo/travel/hotel-bookings/{booking_id}/cancel"),
]
EXCLUDED = [("POST", "/demo/travel/_faults"), ("GET", "/runs/{run_id}/events")]
# Without a token, the first API key turns access control on (by design): every later request
# would be refused. The run with a token covers it.
EXCLUDED_WITHOUT_TOKEN = [("POST", "/keys")]
ACCEPTED = ["2xx", "3xx", "401", "403", "404", "409", "429", "5xx"]

REJECTED = ["400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428", "429"]

MAX_TIME_S = 240  # the whole run's budget (pytest-timeout); it takes about a minute
CONFIG: dict[str, Any] = {
    "seed": 20261123,
    "workers": 1,
    "continue-on-failure": True,
    "request-timeout": 30,
    "generation": {"max-examples": 8},
    "checks": {
        "enabled": True,
        # A body over the request limit is refused before it is parsed: 413, not 422.
        "negative_data_rejection": {"expected-statuses": [*REJECTED]},
    },
    "phases": {"stateful": {"max-steps": 6}},
}
SEMANTIC_OPERATIONS = [
    {
        "include-name": f"{method} {path}",
        "checks": {"positive_data_acceptance": {"expected-statuses": [*ACCEPTED, "422"]}},
    }
    for method, path in SEMANTIC_422
]


def operations(excluded: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """The per-operation configuration: ``excluded`` off, the semantic 422s accepted."""
    off = [{"include-name": f"{m} {p}", "enabled": False} for m, p in excluded]
    return [*off, *SEMANTIC_OPERATIONS]


CONFIG["operations"] = operations([*EXCLUDED, *EXCLUDED_WITHOUT_TOKEN])


@schemathesis.check
def schema_valid_passes_request_validation(
    ctx: CheckContext, response: Response, case: Case
) -> bool | None:
    """A schema-valid request is never refused by request validation, only by the domain."""
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive or response.status_code != 422:
        return None
    body = response.json()
    if "error" in body:  # the demo's shape: request validation errors carry "details"
        assert "details" not in body["error"], f"request validation refused it: {body}"
        return None
    paths = [str(v.get("path") or "") for v in body.get("violations") or []]
    assert not any(p.split(".")[0] in REQUEST_LOCATIONS for p in paths), (
        f"request validation refused a schema-valid request: {body}"
    )
    return None


@schemathesis.check
def method_not_allowed_names_the_methods(
    ctx: CheckContext, response: Response, case: Case
) -> bool | None:
    """A 405 lists methods in ``Allow`` (the built-in checks pass an empty header silently)."""
    if response.status_code == 405:
        allow = response.headers.get("allow") or [""]
        assert allow[0].strip(), "405 with an empty Allow header"
    return None


@pytest.fixture(scope="module")
def loopback_only() -> Iterator[None]:
    """Every name or address but loopback fails to resolve, for the server and the client."""
    real = socket.getaddrinfo

    def fenced(host: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else str(host)
        if name not in LOOPBACK and not name.startswith("127."):
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known (test fence)")
        return real(host, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(socket, "getaddrinfo", fenced)
        yield


@contextmanager
def _live_api(tmp: Path, api_token: str | None) -> Iterator[str]:
    """The app on a loopback port, on a temporary copy of the travel example."""
    root = tmp / "registry"
    shutil.copytree(EXAMPLES / "tools", root / "tools")
    shutil.copytree(EXAMPLES / "workflows", root / "workflows")
    port = free_port()
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None,
        host="127.0.0.1",
        port=port,
        data_dir=tmp / "data",
        registry_config_path=root / "config.yaml",
        openai_api_key=None,
        openai_base_url=None,
        llm_model="fake-model",
        llm_max_retries=0,
        log_json=True,
        log_level="WARNING",
        allowed_target_hosts=[],
        api_token=api_token,
        enable_demo_api=True,  # with a token too: its routes then answer 401 without it
        freeze_startup_heap=False,  # the test process's heap: tests/conftest.py
        durable_runs=False,
    )
    with serve(create_app(settings), port) as url:
        yield url


@pytest.fixture(scope="module")
def live_api(tmp_path_factory: pytest.TempPathFactory, loopback_only: None) -> Iterator[str]:
    """The app without an API token."""
    with _live_api(tmp_path_factory.mktemp("schemathesis"), None) as url:
        yield url


@pytest.fixture(scope="module")
def api_schema(live_api: str) -> OpenApiSchema:
    """The live server's OpenAPI document, with the configuration above."""
    config = schemathesis.Config.from_dict(CONFIG)
    return schemathesis.openapi.from_url(f"{live_api}/openapi.json", config=config)


def _failures(event: events.EngineEvent) -> list[str]:
    """What went wrong in one engine event, one line per failed check or error."""
    if isinstance(event, events.ScenarioFinished):
        found = []
        for checks in event.recorder.checks.values():
            for check in checks:
                if check.status == Status.FAILURE and check.failure_info is not None:
                    failure = check.failure_info.failure
                    found.append(f"{event.label}: {failure.title}: {failure.message[:300]}")
        return found
    if isinstance(event, events.NonFatalError):
        return [f"{event.label}: error: {event.info.title}: {event.info.message[:300]}"]
    if isinstance(event, events.FatalError):
        raise event.exception
    if isinstance(event, events.EngineFinished):
        return [f"after the run: {failure.title}" for failure in event.failures]
    return []


@pytest.mark.timeout(MAX_TIME_S + 60)
def test_every_check_passes_on_every_operation(api_schema: OpenApiSchema) -> None:
    """Examples, coverage, fuzzing and stateful phases, all checks: no failure, no error."""
    failures, tested = _run(api_schema)
    assert not failures, f"{len(failures)} failure(s):\n" + "\n".join(failures)
    listed = {op.ok().label for op in api_schema.get_all_operations()}
    excluded = {f"{m} {p}" for m, p in [*EXCLUDED, *EXCLUDED_WITHOUT_TOKEN]}
    assert len(listed) >= 50 and listed - excluded <= tested


def _run(schema: OpenApiSchema) -> tuple[list[str], set[str]]:
    failures: list[str] = []
    tested: set[str] = set()
    for event in schemathesis.engine.from_schema(schema).execute():
        failures.extend(_failures(event))
        if isinstance(event, events.ScenarioFinished) and event.status != Status.SKIP:
            tested.add(str(event.label))
    return sorted(set(failures)), tested


@pytest.mark.timeout(MAX_TIME_S + 60)
def test_every_check_passes_with_an_api_token(
    tmp_path_factory: pytest.TempPathFactory, loopback_only: None
) -> None:
    """With API_TOKEN set, the document declares the bearer scheme and ignored_auth holds:
    a request without the token, or with a wrong one, answers 401 on every protected operation.
    """
    token = "st-token-7f3a9c"
    config = schemathesis.Config.from_dict(
        {
            **CONFIG,
            "operations": operations(EXCLUDED),
            "generation": {"max-examples": 2},
            "phases": {"coverage": {"enabled": False}, "stateful": {"enabled": False}},
            "auth": {"openapi": {"apiToken": {"bearer": token}}},
        }
    )
    with _live_api(tmp_path_factory.mktemp("schemathesis-token"), token) as url:
        schema = schemathesis.openapi.from_url(
            f"{url}/openapi.json", config=config, headers={"Authorization": f"Bearer {token}"}
        )
        assert "apiToken" in schema.raw_schema["components"]["securitySchemes"]
        failures, tested = _run(schema)
    assert not failures, f"{len(failures)} failure(s):\n" + "\n".join(failures)
    assert len(tested) >= 50


def _deep_schema(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"x": schema}}
    return schema


# Hostile inputs that answered 500 before the input limits: each must answer a documented 4xx.
KNOWN_500 = [
    ("/catalogs/validate", "POST", {"source": "~nosuchuser/x.json"}),
    ("/catalogs/validate", "POST", {"source": "a\u0000b"}),
    ("/catalogs/validate", "POST", {"source": "http://127.0.0.1:1:2/openapi.json"}),
    ("/workflows/validate", "POST", {"content": "[" * 10_000 + "]" * 10_000, "format": "json"}),
    ("/workflows/validate", "POST", {"content": "a: " + "[" * 10_000 + "]" * 10_000}),
    (
        "/tools",
        "POST",
        {
            "name": "deep_schema",
            "description": "A parameter schema 200 levels deep",
            "api": {"method": "POST", "base_url": "https://api.example.com", "path": "/x"},
            "parameters": {"p": {"in": "body", **_deep_schema(200)}},
        },
    ),
]


@pytest.mark.parametrize(
    ("path", "method", "body"),
    KNOWN_500,
    ids=[f"{m} {p} {i}" for i, (p, m, _) in enumerate(KNOWN_500)],
)
def test_known_hostile_inputs_answer_a_documented_error(
    api_schema: OpenApiSchema, live_api: str, path: str, method: str, body: dict[str, Any]
) -> None:
    """Inputs the fuzzer is unlikely to draw: a documented 4xx with the error model, no 500.

    Sent and checked by hand: schemathesis refuses to serialise a body this deep.
    """
    response = httpx.request(
        method,
        f"{live_api}{path}",
        content=json.dumps(body),
        headers={"content-type": "application/json"},
        timeout=60,
    )
    documented = api_schema.raw_schema["paths"][path][method.lower()]["responses"]
    if path == "/workflows/validate":  # a validation report: 200 with the violation
        assert response.status_code == 200, response.text
        assert response.json()["valid"] is False
        assert [v["rule"] for v in response.json()["violations"]] == ["max_depth"]
        return
    assert 400 <= response.status_code < 500, response.text
    assert str(response.status_code) in documented
    ErrorBody.model_validate(response.json())
