"""Logging: loguru, JSON lines by default, with every known secret value redacted.

Secret values come from settings (the LLM key, the API token) and from tool auth at the moment
a secret is looked up (``redaction.redactor``). Every log record's message and extra fields are
scrubbed before any sink sees them, so a secret that reaches a log call is written as ``***``.
"""

from __future__ import annotations

import json
import logging
import sys
import uuid
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from loguru import logger

from dynamic_tools.redaction import redactor

if TYPE_CHECKING:
    from loguru import Record

    from dynamic_tools.settings import Settings


# The id of the request being served: the ``X-Request-ID`` the HTTP edge set or echoed (also
# inside MCP handlers, which run in the session's task), or a fresh id per stdio request.
_correlation_id: ContextVar[str | None] = ContextVar("correlation_id", default=None)


def correlation_id() -> str:
    """The current request's correlation id; a fresh one outside any request."""
    return _correlation_id.get() or uuid.uuid4().hex


def bind_correlation_id(value: str) -> None:
    """Make ``value`` the correlation id of the current context (and the tasks it starts)."""
    _correlation_id.set(value)


def _patch(record: Record) -> None:
    record["message"] = redactor.scrub(record["message"])
    record["extra"].update(redactor.scrub_any(dict(record["extra"])))
    exception = record["exception"]
    if exception is not None and exception.value is not None:
        text = redactor.scrub(str(exception.value))
        if text != str(exception.value):
            record["exception"] = exception._replace(value=type(exception.value)(text))


ACCESS_LOGGER = "uvicorn.access"


class _InterceptHandler(logging.Handler):
    """Routes stdlib logging (uvicorn, httpx) through loguru so redaction applies.

    The record keeps its logger's name; an access line (``uvicorn.access``) also carries its
    parts as fields: ``client``, ``method``, ``path``, ``http_version``, ``status``.
    """

    def emit(self, record: logging.LogRecord) -> None:
        try:
            level: str | int = logger.level(record.levelname).name
        except ValueError:
            level = record.levelno
        fields: dict[str, Any] = {}
        args = record.args
        if record.name == ACCESS_LOGGER and isinstance(args, tuple) and len(args) == 5:
            client, method, path, version, status = args
            fields = {
                "client": str(client),
                "method": str(method),
                "path": redactor.scrub(str(path)),
                "http_version": str(version),
                "status": status,
            }
        name = record.name

        def named(entry: Record) -> None:
            entry["name"] = name

        logger.opt(depth=6, exception=record.exc_info).patch(named).bind(**fields).log(
            level, record.getMessage()
        )


def json_line(record: Record) -> str:
    """One compact JSON object per record: time, level, logger, message, extra, exception."""
    data: dict[str, Any] = {
        "time": record["time"].isoformat(timespec="milliseconds"),
        "level": record["level"].name,
        "logger": record["name"],
        "message": record["message"],
    }
    extra = {k: v for k, v in record["extra"].items() if k != "_line" and k not in data}
    data.update(extra)
    exception = record["exception"]
    if exception is not None and exception.type is not None:
        data["exception"] = f"{exception.type.__name__}: {exception.value}"
    record["extra"]["_line"] = json.dumps(data, default=str)
    return "{extra[_line]}\n"


def configure_logging(settings: Settings, *, sink: Any = None) -> None:
    """Set up loguru once per app: JSON lines (or text) to stderr, secrets redacted."""
    redactor.add(*settings.secret_values())
    logger.remove()
    logger.configure(patcher=_patch)
    if settings.log_json:
        logger.add(
            sink or sys.stderr,
            level=settings.log_level,
            format=json_line,
            backtrace=False,
            diagnose=False,
        )
    else:
        logger.add(sink or sys.stderr, level=settings.log_level, backtrace=False, diagnose=False)
    logging.basicConfig(handlers=[_InterceptHandler()], level=logging.INFO, force=True)
    for name in ("uvicorn", "uvicorn.error", ACCESS_LOGGER):
        std = logging.getLogger(name)
        std.handlers = [_InterceptHandler()]
        std.propagate = False
    # uvicorn writes access lines whenever its access logger has a handler: none unless asked.
    access = logging.getLogger(ACCESS_LOGGER)
    access.handlers = [_InterceptHandler()] if settings.access_log else []
    access.disabled = not settings.access_log
    # Client libraries log every request URL at INFO, query string (and secrets) included.
    for name in ("httpx", "httpx2", "httpcore", "httpcore2", "openai"):
        logging.getLogger(name).setLevel(logging.WARNING)
