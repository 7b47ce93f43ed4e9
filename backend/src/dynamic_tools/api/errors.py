"""Error mapping at the HTTP edge: the one place that assigns HTTP statuses.

Every error body has the same shape: ``{"error_code", "message", "context", "retryable",
"correlation_id", "violations"?}``; ``correlation_id`` is the request's ``X-Request-ID`` (sent
back in that header) and every error answered is written to the log once with it bound.
A database that refuses connections or a connection pool that runs dry answers 503
``database_unavailable`` (retryable, ``Retry-After: 1``). Unexpected exceptions answer 500 with
a correlation id and nothing else; their details go to the (redacted) log.

Violations read as words for people: without the validation framework's prefixes ("Value
error, "), a known name pattern said in words instead of its regular expression, and the most
useful first (a missing field or a thing not found, then the rest, a pattern mismatch last).
"""

from __future__ import annotations

import math
import re
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from loguru import logger
from sqlalchemy.exc import OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from dynamic_tools.access.authenticate import www_authenticate
from dynamic_tools.access.policy import HOOKS_PREFIX
from dynamic_tools.errors import (
    DATABASE_UNAVAILABLE,
    UNEXPECTED,
    AccessError,
    ConfigurationError,
    ConflictError,
    DynamicToolsError,
    InvalidInputError,
    LLMUnavailableError,
    NotFoundError,
    OutboundError,
    RateLimitedError,
    RequestTooLargeError,
    UnauthenticatedError,
)
from dynamic_tools.plain_messages import plain_payload, plain_violations
from dynamic_tools.redaction import redactor

_STATUS: list[tuple[type[DynamicToolsError], int]] = [
    (RequestTooLargeError, 413),
    (InvalidInputError, 422),
    (NotFoundError, 404),
    (UnauthenticatedError, 401),
    (AccessError, 403),
    (ConflictError, 409),
    (RateLimitedError, 429),
    (ConfigurationError, 503),
    (LLMUnavailableError, 503),
    (OutboundError, 502),
]


def status_for(exc: DynamicToolsError) -> int:
    """The HTTP status of a project error."""
    for kind, status in _STATUS:
        if isinstance(exc, kind):
            return status
    return 500


def _correlation_id(request: Request) -> str | None:
    return getattr(request.state, "correlation_id", None)


def error_body(request: Request, payload: dict[str, Any], status: int = 0) -> dict[str, Any]:
    """Add the correlation id, scrub secrets and words from an error body; log the error once.

    The words: :func:`plain_payload`.
    """
    body: dict[str, Any] = redactor.scrub_any(plain_payload(payload))
    body["correlation_id"] = _correlation_id(request)
    if status:
        level = "ERROR" if status >= 500 else "INFO"
        logger.bind(
            correlation_id=body["correlation_id"],
            error_code=body.get("error_code"),
            status=status,
        ).log(
            level,
            "HTTP {} {} answered {} {}: {}",
            request.method,
            request.url.path,
            status,
            body.get("error_code"),
            body.get("message"),
        )
    return body


_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def allowed_methods(request: Request) -> str:
    """The ``Allow`` header of a 405: the methods the request's path serves.

    Starlette's own lists only the methods of the first route matching the path, while a path
    such as ``/tools`` is served by one route per method. The OpenAPI document says which
    methods a path has, a concrete path (``/tools/_reload``) taking precedence over a templated
    one (``/tools/{name}``) as OpenAPI has it; a path it does not show is asked of the router.
    """
    path = request.scope["path"]
    documented: dict[str, Any] = request.app.openapi().get("paths", {})
    templates = sorted(documented, key=lambda template: "{" in template)  # concrete first
    for template in templates:
        pattern = re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(template))
        if re.fullmatch(pattern, path):
            return ", ".join(
                sorted(m.upper() for m in documented[template] if m.upper() in _METHODS)
            )
    served = {
        method
        for method in _METHODS
        for route in request.app.router.routes
        if route.matches({**request.scope, "method": method})[0] is Match.FULL
    }
    return ", ".join(sorted(served))


def install_error_handlers(app: FastAPI) -> None:
    """Register the handlers on ``app``."""

    @app.exception_handler(DynamicToolsError)
    async def _project_error(request: Request, exc: DynamicToolsError) -> JSONResponse:
        status = status_for(exc)
        headers = None
        if isinstance(exc, AccessError) and not request.url.path.startswith(HOOKS_PREFIX):
            # (a webhook delivery's credential is its signature: no bearer challenge for it)
            settings = request.app.state.settings
            base = settings.base_url if settings.public_base_url else str(request.base_url)
            base = base.rstrip("/")
            headers = {"WWW-Authenticate": www_authenticate(exc, base)}
        if isinstance(exc, RateLimitedError):
            headers = {"Retry-After": str(max(1, math.ceil(exc.retry_after_s)))}
        return JSONResponse(
            error_body(request, exc.to_dict(), status), status_code=status, headers=headers
        )

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        violations: list[dict[str, Any]] = []
        for err in exc.errors():
            loc = [str(p) for p in err.get("loc", ())]
            violation: dict[str, Any] = {
                "path": ".".join(loc),
                "message": err.get("msg", "invalid"),
                "rule": err.get("type"),
            }
            if loc and loc[0] == "body" and err.get("type") == "json_invalid":
                violation["message"] = "the body is not valid JSON"
            violations.append(violation)
        violations = plain_violations(violations)
        fields = ", ".join(v["path"] for v in violations[:5])
        payload = {
            "error_code": "invalid_input",
            "message": f"the request is invalid: {fields}",
            "context": {},
            "retryable": False,
            "violations": violations,
        }
        return JSONResponse(error_body(request, payload, 422), status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {
            400: "invalid_input",
            401: "unauthorized",
            404: "not_found",
            405: "method_not_allowed",
        }.get(exc.status_code, "http_error")
        headers = getattr(exc, "headers", None)
        if exc.status_code == 405:
            headers = {**(headers or {}), "Allow": allowed_methods(request)}
        payload = {
            "error_code": code,
            "message": str(exc.detail),
            "context": {},
            "retryable": False,
        }
        return JSONResponse(
            error_body(request, payload, exc.status_code),
            status_code=exc.status_code,
            headers=headers,
        )

    async def _database_unavailable(request: Request, exc: Exception) -> JSONResponse:
        # The database refused a connection or a pool ran dry (too many clients, a restart, a
        # failover): the request can be sent again. Its text (host, port) goes to the log only.
        logger.bind(correlation_id=_correlation_id(request)).warning(
            "database unavailable on {} {}: {}", request.method, request.url.path, exc
        )
        payload = {
            "error_code": "database_unavailable",
            "message": DATABASE_UNAVAILABLE,
            "context": {},
            "retryable": True,
        }
        return JSONResponse(
            error_body(request, payload, 503), status_code=503, headers={"Retry-After": "1"}
        )

    app.add_exception_handler(OperationalError, _database_unavailable)
    app.add_exception_handler(PoolTimeoutError, _database_unavailable)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        logger.opt(exception=exc).bind(correlation_id=_correlation_id(request)).error(
            "unexpected error on {} {}", request.method, request.url.path
        )
        payload = {
            "error_code": "internal_error",
            "message": UNEXPECTED,
            "context": {},
            "retryable": False,
        }
        return JSONResponse(error_body(request, payload), status_code=500)
