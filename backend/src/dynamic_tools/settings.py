"""Settings: the one place that reads the environment.

Every other module receives a :class:`Settings` instance (or values taken from it). Tool
secrets (``secret:NAME`` in tool configs) are read through :meth:`Settings.secret`, so that
reading the process environment stays in this file.
"""

from __future__ import annotations

import os
import re
import socket
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, ValidationInfo, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict


def _default_data_dir() -> Path:
    """The user's data directory for an installed server (XDG rules)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "dynamic-tools"


def _default_config_dir() -> Path:
    """The user's configuration directory for an installed server (XDG rules)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "dynamic-tools"


TOOL_SECRET_ENV_PREFIX = "DT_SECRET_"
_TOOL_SECRET_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")  # fullmatch: "$" allows "\n"


class Settings(BaseSettings):
    """Every setting of the server, read from the environment or a ``.env`` file."""

    model_config = SettingsConfigDict(
        env_file=".env", env_file_encoding="utf-8", extra="ignore", populate_by_name=True
    )

    # --- serving ---------------------------------------------------------------------------
    host: str = Field(default="127.0.0.1", description="Interface the server listens on.")
    port: int = Field(default=8000, ge=0, le=65535, description="Port the server listens on.")
    public_base_url: str | None = Field(
        default=None,
        description="URL under which this server is reachable; default http://HOST:PORT. "
        "Tool configs may use ${PUBLIC_BASE_URL} in api.base_url (the travel example does).",
    )
    allow_open_access: bool = Field(
        default=False,
        description="Listen on a non-loopback HOST although no credential is configured (anyone "
        "who reaches the server is its admin). Without it such a server listens on 127.0.0.1.",
    )
    api_token: SecretStr | None = Field(
        default=None,
        description="When set, every non-health endpoint needs 'Authorization: Bearer <token>'.",
    )
    # OAuth 2.1 resource server (access/tokens.py, README "Configuring an issuer")
    oauth_issuer: str | None = Field(
        default=None,
        description="The authorization server whose access tokens this server accepts (its "
        "issuer URL; metadata read from its /.well-known/oauth-authorization-server or "
        "openid-configuration). Turns access control on.",
    )
    oauth_audience: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Comma-separated audiences a token must name (one is enough). Default: "
        "this server's resource URIs, PUBLIC_BASE_URL (or http://HOST:PORT) and the same + /mcp.",
    )
    oauth_jwks_url: str | None = Field(
        default=None, description="The issuer's JWKS URL, instead of its metadata's jwks_uri."
    )
    oauth_introspection_url: str | None = Field(
        default=None,
        description="RFC 7662 introspection endpoint for opaque tokens, instead of the "
        "metadata's introspection_endpoint (used only with OAUTH_CLIENT_ID).",
    )
    oauth_client_id: str | None = Field(
        default=None,
        description="This server's client id at the issuer, for token introspection (opaque "
        "tokens); unset: only JWT access tokens are accepted.",
    )
    oauth_client_secret: SecretStr | None = Field(
        default=None, description="The secret of OAUTH_CLIENT_ID (HTTP Basic at introspection)."
    )

    session_key: SecretStr | None = Field(
        default=None,
        description="Key sealing the outbound headers (X-Target-Headers) an MCP session's "
        "runs keep in the database, so a run resumed after a restart still authenticates. "
        "Default: a random key created in DATA_DIR/session.key. Replicas sharing a "
        "PostgreSQL database must be given the same value.",
    )

    # --- storage ---------------------------------------------------------------------------
    data_dir: Path = Field(default_factory=_default_data_dir)
    database_url: str | None = Field(
        default=None, description="SQLAlchemy URL; default: a SQLite file in DATA_DIR."
    )
    registry_config_path: Path | None = Field(
        default=None,
        description="Registry config file; its directory is the registry root "
        "(tools/, workflows/, catalogs/). The file itself may be absent.",
    )
    registry_workflows_path: Path | None = Field(
        default=None, description="Workflow directory; default <registry root>/workflows."
    )
    seed_examples_from: Path | None = Field(
        default=None,
        description="When set and the registry root is empty, copy this example directory "
        "into it on start (make run seeds from examples/travel). The source is never modified.",
    )

    durable_runs: bool = Field(
        default=True,
        description="Run workflows durably on DBOS (they survive a restart); false runs them "
        "in-process only.",
    )
    executor_id: str | None = Field(
        default=None,
        max_length=100,
        description="PostgreSQL replicas: this replica's stable, unique id for durable runs "
        "(e.g. a StatefulSet pod name); default the host name. Unused on SQLite, where the one "
        "process of a journal keeps a fixed identity stored beside the data.",
    )
    run_concurrency: int = Field(
        default=10,
        ge=1,
        le=10_000,
        description="PostgreSQL replicas: how many runs one replica executes at once; new runs "
        "wait in a shared queue for a replica with room.",
    )
    database_pool_size: int | None = Field(
        default=None,
        ge=1,
        le=1000,
        description="PostgreSQL: the most connections one replica keeps to the database per "
        "pool, the run store's and the durable journal's; with six of fixed use (DBOS's "
        "listening one, the replica's lock, the run queue's bookkeeping 2 + 2) a replica opens "
        "at most 2 x this + 6: keep replicas x (2 x this + 6) under the server's "
        "max_connections. Default: the run store 5 (+10 under load), the journal 20.",
    )
    run_queue_poll_s: float = Field(
        default=0.2,
        gt=0,
        le=60,
        description="PostgreSQL replicas: how often a replica looks for queued runs.",
    )
    failover_check_s: float = Field(
        default=5.0,
        ge=0,
        le=3600,
        description="PostgreSQL replicas: how often a replica checks for dead replicas and "
        "takes over their unfinished runs (0 turns automatic failover off).",
    )
    schedules_enabled: bool = Field(
        default=True,
        description="Fire the schedules the workflow documents declare (docs/triggers.md); "
        "every replica may run the scheduler, each tick still starts one run.",
    )
    scheduler_poll_s: float = Field(
        default=5.0,
        gt=0,
        le=3600,
        description="The longest the scheduler sleeps between passes (it wakes at the next "
        "tick when that is sooner; a document saved meanwhile is seen by then).",
    )
    webhook_rate_per_minute: int = Field(
        default=120,
        ge=1,
        le=1_000_000,
        description="Deliveries one webhook accepts per minute on one replica (more: 429).",
    )
    webhook_max_body_bytes: int = Field(
        default=1_000_000,
        ge=1024,
        le=50_000_000,
        description="The largest webhook delivery accepted (larger: 413, never read whole).",
    )

    # --- LLM -------------------------------------------------------------------------------
    openai_api_key: SecretStr | None = None
    openai_base_url: str | None = Field(
        default=None, description="Any OpenAI-compatible server: OpenAI, Azure, Ollama, vLLM."
    )
    llm_model: str = "gpt-4o-mini"
    llm_timeout_s: float = Field(default=60.0, gt=0)
    llm_max_retries: int = Field(
        default=2, ge=0, description="Retries of one LLM request (network, 429, 502-504)."
    )
    llm_capabilities: str = Field(
        default="detect",
        description="What the LLM endpoint can do: 'detect' (a probe at start; OpenAI's own "
        "endpoint is known) or a comma list of required, named, auto, json_schema, "
        "json_object, strict, system (or 'none'). docs/llm-servers.md",
    )
    llm_tool_choice: Literal["best", "required", "named", "json_schema", "auto", "text"] = Field(
        default="best",
        description="How a call is asked for: the best way the capabilities allow, or this one.",
    )
    llm_strict: bool | None = Field(
        default=None,
        description="Strict schemas on or off (default: on for OpenAI's own endpoint only).",
    )
    llm_max_tokens: int = Field(
        default=512, ge=16, description="Tokens the model may write for one function call."
    )
    llm_text_max_tokens: int = Field(
        default=2048,
        ge=16,
        description="Tokens the model may write for a formatted answer or a draft.",
    )
    llm_validation_retries: int = Field(
        default=2, ge=0, le=5, description="Re-asks after an invalid answer, error fed back."
    )
    selection_top_k: int = Field(
        default=8, ge=1, description="With more candidate tools than this, BM25 narrows them."
    )
    llm_context_max_chars: int = Field(
        default=120_000,
        ge=1000,
        description="Largest tool context sent to the LLM; more fails at tool_context_generation.",
    )
    format_max_chars: int = Field(
        default=8000, ge=256, description="Raw response characters given to the formatter."
    )
    query_max_steps: int = Field(
        default=6, ge=1, le=50, description="Calls one {prefix}_query may make before answering."
    )
    query_max_tokens: int = Field(
        default=50_000, ge=1000, description="LLM tokens one {prefix}_query may use."
    )
    query_time_budget_s: float = Field(
        default=120.0, gt=0, description="Seconds one {prefix}_query may take, calls included."
    )
    query_step_max_rows: int = Field(
        default=50, ge=1, description="Rows of one call's answer shown to the model."
    )
    query_step_max_chars: int = Field(
        default=8000, ge=256, description="Characters of one call's answer shown to the model."
    )

    # --- outbound HTTP ---------------------------------------------------------------------
    http_timeout_s: float = Field(
        default=30.0, gt=0, description="Each phase of an outbound call: connect, write, read."
    )
    tool_call_deadline_s: float = Field(
        default=60.0,
        gt=0,
        description="The whole outbound call (connect + headers + body); a tool's "
        "api.deadline_s overrides it, a node's lower timeout wins.",
    )
    http_max_response_bytes: int = Field(
        default=5_000_000,
        ge=1024,
        description="An answer's body: read up to this many decoded bytes, and recorded up to "
        "this many bytes in its stored (JSON) form.",
    )
    allowed_target_hosts: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Comma-separated host or host:port allowed even when private/loopback.",
    )

    # --- tool secrets and outbound targets -------------------------------------------------
    secrets_dir: Path | None = Field(
        default=None,
        description="Directory of tool secrets, one file per secret: 'secret:NAME' reads the "
        "file NAME (first), else the environment variable DT_SECRET_NAME.",
    )
    target_hosts_mode: Literal["public", "allow-list"] = Field(
        default="public",
        description="'public': listed hosts and any host whose addresses are all public; "
        "'allow-list': only the hosts in ALLOWED_TARGET_HOSTS (recommended in production).",
    )

    # --- features --------------------------------------------------------------------------
    enable_demo_api: bool | None = Field(
        default=None,
        description="Mount the travel demo API at /demo/travel. Unset ('auto'): on when no "
        "access control is configured (API_TOKEN), off when it is. true with API_TOKEN: "
        "/demo/* needs the token like every other route. Its fault and reset controls answer "
        "loopback callers only.",
    )
    enable_workflows: bool = True
    enable_tool_hints: bool = True

    # --- MCP -------------------------------------------------------------------------------
    mcp_api_name: str = Field(
        default="api",
        pattern=r"^[A-Za-z][A-Za-z0-9_-]{0,30}$",
        description="Prefix of {prefix}_query/_execute/_plan when X-API-Name is not sent.",
    )
    mcp_allowed_hosts: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Host headers /mcp accepts besides localhost (host or host:port, host:* for "
        "any port; '*' turns DNS-rebinding protection off).",
    )
    mcp_client_request_timeout_s: float = Field(
        default=300.0,
        gt=0,
        le=86_400,
        description="How long the server waits for a client to answer an elicitation or sampling "
        "request; a task waiting on it then fails with CLIENT_REQUEST_TIMEOUT.",
    )
    mcp_confirmation_ttl_s: float = Field(
        default=300.0,
        gt=0,
        le=86_400,
        description="How long the confirmation token a destructive MCP tool answers (with its "
        "preview) stays valid for the confirming second call.",
    )
    mcp_task_max_ttl_s: int = Field(
        default=30 * 86_400,
        ge=1,
        description="Longest ttl an MCP task keeps (a larger requested ttl is lowered to it).",
    )

    # --- input limits ----------------------------------------------------------------------
    max_request_bytes: int = Field(
        default=4 * 1024 * 1024,
        ge=1024,
        description="Largest request body on any route (413 past it); a workflow document "
        "may be 1 MB of text.",
    )
    max_tool_request_bytes: int = Field(
        default=256 * 1024,
        ge=1024,
        description="Largest body of POST /tools and PUT /tools/{name} (a tool config).",
    )
    document_workers: int = Field(
        default=2,
        ge=0,
        le=64,
        description="Processes that parse and check workflow and OpenAPI documents off the "
        "event loop (0: a thread, with no time or memory budget).",
    )
    document_timeout_s: float = Field(
        default=30.0,
        gt=0,
        le=600,
        description="Time budget of one document's parsing and checking (the largest workflow "
        "document allowed takes about 6 s); the worker is stopped past it (422).",
    )
    document_worker_memory_mb: int = Field(
        default=1024,
        ge=256,
        description="Address-space cap of each document worker (RLIMIT_AS).",
    )
    freeze_startup_heap: bool = Field(
        default=True,
        description="After start-up, collect once and freeze what start-up built (gc.freeze): "
        "later collections skip it. Tests, which make hundreds of apps in one large process, "
        "turn it off: that full collection of their heap is the costly part.",
    )

    # --- logging ---------------------------------------------------------------------------
    log_level: Literal["TRACE", "DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    log_json: bool = True
    access_log: bool = Field(
        default=False,
        description="One line per HTTP request (method, path, status, client), in the log "
        "format (JSON by default); off unless asked.",
    )

    @field_validator(
        "data_dir",
        "registry_config_path",
        "registry_workflows_path",
        "seed_examples_from",
        mode="before",
    )
    @classmethod
    def _expand_path(cls, value: object, info: ValidationInfo) -> object:
        if isinstance(value, str | os.PathLike):
            text = os.fspath(value)
            if not text.strip():
                return None if info.field_name != "data_dir" else _default_data_dir()
            return expand_path(text, (info.field_name or "path").upper())
        return value

    @field_validator("llm_capabilities")
    @classmethod
    def _known_capabilities(cls, value: str) -> str:
        from dynamic_tools.selection.capabilities import listed

        listed(value)  # raises ValueError naming an unknown entry
        return value

    @field_validator("database_url", mode="before")
    @classmethod
    def _expand_sqlite_path(cls, value: object) -> object:
        if isinstance(value, str) and value.startswith("sqlite:///"):
            path = value.removeprefix("sqlite:///")
            return "sqlite:///" + str(expand_path(path, "DATABASE_URL")) if path else value
        return value

    @field_validator("allowed_target_hosts", "mcp_allowed_hosts", mode="before")
    @classmethod
    def _split_hosts(cls, value: object) -> object:
        if isinstance(value, str):
            return [h.strip().lower() for h in value.split(",") if h.strip()]
        return value

    @field_validator("oauth_audience", mode="before")
    @classmethod
    def _split_audiences(cls, value: object) -> object:
        if isinstance(value, str):
            return [a.strip() for a in value.split(",") if a.strip()]
        return value

    @field_validator(
        "openai_base_url",
        "public_base_url",
        "openai_api_key",
        "api_token",
        "oauth_issuer",
        "oauth_jwks_url",
        "oauth_introspection_url",
        "oauth_client_id",
        "oauth_client_secret",
        mode="before",
    )
    @classmethod
    def _blank_is_none(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("oauth_issuer", "oauth_jwks_url", "oauth_introspection_url")
    @classmethod
    def _oauth_url(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return None
        value = value.strip()
        parts = urlsplit(value)
        setting = (info.field_name or "url").upper()
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"{setting} '{value}' is not an http(s) URL")
        if parts.username or parts.password:
            raise ValueError(f"{setting} must not carry credentials in the URL")
        if info.field_name == "oauth_issuer" and (parts.query or parts.fragment):
            raise ValueError(f"{setting} '{value}' must have no query and no fragment (RFC 8414)")
        return value

    @model_validator(mode="after")
    def _introspection_pair(self) -> Settings:
        if (self.oauth_client_id is None) != (self.oauth_client_secret is None):
            raise ValueError("OAUTH_CLIENT_ID and OAUTH_CLIENT_SECRET go together: set both")
        if self.oauth_client_id is not None and self.oauth_issuer is None:
            raise ValueError("OAUTH_CLIENT_ID is for introspection at OAUTH_ISSUER: set it too")
        return self

    @field_validator("enable_demo_api", mode="before")
    @classmethod
    def _auto_is_none(cls, value: object) -> object:
        if isinstance(value, str) and value.strip().lower() in ("", "auto"):
            return None
        return value

    # --- derived values --------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        """The URL this server is reachable at (``PUBLIC_BASE_URL`` or ``http://HOST:PORT``)."""
        if self.public_base_url:
            return self.public_base_url.rstrip("/")
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::") else self.host
        return f"http://{host}:{self.port}"

    @property
    def registry_root(self) -> Path:
        """Directory holding ``tools/``, ``workflows/`` and ``catalogs/``."""
        if self.registry_config_path is not None:
            return self.registry_config_path.parent
        return _default_config_dir()

    @property
    def tools_dir(self) -> Path:
        """Directory of tool config files."""
        return self.registry_root / "tools"

    @property
    def workflows_dir(self) -> Path:
        """Workflow documents: ``REGISTRY_WORKFLOWS_PATH``, else ``<registry root>/workflows``."""
        return self.registry_workflows_path or self.registry_root / "workflows"

    @property
    def catalogs_dir(self) -> Path:
        """Directory of imported OpenAPI catalogs."""
        return self.registry_root / "catalogs"

    @property
    def effective_database_url(self) -> str:
        """``DATABASE_URL`` or a SQLite file in the data directory."""
        return self.database_url or f"sqlite:///{self.data_dir / 'dynamic_tools.sqlite'}"

    @property
    def uses_postgres(self) -> bool:
        """Whether the run store (and so the journal) is a PostgreSQL database."""
        return self.effective_database_url.startswith(("postgresql", "postgres:"))

    @property
    def effective_executor_id(self) -> str:
        """``EXECUTOR_ID`` or the host name (PostgreSQL replicas).

        Never the port: a restart on another port is the same executor and resumes its runs.
        On SQLite the launcher uses the identity kept beside the journal instead.
        """
        return (self.executor_id or "").strip() or socket.gethostname()

    @property
    def durable_database_url(self) -> str:
        """The journal (DBOS's system database), derived from the run store's URL.

        PostgreSQL: the same database (DBOS keeps its tables in a schema of their own).
        SQLite: a sibling file of the run-store file (``x.sqlite`` → ``x.journal.sqlite``), so
        two deployments with different ``DATABASE_URL``s never share a journal.
        """
        url = self.effective_database_url
        if self.uses_postgres:
            rest = url.split("://", 1)[1]
            return f"postgresql://{rest}"
        return journal_url_for_sqlite(url)

    @property
    def journal_file(self) -> Path | None:
        """The SQLite journal file (None on PostgreSQL)."""
        if self.uses_postgres:
            return None
        return Path(self.durable_database_url.removeprefix("sqlite:///"))

    @property
    def access_control_configured(self) -> bool:
        """Whether callers must authenticate (``API_TOKEN``, or an issuer: ``OAUTH_ISSUER``).

        The one place that says so: every access control the server gains joins this test, and
        what depends on it (the demo API's default) follows.
        """
        return self.api_token is not None or self.oauth_issuer is not None

    @property
    def oauth_audiences(self) -> list[str]:
        """The audiences an access token may name: ``OAUTH_AUDIENCE``, else the resource URIs.

        The resource URIs (RFC 8707, RFC 9728) are this server's base URL (the REST API) and
        its MCP endpoint, ``<base>/mcp``: an MCP client asks its token for the latter.
        """
        return self.oauth_audience or [self.base_url, self.base_url + "/mcp"]

    @property
    def demo_api_enabled(self) -> bool:
        """Whether the demo API is mounted: ``ENABLE_DEMO_API``, else on without access control."""
        if self.enable_demo_api is not None:
            return self.enable_demo_api
        return not self.access_control_configured

    @property
    def llm_configured(self) -> bool:
        """Whether an LLM endpoint can be called (a key, or a local OpenAI-compatible URL)."""
        return self.openai_api_key is not None or self.openai_base_url is not None

    def template_variables(self) -> dict[str, str]:
        """Variables that tool configs may use as ``${NAME}`` in ``api.base_url``."""
        return {"PUBLIC_BASE_URL": self.base_url}

    def secret(self, name: str) -> str | None:
        """The tool secret ``name`` (``secret:NAME``), or None when it is not set.

        Read from the file ``NAME`` in ``SECRETS_DIR`` when it exists, else from the
        environment variable ``DT_SECRET_NAME``. Only tool secrets are read, never another
        variable (``API_TOKEN``, ``OPENAI_API_KEY``, ``DATABASE_URL``...). A file's trailing
        line break is dropped.
        """
        if not _TOOL_SECRET_NAME.fullmatch(name):
            return None
        if self.secrets_dir is not None:
            path = self.secrets_dir / name
            if path.is_file():
                return path.read_text(encoding="utf-8").rstrip("\r\n") or None
        return os.environ.get(TOOL_SECRET_ENV_PREFIX + name) or None

    def secret_values(self) -> list[str]:
        """Secret values known from settings, for log and response redaction."""
        values = [
            s.get_secret_value()
            for s in (
                self.openai_api_key,
                self.api_token,
                self.session_key,
                self.oauth_client_secret,
            )
            if s
        ]
        return [v for v in values if len(v) >= 4]


_UNSET_VARIABLE = re.compile(r"\$(\w+|\{[^}]*\})")


def expand_path(text: str, setting: str) -> Path:
    """A path setting with ``~`` and ``$VAR`` / ``${VAR}`` expanded.

    A variable that is not set, or a ``~user`` that does not exist, is an error naming the
    setting: nothing is ever created under a literal ``~`` or ``$VAR`` directory.
    """
    if "\x00" in text:
        raise ValueError(f"{setting}: a path cannot contain a NUL character")
    expanded = os.path.expanduser(os.path.expandvars(text))
    unset = _UNSET_VARIABLE.search(expanded)
    if unset:
        raise ValueError(
            f"{setting} '{text}' names the environment variable {unset.group(0)}, which is not set"
        )
    if expanded.startswith("~"):
        raise ValueError(f"{setting} '{text}' names a home directory that does not exist")
    return Path(expanded)


def journal_url_for_sqlite(run_store_url: str) -> str:
    """The journal file beside a SQLite run store: ``dir/name.ext`` → ``dir/name.journal.ext``.

    An in-memory run store has no place for a journal beside it: ``ValueError`` naming the URL.
    """
    _, sep, path = run_store_url.partition(":///")
    if not sep or not path or path.startswith(":memory:") or "mode=memory" in path:
        raise ValueError(f"durable runs need a SQLite file for DATABASE_URL, not '{run_store_url}'")
    path = path.partition("?")[0]
    file = Path(path)
    suffix = file.suffix or ".sqlite"
    journal = file.with_name(f"{file.stem if file.suffix else file.name}.journal{suffix}")
    return f"sqlite:///{journal}"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read once."""
    return Settings()
